/* bench/floor_hier.c: the hierarchy floor (see floor_hier.h). Built with -ffp-contract=off
 * (bench/CMakeLists.txt), like weft's math. */
#include "floor_hier.h"

#include "mat4_mul.h"

void wb_floor_hier_update(const uint32_t *parent, const weft_mat4_t *local, weft_mat4_t *world,
                          uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        if (parent[i] == UINT32_MAX) {
            world[i] = local[i];
        } else {
            wb_mat4_mul(&world[i], &world[parent[i]], &local[i]);
        }
    }
}
