/* weft/math.h: the small math module used by transforms: vec3, quaternion, 4x4 matrix and the
 * local transform (translation, rotation, scale).
 *
 * All types are plain values (copy them freely; no hidden state, no allocation). Matrices are
 * column-major: element (row r, column c) is m[c * 4 + r], and points are column vectors, so
 * weft_mat4_mul(a, b) applied to p means a * (b * p).
 *
 * Determinism: every function is built with floating-point contraction off (no fused
 * multiply-add) and without -ffast-math, and each one evaluates a fixed sequence of IEEE-754
 * single-precision operations. The same inputs therefore give bit-identical outputs on every
 * thread, in every code path and at every worker count; the hierarchy relies on this.
 *
 * Thread: every function is pure and safe from any thread. */
#ifndef WEFT_MATH_H
#define WEFT_MATH_H

#include "weft/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- types -------------------------------------------------------------- >>math_types */

typedef struct weft_vec3 {
    float x; /* 0: origin */
    float y;
    float z;
} weft_vec3_t;

/* Rotation quaternion (x, y, z: vector part; w: scalar part). Unit length when used as a
 * rotation. Note that an all-zero quat is NOT the identity: use weft_quat_identity(). */
typedef struct weft_quat {
    float x;
    float y;
    float z;
    float w;
} weft_quat_t;

/* 4x4 matrix, column-major (m[c * 4 + r]). */
typedef struct weft_mat4 {
    float m[16];
} weft_mat4_t;

/* Local transform: the matrix is translation * rotation * scale (scale applied first). */
typedef struct weft_transform {
    weft_vec3_t position; /* translation */
    weft_quat_t rotation; /* unit quaternion; all zeros is invalid, see weft_transform_identity() */
    weft_vec3_t scale;    /* per-axis scale; (1, 1, 1) for none */
} weft_transform_t;

WEFT_STATIC_ASSERT(sizeof(weft_vec3_t) == 12, "vec3 is three packed floats");
WEFT_STATIC_ASSERT(sizeof(weft_quat_t) == 16, "quat is four packed floats");
WEFT_STATIC_ASSERT(sizeof(weft_mat4_t) == 64, "mat4 is sixteen packed floats");
WEFT_STATIC_ASSERT(sizeof(weft_transform_t) == 40, "transform is vec3 + quat + vec3");

/* ---- vec3 --------------------------------------------------------------- >>vec3 */

WEFT_API weft_vec3_t weft_vec3_make(float x, float y, float z);
WEFT_API weft_vec3_t weft_vec3_add(weft_vec3_t a, weft_vec3_t b);
WEFT_API weft_vec3_t weft_vec3_sub(weft_vec3_t a, weft_vec3_t b);
WEFT_API weft_vec3_t weft_vec3_scale(weft_vec3_t a, float s);
WEFT_API float weft_vec3_dot(weft_vec3_t a, weft_vec3_t b);
WEFT_API weft_vec3_t weft_vec3_cross(weft_vec3_t a, weft_vec3_t b);
WEFT_API float weft_vec3_length(weft_vec3_t a);

/* ---- quaternion --------------------------------------------------------- >>quat */

/* (0, 0, 0, 1): no rotation. */
WEFT_API weft_quat_t weft_quat_identity(void);

/* Rotation of `radians` about `axis` (normalised here; a zero axis gives the identity). */
WEFT_API weft_quat_t weft_quat_from_axis_angle(weft_vec3_t axis, float radians);

/* Hamilton product: the rotation b followed by a (a * b). */
WEFT_API weft_quat_t weft_quat_mul(weft_quat_t a, weft_quat_t b);

/* q scaled to unit length; the identity when q has zero length. */
WEFT_API weft_quat_t weft_quat_normalize(weft_quat_t q);

/* v rotated by the unit quaternion q. */
WEFT_API weft_vec3_t weft_quat_rotate(weft_quat_t q, weft_vec3_t v);

/* ---- mat4 --------------------------------------------------------------- >>mat4 */

WEFT_API weft_mat4_t weft_mat4_identity(void);

/* translation * rotation * scale, from a unit quaternion. */
WEFT_API weft_mat4_t weft_mat4_compose(weft_vec3_t translation, weft_quat_t rotation,
                                       weft_vec3_t scale);

/* a * b. Each element is ((a0*b0 + a1*b1) + a2*b2) + a3*b3, always in that order. */
WEFT_API weft_mat4_t weft_mat4_mul(const weft_mat4_t *a, const weft_mat4_t *b);

/* The inverse of m into *out (general 4x4, cofactor expansion). Returns false and leaves *out
 * untouched when m is singular (determinant 0 or not finite). */
WEFT_API bool weft_mat4_inverse(const weft_mat4_t *m, weft_mat4_t *out);

/* m * (p, 1): a point transformed (the w row is ignored, as for affine matrices). */
WEFT_API weft_vec3_t weft_mat4_transform_point(const weft_mat4_t *m, weft_vec3_t p);

/* Split an affine matrix into translation, rotation and scale such that compose() gives m back
 * up to rounding. Shear and projection parts are lost; a negative determinant is carried by a
 * negative x scale; a zero-length axis gives scale 0 on it and an identity rotation. */
WEFT_API void weft_mat4_decompose(const weft_mat4_t *m, weft_vec3_t *translation,
                                  weft_quat_t *rotation, weft_vec3_t *scale);

/* ---- transform ---------------------------------------------------------- >>transform */

/* Position 0, identity rotation, scale 1. */
WEFT_API weft_transform_t weft_transform_identity(void);

/* weft_mat4_compose(t->position, t->rotation, t->scale). */
WEFT_API weft_mat4_t weft_transform_matrix(const weft_transform_t *t);

/* The transform whose matrix is m (weft_mat4_decompose). */
WEFT_API weft_transform_t weft_transform_from_matrix(const weft_mat4_t *m);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_MATH_H */
