/* test_auto_group.c: automatic grouping (weft/group.h) — the same random worlds with churn run
 * with the setting on and off at 1, 2 and 8 workers give every entity the same values, and
 * each setting's world hash is the same at every worker count; registering and unregistering
 * systems, turning the setting on and off, user groups and user-ordered pools re-plan the
 * groups as documented. The seed is printed; WT_SEED=<n> replays a run. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "auto_group_fixture.h"
#include "weft.h"
#include "weft_test.h"

TestSuite(auto_group, .timeout = 120);

enum { P = WT_AUTO_P, V = WT_AUTO_V, M = WT_AUTO_M, H = WT_AUTO_H, NCOMP = WT_AUTO_NCOMP };
#define NENT 700
#define FRAMES 6

typedef struct run_state {
    weft_world_t *world;
    weft_component_t comp[NCOMP];
    weft_entity_t ents[NENT];
    uint64_t rng;
} run_state_t;

static uint32_t next_u32(run_state_t *r) { return wt_auto_next(&r->rng); }

static void make_world(run_state_t *r, uint32_t workers) {
    weft_world_desc_t wd = {.worker_count = workers};
    cr_assert(eq(int, weft_world_create(&wd, &r->world), WEFT_OK), "%s", weft_last_error());
    static const char *const names[NCOMP] = {"P", "V", "M", "H"};
    for (uint32_t c = 0; c < NCOMP; c++) {
        cr_assert(
            eq(int,
               weft_component_register(
                   r->world, &(weft_component_desc_t){.name = names[c], .size = sizeof(uint32_t)},
                   &r->comp[c]),
               WEFT_OK));
    }
}

/* Per-row bodies: what each computes for an entity depends on that entity's values only, so
 * the row order a plan iterates in cannot change the result. */

static void sys_push(weft_iter_t *it, const weft_system_ctx_t *ctx) { /* V = V * 3 + P ^ M */
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            uint32_t *v = weft_iter_get(it, 0, i);
            *v = *v * 3u + (*(const uint32_t *)weft_iter_get(it, 1, i) ^
                            *(const uint32_t *)weft_iter_get(it, 2, i));
        }
    }
}

static void sys_heat(weft_iter_t *it, const weft_system_ctx_t *ctx) { /* H = H * 5 + P */
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            uint32_t *h = weft_iter_get(it, 0, i);
            *h = *h * 5u + *(const uint32_t *)weft_iter_get(it, 1, i);
        }
    }
}

static void reg(run_state_t *r, const char *name, weft_system_fn_t fn, uint32_t w, uint32_t a,
                uint32_t b, weft_system_t *out) {
    weft_system_desc_t d = {.name = name, .fn = fn, .parallel = true, .chunk_size = 16};
    d.terms[0] = (weft_query_term_t){.component = r->comp[w], .access = WEFT_ACCESS_WRITE};
    d.terms[1] = (weft_query_term_t){.component = r->comp[a]};
    if (b < NCOMP) {
        d.terms[2] = (weft_query_term_t){.component = r->comp[b]};
    }
    cr_assert(eq(int, weft_system_register(r->world, &d, out), WEFT_OK), "%s", weft_last_error());
}

/* Toggle component c on entity e (a fresh value when added). */
static void toggle(run_state_t *r, uint32_t e, uint32_t c) {
    wt_auto_toggle(r->world, r->ents[e], r->comp[c], &r->rng);
}

/* Move entity e to the other family: from {P,V}(M) to {P,H} or back (V and H swap; an entity
 * with neither gets V, one with both loses V). The order of the two steps is random, so some
 * moves pass through both families and some through neither. */
static void move_family(run_state_t *r, uint32_t e) {
    weft_world_t *w = r->world;
    uint32_t from = weft_component_has(w, r->ents[e], r->comp[V]) ? V : H;
    uint32_t to = from == V ? H : V;
    bool had = weft_component_has(w, r->ents[e], r->comp[from]);
    bool first_add = next_u32(r) % 2u == 0;
    if (first_add && !weft_component_has(w, r->ents[e], r->comp[to])) {
        toggle(r, e, to);
    }
    if (had) {
        toggle(r, e, from);
    }
    if (!first_add && !weft_component_has(w, r->ents[e], r->comp[to])) {
        toggle(r, e, to);
    }
}

/* Random churn: components come and go (rows move inside the groups), entities move between
 * the {P,V} and {P,H} families, die and are born again. */
static void churn(run_state_t *r, uint32_t changes) {
    for (uint32_t k = 0; k < changes; k++) {
        uint32_t e = next_u32(r) % NENT, roll = next_u32(r) % 16u;
        if (roll == 0) {
            cr_assert(eq(int, weft_entity_destroy(r->world, r->ents[e]), WEFT_OK));
            cr_assert(eq(int, weft_entity_create(r->world, &r->ents[e]), WEFT_OK));
        } else if (roll >= 13) {
            move_family(r, e);
        } else {
            /* P most often present, as in an engine; V and H rarely both */
            toggle(r, e, roll < 3 ? P : roll < 7 ? V : roll < 10 ? M : H);
        }
    }
}

/* Create entity e with components a and b, and c unless it is NCOMP (fresh values). */
static void spawn(run_state_t *r, uint32_t e, uint32_t a, uint32_t b, uint32_t c) {
    cr_assert(eq(int, weft_entity_create(r->world, &r->ents[e]), WEFT_OK));
    toggle(r, e, a);
    toggle(r, e, b);
    if (c < NCOMP) {
        toggle(r, e, c);
    }
}

/* One run: NENT random entities, three systems over {P,V}, {P,V,M}, {P,H}, FRAMES frames with
 * churn between them. Writes every entity's values (UINT32_MAX where absent) and the world
 * hash after each frame. */
static void run(uint64_t seed, uint32_t workers, bool on, uint32_t *vals, uint64_t *hashes) {
    run_state_t r = {.rng = seed | 1u};
    make_world(&r, workers);
    cr_assert(eq(int, weft_world_set_auto_groups(r.world, on), WEFT_OK));
    wt_auto_populate(r.world, r.ents, r.comp, NENT, &r.rng);
    weft_system_t s;
    reg(&r, "move", wt_auto_sys_move, P, V, NCOMP, &s);
    reg(&r, "push", sys_push, V, P, M, &s);
    reg(&r, "heat", sys_heat, H, P, NCOMP, &s);
    if (on) { /* the setting is really in use: P's pool is in a chain with V */
        weft_group_t g = weft_group_of(r.world, r.comp[P]);
        cr_assert(ne(u32, g.id, 0), "seed %llu: no automatic group", (unsigned long long)seed);
        cr_assert(weft_group_column(r.world, g, r.comp[V]) != NULL);
    } else {
        cr_assert(eq(u32, weft_group_of(r.world, r.comp[P]).id, 0));
    }
    for (uint32_t f = 0; f < FRAMES; f++) {
        churn(&r, f % 3 == 2 ? 0 : 150); /* a frame without churn reuses the join caches */
        wt_auto_frame(r.world, &hashes[f]);
    }
    wt_auto_finish(r.world, r.ents, r.comp, NENT, vals);
}

Test(auto_group, on_and_off_give_every_entity_the_same_values_at_1_2_and_8_workers) {
    wt_auto_compare(wt_seed("auto_group on/off"), run, NENT, NCOMP, FRAMES);
}

/* True when c's outermost group has `other` as a member too. */
static bool grouped_with(const run_state_t *r, uint32_t c, uint32_t other) {
    weft_group_t g = weft_group_of(r->world, r->comp[c]);
    return g.id != 0 && weft_group_column(r->world, g, r->comp[other]) != NULL;
}

Test(auto_group, registering_and_unregistering_systems_re_plan_the_chains) {
    run_state_t r = {.rng = 0x9E3779B97F4A7C15ull};
    make_world(&r, 1);
    for (uint32_t e = 0; e < 300; e++) {
        spawn(&r, e, P, e % 2 ? V : H, NCOMP); /* 150 {P,V}, 150 {P,H} */
    }
    cr_assert(eq(int, weft_world_set_auto_groups(r.world, true), WEFT_OK));
    cr_assert(weft_world_auto_groups(r.world));
    weft_system_t move, heat1, heat2;
    reg(&r, "move", wt_auto_sys_move, P, V, NCOMP, &move);
    cr_assert(grouped_with(&r, P, V), "one {P,V} system: P is grouped with V");
    cr_assert(eq(u32, weft_group_rows(r.world, weft_group_of(r.world, r.comp[P])), 150));
    reg(&r, "heat1", sys_heat, H, P, NCOMP, &heat1);
    cr_assert(grouped_with(&r, P, V), "a tie keeps the first set in order ({P,V} before {P,H})");
    reg(&r, "heat2", sys_heat, H, P, NCOMP, &heat2);
    cr_assert(grouped_with(&r, P, H), "two {P,H} systems outweigh one {P,V}: re-planned");
    cr_assert(not(grouped_with(&r, V, P)));
    cr_assert(eq(u32, weft_group_rows(r.world, weft_group_of(r.world, r.comp[P])), 150));
    cr_assert(eq(int, weft_system_unregister(r.world, heat2), WEFT_OK));
    cr_assert(grouped_with(&r, P, V), "unregistering re-plans");
    cr_assert(eq(int, weft_world_set_auto_groups(r.world, false), WEFT_OK));
    cr_assert(eq(u32, weft_group_of(r.world, r.comp[P]).id, 0), "off drops them");
    cr_assert(eq(int, weft_world_progress(r.world, 0.016f), WEFT_OK));
    cr_assert(eq(u32, weft_group_of(r.world, r.comp[P]).id, 0), "and no frame brings them back");
    cr_assert(eq(int, weft_world_set_auto_groups(r.world, true), WEFT_OK));
    cr_assert(grouped_with(&r, P, V), "on again plans at once");
    weft_world_destroy(r.world);
}

Test(auto_group, user_groups_win_and_user_ordered_pools_are_left_alone) {
    run_state_t r = {.rng = 0x2545F4914F6CDD1Dull};
    make_world(&r, 1);
    for (uint32_t e = 0; e < 100; e++) {
        spawn(&r, e, P, V, e % 2 ? M : H);
    }
    cr_assert(eq(int, weft_world_set_auto_groups(r.world, true), WEFT_OK));
    weft_system_t s;
    reg(&r, "move", wt_auto_sys_move, P, V, NCOMP, &s);
    reg(&r, "push", sys_push, V, P, M, &s);
    weft_group_t pv = weft_group_of(r.world, r.comp[P]);
    cr_assert(grouped_with(&r, P, V) && grouped_with(&r, M, P) && grouped_with(&r, M, V),
              "the {P,V} c {P,V,M} chain");
    cr_assert(ne(u32, weft_group_of(r.world, r.comp[M]).id, pv.id));
    /* A user group over {P,H} conflicts with that chain only: it is made as with the setting
     * off (id 1) and the automatic chain goes. */
    weft_group_t ph;
    weft_group_desc_t d = {.components = {r.comp[P], r.comp[H]}};
    cr_assert(eq(int, weft_group_create(r.world, &d, &ph), WEFT_OK), "%s", weft_last_error());
    cr_assert(eq(u32, ph.id, 1));
    cr_assert(eq(u32, weft_group_of(r.world, r.comp[P]).id, 1));
    cr_assert(eq(u32, weft_group_rows(r.world, ph), 50));
    /* A conflicting user request still fails as with the setting off, world unchanged. */
    weft_group_t bad = {7};
    weft_group_desc_t pm = {.components = {r.comp[P], r.comp[M]}};
    cr_assert(eq(int, weft_group_create(r.world, &pm, &bad), WEFT_ECONFLICT));
    cr_assert(eq(u32, bad.id, 0));
    cr_assert(eq(int, weft_world_progress(r.world, 0.016f), WEFT_OK));
    /* Re-planned around the user group: P is the user's, so {V,M} pools stay ungrouped (every
     * system set holds P) */
    cr_assert(eq(u32, weft_group_of(r.world, r.comp[P]).id, 1));
    cr_assert(eq(u32, weft_group_of(r.world, r.comp[V]).id, 0));
    weft_world_destroy(r.world);

    /* A pool the user sorts is the user's from then on. */
    r = (run_state_t){.rng = 0x2545F4914F6CDD1Dull};
    make_world(&r, 1);
    for (uint32_t e = 0; e < 100; e++) {
        spawn(&r, e, P, V, NCOMP);
    }
    cr_assert(eq(int, weft_world_set_auto_groups(r.world, true), WEFT_OK));
    reg(&r, "move", wt_auto_sys_move, P, V, NCOMP, &s);
    cr_assert(grouped_with(&r, P, V));
    cr_assert(eq(int, weft_component_remove_ordered(r.world, r.ents[3], r.comp[P]), WEFT_OK), "%s",
              weft_last_error());
    cr_assert(eq(u32, weft_group_of(r.world, r.comp[V]).id, 0), "dropped, not refused");
    cr_assert(eq(int, weft_world_progress(r.world, 0.016f), WEFT_OK));
    cr_assert(eq(u32, weft_group_of(r.world, r.comp[V]).id, 0), "P is the user's: {P,V} is not");
    cr_assert(eq(int, weft_component_move_row(r.world, r.comp[V], 0, 5), WEFT_OK), "%s",
              weft_last_error());
    cr_assert(eq(int, weft_world_progress(r.world, 0.016f), WEFT_OK));
    cr_assert(eq(u32, weft_group_of(r.world, r.comp[P]).id, 0), "P and V are user-ordered now");
    cr_assert(eq(u32, weft_group_of(r.world, r.comp[V]).id, 0));
    weft_world_destroy(r.world);
}

/* Count the live entities among ents[0 .. n) holding both a and b. */
static uint32_t holding(const run_state_t *r, uint32_t n, uint32_t a, uint32_t b) {
    uint32_t k = 0;
    for (uint32_t e = 0; e < n; e++) {
        k += weft_component_has(r->world, r->ents[e], r->comp[a]) &&
             weft_component_has(r->world, r->ents[e], r->comp[b]);
    }
    return k;
}

Test(auto_group, a_snapshot_taken_under_an_older_plan_restores_and_is_re_planned) {
    run_state_t r = {.rng = 0xD1B54A32D192ED03ull};
    make_world(&r, 1);
    for (uint32_t e = 0; e < 200; e++) {
        spawn(&r, e, P, e % 3 ? V : H, NCOMP);
    }
    cr_assert(eq(int, weft_world_set_auto_groups(r.world, true), WEFT_OK));
    weft_system_t s;
    reg(&r, "move", wt_auto_sys_move, P, V, NCOMP, &s);
    cr_assert(grouped_with(&r, P, V));
    weft_snapshot_t *snap = NULL;
    cr_assert(eq(int, weft_snapshot_create(r.world, &snap), WEFT_OK));
    cr_assert(eq(int, weft_snapshot_capture(r.world, snap), WEFT_OK));
    uint64_t before = weft_world_hash(r.world);
    for (uint32_t e = 0; e < 40; e++) { /* rows move inside the group */
        toggle(&r, e, V);
    }
    reg(&r, "heat1", sys_heat, H, P, NCOMP, &s);
    reg(&r, "heat2", sys_heat, H, P, NCOMP, &s);
    cr_assert(grouped_with(&r, P, H), "re-planned to {P,H}");
    cr_assert(eq(int, weft_snapshot_restore(r.world, snap), WEFT_OK), "%s", weft_last_error());
    cr_assert(eq(u64, weft_world_hash(r.world), before), "the captured rows, in captured order");
    cr_assert(eq(u32, weft_group_of(r.world, r.comp[P]).id, 0), "the newer plan is dropped");
    cr_assert(eq(int, weft_world_progress(r.world, 0.016f), WEFT_OK));
    weft_group_t g = weft_group_of(r.world, r.comp[P]);
    cr_assert(grouped_with(&r, P, H), "planned again before the frame");
    cr_assert(eq(u32, weft_group_rows(r.world, g), holding(&r, 200, P, H)));
    weft_snapshot_destroy(snap);
    weft_world_destroy(r.world);
}
