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

#define AHEAD 8u
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p, rw) __builtin_prefetch((p), (rw))
#else
#define PREFETCH(p, rw) ((void)(p))
#endif

void wb_floor_hier_update_list(const uint32_t *parent, weft_mat4_t *local, weft_mat4_t *world,
                               const uint32_t *list, uint32_t k, const uint8_t *changed,
                               const weft_transform_t *new_local) {
    for (uint32_t i = 0; i < k; i++) {
        if (i + 2 * AHEAD < k) {
            const uint32_t q = list[i + 2 * AHEAD];
            PREFETCH(&parent[q], 0);
            PREFETCH(&changed[q], 0);
            PREFETCH(&local[q], 1);
            PREFETCH(&world[q], 1);
        }
        if (i + AHEAD < k) {
            const uint32_t q = list[i + AHEAD];
            if (parent[q] != UINT32_MAX) {
                PREFETCH(&world[parent[q]], 0);
            }
            if (changed[q]) {
                PREFETCH(&new_local[q], 0);
            }
        }
        const uint32_t r = list[i];
        if (changed[r]) {
            const weft_transform_t *t = &new_local[r];
            local[r] = weft_mat4_compose(t->position, t->rotation, t->scale);
        }
        if (parent[r] == UINT32_MAX) {
            world[r] = local[r];
        } else {
            wb_mat4_mul(&world[r], &world[parent[r]], &local[r]);
        }
    }
}

void wb_floor_hier_update_rec(const uint32_t *parent, wb_floor_rec_t *rec, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        if (parent[i] == UINT32_MAX) {
            rec[i].world = rec[i].local;
        } else {
            wb_mat4_mul(&rec[i].world, &rec[parent[i]].world, &rec[i].local);
        }
    }
}

void wb_floor_hier_update_rec_list(const uint32_t *parent, wb_floor_rec_t *rec,
                                   const uint32_t *list, uint32_t k, const uint8_t *changed,
                                   const weft_transform_t *new_local) {
    for (uint32_t i = 0; i < k; i++) {
        if (i + 2 * AHEAD < k) {
            const uint32_t q = list[i + 2 * AHEAD];
            PREFETCH(&parent[q], 0);
            PREFETCH(&changed[q], 0);
            PREFETCH(&rec[q].world, 1);
            PREFETCH(&rec[q].local, 1);
        }
        if (i + AHEAD < k) {
            const uint32_t q = list[i + AHEAD];
            if (parent[q] != UINT32_MAX) {
                PREFETCH(&rec[parent[q]].world, 0);
            }
            if (changed[q]) {
                PREFETCH(&new_local[q], 0);
            }
        }
        const uint32_t r = list[i];
        if (changed[r]) {
            const weft_transform_t *t = &new_local[r];
            rec[r].local = weft_mat4_compose(t->position, t->rotation, t->scale);
        }
        if (parent[r] == UINT32_MAX) {
            rec[r].world = rec[r].local;
        } else {
            wb_mat4_mul(&rec[r].world, &rec[parent[r]].world, &rec[r].local);
        }
    }
}
