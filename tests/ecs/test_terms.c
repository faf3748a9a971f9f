/* test_terms.c: query terms — OPTIONAL and OR terms, up to WEFT_QUERY_MAX_TERMS (16) terms —
 * against a reference model.
 *
 * 16 four-byte components, a group over the first two, 400 entities with random component
 * sets and per-entity values. Each round draws a random query (1-16 distinct terms, random
 * opers with at least one AND term and OR groups of two or more, up to 3 excludes) and a
 * random chunk size, iterates every chunk and checks every batch against the model: each row
 * matches, the batch's `present` bits equal each row's own set of OPTIONAL/OR terms, every
 * present term reads back the entity's value, and the matched set is exactly the model's.
 * The seed is printed; WT_SEED=<n> replays a run. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <time.h>

#include "ecs_fixture.h"
#include "weft_test.h"

enum { NCOMP = 16, NENT = 400, ROUNDS = 400 };

static weft_world_t *world;
static test_alloc_t alloc_state;
static weft_component_t comp[NCOMP];
static weft_entity_t ents[NENT];
static bool has[NENT][NCOMP];
static uint64_t rng;

static uint32_t below(uint32_t n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static uint32_t value_of(uint32_t e, uint32_t c) { return e * 131u + c * 7u + 1u; }

static int slot_of(weft_entity_t e) {
    for (int i = 0; i < NENT; i++) {
        if (ents[i] == e) {
            return i;
        }
    }
    return -1;
}

static void setup(void) {
    memset(&alloc_state, 0, sizeof alloc_state);
    world = test_world(&alloc_state);
    cr_assert(world != NULL);
    for (uint32_t c = 0; c < NCOMP; c++) {
        char name[8];
        snprintf(name, sizeof name, "T%u", c);
        comp[c] = test_register(world, name, 4);
    }
    weft_group_t g;
    cr_assert(
        eq(int,
           weft_group_create(world, &(weft_group_desc_t){.components = {comp[0], comp[1]}}, &g),
           WEFT_OK),
        "%s", weft_last_error());
}

static void teardown(void) { weft_world_destroy(world); }

static void populate(void) {
    for (uint32_t e = 0; e < NENT; e++) {
        ents[e] = test_entity(world);
        for (uint32_t c = 0; c < NCOMP; c++) {
            has[e][c] = below(10) < 6;
            if (has[e][c]) {
                uint32_t v = value_of(e, c);
                cr_assert(eq(int, weft_component_set(world, ents[e], comp[c], &v), WEFT_OK));
            }
        }
    }
}

typedef struct drawn {
    weft_query_desc_t desc;
    uint32_t nterms;
    uint32_t term_comp[NCOMP]; /* model component of each term */
    uint32_t nexcl;
    uint32_t excl_comp[3];
} drawn_t;

static void draw_query(drawn_t *d) {
    memset(d, 0, sizeof *d);
    uint32_t order[NCOMP];
    for (uint32_t c = 0; c < NCOMP; c++) {
        order[c] = c;
    }
    for (uint32_t c = NCOMP - 1; c > 0; c--) { /* shuffle */
        uint32_t j = below(c + 1), t = order[c];
        order[c] = order[j];
        order[j] = t;
    }
    d->nterms = 1 + below(NCOMP);
    for (uint32_t t = 0; t < d->nterms; t++) {
        d->term_comp[t] = order[t];
        d->desc.terms[t].component = comp[order[t]];
        d->desc.terms[t].access = below(2) ? WEFT_ACCESS_READ : WEFT_ACCESS_WRITE;
        uint32_t r = below(10);
        d->desc.terms[t].oper = r < 5 ? WEFT_TERM_AND : r < 7 ? WEFT_TERM_OPTIONAL : WEFT_TERM_OR;
    }
    /* Repair: OR groups of one become OPTIONAL; at least one AND term. */
    bool any_and = false;
    for (uint32_t t = 0; t < d->nterms; t++) {
        weft_query_term_t *q = d->desc.terms;
        bool prev = t > 0 && q[t - 1].oper == WEFT_TERM_OR;
        bool next = t + 1 < d->nterms && q[t + 1].oper == WEFT_TERM_OR;
        if (q[t].oper == WEFT_TERM_OR && !prev && !next) {
            q[t].oper = WEFT_TERM_OPTIONAL;
        }
        any_and = any_and || q[t].oper == WEFT_TERM_AND;
    }
    if (!any_and) {
        uint32_t t = below(d->nterms);
        weft_query_term_t *q = d->desc.terms;
        q[t].oper = WEFT_TERM_AND;
        for (uint32_t u = 0; u < d->nterms; u++) { /* the split may leave lone OR terms */
            bool prev = u > 0 && q[u - 1].oper == WEFT_TERM_OR;
            bool next = u + 1 < d->nterms && q[u + 1].oper == WEFT_TERM_OR;
            if (q[u].oper == WEFT_TERM_OR && !prev && !next) {
                q[u].oper = WEFT_TERM_OPTIONAL;
            }
        }
    }
    d->nexcl = d->nterms < NCOMP ? below(4) : 0;
    if (d->nexcl > NCOMP - d->nterms) {
        d->nexcl = NCOMP - d->nterms;
    }
    for (uint32_t x = 0; x < d->nexcl; x++) {
        d->excl_comp[x] = order[d->nterms + x];
        d->desc.exclude[x] = comp[order[d->nterms + x]];
    }
}

/* The model's verdict for entity e; *loose receives its OPTIONAL/OR presence bits. */
static bool model_match(const drawn_t *d, uint32_t e, uint32_t *loose) {
    *loose = 0;
    for (uint32_t x = 0; x < d->nexcl; x++) {
        if (has[e][d->excl_comp[x]]) {
            return false;
        }
    }
    bool ok = true, group_open = false, group_hit = false;
    for (uint32_t t = 0; t < d->nterms; t++) {
        weft_term_oper_t op = d->desc.terms[t].oper;
        bool h = has[e][d->term_comp[t]];
        if (op == WEFT_TERM_AND) {
            ok = ok && h;
        } else if (h) {
            *loose |= 1u << t;
        }
        if (op == WEFT_TERM_OR) {
            group_hit = (group_open ? group_hit : false) || h;
            group_open = true;
        }
        bool closes =
            group_open && (t + 1 == d->nterms || d->desc.terms[t + 1].oper != WEFT_TERM_OR);
        if (closes) {
            ok = ok && group_hit;
            group_open = false;
        }
    }
    return ok;
}

static void check_query(const drawn_t *d, uint64_t seed, uint32_t round) {
    weft_query_t *q = NULL;
    cr_assert(eq(int, weft_query_create(world, &d->desc, &q), WEFT_OK), "seed %llu round %u: %s",
              (unsigned long long)seed, round, weft_last_error());
    bool seen[NENT] = {false};
    uint32_t chunk_rows = below(3) == 0 ? 0 : 1 + below(100);
    uint32_t chunks = weft_query_chunk_count(q, chunk_rows);
    for (uint32_t c = 0; c < chunks; c++) {
        weft_iter_t it;
        cr_assert(eq(int, weft_query_iter(q, chunk_rows, c, &it), WEFT_OK));
        cr_assert(eq(u32, it.term_count, d->nterms));
        while (weft_iter_next(&it)) {
            for (uint32_t i = 0; i < it.rows; i++) {
                int e = slot_of(weft_iter_entity(&it, i));
                cr_assert(e >= 0);
                uint32_t loose = 0;
                cr_assert(model_match(d, (uint32_t)e, &loose),
                          "seed %llu round %u: entity %d matched, the model says no",
                          (unsigned long long)seed, round, e);
                cr_assert(not(seen[e]), "seed %llu round %u: entity %d twice",
                          (unsigned long long)seed, round, e);
                seen[e] = true;
                for (uint32_t t = 0; t < d->nterms; t++) {
                    bool want = d->desc.terms[t].oper == WEFT_TERM_AND || ((loose >> t) & 1u);
                    cr_assert(eq(int, weft_iter_has(&it, t), want),
                              "seed %llu round %u: entity %d term %u presence %d, model %d",
                              (unsigned long long)seed, round, e, t, weft_iter_has(&it, t), want);
                    if (want) {
                        uint32_t v;
                        memcpy(&v, weft_iter_get(&it, t, i), 4);
                        cr_assert(eq(u32, v, value_of((uint32_t)e, d->term_comp[t])));
                    } else {
                        cr_assert(it.columns[t] == NULL);
                    }
                }
            }
        }
    }
    for (uint32_t e = 0; e < NENT; e++) {
        uint32_t loose;
        cr_assert(eq(int, seen[e], model_match(d, e, &loose)),
                  "seed %llu round %u: entity %u matched %d, model %d", (unsigned long long)seed,
                  round, e, seen[e], model_match(d, e, &loose));
    }
    weft_query_destroy(q);
}

Test(terms, optional_and_or_against_model, .init = setup, .fini = teardown, .timeout = 120) {
    uint64_t seed = wt_seed("terms model");
    rng = seed ? seed : 1;
    populate();
    for (uint32_t round = 0; round < ROUNDS; round++) {
        drawn_t d;
        draw_query(&d);
        check_query(&d, seed, round);
    }
}

Test(terms, sixteen_terms_iterate, .init = setup, .fini = teardown) {
    weft_entity_t e = test_entity(world);
    weft_query_desc_t d = {0};
    for (uint32_t c = 0; c < NCOMP; c++) {
        uint32_t v = c;
        cr_assert(eq(int, weft_component_set(world, e, comp[c], &v), WEFT_OK));
        d.terms[c] = (weft_query_term_t){.component = comp[c], .access = WEFT_ACCESS_WRITE};
    }
    weft_query_t *q = NULL;
    cr_assert(eq(int, weft_query_create(world, &d, &q), WEFT_OK), "%s", weft_last_error());
    cr_assert(eq(u32, weft_query_entity_count(q), 1));
    weft_iter_t it;
    cr_assert(eq(int, weft_query_iter(q, 0, 0, &it), WEFT_OK));
    cr_assert(weft_iter_next(&it));
    for (uint32_t t = 0; t < NCOMP; t++) {
        uint32_t v;
        memcpy(&v, weft_iter_get(&it, t, 0), 4);
        cr_assert(eq(u32, v, t));
    }
}

Test(terms, bad_opers_are_refused, .init = setup, .fini = teardown) {
    weft_query_t *q = NULL;
    weft_query_term_t opt = {.component = comp[0], .oper = WEFT_TERM_OPTIONAL};
    weft_query_term_t or1 = {.component = comp[1], .oper = WEFT_TERM_OR};
    weft_query_term_t and2 = {.component = comp[2]};
    weft_query_desc_t only_optional = {.terms = {opt}};
    cr_assert(eq(int, weft_query_create(world, &only_optional, &q), WEFT_EINVAL));
    weft_query_desc_t lone_or = {.terms = {and2, or1}};
    cr_assert(eq(int, weft_query_create(world, &lone_or, &q), WEFT_EINVAL));
    weft_query_desc_t bad = {.terms = {{.component = comp[0], .oper = (weft_term_oper_t)9}}};
    cr_assert(eq(int, weft_query_create(world, &bad, &q), WEFT_EINVAL));
    weft_query_desc_t filtered_optional = {
        .terms = {and2,
                  {.component = comp[0], .oper = WEFT_TERM_OPTIONAL, .filter = WEFT_CHANGE_ADDED}}};
    cr_assert(eq(int, weft_query_create(world, &filtered_optional, &q), WEFT_EINVAL));
    cr_assert(q == NULL);
    weft_query_desc_t ok = {.terms = {or1, {.component = comp[3], .oper = WEFT_TERM_OR}, and2}};
    cr_assert(eq(int, weft_query_create(world, &ok, &q), WEFT_OK), "%s", weft_last_error());
}
