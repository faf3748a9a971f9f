/* weft_test.h: shared test fixtures — a seeded PRNG, a counting logger, and the support
 * modules (fault-injecting allocator, invariant checks, hang watchdog).
 *
 * Write strict comparisons as plain C (`cr_expect(n > 0, ...)`), not with Criterion's gt()/lt():
 * in Criterion 2.4.1 they pass when both sides are equal, so they cannot fail at the boundary
 * they guard.
 *
 * Header-only apart from the support .c files it names; include it from any suite. */
#ifndef WEFT_TESTS_WEFT_TEST_H
#define WEFT_TESTS_WEFT_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fault_alloc.h"
#include "watchdog.h"
#include "weft.h"
#include "world_check.h"

/* ---- random numbers ------------------------------------------------------- >>rng */

/* splitmix64: tiny, good enough for test data, identical on every platform. */
typedef struct wt_rng {
    uint64_t s; /* state */
} wt_rng_t;

static inline uint64_t wt_rng_next(wt_rng_t *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n) (n > 0; the tiny modulo bias is irrelevant for tests). */
static inline uint32_t wt_rng_below(wt_rng_t *r, uint32_t n) {
    return (uint32_t)(wt_rng_next(r) % n);
}

/* The seed of a randomised test: $WT_SEED when set (decimal or 0x hex), else the clock.
 * Always printed, with the name of the test, so a failure can be replayed. */
static inline uint64_t wt_seed(const char *test) {
    const char *env = getenv("WT_SEED");
    uint64_t seed;
    if (env != NULL && env[0] != '\0') {
        seed = strtoull(env, NULL, 0);
    } else {
        seed = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull ^ (uint64_t)clock();
    }
    fprintf(stderr, "%s: seed %llu (replay with WT_SEED=%llu)\n", test, (unsigned long long)seed,
            (unsigned long long)seed);
    return seed;
}

/* An unsigned from the environment, or `def`. */
static inline uint64_t wt_env_u64(const char *name, uint64_t def) {
    const char *env = getenv(name);
    return (env != NULL && env[0] != '\0') ? strtoull(env, NULL, 0) : def;
}

/* ---- logger --------------------------------------------------------------- >>logger */

/* Counts every failure the library reports through an instance's logger hook. */
typedef struct wt_log_count {
    _Atomic uint64_t errors;                          /* WEFT_LOG_ERROR calls */
    _Atomic int last_code;                            /* code of the latest call */
    _Atomic uint64_t by_code[-(WEFT_RESULT_MIN) + 1]; /* calls per -code */
    int echo;                                         /* 1: also print each message to stderr */
} wt_log_count_t;

static inline void wt_log_count_fn(weft_log_level_t level, weft_result_t code, const char *msg,
                                   const char *file, int line, void *user) {
    wt_log_count_t *lc = user;
    if (level == WEFT_LOG_ERROR) {
        ++lc->errors;
    }
    lc->last_code = (int)code;
    if ((int)code <= 0 && (int)code >= WEFT_RESULT_MIN) {
        ++lc->by_code[-(int)code];
    }
    if (lc->echo) {
        fprintf(stderr, "weft log: %s: %s (%s:%d)\n", weft_result_name(code), msg, file, line);
    }
}

static inline weft_logger_t wt_log_counter(wt_log_count_t *lc) {
    return (weft_logger_t){.fn = wt_log_count_fn, .user = lc};
}

#endif /* WEFT_TESTS_WEFT_TEST_H */
