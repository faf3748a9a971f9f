/* math.c: vec3, quaternion, 4x4 matrix and transform functions (weft/math.h).
 *
 * DESIGN: plain value functions with no state. The file is compiled with -ffp-contract=off so
 * that no multiply-add is fused behind our back; compose and multiply come from math_inline.h,
 * which the hierarchy update loop inlines, so both paths run the same operations. */
#include "math_inline.h"

#include <math.h>

/* ---- vec3 --------------------------------------------------------------- >>vec3 */

weft_vec3_t weft_vec3_make(float x, float y, float z) { return (weft_vec3_t){x, y, z}; }

weft_vec3_t weft_vec3_add(weft_vec3_t a, weft_vec3_t b) {
    return (weft_vec3_t){a.x + b.x, a.y + b.y, a.z + b.z};
}

weft_vec3_t weft_vec3_sub(weft_vec3_t a, weft_vec3_t b) {
    return (weft_vec3_t){a.x - b.x, a.y - b.y, a.z - b.z};
}

weft_vec3_t weft_vec3_scale(weft_vec3_t a, float s) {
    return (weft_vec3_t){a.x * s, a.y * s, a.z * s};
}

float weft_vec3_dot(weft_vec3_t a, weft_vec3_t b) { return (a.x * b.x + a.y * b.y) + a.z * b.z; }

weft_vec3_t weft_vec3_cross(weft_vec3_t a, weft_vec3_t b) {
    return (weft_vec3_t){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

float weft_vec3_length(weft_vec3_t a) { return sqrtf(weft_vec3_dot(a, a)); }

/* ---- quaternion --------------------------------------------------------- >>quat */

weft_quat_t weft_quat_identity(void) { return (weft_quat_t){0.0f, 0.0f, 0.0f, 1.0f}; }

weft_quat_t weft_quat_from_axis_angle(weft_vec3_t axis, float radians) {
    const float len = weft_vec3_length(axis);
    if (!(len > 0.0f)) {
        return weft_quat_identity();
    }
    const float half = radians * 0.5f;
    const float s = sinf(half) / len;
    return (weft_quat_t){axis.x * s, axis.y * s, axis.z * s, cosf(half)};
}

weft_quat_t weft_quat_mul(weft_quat_t a, weft_quat_t b) {
    return (weft_quat_t){
        a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    };
}

weft_quat_t weft_quat_normalize(weft_quat_t q) {
    const float len = sqrtf(((q.x * q.x + q.y * q.y) + q.z * q.z) + q.w * q.w);
    if (!(len > 0.0f)) {
        return weft_quat_identity();
    }
    const float inv = 1.0f / len;
    return (weft_quat_t){q.x * inv, q.y * inv, q.z * inv, q.w * inv};
}

weft_vec3_t weft_quat_rotate(weft_quat_t q, weft_vec3_t v) {
    /* v' = v + 2w (u x v) + 2 u x (u x v), with u the vector part. */
    const weft_vec3_t u = {q.x, q.y, q.z};
    const weft_vec3_t t = weft_vec3_scale(weft_vec3_cross(u, v), 2.0f);
    return weft_vec3_add(weft_vec3_add(v, weft_vec3_scale(t, q.w)), weft_vec3_cross(u, t));
}

/* ---- mat4 --------------------------------------------------------------- >>mat4 */

weft_mat4_t weft_mat4_identity(void) {
    weft_mat4_t r = {{0}};
    r.m[0] = r.m[5] = r.m[10] = r.m[15] = 1.0f;
    return r;
}

weft_mat4_t weft_mat4_compose(weft_vec3_t translation, weft_quat_t rotation, weft_vec3_t scale) {
    weft_mat4_t r;
    weft__mat4_compose_into(&r, &translation, &rotation, &scale);
    return r;
}

weft_mat4_t weft_mat4_mul(const weft_mat4_t *a, const weft_mat4_t *b) {
    weft_mat4_t r;
    weft__mat4_mul_into(&r, a, b);
    return r;
}

/* General inverse by cofactors (the classic MESA formulation): inv = adj(m) / det(m). */
bool weft_mat4_inverse(const weft_mat4_t *mat, weft_mat4_t *out) {
    const float *m = mat->m;
    float inv[16];

    inv[0] = m[5] * m[10] * m[15] - m[5] * m[11] * m[14] - m[9] * m[6] * m[15] +
             m[9] * m[7] * m[14] + m[13] * m[6] * m[11] - m[13] * m[7] * m[10];
    inv[4] = -m[4] * m[10] * m[15] + m[4] * m[11] * m[14] + m[8] * m[6] * m[15] -
             m[8] * m[7] * m[14] - m[12] * m[6] * m[11] + m[12] * m[7] * m[10];
    inv[8] = m[4] * m[9] * m[15] - m[4] * m[11] * m[13] - m[8] * m[5] * m[15] +
             m[8] * m[7] * m[13] + m[12] * m[5] * m[11] - m[12] * m[7] * m[9];
    inv[12] = -m[4] * m[9] * m[14] + m[4] * m[10] * m[13] + m[8] * m[5] * m[14] -
              m[8] * m[6] * m[13] - m[12] * m[5] * m[10] + m[12] * m[6] * m[9];
    inv[1] = -m[1] * m[10] * m[15] + m[1] * m[11] * m[14] + m[9] * m[2] * m[15] -
             m[9] * m[3] * m[14] - m[13] * m[2] * m[11] + m[13] * m[3] * m[10];
    inv[5] = m[0] * m[10] * m[15] - m[0] * m[11] * m[14] - m[8] * m[2] * m[15] +
             m[8] * m[3] * m[14] + m[12] * m[2] * m[11] - m[12] * m[3] * m[10];
    inv[9] = -m[0] * m[9] * m[15] + m[0] * m[11] * m[13] + m[8] * m[1] * m[15] -
             m[8] * m[3] * m[13] - m[12] * m[1] * m[11] + m[12] * m[3] * m[9];
    inv[13] = m[0] * m[9] * m[14] - m[0] * m[10] * m[13] - m[8] * m[1] * m[14] +
              m[8] * m[2] * m[13] + m[12] * m[1] * m[10] - m[12] * m[2] * m[9];
    inv[2] = m[1] * m[6] * m[15] - m[1] * m[7] * m[14] - m[5] * m[2] * m[15] + m[5] * m[3] * m[14] +
             m[13] * m[2] * m[7] - m[13] * m[3] * m[6];
    inv[6] = -m[0] * m[6] * m[15] + m[0] * m[7] * m[14] + m[4] * m[2] * m[15] -
             m[4] * m[3] * m[14] - m[12] * m[2] * m[7] + m[12] * m[3] * m[6];
    inv[10] = m[0] * m[5] * m[15] - m[0] * m[7] * m[13] - m[4] * m[1] * m[15] +
              m[4] * m[3] * m[13] + m[12] * m[1] * m[7] - m[12] * m[3] * m[5];
    inv[14] = -m[0] * m[5] * m[14] + m[0] * m[6] * m[13] + m[4] * m[1] * m[14] -
              m[4] * m[2] * m[13] - m[12] * m[1] * m[6] + m[12] * m[2] * m[5];
    inv[3] = -m[1] * m[6] * m[11] + m[1] * m[7] * m[10] + m[5] * m[2] * m[11] -
             m[5] * m[3] * m[10] - m[9] * m[2] * m[7] + m[9] * m[3] * m[6];
    inv[7] = m[0] * m[6] * m[11] - m[0] * m[7] * m[10] - m[4] * m[2] * m[11] + m[4] * m[3] * m[10] +
             m[8] * m[2] * m[7] - m[8] * m[3] * m[6];
    inv[11] = -m[0] * m[5] * m[11] + m[0] * m[7] * m[9] + m[4] * m[1] * m[11] - m[4] * m[3] * m[9] -
              m[8] * m[1] * m[7] + m[8] * m[3] * m[5];
    inv[15] = m[0] * m[5] * m[10] - m[0] * m[6] * m[9] - m[4] * m[1] * m[10] + m[4] * m[2] * m[9] +
              m[8] * m[1] * m[6] - m[8] * m[2] * m[5];

    const float det = m[0] * inv[0] + m[1] * inv[4] + m[2] * inv[8] + m[3] * inv[12];
    if (det == 0.0f || !isfinite(det)) {
        return false;
    }
    const float rdet = 1.0f / det;
    for (int i = 0; i < 16; i++) {
        out->m[i] = inv[i] * rdet;
    }
    return true;
}

weft_vec3_t weft_mat4_transform_point(const weft_mat4_t *mat, weft_vec3_t p) {
    const float *m = mat->m;
    return (weft_vec3_t){
        ((m[0] * p.x + m[4] * p.y) + m[8] * p.z) + m[12],
        ((m[1] * p.x + m[5] * p.y) + m[9] * p.z) + m[13],
        ((m[2] * p.x + m[6] * p.y) + m[10] * p.z) + m[14],
    };
}

/* Quaternion from an orthonormal rotation matrix r (column-major 3x3 in r[c*3+row]), by the
 * largest-diagonal branch (Shepperd) so the square root argument stays well away from 0. */
static weft_quat_t quat_from_rotation(const float r[9]) {
    const float m00 = r[0], m10 = r[1], m20 = r[2];
    const float m01 = r[3], m11 = r[4], m21 = r[5];
    const float m02 = r[6], m12 = r[7], m22 = r[8];
    const float trace = m00 + m11 + m22;
    weft_quat_t q;
    if (trace > 0.0f) {
        const float s = sqrtf(trace + 1.0f) * 2.0f;
        q = (weft_quat_t){(m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, 0.25f * s};
    } else if (m00 > m11 && m00 > m22) {
        const float s = sqrtf(1.0f + m00 - m11 - m22) * 2.0f;
        q = (weft_quat_t){0.25f * s, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s};
    } else if (m11 > m22) {
        const float s = sqrtf(1.0f + m11 - m00 - m22) * 2.0f;
        q = (weft_quat_t){(m01 + m10) / s, 0.25f * s, (m12 + m21) / s, (m02 - m20) / s};
    } else {
        const float s = sqrtf(1.0f + m22 - m00 - m11) * 2.0f;
        q = (weft_quat_t){(m02 + m20) / s, (m12 + m21) / s, 0.25f * s, (m10 - m01) / s};
    }
    return weft_quat_normalize(q);
}

void weft_mat4_decompose(const weft_mat4_t *mat, weft_vec3_t *translation, weft_quat_t *rotation,
                         weft_vec3_t *scale) {
    const float *m = mat->m;
    const weft_vec3_t c0 = {m[0], m[1], m[2]};
    const weft_vec3_t c1 = {m[4], m[5], m[6]};
    const weft_vec3_t c2 = {m[8], m[9], m[10]};
    weft_vec3_t s = {weft_vec3_length(c0), weft_vec3_length(c1), weft_vec3_length(c2)};

    /* A mirrored basis cannot be a rotation: carry the reflection in the x scale. */
    if (weft_vec3_dot(weft_vec3_cross(c0, c1), c2) < 0.0f) {
        s.x = -s.x;
    }

    *translation = (weft_vec3_t){m[12], m[13], m[14]};
    *scale = s;
    if (s.x == 0.0f || s.y == 0.0f || s.z == 0.0f) {
        *rotation = weft_quat_identity();
        return;
    }
    const float r[9] = {c0.x / s.x, c0.y / s.x, c0.z / s.x, c1.x / s.y, c1.y / s.y,
                        c1.z / s.y, c2.x / s.z, c2.y / s.z, c2.z / s.z};
    *rotation = quat_from_rotation(r);
}

/* ---- transform ---------------------------------------------------------- >>transform */

weft_transform_t weft_transform_identity(void) {
    return (weft_transform_t){
        .position = {0.0f, 0.0f, 0.0f},
        .rotation = {0.0f, 0.0f, 0.0f, 1.0f},
        .scale = {1.0f, 1.0f, 1.0f},
    };
}

weft_mat4_t weft_transform_matrix(const weft_transform_t *t) {
    weft_mat4_t r;
    weft__mat4_compose_into(&r, &t->position, &t->rotation, &t->scale);
    return r;
}

weft_transform_t weft_transform_from_matrix(const weft_mat4_t *m) {
    weft_transform_t t;
    weft_mat4_decompose(m, &t.position, &t.rotation, &t.scale);
    return t;
}
