/* math_inline.h: the two hot math kernels (compose TRS, 4x4 multiply) as static inline bodies,
 * shared by math.c (the public functions) and the hierarchy update loop (private).
 *
 * DESIGN: the public weft_mat4_mul() and weft_mat4_compose() are these very bodies, and every
 * file that includes this header is compiled with -ffp-contract=off (see src/CMakeLists.txt),
 * so the inlined copy in the update loop performs exactly the same IEEE operations in the same
 * order as the out-of-line public function a test calls for its reference: bit-identical. */
#ifndef WEFT_SRC_MATH_INLINE_H
#define WEFT_SRC_MATH_INLINE_H

#include "weft/math.h"

/* Column-major product r = a * b; sum order fixed: ((a0 b0 + a1 b1) + a2 b2) + a3 b3. */
static inline void weft__mat4_mul_into(weft_mat4_t *restrict r, const weft_mat4_t *a,
                                       const weft_mat4_t *b) {
    for (int c = 0; c < 4; c++) {
        const float b0 = b->m[c * 4 + 0];
        const float b1 = b->m[c * 4 + 1];
        const float b2 = b->m[c * 4 + 2];
        const float b3 = b->m[c * 4 + 3];
        for (int row = 0; row < 4; row++) {
            float s = a->m[0 * 4 + row] * b0;
            s = s + a->m[1 * 4 + row] * b1;
            s = s + a->m[2 * 4 + row] * b2;
            s = s + a->m[3 * 4 + row] * b3;
            r->m[c * 4 + row] = s;
        }
    }
}

/* r = translation * rotation(q) * scale. */
static inline void weft__mat4_compose_into(weft_mat4_t *restrict r, const weft_vec3_t *t,
                                           const weft_quat_t *q, const weft_vec3_t *s) {
    const float xx = q->x * q->x;
    const float yy = q->y * q->y;
    const float zz = q->z * q->z;
    const float xy = q->x * q->y;
    const float xz = q->x * q->z;
    const float yz = q->y * q->z;
    const float wx = q->w * q->x;
    const float wy = q->w * q->y;
    const float wz = q->w * q->z;

    r->m[0] = (1.0f - 2.0f * (yy + zz)) * s->x;
    r->m[1] = (2.0f * (xy + wz)) * s->x;
    r->m[2] = (2.0f * (xz - wy)) * s->x;
    r->m[3] = 0.0f;
    r->m[4] = (2.0f * (xy - wz)) * s->y;
    r->m[5] = (1.0f - 2.0f * (xx + zz)) * s->y;
    r->m[6] = (2.0f * (yz + wx)) * s->y;
    r->m[7] = 0.0f;
    r->m[8] = (2.0f * (xz + wy)) * s->z;
    r->m[9] = (2.0f * (yz - wx)) * s->z;
    r->m[10] = (1.0f - 2.0f * (xx + yy)) * s->z;
    r->m[11] = 0.0f;
    r->m[12] = t->x;
    r->m[13] = t->y;
    r->m[14] = t->z;
    r->m[15] = 1.0f;
}

/* A node's local matrix with its bind folded in, the right-hand factor of the formula in
 * weft/hierarchy.h: compose(local) for roots and for binds bitwise the identity (`plain`),
 * else inverse_bind * compose(local). The world matrix is then parent_world * this (or this
 * itself for a root): the documented operations, in the documented order. */
static inline void weft__hier_local_matrix(weft_mat4_t *restrict out, const weft_transform_t *local,
                                           const weft_mat4_t *inverse_bind, bool plain) {
    if (plain) {
        weft__mat4_compose_into(out, &local->position, &local->rotation, &local->scale);
        return;
    }
    weft_mat4_t l;
    weft__mat4_compose_into(&l, &local->position, &local->rotation, &local->scale);
    weft__mat4_mul_into(out, inverse_bind, &l);
}

#endif /* WEFT_SRC_MATH_INLINE_H */
