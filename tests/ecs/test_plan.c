/* test_plan.c: query planning and block batches — every plan (a group, the planner's pick,
 * each AND term forced to drive through weft_query_desc_t.drive, the merge-join over pools
 * sorted by entity) against a naive model on random worlds with churn, and systems using the
 * queries on 2-8 workers.
 * The seed is printed; WT_SEED=<n> replays a run. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <time.h>

#include "ecs_fixture.h"
#include "src/core/pool.h"
#include "src/core/query.h"
#include "src/core/world.h"
#include "weft_test.h"

#define NCOMP 4
#define NENT 600
#define ROUNDS 12

static test_alloc_t alloc_state;
static weft_world_t *world;
static weft_component_t comp[NCOMP];
static weft_entity_t ents[NENT];
static bool alive[NENT];
static bool has[NENT][NCOMP];
static wt_rng_t rng;

static uint32_t below(uint32_t n) { return wt_rng_below(&rng, n); }

static uint32_t value_of(uint32_t e, uint32_t c) { return e * 16u + c + 1u; }

static void setup(void) {
    memset(&alloc_state, 0, sizeof alloc_state);
    world = test_world(&alloc_state);
    cr_assert(world != NULL);
    for (uint32_t c = 0; c < NCOMP; c++) {
        char name[8];
        snprintf(name, sizeof name, "C%u", c);
        comp[c] = test_register(world, name, sizeof(uint32_t));
    }
    memset(alive, 0, sizeof alive);
    memset(has, 0, sizeof has);
}

static void teardown(void) {
    weft_world_destroy(world);
    cr_expect(eq(sz, alloc_state.live_bytes, 0));
}

TestSuite(plan, .init = setup, .fini = teardown, .timeout = 120);

static void give(uint32_t e, uint32_t c) {
    uint32_t v = value_of(e, c);
    cr_assert(eq(int, weft_component_set(world, ents[e], comp[c], &v), WEFT_OK));
    has[e][c] = true;
}

static void take(uint32_t e, uint32_t c) {
    cr_assert(eq(int, weft_component_remove(world, ents[e], comp[c]), WEFT_OK));
    has[e][c] = false;
}

static void spawn(uint32_t e) {
    ents[e] = test_entity(world);
    alive[e] = true;
    for (uint32_t c = 0; c < NCOMP; c++) {
        has[e][c] = false;
        if (below(10) < 6) {
            give(e, c);
        }
    }
}

/* Random adds, removes, destroys and creates (rows move inside and out of groups). */
static void churn(uint32_t ops) {
    for (uint32_t k = 0; k < ops; k++) {
        uint32_t e = below(NENT), c = below(NCOMP);
        if (!alive[e]) {
            spawn(e);
        } else if (below(20) == 0) {
            cr_assert(eq(int, weft_entity_destroy(world, ents[e]), WEFT_OK));
            alive[e] = false;
        } else if (has[e][c]) {
            take(e, c);
        } else {
            give(e, c);
        }
    }
}

static int32_t model_of(uint32_t index) {
    for (uint32_t e = 0; e < NENT; e++) {
        if (alive[e] && weft_entity_index(ents[e]) == index) {
            return (int32_t)e;
        }
    }
    return -1;
}

/* Iterate q (terms[] are component numbers, excl -1 or one) in chunks of chunk_rows; every
 * entry must match the model with the right data, each matching entity exactly once. */
static const weft__query_plan_t *forced; /* non-NULL: check() iterates this plan */

static void check(const weft_query_t *q, const uint32_t *terms, uint32_t nterms, int excl,
                  uint32_t chunk_rows, uint64_t seed, const char *plan) {
    static bool seen[NENT];
    memset(seen, 0, sizeof seen);
    uint32_t total = 0;
    uint32_t chunks = weft_query_chunk_count(q, chunk_rows);
    if (forced != NULL) {
        chunks = forced->rows == 0 ? 0
                 : chunk_rows      ? (forced->rows + chunk_rows - 1) / chunk_rows
                                   : 1;
    }
    for (uint32_t k = 0; k < chunks; k++) {
        weft_iter_t it;
        if (forced != NULL) {
            weft__query_iter_planned(q, forced, chunk_rows, k, &it);
        } else {
            cr_assert(eq(int, weft_query_iter(q, chunk_rows, k, &it), WEFT_OK));
        }
        while (weft_iter_next(&it)) {
            for (uint32_t i = 0; i < it.rows; i++) {
                int32_t e = model_of(it.entities[i]);
                cr_assert(e >= 0, "seed %llu %s: a dead entity matched", (unsigned long long)seed,
                          plan);
                cr_assert(not(seen[e]), "seed %llu %s: entity %d twice", (unsigned long long)seed,
                          plan, e);
                seen[e] = true;
                for (uint32_t t = 0; t < nterms; t++) {
                    cr_assert(has[e][terms[t]], "seed %llu %s: entity %d lacks C%u",
                              (unsigned long long)seed, plan, e, terms[t]);
                    const uint32_t *p = weft_iter_get(&it, t, i);
                    cr_assert(p == weft_component_get(world, ents[e], comp[terms[t]]),
                              "seed %llu %s: entity %d term %u points elsewhere",
                              (unsigned long long)seed, plan, e, t);
                    cr_assert(value_of((uint32_t)e, terms[t]) == *p, "seed %llu %s: value",
                              (unsigned long long)seed, plan);
                    if (it.columns[t] != NULL) {
                        const uint32_t *col = it.columns[t];
                        cr_assert(col + i == p, "seed %llu %s: column and get disagree",
                                  (unsigned long long)seed, plan);
                    }
                }
                cr_assert(excl < 0 || !has[e][excl], "seed %llu %s: excluded entity %d",
                          (unsigned long long)seed, plan, e);
            }
            total += it.rows;
        }
    }
    uint32_t want = 0;
    for (uint32_t e = 0; e < NENT; e++) {
        bool m = alive[e] && (excl < 0 || !has[e][excl]);
        for (uint32_t t = 0; t < nterms && m; t++) {
            m = has[e][terms[t]];
        }
        want += m;
    }
    cr_assert(eq(u32, total, want), "seed %llu %s: %u matches, the model says %u",
              (unsigned long long)seed, plan, total, want);
}

/* A random query: terms[] (component numbers) in random order, maybe one exclude. */
typedef struct model_query {
    uint32_t nterms, terms[NCOMP];
    int excl;
    weft_query_desc_t desc;
} model_query_t;

static void random_query(model_query_t *mq) {
    mq->nterms = 1 + below(NCOMP);
    uint32_t order[NCOMP] = {0, 1, 2, 3};
    for (uint32_t i = NCOMP - 1; i > 0; i--) {
        uint32_t j = below(i + 1), tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    memset(&mq->desc, 0, sizeof mq->desc);
    for (uint32_t t = 0; t < mq->nterms; t++) {
        mq->terms[t] = order[t];
        mq->desc.terms[t] = (weft_query_term_t){.component = comp[mq->terms[t]]};
    }
    mq->excl = mq->nterms < NCOMP && below(3) == 0 ? (int)order[mq->nterms] : -1;
    if (mq->excl >= 0) {
        mq->desc.exclude[0] = comp[mq->excl];
    }
}

static const uint32_t chunk_sizes[] = {0, 1, 7, 64, 200};

/* Random queries, each iterated under every plan and chunk size, after rounds of churn. */
/* Seed the run (printed, named kind + label) and spawn three quarters of the entities. */
static uint64_t start_model(const char *kind, const char *label) {
    char name[64];
    snprintf(name, sizeof name, "plan %s %s", kind, label);
    uint64_t seed = wt_seed(name);
    rng.s = seed;
    for (uint32_t e = 0; e < NENT; e++) {
        if (below(4) != 0) {
            spawn(e);
        }
    }
    return seed;
}

static void run_model(const char *label) {
    uint64_t seed = start_model("model", label);
    for (uint32_t round = 0; round < ROUNDS; round++) {
        churn(round == 0 ? 0 : 150);
        for (uint32_t qn = 0; qn < 6; qn++) {
            model_query_t mq;
            random_query(&mq);
            for (uint32_t drive = 0; drive <= mq.nterms; drive++) {
                mq.desc.drive = drive;
                weft_query_t *q = NULL;
                cr_assert(eq(int, weft_query_create(world, &mq.desc, &q), WEFT_OK), "%s",
                          weft_last_error());
                char plan[64];
                snprintf(plan, sizeof plan, "round %u query %u drive %u", round, qn, drive);
                check(q, mq.terms, mq.nterms, mq.excl, chunk_sizes[below(5)], seed, plan);
                weft_query_destroy(q);
            }
        }
    }
}

/* The same queries kept for the whole run (their join caches live across the churn): each
 * is iterated several times per round under random chunk sizes, and some rounds change
 * nothing, so cached windows are both reused and invalidated. */
static void run_model_kept(const char *label) {
    uint64_t seed = start_model("kept", label);
    enum { KEPT = 8 };
    model_query_t mq[KEPT];
    weft_query_t *q[KEPT];
    for (uint32_t k = 0; k < KEPT; k++) {
        random_query(&mq[k]);
        mq[k].desc.drive = below(mq[k].nterms + 1);
        cr_assert(eq(int, weft_query_create(world, &mq[k].desc, &q[k]), WEFT_OK), "%s",
                  weft_last_error());
    }
    for (uint32_t round = 0; round < 3 * ROUNDS; round++) {
        churn(round % 3 == 1 ? 0 : below(40));
        for (uint32_t k = 0; k < KEPT; k++) {
            for (uint32_t again = 0; again < 2; again++) {
                char plan[64];
                snprintf(plan, sizeof plan, "kept round %u query %u pass %u", round, k, again);
                check(q[k], mq[k].terms, mq[k].nterms, mq[k].excl, chunk_sizes[below(5)], seed,
                      plan);
            }
        }
    }
    for (uint32_t k = 0; k < KEPT; k++) {
        weft_query_destroy(q[k]);
    }
}

static void group(const uint32_t *members, uint32_t n) {
    weft_group_desc_t d = {0};
    for (uint32_t m = 0; m < n; m++) {
        d.components[m] = comp[members[m]];
    }
    weft_group_t g;
    cr_assert(eq(int, weft_group_create(world, &d, &g), WEFT_OK), "%s", weft_last_error());
}

Test(plan, every_plan_matches_the_model_without_groups) { run_model("no groups"); }

Test(plan, every_plan_matches_the_model_with_a_group) {
    group((const uint32_t[]){0, 1}, 2);
    run_model("group {C0,C1}");
}

Test(plan, every_plan_matches_the_model_with_a_three_member_group) {
    group((const uint32_t[]){1, 2, 3}, 3);
    run_model("group {C1,C2,C3}");
}

Test(plan, every_plan_matches_the_model_with_nested_groups) {
    group((const uint32_t[]){0, 1}, 2);
    group((const uint32_t[]){0, 1, 2}, 3);
    run_model("nested {C0,C1} c {C0,C1,C2}");
}

Test(plan, kept_queries_match_the_model_across_churn_without_groups) {
    run_model_kept("no groups");
}

Test(plan, kept_queries_match_the_model_across_churn_with_nested_groups) {
    group((const uint32_t[]){0, 1}, 2);
    group((const uint32_t[]){0, 1, 2}, 3);
    run_model_kept("nested {C0,C1} c {C0,C1,C2}");
}

/* ---- merge-join ------------------------------------------------------------ >>merge */

static weft__pool_t *pool_of(uint32_t c) { return &world->components[comp[c].id]->pool; }

static int by_entity(weft_entity_t ea, const void *a, weft_entity_t eb, const void *b, void *u) {
    (void)a, (void)b, (void)u;
    uint32_t x = weft_entity_index(ea), y = weft_entity_index(eb);
    return (x > y) - (x < y);
}

/* The pool's order as it is, by a scan (what the ascending flag must say). */
static bool scanned_ascending(uint32_t c) {
    const weft__pool_t *p = pool_of(c);
    for (uint32_t r = 1; r < p->count; r++) {
        if (p->dense[r - 1] >= p->dense[r]) {
            return false;
        }
    }
    return true;
}

static void sort_pool(uint32_t c) {
    cr_assert(eq(int, weft_component_sort(world, comp[c], by_entity, NULL), WEFT_OK));
    cr_assert(pool_of(c)->ascending, "a sort by entity sets the flag");
}

/* Give C`c` to a live entity below the pool's last entity that lacks it (an insert out of
 * order); false when there is none. */
static bool insert_out_of_order(uint32_t c) {
    const weft__pool_t *p = pool_of(c);
    for (uint32_t e = 0; p->count != 0 && e < NENT; e++) {
        if (alive[e] && !has[e][c] && weft_entity_index(ents[e]) < p->dense[p->count - 1]) {
            give(e, c);
            return true;
        }
    }
    return false;
}

/* Keep C`c` only on entities whose index is in [lo, hi) (sets ranges that overlap in part,
 * the shape where the planner's cost rule prefers the merge-join). */
static void keep_range(uint32_t c, uint32_t lo, uint32_t hi) {
    for (uint32_t e = 0; e < NENT; e++) {
        uint32_t idx = alive[e] ? weft_entity_index(ents[e]) : 0;
        if (alive[e] && has[e][c] && (idx < lo || idx >= hi)) {
            take(e, c);
        }
    }
}

/* Random worlds with churn whose pools are sorted by entity, one of them then broken by an
 * insert (and in some rounds sorted again): every random query, under every drive, runs
 * with the merge-join forced wherever its pools are all ascending, and with the planner's
 * pick; all against the model. The ascending flag must always agree with a scan. */
Test(plan, merge_join_matches_the_model_on_sorted_pools) {
    uint64_t seed = start_model("merge", "sorted pools");
    uint32_t merged = 0, picked = 0;
    for (uint32_t round = 0; round < ROUNDS; round++) {
        churn(round == 0 ? 0 : 150);
        if (round % 2 == 1) {
            keep_range(0, 0, NENT / 2);
            keep_range(1, NENT * 2 / 5, NENT);
        }
        for (uint32_t c = 0; c < NCOMP; c++) { /* the churn kept no false flag */
            cr_assert(not(pool_of(c)->ascending && !scanned_ascending(c)), "seed %llu C%u",
                      (unsigned long long)seed, c);
            sort_pool(c);
        }
        uint32_t broken = below(NCOMP);
        if (round % 3 != 0 && insert_out_of_order(broken)) {
            cr_assert(not(pool_of(broken)->ascending), "an insert out of order clears the flag");
            if (round % 3 == 2) {
                sort_pool(broken);
            }
        }
        for (uint32_t c = 0; c < NCOMP; c++) {
            cr_assert(eq(int, pool_of(c)->ascending, scanned_ascending(c)), "seed %llu C%u",
                      (unsigned long long)seed, c);
        }
        for (uint32_t qn = 0; qn < 6; qn++) {
            model_query_t mq;
            random_query(&mq);
            bool sorted = true;
            for (uint32_t t = 0; t < mq.nterms; t++) {
                sorted = sorted && pool_of(mq.terms[t])->ascending;
            }
            for (uint32_t drive = 0; drive <= mq.nterms; drive++) {
                mq.desc.drive = drive;
                weft_query_t *q = NULL;
                cr_assert(eq(int, weft_query_create(world, &mq.desc, &q), WEFT_OK), "%s",
                          weft_last_error());
                weft__query_plan_t p;
                weft__query_plan(q, &p);
                cr_assert(p.merge == 0 || (sorted && drive == 0), "merge-join on unsorted pools");
                picked += p.merge;
                char plan[64];
                snprintf(plan, sizeof plan, "round %u query %u drive %u", round, qn, drive);
                check(q, mq.terms, mq.nterms, mq.excl, chunk_sizes[below(5)], seed, plan);
                if (sorted && mq.nterms >= 2) {
                    p.merge = 1;
                    forced = &p;
                    snprintf(plan, sizeof plan, "round %u query %u drive %u merge", round, qn,
                             drive);
                    check(q, mq.terms, mq.nterms, mq.excl, chunk_sizes[below(5)], seed, plan);
                    forced = NULL;
                    merged++;
                }
                weft_query_destroy(q);
            }
        }
    }
    cr_assert(gt(u32, merged, 0), "seed %llu: no query ran merge-joined", (unsigned long long)seed);
    cr_assert(gt(u32, picked, 0), "seed %llu: the planner never chose the merge-join",
              (unsigned long long)seed);
}

/* The planner declines the merge-join for queries it does not serve: OPTIONAL/OR terms and
 * change filters, even over sorted pools (C0 on the first 330 entities, C1 and C2 on the last
 * 300: a plain {C0,C1} join is merge-joined, 30 candidates instead of 300 probes). */
Test(plan, merge_join_is_declined_for_optional_or_and_filtered_terms) {
    for (uint32_t e = 0; e < NENT; e++) {
        ents[e] = test_entity(world);
        alive[e] = true;
        if (e < NENT / 2 + 30) {
            give(e, 0);
        }
        if (e >= NENT / 2) {
            give(e, 1);
            give(e, 2);
        }
    }
    weft_query_desc_t d = {.terms = {{.component = comp[0]}, {.component = comp[1]}}};
    weft_query_t *q = NULL;
    weft__query_plan_t p;
    cr_assert(eq(int, weft_query_create(world, &d, &q), WEFT_OK));
    weft__query_plan(q, &p);
    cr_expect(eq(u32, p.merge, 1), "a plain join over sorted pools is merge-joined");
    weft_query_destroy(q);
    static const weft_term_oper_t opers[] = {WEFT_TERM_OPTIONAL, WEFT_TERM_OR};
    for (uint32_t k = 0; k < 3; k++) {
        weft_query_desc_t o = {.terms = {{.component = comp[0]}, {.component = comp[1]}}};
        if (k < 2) {
            o.terms[1].oper = opers[k];
            o.terms[2] = (weft_query_term_t){.component = comp[2], .oper = opers[k]};
        } else {
            o.terms[1].filter = WEFT_CHANGE_CHANGED;
        }
        cr_assert(eq(int, weft_query_create(world, &o, &q), WEFT_OK), "%s", weft_last_error());
        weft__query_plan(q, &p);
        cr_expect(eq(u32, p.merge, 0), "case %u is not merge-joined", k);
        weft_query_destroy(q);
    }
}

/* The partial-group case of the planner: a {C0,C1} group of 600 rows beside a 100-row C2
 * pool; the query {C0,C1,C2} drives from C2 (100 rows, 2 probes: cost 500) rather than the
 * group (600 rows, 1 probe: 1,800). */
/* Every entity gets C0 and C1 (a {C0,C1} group first when grouped), every `step`-th also C2;
 * returns the query {C0,C1,C2} over them. */
static weft_query_t *partial_world(bool grouped, uint32_t step) {
    if (grouped) {
        group((const uint32_t[]){0, 1}, 2);
    }
    for (uint32_t e = 0; e < NENT; e++) {
        ents[e] = test_entity(world);
        alive[e] = true;
        give(e, 0);
        give(e, 1);
        if (e % step == 0) {
            give(e, 2);
        }
    }
    weft_query_desc_t d = {
        .terms = {{.component = comp[0]}, {.component = comp[1]}, {.component = comp[2]}}};
    weft_query_t *q = NULL;
    cr_assert(eq(int, weft_query_create(world, &d, &q), WEFT_OK));
    return q;
}

Test(plan, a_partial_group_does_not_drive_a_query_a_small_pool_serves_cheaper) {
    weft_query_t *q = partial_world(true, 6);
    weft_query_desc_t d = *weft_query_desc(q);
    cr_expect(eq(u32, weft_query_rows(q), 100), "C2's 100 rows drive");
    check(q, (const uint32_t[]){0, 1, 2}, 3, -1, 16, 0, "partial group");
    weft_query_destroy(q);
    weft_query_desc_t d2 = {.terms = {{.component = comp[0]}, {.component = comp[1]}}};
    cr_assert(eq(int, weft_query_create(world, &d2, &q), WEFT_OK));
    cr_expect(eq(u32, weft_query_rows(q), NENT), "the group covering every term drives");
    weft_query_destroy(q);
    d.drive = 1;
    cr_assert(eq(int, weft_query_create(world, &d, &q), WEFT_OK));
    cr_expect(eq(u32, weft_query_rows(q), NENT), "drive = 1 forces C0's pool");
    check(q, (const uint32_t[]){0, 1, 2}, 3, -1, 0, 0, "forced C0");
    weft_query_destroy(q);
}

/* The rows array term t of each batch reads (NULL: a column), over a whole iteration of q. */
static uint32_t batch_rows(const weft_query_t *q, uint32_t t, const uint32_t **rows,
                           uint32_t *counts, uint32_t max) {
    uint32_t n = 0;
    weft_iter_t it;
    cr_assert(eq(int, weft_query_iter(q, 0, 0, &it), WEFT_OK));
    while (weft_iter_next(&it)) {
        cr_assert(lt(u32, n, max));
        rows[n] = it._private.terms[t].rows;
        counts[n++] = it.rows;
    }
    return n;
}

/* The join cache keeps each include's rows in one run over the driving range (join_cache.h,
 * Layout): in a second iteration, served from the cache, batch k + 1's rows follow batch k's
 * for each include. With a {C0,C1} group, C1's rows are C0's: both terms read one array, so
 * a body streams through C0's run alone. C2 on every second entity drives (300 rows: windows
 * of 128, 128, 44); C0's and C1's rows of those entities step by two, so each window is one
 * batch of rows. */
static void expect_row_runs(bool grouped) {
    weft_query_t *q = partial_world(grouped, 2);
    check(q, (const uint32_t[]){0, 1, 2}, 3, -1, 0, 0, "fills the cache");
    enum { MAX = 8 };
    const uint32_t *r0[MAX], *r1[MAX];
    uint32_t n0[MAX], n1[MAX];
    uint32_t b = batch_rows(q, 0, r0, n0, MAX);
    cr_assert(eq(u32, batch_rows(q, 1, r1, n1, MAX), b));
    cr_assert(eq(u32, b, 3), "one batch per window");
    for (uint32_t k = 0; k < b; k++) {
        cr_assert(r0[k] != NULL && r1[k] != NULL, "batch %u: rows, not columns", k);
        if (grouped) {
            cr_expect(r1[k] == r0[k], "batch %u: C1 reads C0's rows", k);
        }
        if (k + 1 < b) {
            cr_expect(r0[k + 1] == r0[k] + n0[k], "batch %u: C0's rows run on", k);
            cr_expect(r1[k + 1] == r1[k] + n1[k], "batch %u: C1's rows run on", k);
        }
    }
    check(q, (const uint32_t[]){0, 1, 2}, 3, -1, 0, 0, "served from the cache");
    weft_query_destroy(q);
}

Test(plan, a_join_cache_keeps_each_includes_rows_in_one_run) { expect_row_runs(false); }

Test(plan, a_group_follower_reads_its_leads_run_of_cached_rows) { expect_row_runs(true); }

/* A chain of leads in one batch: with nested groups {C0,C1} and {C0,C1,C2}, the query
 * {C2,C3,C1,C0} driven by C3 checks C2, then C1 following C2 (their {C0,C1,C2} rows) and C0
 * following C1 (their {C0,C1} rows). Every entity has C0, C1 and C3, all but every third C2,
 * so each window's C1 rows are C2's and C0's are C1's, and the batches squeeze out the
 * rejected entities: C0 must read the rows of C2, its lead's lead. */
Test(plan, an_include_following_a_follower_reads_the_first_leads_rows) {
    group((const uint32_t[]){0, 1}, 2);
    group((const uint32_t[]){0, 1, 2}, 3);
    for (uint32_t e = 0; e < NENT; e++) {
        ents[e] = test_entity(world);
        alive[e] = true;
        give(e, 3);
        give(e, 0);
        give(e, 1);
        if (e % 3 != 0) {
            give(e, 2);
        }
    }
    weft_query_desc_t d = {.terms = {{.component = comp[2]},
                                     {.component = comp[3]},
                                     {.component = comp[1]},
                                     {.component = comp[0]}},
                           .drive = 2};
    weft_query_t *q = NULL;
    cr_assert(eq(int, weft_query_create(world, &d, &q), WEFT_OK));
    for (uint32_t pass = 0; pass < 2; pass++) { /* probed into the cache, then read from it */
        check(q, (const uint32_t[]){2, 3, 1, 0}, 4, -1, 0, 0, "chained leads");
        check(q, (const uint32_t[]){2, 3, 1, 0}, 4, -1, 16, 0, "chained leads, chunks of 16");
    }
    weft_query_destroy(q);
}

Test(plan, a_join_outside_the_enum_is_einval) {
    weft_query_t *q = NULL;
    weft_query_desc_t d = {.terms = {{.component = comp[0]}, {.component = comp[1]}},
                           .join = WEFT_JOIN_COUNT};
    cr_expect(eq(int, weft_query_create(world, &d, &q), WEFT_EINVAL));
    cr_expect(strstr(weft_last_error(), "join") != NULL, "%s", weft_last_error());
    cr_expect(q == NULL);
}

Test(plan, a_drive_naming_no_and_term_is_einval) {
    weft_query_t *q = NULL;
    weft_query_desc_t d = {.terms = {{.component = comp[0]}, {.component = comp[1]}}, .drive = 3};
    cr_expect(eq(int, weft_query_create(world, &d, &q), WEFT_EINVAL));
    cr_expect(strstr(weft_last_error(), "drive") != NULL, "%s", weft_last_error());
    d.drive = 2;
    d.terms[1].oper = WEFT_TERM_OPTIONAL;
    cr_expect(eq(int, weft_query_create(world, &d, &q), WEFT_EINVAL));
    cr_expect(q == NULL);
}

/* ---- systems on workers ------------------------------------------------------ >>workers */

typedef struct sys_state {
    uint32_t frames;
} sys_state_t;

/* C0 += C1 * C2 over {C0 write, C1, C2}, through the documented loop. */
static void sys_join(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            uint32_t *a = weft_iter_get(it, 0, i);
            *a += *(const uint32_t *)weft_iter_get(it, 1, i) *
                  *(const uint32_t *)weft_iter_get(it, 2, i);
        }
    }
}

/* C3 += C1 over {C3 write, C1} (runs beside sys_join: both only read C1). */
static void sys_pair(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            uint32_t *d = weft_iter_get(it, 0, i);
            *d += *(const uint32_t *)weft_iter_get(it, 1, i);
        }
    }
}

/* groups: 0 none, 1 {C0,C1}, 2 the nested {C0,C1} c {C0,C1,C2} (the join drives from the
 * inner one, and churn moves rows inside both between frames). */
static void run_workers(uint32_t workers, int groups) {
    weft_world_destroy(world); /* the suite's world is inline; this one has workers */
    world = NULL;
    weft_world_desc_t wd = {.worker_count = workers, .allocator = test_allocator(&alloc_state)};
    cr_assert(eq(int, weft_world_create(&wd, &world), WEFT_OK), "%s", weft_last_error());
    for (uint32_t c = 0; c < NCOMP; c++) {
        char name[8];
        snprintf(name, sizeof name, "C%u", c);
        comp[c] = test_register(world, name, sizeof(uint32_t));
    }
    if (groups >= 1) {
        group((const uint32_t[]){0, 1}, 2);
    }
    if (groups >= 2) {
        group((const uint32_t[]){0, 1, 2}, 3);
    }
    char name[64];
    snprintf(name, sizeof name, "plan workers %u%s", workers,
             groups == 2    ? " nested"
             : groups == 1  ? " grouped"
             : groups == -1 ? " sorted"
                            : "");
    uint64_t seed = wt_seed(name);
    rng.s = seed;
    memset(alive, 0, sizeof alive);
    for (uint32_t e = 0; e < NENT; e++) {
        spawn(e);
    }
    weft_system_t s;
    cr_assert(eq(int,
                 weft_system_register(world,
                                      &(weft_system_desc_t){.name = "join",
                                                            .fn = sys_join,
                                                            .terms = {{.component = comp[0],
                                                                       .access = WEFT_ACCESS_WRITE},
                                                                      {.component = comp[1]},
                                                                      {.component = comp[2]}},
                                                            .parallel = true,
                                                            .chunk_size = 16},
                                      &s),
                 WEFT_OK),
              "%s", weft_last_error());
    cr_assert(eq(int,
                 weft_system_register(world,
                                      &(weft_system_desc_t){.name = "pair",
                                                            .fn = sys_pair,
                                                            .terms = {{.component = comp[3],
                                                                       .access = WEFT_ACCESS_WRITE},
                                                                      {.component = comp[1]}},
                                                            .parallel = true,
                                                            .chunk_size = 16},
                                      &s),
                 WEFT_OK),
              "%s", weft_last_error());
    static uint32_t want[NENT][NCOMP];
    uint32_t merged = 0; /* frames whose join system is merge-joined (groups -1) */
    for (uint32_t f = 0; f < 9; f++) {
        churn(f % 3 == 0 ? 0 : 100); /* frames without churn reuse the join caches */
        if (groups == -1) {          /* pools sorted by entity, C0 and C1 overlapping in part */
            keep_range(0, 0, NENT / 2);
            keep_range(1, NENT * 2 / 5, NENT);
            for (uint32_t c = 0; c < NCOMP; c++) {
                sort_pool(c);
            }
            weft_query_desc_t d = {
                .terms = {{.component = comp[0]}, {.component = comp[1]}, {.component = comp[2]}}};
            weft_query_t *q = NULL;
            weft__query_plan_t p;
            cr_assert(eq(int, weft_query_create(world, &d, &q), WEFT_OK));
            weft__query_plan(q, &p);
            merged += p.merge;
            weft_query_destroy(q);
        }
        for (uint32_t e = 0; e < NENT; e++) {
            for (uint32_t c = 0; c < NCOMP && alive[e]; c++) {
                if (has[e][c]) { /* rewrite: churn gave fresh values, frames added more */
                    uint32_t v = value_of(e, c);
                    cr_assert(eq(int, weft_component_set(world, ents[e], comp[c], &v), WEFT_OK));
                    want[e][c] = v;
                }
            }
            if (alive[e] && has[e][0] && has[e][1] && has[e][2]) {
                want[e][0] += want[e][1] * want[e][2];
            }
            if (alive[e] && has[e][3] && has[e][1]) {
                want[e][3] += want[e][1];
            }
        }
        cr_assert(eq(int, weft_world_progress(world, 0.016f), WEFT_OK), "%s", weft_last_error());
        for (uint32_t e = 0; e < NENT; e++) {
            for (uint32_t c = 0; c < NCOMP && alive[e]; c++) {
                if (has[e][c]) {
                    const uint32_t *v = weft_component_get(world, ents[e], comp[c]);
                    cr_assert(eq(u32, *v, want[e][c]), "seed %llu frame %u entity %u C%u",
                              (unsigned long long)seed, f, e, c);
                }
            }
        }
    }
    cr_assert(groups != -1 || merged > 0, "seed %llu: no frame was merge-joined",
              (unsigned long long)seed);
}

Test(plan, systems_on_2_workers_match_the_model) { run_workers(2, 0); }
Test(plan, systems_on_4_workers_with_a_group_match_the_model) { run_workers(4, 1); }
Test(plan, systems_on_8_workers_with_nested_groups_match_the_model) { run_workers(8, 2); }
Test(plan, systems_on_4_workers_over_sorted_pools_match_the_model) { run_workers(4, -1); }
