/* internal_auto_pack.c: packed families of automatic grouping (src/core/auto_group.h) — a
 * re-pack puts the family's rows in step and leaves every group whole; random worlds with
 * churn and re-packs between frames give every entity the values the setting-off world gives,
 * at 1, 2 and 8 workers; the rent-or-buy rule re-packs a quiet world after some frames, never
 * under churn that breaks every window each frame, and a re-packed family's system reads
 * columns only. The seed is printed; WT_SEED=<n> replays a run. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "auto_group_fixture.h"
#include "src/core/auto_group.h"
#include "src/core/group.h"
#include "src/core/world.h"
#include "weft.h"
#include "weft_test.h"

TestSuite(auto_pack, .timeout = 120);

enum { P = WT_AUTO_P, V = WT_AUTO_V, M = WT_AUTO_M, H = WT_AUTO_H, NCOMP = WT_AUTO_NCOMP };
#define NENT 900
#define FRAMES 8

typedef struct pack_state {
    weft_world_t *world;
    weft_component_t comp[NCOMP];
    weft_entity_t ents[NENT];
    uint64_t rng;
    uint32_t column_rows; /* rows the heat system got in batches with both columns */
    uint32_t heat_rows;   /* rows the heat system visited */
} pack_state_t;

static uint32_t next_u32(pack_state_t *s) { return wt_auto_next(&s->rng); }

/* Per-row bodies: each computes from its entity's values only, so row order cannot matter. */

static void sys_push(weft_iter_t *it, const weft_system_ctx_t *ctx) { /* P = P * 3 + V ^ M */
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            uint32_t *p = weft_iter_get(it, 0, i);
            *p = *p * 3u + (*(const uint32_t *)weft_iter_get(it, 1, i) ^
                            *(const uint32_t *)weft_iter_get(it, 2, i));
        }
    }
}

/* P = P * 5 + H; with ctx->user (one worker only) it counts column rows. */
static void sys_heat(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    pack_state_t *s = ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            uint32_t *p = weft_iter_get(it, 0, i);
            *p = *p * 5u + *(const uint32_t *)weft_iter_get(it, 1, i);
        }
        if (s != NULL) {
            s->heat_rows += it->rows;
            s->column_rows += it->columns[0] && it->columns[1] ? it->rows : 0u;
        }
    }
}

static void reg(pack_state_t *s, const char *name, weft_system_fn_t fn, uint32_t a, uint32_t b,
                uint32_t c, void *user) {
    weft_system_desc_t d = {
        .name = name, .fn = fn, .user = user, .parallel = true, .chunk_size = 64};
    d.terms[0] = (weft_query_term_t){.component = s->comp[a], .access = WEFT_ACCESS_WRITE};
    d.terms[1] = (weft_query_term_t){.component = s->comp[b]};
    if (c < NCOMP) {
        d.terms[2] = (weft_query_term_t){.component = s->comp[c]};
    }
    cr_assert(eq(int, weft_system_register(s->world, &d, NULL), WEFT_OK), "%s", weft_last_error());
}

/* A world of the three systems {P,V}, {P,V,M}, {P,H} (registered before any entity). */
static void make_world(pack_state_t *s, uint32_t workers, bool on, bool count) {
    weft_world_desc_t wd = {.worker_count = workers};
    cr_assert(eq(int, weft_world_create(&wd, &s->world), WEFT_OK), "%s", weft_last_error());
    static const char *const names[NCOMP] = {"P", "V", "M", "H"};
    for (uint32_t c = 0; c < NCOMP; c++) {
        weft_component_desc_t cd = {.name = names[c], .size = sizeof(uint32_t)};
        cr_assert(eq(int, weft_component_register(s->world, &cd, &s->comp[c]), WEFT_OK));
    }
    cr_assert(eq(int, weft_world_set_auto_groups(s->world, on), WEFT_OK));
    reg(s, "move", wt_auto_sys_move, P, V, NCOMP, NULL);
    reg(s, "push", sys_push, P, V, M, NULL);
    reg(s, "heat", sys_heat, P, H, NCOMP, count ? s : NULL);
}

/* Toggle component c on entity e (a fresh value when added). */
static void toggle(pack_state_t *s, uint32_t e, uint32_t c) {
    wt_auto_toggle(s->world, s->ents[e], s->comp[c], &s->rng);
}

/* Random churn: components come and go (rows move in the chain and in the family), entities
 * die and are born again. */
static void churn(pack_state_t *s, uint32_t changes) {
    for (uint32_t k = 0; k < changes; k++) {
        uint32_t e = next_u32(s) % NENT, roll = next_u32(s) % 16u;
        if (roll == 0) {
            cr_assert(eq(int, weft_entity_destroy(s->world, s->ents[e]), WEFT_OK));
            cr_assert(eq(int, weft_entity_create(s->world, &s->ents[e]), WEFT_OK));
        } else {
            toggle(s, e, roll < 3 ? P : roll < 7 ? V : roll < 10 ? M : H);
        }
    }
}

static weft__pool_t *pool_of(const pack_state_t *s, uint32_t c) {
    return &s->world->components[s->comp[c].id]->pool;
}

/* The plan has one packed family, {P,H}, around the {P,V} c {P,V,M} chain. */
static weft__auto_family_t *family(const pack_state_t *s, uint64_t seed) {
    weft_world_t *w = s->world;
    cr_assert(eq(u32, w->auto_family_count, 1), "seed %llu: one packed family",
              (unsigned long long)seed);
    weft__auto_family_t *fam = &w->auto_families[0];
    cr_assert(fam->count == 2 && fam->ids[0] == s->comp[P].id && fam->ids[1] == s->comp[H].id,
              "seed %llu: the family is {P,H}", (unsigned long long)seed);
    return fam;
}

/* Re-pack now and check the result: every group whole, and H's first k rows in step with P's
 * rows past the chain's prefix, k being every entity with P and H outside that prefix. */
static void repack_and_check(pack_state_t *s, uint64_t seed) {
    weft_world_t *w = s->world;
    uint32_t k = weft__auto_repack(w, family(s, seed));
    for (uint32_t g = 1; g <= w->group_count; g++) {
        cr_assert(weft__group_check(w, g), "seed %llu: group %u broken by a re-pack",
                  (unsigned long long)seed, g);
    }
    const weft__pool_t *p = pool_of(s, P), *h = pool_of(s, H);
    uint32_t base = p->group != 0 ? w->groups[p->group].n : 0u;
    cr_assert(eq(u32, h->group, 0), "seed %llu: H is no group's", (unsigned long long)seed);
    uint32_t want = 0;
    for (uint32_t r = 0; r < h->count; r++) {
        uint32_t row = weft__pool_row(p, h->dense[r]);
        want += row != WEFT__ROW_NONE && row >= base;
    }
    cr_assert(eq(u32, k, want), "seed %llu: rows packed", (unsigned long long)seed);
    for (uint32_t i = 0; i < k; i++) {
        cr_assert(eq(u32, p->dense[base + i], h->dense[i]),
                  "seed %llu: row %u of the family out of step", (unsigned long long)seed, i);
    }
}

/* One run: NENT random entities, FRAMES frames with churn between them; with the setting on,
 * a re-pack between some frames (as well as those the rule makes), some followed by more
 * churn. Writes every entity's
 * values (UINT32_MAX where absent) and the world hash after each frame. */
static void run(uint64_t seed, uint32_t workers, bool on, uint32_t *vals, uint64_t *hashes) {
    pack_state_t s = {.rng = seed | 1u};
    make_world(&s, workers, on, false);
    wt_auto_populate(s.world, s.ents, s.comp, NENT, &s.rng);
    for (uint32_t f = 0; f < FRAMES; f++) {
        churn(&s, f % 3 == 2 ? 0 : 120);
        uint32_t roll = next_u32(&s) % 3u; /* drawn in both settings: the same churn follows */
        if (on && roll != 0) {
            repack_and_check(&s, seed);
        }
        if (roll == 2) { /* rows move after the re-pack: the frame must not trust it */
            churn(&s, 6);
        }
        wt_auto_frame(s.world, &hashes[f]);
    }
    wt_auto_finish(s.world, s.ents, s.comp, NENT, vals);
}

Test(auto_pack, re_packs_with_churn_give_the_setting_off_values_at_1_2_and_8_workers) {
    wt_auto_compare(wt_seed("auto_pack on/off"), run, NENT, NCOMP, FRAMES);
}

#define RULE_N 20000u  /* entities: P on all, V on the even (M every fourth), H on the odd */
#define RULE_FRAMES 64 /* quiet frames the rule gets to re-pack in */

/* Quiet frames until the family's re-pack count reaches `want` (at most RULE_FRAMES); returns
 * the frames run. */
static uint32_t frames_until(pack_state_t *s, uint32_t want) {
    const weft__auto_family_t *fam = &s->world->auto_families[0];
    uint32_t f = 0;
    while (fam->repacks < want && f < RULE_FRAMES) {
        cr_assert(eq(int, weft_world_progress(s->world, 0.016f), WEFT_OK));
        f++;
    }
    return f;
}

/* One frame; true when the heat system read every row as columns. */
static bool all_columns(pack_state_t *s) {
    s->heat_rows = s->column_rows = 0;
    cr_assert(eq(int, weft_world_progress(s->world, 0.016f), WEFT_OK));
    cr_assert(eq(u32, s->heat_rows, RULE_N / 2u));
    return s->column_rows == s->heat_rows;
}

Test(auto_pack, the_rule_re_packs_a_quiet_world_and_never_under_churn_that_breaks_it_each_frame) {
    static pack_state_t s;
    memset(&s, 0, sizeof s);
    s.rng = 0x9E3779B97F4A7C15ull;
    make_world(&s, 1, true, true);
    weft_entity_t *ents = malloc(RULE_N * sizeof *ents);
    cr_assert(ents != NULL);
    for (uint32_t i = 0; i < RULE_N; i++) {
        cr_assert(eq(int, weft_entity_create(s.world, &ents[i]), WEFT_OK));
        uint32_t v = i;
        cr_assert(eq(int, weft_component_set(s.world, ents[i], s.comp[P], &v), WEFT_OK));
        uint32_t c = i % 2u ? H : V;
        cr_assert(eq(int, weft_component_set(s.world, ents[i], s.comp[c], &v), WEFT_OK));
        if (i % 4u == 0) {
            cr_assert(eq(int, weft_component_set(s.world, ents[i], s.comp[M], &v), WEFT_OK));
        }
    }
    (void)family(&s, 0);
    cr_assert(not(all_columns(&s)), "the creation order leaves the family unpacked");
    cr_assert(eq(u32, s.world->auto_families[0].repacks, 0), "not right after the writes");
    uint32_t f = frames_until(&s, 1);
    /* From creation order a re-pack moves every row, which costs several frames of rent
     * (auto_group.c's costs: about 15), and the world must be quiet (not on the first frame) */
    cr_assert(f >= 4 && f < RULE_FRAMES, "a quiet world re-packs once the rent paid for it (%u)",
              f);
    cr_assert(all_columns(&s), "then its system reads columns only");
    /* 5% of the H entities lose H and get it back every frame: every window breaks. */
    for (uint32_t f2 = 0; f2 < RULE_FRAMES; f2++) {
        for (uint32_t k = 0; k < RULE_N / 40u; k++) {
            uint32_t i = (next_u32(&s) % (RULE_N / 2u)) * 2u + 1u, v = i;
            cr_assert(eq(int, weft_component_remove(s.world, ents[i], s.comp[H]), WEFT_OK));
            cr_assert(eq(int, weft_component_set(s.world, ents[i], s.comp[H], &v), WEFT_OK));
        }
        cr_assert(eq(int, weft_world_progress(s.world, 0.016f), WEFT_OK));
    }
    cr_assert(eq(u32, s.world->auto_families[0].repacks, 1),
              "no re-pack under churn that undoes it within a frame");
    f = frames_until(&s, 2);
    cr_assert(f < RULE_FRAMES, "quiet again: re-packed again");
    cr_assert(all_columns(&s));
    free(ents);
    weft_world_destroy(s.world);
}
