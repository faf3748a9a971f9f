/* bench/floor_hier.c: the hierarchy floor (see floor_hier.h). Built with -ffp-contract=off
 * (bench/CMakeLists.txt), like weft's math. */
#include "floor_hier.h"

/* Column-major r = a * b, the sum order of weft_mat4_mul: ((a0 b0 + a1 b1) + a2 b2) + a3 b3. */
static inline void floor_mul(weft_mat4_t *restrict r, const weft_mat4_t *a, const weft_mat4_t *b) {
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

void wb_floor_hier_update(const uint32_t *parent, const weft_mat4_t *local, weft_mat4_t *world,
                          uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        if (parent[i] == UINT32_MAX)
            world[i] = local[i];
        else
            floor_mul(&world[i], &world[parent[i]], &local[i]);
    }
}
