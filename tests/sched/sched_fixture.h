/* sched_fixture.h: shared helpers of the scheduler test suites — a world with a few
 * registered components, a no-op system body and one that counts its calls. */
#ifndef WEFT_TESTS_SCHED_FIXTURE_H
#define WEFT_TESTS_SCHED_FIXTURE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "weft.h"

typedef struct vec3 {
    float x, y, z;
} vec3_t;

typedef struct fixture {
    weft_world_t *world;
    weft_component_t pos, vel, hp, tag, mass; /* vec3, vec3, int32, tag, float */
} fixture_t;

/* A world from `d` with the fixture's five components registered. */
static inline void fixture_init_desc(fixture_t *f, const weft_world_desc_t *d) {
    cr_assert(eq(int, weft_world_create(d, &f->world), WEFT_OK), "%s", weft_last_error());
    cr_assert(eq(int,
                 weft_component_register(
                     f->world, &(weft_component_desc_t){.name = "Position", .size = sizeof(vec3_t)},
                     &f->pos),
                 WEFT_OK));
    cr_assert(eq(int,
                 weft_component_register(
                     f->world, &(weft_component_desc_t){.name = "Velocity", .size = sizeof(vec3_t)},
                     &f->vel),
                 WEFT_OK));
    cr_assert(eq(
        int,
        weft_component_register(
            f->world, &(weft_component_desc_t){.name = "Health", .size = sizeof(int32_t)}, &f->hp),
        WEFT_OK));
    cr_assert(
        eq(int, weft_component_register(f->world, &(weft_component_desc_t){.name = "Tag"}, &f->tag),
           WEFT_OK));
    cr_assert(
        eq(int,
           weft_component_register(
               f->world, &(weft_component_desc_t){.name = "Mass", .size = sizeof(float)}, &f->mass),
           WEFT_OK));
}

static inline void fixture_init(fixture_t *f, uint32_t workers, weft_execution_t exec) {
    weft_world_desc_t d = {.worker_count = workers, .execution = exec};
    fixture_init_desc(f, &d);
}

static inline void fixture_fini(fixture_t *f) {
    weft_world_destroy(f->world);
    f->world = NULL;
}

static inline void noop_system(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
    }
}

/* A body for systems that should never be called (they match nothing): it counts its calls
 * in fx_body_calls, which the test resets before the frames and expects to stay 0. */
static _Atomic uint32_t fx_body_calls;

static inline void counting_system(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    atomic_fetch_add(&fx_body_calls, 1);
    while (weft_iter_next(it)) {
    }
}

/* Checks inside system bodies: they may run on worker threads, where Criterion's asserts
 * must not be used; failures are counted and checked on the main thread (CHECKED()). */
static _Atomic uint32_t fx_bad __attribute__((unused));
#define CHECK(cond)                       \
    do {                                  \
        if (!(cond))                      \
            atomic_fetch_add(&fx_bad, 1); \
    } while (0)
#define CHECKED() \
    cr_assert(eq(u32, atomic_exchange(&fx_bad, 0), 0), "a check inside a system failed")

#define W(c) \
    { .component = (c), .access = WEFT_ACCESS_WRITE }
#define R(c) \
    { .component = (c), .access = WEFT_ACCESS_READ }

/* Register a system or fail the test with the library's message. */
/* The number of edges of the reduced schedule (asserts that it could be built). */
static inline uint32_t edge_count(weft_world_t *w) {
    uint32_t n = 0;
    cr_assert(eq(int, weft_schedule_edges(w, NULL, 0, &n), WEFT_OK), "%s", weft_last_error());
    return n;
}

/* A float component named `name`, registered in w. */
static inline weft_component_t float_component(weft_world_t *w, const char *name) {
    weft_component_t c = {0};
    cr_assert(eq(int,
                 weft_component_register(
                     w, &(weft_component_desc_t){.name = name, .size = sizeof(float)}, &c),
                 WEFT_OK));
    return c;
}

/* n entities holding float component c, valued 0 .. n - 1. */
static inline void float_rows(weft_world_t *w, weft_component_t c, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        weft_entity_t e;
        float v = (float)i;
        cr_assert(eq(int, weft_entity_create(w, &e), WEFT_OK));
        cr_assert(eq(int, weft_component_set(w, e, c, &v), WEFT_OK));
    }
}

static inline weft_system_t must_register(weft_world_t *w, const weft_system_desc_t *d) {
    weft_system_t s = {0};
    weft_result_t r = weft_system_register(w, d, &s);
    cr_assert(eq(int, r, WEFT_OK), "registering '%s': %s", d->name, weft_last_error());
    return s;
}

/* A 64-bit finaliser (murmur3's): the randomised tests' deterministic dice. */
static inline uint64_t fixture_mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* The seed of a randomised test: WEFT_SEED when set, else the time; printed with `what` so
 * a failure can be replayed. */
static inline uint64_t fixture_seed(const char *what) {
    const char *env = getenv("WEFT_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    fprintf(stderr, "%s seed: %llu (set WEFT_SEED to replay)\n", what, (unsigned long long)seed);
    return seed;
}

#endif /* WEFT_TESTS_SCHED_FIXTURE_H */
