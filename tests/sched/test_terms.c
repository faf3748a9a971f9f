/* test_terms.c: OPTIONAL and OR terms in systems — the schedule sees every term's access, a
 * system may have WEFT_QUERY_MAX_TERMS terms, and the world after a run of frames with such
 * systems writing is identical at every worker count (inline, 1, 2, 3, 4, 8). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sched_fixture.h"

TestSuite(terms, .timeout = 240);

#define OPT_W(c) \
    { .component = (c), .access = WEFT_ACCESS_WRITE, .oper = WEFT_TERM_OPTIONAL }
#define OR_R(c) \
    { .component = (c), .access = WEFT_ACCESS_READ, .oper = WEFT_TERM_OR }
#define OR_W(c) \
    { .component = (c), .access = WEFT_ACCESS_WRITE, .oper = WEFT_TERM_OR }

Test(terms, optional_and_or_terms_order_the_schedule) {
    fixture_t f;
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    /* a writes vel only through an OPTIONAL term, b reads it: one edge */
    must_register(f.world, &(weft_system_desc_t){
                               .name = "a", .fn = noop_system, .terms = {R(f.pos), OPT_W(f.vel)}});
    must_register(f.world,
                  &(weft_system_desc_t){.name = "b", .fn = noop_system, .terms = {R(f.vel)}});
    cr_assert(eq(u32, edge_count(f.world), 1));
    /* c writes hp through an OR term, d reads hp: a second edge */
    must_register(f.world, &(weft_system_desc_t){.name = "c",
                                                 .fn = noop_system,
                                                 .terms = {R(f.mass), OR_W(f.hp), OR_R(f.tag)}});
    must_register(f.world,
                  &(weft_system_desc_t){.name = "d", .fn = noop_system, .terms = {R(f.hp)}});
    cr_assert(eq(u32, edge_count(f.world), 2));
    fixture_fini(&f);
}

/* ---- determinism -------------------------------------------------------------------------- */

enum { N = 5000, FRAMES = 12, EXTRA = 11 };

typedef struct world_set {
    fixture_t f;
    weft_component_t extra[EXTRA]; /* tags, so a system can reach 16 terms */
} world_set_t;

/* pos += vel where the entity has vel (OPTIONAL), plus hp or mass where present (OR). */
static void blend(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            vec3_t *p = weft_iter_get(it, 0, i);
            if (weft_iter_has(it, 1)) {
                const vec3_t *v = weft_iter_get(it, 1, i);
                p->x += v->x;
                p->y += v->y * 0.5f;
            }
            if (weft_iter_has(it, 2)) {
                p->z += (float)*(const int32_t *)weft_iter_get(it, 2, i);
            }
            if (weft_iter_has(it, 3)) {
                p->z *= *(const float *)weft_iter_get(it, 3, i);
            }
        }
    }
}

/* A 16-term system: writes hp on entities with every one of the 11 extra tags optional;
 * counts the tags present. */
static void sixteen(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    CHECK(it->term_count == WEFT_QUERY_MAX_TERMS);
    while (weft_iter_next(it)) {
        int32_t tags = 0;
        for (uint32_t t = 5; t < it->term_count; t++) {
            tags += weft_iter_has(it, t);
        }
        for (uint32_t i = 0; i < it->rows; i++) {
            int32_t *h = weft_iter_get(it, 0, i);
            *h = *h * 3 + tags;
        }
    }
}

static uint64_t run_world(uint32_t workers, weft_execution_t exec, uint64_t seed) {
    world_set_t *s = calloc(1, sizeof *s);
    cr_assert(s != NULL);
    fixture_init(&s->f, workers, exec);
    weft_world_t *w = s->f.world;
    for (uint32_t k = 0; k < EXTRA; k++) {
        char name[16];
        snprintf(name, sizeof name, "Extra%u", k);
        cr_assert(eq(
            int, weft_component_register(w, &(weft_component_desc_t){.name = name}, &s->extra[k]),
            WEFT_OK));
    }
    uint64_t x = seed | 1u;
    for (uint32_t i = 0; i < N; i++) {
        weft_entity_t e;
        cr_assert(eq(int, weft_entity_create(w, &e), WEFT_OK));
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        vec3_t p = {(float)(x % 97), 1, 2}, v = {1, (float)(x % 5), 0};
        int32_t h = (int32_t)(x % 13);
        float m = 1.0f + (float)(x % 3) * 0.25f;
        cr_assert(eq(int, weft_component_set(w, e, s->f.pos, &p), WEFT_OK));
        if (x & 2) {
            cr_assert(eq(int, weft_component_set(w, e, s->f.vel, &v), WEFT_OK));
        }
        if (x & 4) {
            cr_assert(eq(int, weft_component_set(w, e, s->f.hp, &h), WEFT_OK));
        }
        if (x & 8) {
            cr_assert(eq(int, weft_component_set(w, e, s->f.mass, &m), WEFT_OK));
        }
        for (uint32_t k = 0; k < EXTRA; k++) {
            if ((x >> (10 + k)) & 1u) {
                cr_assert(eq(int, weft_component_add(w, e, s->extra[k], NULL), WEFT_OK));
            }
        }
    }
    must_register(
        w, &(weft_system_desc_t){.name = "blend",
                                 .fn = blend,
                                 .terms = {W(s->f.pos),
                                           {.component = s->f.vel, .oper = WEFT_TERM_OPTIONAL},
                                           OR_R(s->f.hp),
                                           OR_R(s->f.mass)},
                                 .parallel = true,
                                 .chunk_size = 300});
    weft_system_desc_t d = {.name = "sixteen", .fn = sixteen, .parallel = true, .chunk_size = 200};
    d.terms[0] = (weft_query_term_t)W(s->f.hp);
    d.terms[1] = (weft_query_term_t){.component = s->f.pos, .oper = WEFT_TERM_OPTIONAL};
    d.terms[2] = (weft_query_term_t){.component = s->f.vel, .oper = WEFT_TERM_OPTIONAL};
    d.terms[3] = (weft_query_term_t){.component = s->f.mass, .oper = WEFT_TERM_OPTIONAL};
    d.terms[4] = (weft_query_term_t){.component = s->f.tag, .oper = WEFT_TERM_OPTIONAL};
    for (uint32_t k = 0; k < EXTRA; k++) {
        d.terms[5 + k] = (weft_query_term_t){.component = s->extra[k], .oper = WEFT_TERM_OPTIONAL};
    }
    must_register(w, &d);
    for (uint32_t fr = 0; fr < FRAMES; fr++) {
        cr_assert(eq(int, weft_world_progress(w, 0.016f), WEFT_OK), "%s", weft_last_error());
        CHECKED();
    }
    uint64_t h = weft_world_hash(w);
    fixture_fini(&s->f);
    free(s);
    return h;
}

Test(terms, optional_or_systems_are_deterministic_at_1_to_8_workers) {
    uint64_t seed = fixture_seed("terms determinism");
    uint64_t want = run_world(1, WEFT_EXECUTION_INLINE, seed);
    const uint32_t workers[] = {1, 2, 3, 4, 8};
    for (size_t k = 0; k < sizeof workers / sizeof workers[0]; k++) {
        cr_assert(eq(u64, run_world(workers[k], WEFT_EXECUTION_THREADED, seed), want),
                  "seed %llu: world hash differs at %u workers", (unsigned long long)seed,
                  workers[k]);
    }
}
