/* hier_ref.h: helpers shared by the hierarchy tests — a seeded RNG, random transforms, and
 * the reference world-matrix computation (recursive, memoised, written from the formula in
 * weft/hierarchy.h with the public math functions only). */
#ifndef WEFT_TESTS_HIER_REF_H
#define WEFT_TESTS_HIER_REF_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/math.h"

/* ThreadSanitizer slows single-threaded loops ~10x and finds nothing in them: the purely
 * sequential random sessions run fewer steps under it (the threaded tests keep their size). */
#if defined(__SANITIZE_THREAD__)
#define HR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HR_TSAN 1
#endif
#endif
#ifndef HR_TSAN
#define HR_TSAN 0
#endif
#define HR_STEPS(n) (HR_TSAN ? (n) / 8 : (n))

typedef struct hr_rng {
    uint64_t s;
} hr_rng_t;

static inline uint64_t hr_next(hr_rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint32_t hr_below(hr_rng_t *r, uint32_t n)
{
    return n == 0 ? 0 : (uint32_t)(hr_next(r) % n);
}

static inline float hr_float(hr_rng_t *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)(hr_next(r) >> 40) / (float)(1u << 24);
}

/* A seed from WEFT_TEST_SEED or the clock, printed so a failure can be replayed. */
static inline uint64_t hr_seed(const char *test)
{
    const char *env = getenv("WEFT_TEST_SEED");
    uint64_t seed = env != NULL ? strtoull(env, NULL, 0)
                                : (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock();
    fprintf(stderr, "[hier] %s: seed %llu (replay with WEFT_TEST_SEED=%llu)\n", test,
            (unsigned long long)seed, (unsigned long long)seed);
    return seed;
}

/* Near-identity scale keeps deep chains finite and every world matrix invertible. */
static inline weft_transform_t hr_transform(hr_rng_t *r)
{
    weft_transform_t t;
    t.position = weft_vec3_make(hr_float(r, -2, 2), hr_float(r, -2, 2), hr_float(r, -2, 2));
    t.rotation = weft_quat_from_axis_angle(
        weft_vec3_make(hr_float(r, -1, 1), hr_float(r, -1, 1), hr_float(r, -1, 1) + 0.01f),
        hr_float(r, -3.1f, 3.1f));
    t.scale = weft_vec3_make(hr_float(r, 0.97f, 1.03f), hr_float(r, 0.97f, 1.03f),
                             hr_float(r, 0.97f, 1.03f));
    return t;
}

/* The documented formula: root: compose(local); child: parent_world * (bind * compose(local)). */
static inline weft_mat4_t hr_node_world(const weft_transform_t *local, const weft_mat4_t *bind,
                                        const weft_mat4_t *parent_world)
{
    weft_mat4_t l = weft_transform_matrix(local);
    if (parent_world == NULL)
        return l;
    weft_mat4_t bl = weft_mat4_mul(bind, &l);
    return weft_mat4_mul(parent_world, &bl);
}

static inline bool hr_mat_eq(const weft_mat4_t *a, const weft_mat4_t *b)
{
    return memcmp(a, b, sizeof(*a)) == 0;
}

static inline bool hr_mat_near(const weft_mat4_t *a, const weft_mat4_t *b, float eps)
{
    for (int i = 0; i < 16; i++) {
        const float d = a->m[i] - b->m[i];
        if (d > eps || d < -eps)
            return false;
    }
    return true;
}

#endif /* WEFT_TESTS_HIER_REF_H */
