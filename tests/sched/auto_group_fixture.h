/* auto_group_fixture.h: the on/off comparison of the automatic grouping tests
 * (test_auto_group.c, internal_auto_pack.c): one run per setting and worker count (1, 2, 8),
 * every entity's values equal to the setting-off 1-worker run's, and each setting's world
 * hash after every frame the same at every worker count. */
#ifndef WEFT_TESTS_AUTO_GROUP_FIXTURE_H
#define WEFT_TESTS_AUTO_GROUP_FIXTURE_H

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "weft.h"

/* xorshift64: the tests' random stream (seeded with the printed seed | 1). */
static inline uint32_t wt_auto_next(uint64_t *rng) {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    return (uint32_t)(*rng >> 11);
}

/* Toggle component c (a uint32_t) on entity e: removed, or added with a fresh value. */
static inline void wt_auto_toggle(weft_world_t *w, weft_entity_t e, weft_component_t c,
                                  uint64_t *rng) {
    if (weft_component_has(w, e, c)) {
        cr_assert(eq(int, weft_component_remove(w, e, c), WEFT_OK));
    } else {
        uint32_t v = wt_auto_next(rng);
        cr_assert(eq(int, weft_component_set(w, e, c, &v), WEFT_OK));
    }
}

/* Components of both tests' worlds, in registration order. */
enum { WT_AUTO_P, WT_AUTO_V, WT_AUTO_M, WT_AUTO_H, WT_AUTO_NCOMP };

/* Create entities ents[0 .. n): P on 7 in 8, V or else H on half each, M on every other. */
static inline void wt_auto_populate(weft_world_t *w, weft_entity_t *ents,
                                    const weft_component_t *comp, uint32_t n, uint64_t *rng) {
    for (uint32_t e = 0; e < n; e++) {
        cr_assert(eq(int, weft_entity_create(w, &ents[e]), WEFT_OK));
        uint32_t roll = wt_auto_next(rng) % 8u;
        for (uint32_t c = 0; c < WT_AUTO_NCOMP; c++) {
            bool want = c == WT_AUTO_P   ? roll != 0
                        : c == WT_AUTO_V ? roll < 4
                        : c == WT_AUTO_M ? roll % 2 == 0
                                         : roll >= 4;
            if (want) {
                wt_auto_toggle(w, ents[e], comp[c], rng);
            }
        }
    }
}

/* vals[e * WT_AUTO_NCOMP + c]: component c of ents[e], UINT32_MAX where absent. */
static inline void wt_auto_values(const weft_world_t *w, const weft_entity_t *ents,
                                  const weft_component_t *comp, uint32_t n, uint32_t *vals) {
    for (uint32_t e = 0; e < n; e++) {
        for (uint32_t c = 0; c < WT_AUTO_NCOMP; c++) {
            const uint32_t *v = weft_component_get(w, ents[e], comp[c]);
            vals[e * WT_AUTO_NCOMP + c] = v ? *v : UINT32_MAX;
        }
    }
}

/* The {P write, V} system of both tests, P += V per row: what it computes for an entity
 * depends on that entity's values only, so the row order a plan iterates in cannot matter. */
static inline void wt_auto_sys_move(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            uint32_t *p = weft_iter_get(it, 0, i);
            *p += *(const uint32_t *)weft_iter_get(it, 1, i);
        }
    }
}

/* One frame of a run: progress, then the world hash into *hash. */
static inline void wt_auto_frame(weft_world_t *w, uint64_t *hash) {
    cr_assert(eq(int, weft_world_progress(w, 0.016f), WEFT_OK), "%s", weft_last_error());
    *hash = weft_world_hash(w);
}

/* The end of a run: every entity's values into vals (wt_auto_values), then the world goes. */
static inline void wt_auto_finish(weft_world_t *w, const weft_entity_t *ents,
                                  const weft_component_t *comp, uint32_t n, uint32_t *vals) {
    wt_auto_values(w, ents, comp, n, vals);
    weft_world_destroy(w);
}

/* One run: writes vals[e * ncomp + c] (UINT32_MAX where absent) and hashes[f] per frame. */
typedef void (*wt_auto_run_fn)(uint64_t seed, uint32_t workers, bool on, uint32_t *vals,
                               uint64_t *hashes);

static inline void wt_auto_compare(uint64_t seed, wt_auto_run_fn run, uint32_t nent, uint32_t ncomp,
                                   uint32_t frames) {
    static const uint32_t workers[3] = {1, 2, 8};
    const size_t nv = (size_t)nent * ncomp;
    uint32_t *vals = malloc(6u * nv * sizeof *vals);
    uint64_t *hashes = malloc(6u * frames * sizeof *hashes);
    cr_assert(vals != NULL && hashes != NULL);
    for (uint32_t on = 0; on < 2; on++) {
        for (uint32_t k = 0; k < 3; k++) {
            run(seed, workers[k], on != 0, vals + (on * 3u + k) * nv,
                hashes + (on * 3u + k) * frames);
        }
    }
    for (uint32_t on = 0; on < 2; on++) {
        for (uint32_t k = 0; k < 3; k++) {
            for (size_t i = 0; i < nv; i++) {
                cr_assert(eq(u32, vals[(on * 3u + k) * nv + i], vals[i]),
                          "seed %llu, setting %u, %u workers: entity %zu component %zu differs "
                          "from the setting-off 1-worker run",
                          (unsigned long long)seed, on, workers[k], i / ncomp, i % ncomp);
            }
            for (uint32_t f = 0; f < frames; f++) {
                cr_assert(eq(u64, hashes[(on * 3u + k) * frames + f], hashes[on * 3u * frames + f]),
                          "seed %llu, setting %u: frame %u hash at %u workers differs from 1",
                          (unsigned long long)seed, on, f, workers[k]);
            }
        }
    }
    free(vals);
    free(hashes);
}

#endif /* WEFT_TESTS_AUTO_GROUP_FIXTURE_H */
