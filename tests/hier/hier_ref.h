/* hier_ref.h: helpers shared by the hierarchy tests — a seeded RNG, random transforms, and
 * the reference world-matrix computation (recursive, memoised, written from the formula in
 * weft/hierarchy.h with the public math functions only). */
#ifndef WEFT_TESTS_HIER_REF_H
#define WEFT_TESTS_HIER_REF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/math.h"

typedef struct hr_rng {
    uint64_t s;
} hr_rng_t;

static inline uint64_t hr_next(hr_rng_t *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint32_t hr_below(hr_rng_t *r, uint32_t n) {
    return n == 0 ? 0 : (uint32_t)(hr_next(r) % n);
}

static inline float hr_float(hr_rng_t *r, float lo, float hi) {
    return lo + (hi - lo) * (float)(hr_next(r) >> 40) / (float)(1u << 24);
}

/* A seed from WEFT_TEST_SEED or the clock, printed so a failure can be replayed. */
static inline uint64_t hr_seed(const char *test) {
    const char *env = getenv("WEFT_TEST_SEED");
    uint64_t seed = env != NULL ? strtoull(env, NULL, 0)
                                : (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock();
    fprintf(stderr, "[hier] %s: seed %llu (replay with WEFT_TEST_SEED=%llu)\n", test,
            (unsigned long long)seed, (unsigned long long)seed);
    return seed;
}

/* First failure of a checked loop. The suites run with --full-stats, which prints every
 * passing assertion, so loops over thousands of nodes check with plain C (hr_check), keep the
 * first mismatch, stop, and the test asserts once (hr_fail_message) per batch or session. */
typedef struct hr_fail {
    bool failed;       /* a check failed */
    uint64_t seed;     /* seed of the session (0: none), printed with the failure */
    int64_t step;      /* current step, set by the caller (-1: outside the step loop) */
    int64_t fail_step; /* step at which the first failure happened */
    char msg[480];     /* the first failure */
    char text[640];    /* hr_fail_message's result */
} hr_fail_t;

static inline void hr_fail_init(hr_fail_t *f, uint64_t seed) {
    memset(f, 0, sizeof(*f));
    f->seed = seed;
    f->step = -1;
    f->fail_step = -1;
}

/* The opening of a seeded session: print a seed named `what`, point `f` at it (reset), and
 * return a generator seeded with it. */
static inline hr_rng_t hr_seeded(hr_fail_t *f, const char *what) {
    const uint64_t seed = hr_seed(what);
    hr_fail_init(f, seed);
    return (hr_rng_t){seed};
}

/* Returns ok; records the first failure (later ones are ignored). */
static inline bool hr_check(hr_fail_t *f, bool ok, const char *fmt, ...) {
    if (ok || f->failed) {
        return ok;
    }
    f->failed = true;
    f->fail_step = f->step;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
    va_end(ap);
    return false;
}

/* The first failure with its step and seed, for the one assertion after the loop. */
static inline const char *hr_fail_message(hr_fail_t *f) {
    if (!f->failed) {
        return "no failure";
    }
    char step[32] = "";
    if (f->fail_step >= 0) {
        snprintf(step, sizeof(step), "step %lld, ", (long long)f->fail_step);
    }
    snprintf(f->text, sizeof(f->text), "%s (%sseed %llu: replay with WEFT_TEST_SEED=%llu)", f->msg,
             step, (unsigned long long)f->seed, (unsigned long long)f->seed);
    return f->text;
}

/* Near-identity scale keeps deep chains finite and every world matrix invertible. */
static inline weft_transform_t hr_transform(hr_rng_t *r) {
    weft_transform_t t;
    t.position = weft_vec3_make(hr_float(r, -2, 2), hr_float(r, -2, 2), hr_float(r, -2, 2));
    t.rotation = weft_quat_from_axis_angle(
        weft_vec3_make(hr_float(r, -1, 1), hr_float(r, -1, 1), hr_float(r, -1, 1) + 0.01f),
        hr_float(r, -3.1f, 3.1f));
    t.scale = weft_vec3_make(hr_float(r, 0.97f, 1.03f), hr_float(r, 0.97f, 1.03f),
                             hr_float(r, 0.97f, 1.03f));
    return t;
}

/* The documented formula: root: compose(local); child whose bind is bitwise the identity:
 * parent_world * compose(local); other child: parent_world * (bind * compose(local)). */
static inline weft_mat4_t hr_node_world(const weft_transform_t *local, const weft_mat4_t *bind,
                                        const weft_mat4_t *parent_world) {
    weft_mat4_t l = weft_transform_matrix(local);
    if (parent_world == NULL) {
        return l;
    }
    const weft_mat4_t id = weft_mat4_identity();
    if (memcmp(bind, &id, sizeof(id)) == 0) {
        return weft_mat4_mul(parent_world, &l);
    }
    weft_mat4_t bl = weft_mat4_mul(bind, &l);
    return weft_mat4_mul(parent_world, &bl);
}

static inline bool hr_mat_eq(const weft_mat4_t *a, const weft_mat4_t *b) {
    return memcmp(a, b, sizeof(*a)) == 0;
}

static inline bool hr_mat_near(const weft_mat4_t *a, const weft_mat4_t *b, float eps) {
    for (int i = 0; i < 16; i++) {
        const float d = a->m[i] - b->m[i];
        if (d > eps || d < -eps) {
            return false;
        }
    }
    return true;
}

#endif /* WEFT_TESTS_HIER_REF_H */
