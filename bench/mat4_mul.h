/* bench/mat4_mul.h: the 4x4 multiply of the hierarchy baselines (pointer walk, floor), with
 * the operation order of weft_mat4_mul: column-major r = a * b, each element summed as
 * ((a0 b0 + a1 b1) + a2 b2) + a3 b3. Every file including it is built with -ffp-contract=off
 * (bench/CMakeLists.txt), as weft's math is, so the baselines give weft's bits. */
#ifndef WEFT_BENCH_MAT4_MUL_H
#define WEFT_BENCH_MAT4_MUL_H

#include "weft/math.h"

static inline void wb_mat4_mul(weft_mat4_t *restrict r, const weft_mat4_t *a,
                               const weft_mat4_t *b) {
    for (int c = 0; c < 4; c++) {
        const float b0 = b->m[c * 4 + 0], b1 = b->m[c * 4 + 1];
        const float b2 = b->m[c * 4 + 2], b3 = b->m[c * 4 + 3];
        for (int row = 0; row < 4; row++) {
            float s = a->m[0 * 4 + row] * b0;
            s = s + a->m[1 * 4 + row] * b1;
            s = s + a->m[2 * 4 + row] * b2;
            s = s + a->m[3 * 4 + row] * b3;
            r->m[c * 4 + row] = s;
        }
    }
}

#endif /* WEFT_BENCH_MAT4_MUL_H */
