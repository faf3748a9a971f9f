/* bench/floor_hier.c: the hierarchy floor (see floor_hier.h). Built with -ffp-contract=off
 * (bench/CMakeLists.txt), like weft's math. */
#include "floor_hier.h"

#include "mat4_mul.h"

#include <stdlib.h>

#ifdef WB_HAVE_OPENMP
#include <omp.h>
#endif

/* The full pass over rows [lo, hi), whose parents are computed already. */
static inline void update_range(const uint32_t *parent, const weft_mat4_t *local,
                                weft_mat4_t *world, uint32_t lo, uint32_t hi) {
    for (uint32_t i = lo; i < hi; i++) {
        if (parent[i] == UINT32_MAX) {
            world[i] = local[i];
        } else {
            wb_mat4_mul(&world[i], &world[parent[i]], &local[i]);
        }
    }
}

void wb_floor_hier_update(const uint32_t *parent, const weft_mat4_t *local, weft_mat4_t *world,
                          uint32_t n) {
    update_range(parent, local, world, 0, n);
}

uint32_t wb_floor_hier_levels(const uint32_t *parent, uint32_t n, uint32_t *level_start) {
    uint32_t *depth = malloc((size_t)n * sizeof(*depth));
    if (depth == NULL) {
        return 0;
    }
    uint32_t levels = 0;
    for (uint32_t i = 0; i < n; i++) {
        depth[i] = parent[i] == UINT32_MAX ? 0 : depth[parent[i]] + 1;
        if (depth[i] == levels) {
            level_start[levels++] = i;
        } else if (depth[i] + 1 != levels) { /* a shallower row after a deeper one */
            levels = 0;
            break;
        }
    }
    free(depth);
    if (levels != 0) {
        level_start[levels] = n;
    }
    return levels;
}

#ifdef WB_HAVE_OPENMP
void wb_floor_hier_update_levels(const uint32_t *parent, const weft_mat4_t *local,
                                 weft_mat4_t *world, const uint32_t *level_start, uint32_t levels,
                                 int threads) {
    /* One team for the whole pass; a level's rows only read the previous levels' rows. */
#pragma omp parallel num_threads(threads)
    {
        const uint64_t t = (uint64_t)omp_get_thread_num(), nt = (uint64_t)omp_get_num_threads();
        for (uint32_t l = 0; l < levels; l++) {
            const uint64_t lo = level_start[l], len = level_start[l + 1] - lo;
            update_range(parent, local, world, (uint32_t)(lo + len * t / nt),
                         (uint32_t)(lo + len * (t + 1) / nt));
#pragma omp barrier
        }
    }
}
#endif

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
