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

/* The list update over matrices `stride` bytes apart (world and local from their own bases),
 * for both layouts; inlined with a constant stride into each. */
static inline void update_list(const uint32_t *parent, char *world_base, char *local_base,
                               size_t stride, const uint32_t *list, uint32_t k,
                               const uint8_t *changed, const weft_transform_t *new_local) {
#define WORLD(i) ((weft_mat4_t *)(world_base + (size_t)(i)*stride))
#define LOCAL(i) ((weft_mat4_t *)(local_base + (size_t)(i)*stride))
    for (uint32_t i = 0; i < k; i++) {
        if (i + 2 * AHEAD < k) {
            const uint32_t q = list[i + 2 * AHEAD];
            PREFETCH(&parent[q], 0);
            PREFETCH(&changed[q], 0);
            PREFETCH(LOCAL(q), 1);
            PREFETCH(WORLD(q), 1);
        }
        if (i + AHEAD < k) {
            const uint32_t q = list[i + AHEAD];
            if (parent[q] != UINT32_MAX) {
                PREFETCH(WORLD(parent[q]), 0);
            }
            if (changed[q]) {
                PREFETCH(&new_local[q], 0);
            }
        }
        const uint32_t r = list[i];
        if (changed[r]) {
            const weft_transform_t *t = &new_local[r];
            *LOCAL(r) = weft_mat4_compose(t->position, t->rotation, t->scale);
        }
        if (parent[r] == UINT32_MAX) {
            *WORLD(r) = *LOCAL(r);
        } else {
            wb_mat4_mul(WORLD(r), WORLD(parent[r]), LOCAL(r));
        }
    }
#undef WORLD
#undef LOCAL
}

void wb_floor_hier_update_list(const uint32_t *parent, weft_mat4_t *local, weft_mat4_t *world,
                               const uint32_t *list, uint32_t k, const uint8_t *changed,
                               const weft_transform_t *new_local) {
    update_list(parent, (char *)world, (char *)local, sizeof(weft_mat4_t), list, k, changed,
                new_local);
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
    update_list(parent, (char *)&rec->world, (char *)&rec->local, sizeof(*rec), list, k, changed,
                new_local);
}
