/* internal_change.c: change detection (weft_query_term_t.filter) against a reference model,
 * the wrap-around of the change counter, and out-of-memory while tracking.
 *
 * The model keeps, per entity and component, the epoch of its add and of its last write; an
 * epoch ends at each check, where every filtered query is iterated, its matches compared with
 * the model and then marked seen. Random operations cover every write path the header lists
 * (set, get_mut, row_mut, add, add_n, set_n, write-term iteration) and every row move that
 * must carry ticks along (swap removes, destroy, ordered removes, move_row, sort). The seed is
 * printed; WEFT_TEST_SEED=<n> replays a run. Includes private headers to move the counter. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "ecs_fixture.h"
#include "src/core/change.h"
#include "src/core/world.h"

enum {
    MAX_E = 200, /* model entity slots */
    NC = 3,      /* A (12 bytes, CHANGED), B (4 bytes, ADDED), C (8 bytes, ordered, CHANGED) */
    OPS = 60000,
    CHECK_EVERY = 40,
};

typedef struct model {
    weft_entity_t handle[MAX_E]; /* 0: unused */
    bool has[MAX_E][NC];
    uint32_t added[MAX_E][NC];   /* epoch of the add */
    uint32_t changed[MAX_E][NC]; /* epoch of the last write */
} model_t;

static weft_world_t *world;
static weft_component_t comp[NC];
static const size_t comp_size[NC] = {12, 4, 8};
#define TERM(c, a, f) ((weft_query_term_t){.component = (c), .access = (a), .filter = (f)})
#define NO_TERM ((weft_query_term_t){.component = {0}})

static weft_query_t *qa, *qb, *qc, *qab, *qw; /* filters; qw: A written by iteration */
static weft_query_t *qa_slow; /* A, CHANGED, seen only every SLOW_EVERY checks: its window
                                 spans epochs that the other queries have forgotten */
static uint32_t slow_from;    /* first epoch qa_slow has not seen */
#define SLOW_EVERY 3u
static model_t m;
static uint32_t epoch;
static uint64_t rng;
static test_alloc_t alloc_state;

static uint64_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint32_t below(uint32_t n) { return (uint32_t)(next_rand() % n); }

static uint64_t seed_from_env(void) {
    const char *s = getenv("WEFT_TEST_SEED");
    return s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL) * 2654435761u + 1u;
}

static int slot_of(weft_entity_t e) {
    for (int s = 0; s < MAX_E; s++) {
        if (m.handle[s] == e) {
            return s;
        }
    }
    return -1;
}

static weft_query_t *make_query(weft_query_term_t t0, weft_query_term_t t1) {
    weft_query_desc_t d = {.terms = {t0, t1}};
    weft_query_t *q = NULL;
    cr_assert(eq(int, weft_query_create(world, &d, &q), WEFT_OK), "%s", weft_last_error());
    return q;
}

static void setup(void) {
    memset(&m, 0, sizeof m);
    memset(&alloc_state, 0, sizeof alloc_state);
    world = test_world(&alloc_state);
    cr_assert(world != NULL);
    comp[0] = test_register(world, "A", comp_size[0]);
    comp[1] = test_register(world, "B", comp_size[1]);
    comp[2] = test_register(world, "C", comp_size[2]);
    qa = make_query(TERM(comp[0], WEFT_ACCESS_READ, WEFT_CHANGE_CHANGED), NO_TERM);
    qb = make_query(TERM(comp[1], WEFT_ACCESS_READ, WEFT_CHANGE_ADDED), NO_TERM);
    qc = make_query(TERM(comp[2], WEFT_ACCESS_READ, WEFT_CHANGE_CHANGED), NO_TERM);
    qab = make_query(TERM(comp[1], WEFT_ACCESS_READ, WEFT_CHANGE_ADDED),
                     TERM(comp[0], WEFT_ACCESS_READ, WEFT_CHANGE_CHANGED));
    qw = make_query(TERM(comp[0], WEFT_ACCESS_WRITE, WEFT_CHANGE_NONE), NO_TERM);
    qa_slow = make_query(TERM(comp[0], WEFT_ACCESS_READ, WEFT_CHANGE_CHANGED), NO_TERM);
    epoch = 0;
    slow_from = 0;
}

static void teardown(void) {
    weft_world_destroy(world);
    world = NULL;
}

/* ---- checks ---------------------------------------------------------------------------- */

/* Expected match of model slot s for query kind k (0: qa, 1: qb, 2: qc, 3: qab, 4: qa_slow). */
static bool expected(int s, int k) {
    if (m.handle[s] == 0) {
        return false;
    }
    switch (k) {
    case 0:
        return m.has[s][0] && m.changed[s][0] == epoch;
    case 1:
        return m.has[s][1] && m.added[s][1] == epoch;
    case 2:
        return m.has[s][2] && m.changed[s][2] == epoch;
    case 4:
        return m.has[s][0] && m.changed[s][0] >= slow_from;
    default:
        return m.has[s][0] && m.has[s][1] && m.changed[s][0] == epoch && m.added[s][1] == epoch;
    }
}

/* Entity indices `q` yields over all its chunks of chunk_rows rows, in order, into out
 * (at most cap: more fails the test); returns how many. */
static uint32_t collect_chunks(weft_query_t *q, uint32_t chunk_rows, uint32_t *out, uint32_t cap) {
    uint32_t n = 0, chunks = weft_query_chunk_count(q, chunk_rows);
    for (uint32_t c = 0; c < chunks; c++) {
        weft_iter_t it;
        cr_assert(eq(int, weft_query_iter(q, chunk_rows, c, &it), WEFT_OK));
        while (weft_iter_next(&it)) {
            cr_assert(n + it.rows <= cap, "a query yields more rows than it has entities");
            memcpy(out + n, it.entities, it.rows * sizeof *out);
            n += it.rows;
        }
    }
    return n;
}

/* Iterate `q` in chunks of a random size (one chunk with everything a quarter of the time)
 * and mark got[slot] for each entity it yields, slot = slot_of_index[entity index], for ln
 * slots; a slot yielded twice fails with the seed, epoch and query named. found holds at
 * least ln + 1 entries. Returns the chunk size used. */
static uint32_t yielded_slots(weft_query_t *q, uint32_t ln, const uint32_t *slot_of_index,
                              uint32_t *found, bool *got, uint64_t seed, uint32_t ep, int k) {
    memset(got, 0, ln);
    uint32_t chunk_rows = below(4) == 0 ? 0u : 1u + below(ln + 100);
    uint32_t n = collect_chunks(q, chunk_rows, found, ln + 1);
    for (uint32_t j = 0; j < n; j++) {
        uint32_t sl = slot_of_index[found[j]];
        cr_assert(not(got[sl]), "seed %llu epoch %u: query %d yields %u twice",
                  (unsigned long long)seed, ep, k, sl);
        got[sl] = true;
    }
    return chunk_rows;
}

/* Iterate every filtered query in chunks of `chunk` rows, compare with the model, mark seen. */
static void check_epoch(uint64_t seed, uint32_t op) {
    weft_query_t *qs[5] = {qa, qb, qc, qab, qa_slow};
    bool slow_turn = epoch % SLOW_EVERY == SLOW_EVERY - 1u;
    for (int k = 0; k < (slow_turn ? 5 : 4); k++) {
        bool seen[MAX_E] = {false};
        uint32_t found[MAX_E + 1];
        uint32_t n = collect_chunks(qs[k], 1u + below(40), found, MAX_E + 1);
        for (uint32_t j = 0; j < n; j++) {
            int s = slot_of(weft_entity_from_index(world, found[j]));
            cr_assert(s >= 0, "seed %llu op %u: query %d yields a dead entity",
                      (unsigned long long)seed, op, k);
            cr_assert(not(seen[s]), "seed %llu op %u: query %d yields slot %d twice",
                      (unsigned long long)seed, op, k, s);
            seen[s] = true;
        }
        for (int s = 0; s < MAX_E; s++) {
            cr_assert(eq(int, seen[s], expected(s, k)),
                      "seed %llu op %u epoch %u: query %d, slot %d: matched %d, model says %d",
                      (unsigned long long)seed, op, epoch, k, s, seen[s], expected(s, k));
        }
        weft_query_mark_seen(qs[k]);
    }
    if (slow_turn) {
        slow_from = epoch + 1u;
    }
    epoch++;
}

/* ---- operations ------------------------------------------------------------------------ */

static void write_value(int c, uint32_t v, unsigned char *buf) {
    memset(buf, 0, comp_size[c]);
    memcpy(buf, &v, sizeof v);
}

static void mark_add(int s, int c) {
    m.has[s][c] = true;
    m.added[s][c] = m.changed[s][c] = epoch;
}

static int random_live(void) {
    for (int tries = 0; tries < 8; tries++) {
        int s = (int)below(MAX_E);
        if (m.handle[s] != 0) {
            return s;
        }
    }
    return -1;
}

static void op_create(void) {
    for (int s = 0; s < MAX_E; s++) {
        if (m.handle[s] == 0) {
            memset(m.has[s], 0, sizeof m.has[s]);
            m.handle[s] = test_entity(world);
            cr_assert(m.handle[s] != 0);
            return;
        }
    }
}

static void op_single(int s) {
    int c = (int)below(NC);
    weft_entity_t e = m.handle[s];
    unsigned char buf[16];
    switch (below(9)) {
    case 0: /* add */
        if (!m.has[s][c]) {
            cr_assert(eq(int, weft_component_add(world, e, comp[c], NULL), WEFT_OK));
            mark_add(s, c);
        }
        break;
    case 1: /* set */
        write_value(c, (uint32_t)next_rand(), buf);
        cr_assert(eq(int, weft_component_set(world, e, comp[c], buf), WEFT_OK));
        if (!m.has[s][c]) {
            mark_add(s, c);
        }
        m.changed[s][c] = epoch;
        break;
    case 2: /* get_mut counts as a write */
        if (weft_component_get_mut(world, e, comp[c]) != NULL) {
            m.changed[s][c] = epoch;
        }
        break;
    case 3: /* a read is not a write */
        (void)weft_component_get(world, e, comp[c]);
        break;
    case 4: /* remove (C: keeping order, so rows shift) */
        if (m.has[s][c]) {
            weft_result_t r = c == 2 ? weft_component_remove_ordered(world, e, comp[c])
                                     : weft_component_remove(world, e, comp[c]);
            cr_assert(eq(int, r, WEFT_OK));
            m.has[s][c] = false;
        }
        break;
    case 5: /* destroy */
        cr_assert(eq(int, weft_entity_destroy(world, e), WEFT_OK));
        m.handle[s] = 0;
        break;
    case 6: { /* row_mut of a random row */
        uint32_t rows = weft_component_rows(world, comp[c]);
        if (rows != 0) {
            uint32_t row = below(rows);
            int t = slot_of(weft_component_entity_at(world, comp[c], row));
            cr_assert(weft_component_row_mut(world, comp[c], row) != NULL);
            m.changed[t][c] = epoch;
        }
        break;
    }
    case 7: { /* move a row of the ordered pool: ticks travel with it */
        uint32_t rows = weft_component_rows(world, comp[2]);
        if (rows > 1) {
            cr_assert(eq(int, weft_component_move_row(world, comp[2], below(rows), below(rows)),
                         WEFT_OK));
        }
        break;
    }
    default: /* nothing */
        break;
    }
}

static int by_value(weft_entity_t ea, const void *a, weft_entity_t eb, const void *b, void *user) {
    (void)ea, (void)eb, (void)user;
    uint32_t x, y;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    return (x > y) - (x < y);
}

/* Bulk calls over a few live entities. */
static void op_bulk(void) {
    weft_entity_t es[8];
    int slots[8];
    uint32_t n = 0;
    int c = (int)below(NC);
    bool want_absent = below(2) == 0;
    for (int tries = 0; tries < 32 && n < 8; tries++) {
        int s = random_live();
        bool dup = false;
        for (uint32_t i = 0; i < n; i++) {
            dup = dup || slots[i] == s;
        }
        if (s < 0 || dup || (want_absent && m.has[s][c])) {
            continue;
        }
        slots[n] = s;
        es[n++] = m.handle[s];
    }
    if (n == 0) {
        return;
    }
    if (want_absent) {
        cr_assert(eq(int, weft_component_add_n(world, es, n, comp[c]), WEFT_OK));
        for (uint32_t i = 0; i < n; i++) {
            mark_add(slots[i], c);
        }
    } else {
        unsigned char vals[8 * 16];
        for (uint32_t i = 0; i < n; i++) {
            write_value(c, (uint32_t)next_rand(), vals + i * comp_size[c]);
        }
        cr_assert(eq(int, weft_component_set_n(world, es, n, comp[c], vals), WEFT_OK));
        for (uint32_t i = 0; i < n; i++) {
            if (!m.has[slots[i]][c]) {
                mark_add(slots[i], c);
            }
            m.changed[slots[i]][c] = epoch;
        }
    }
}

/* Create a few entities at once with A and B. */
static void op_create_with(void) {
    uint32_t free_slots = 0;
    for (int s = 0; s < MAX_E; s++) {
        free_slots += m.handle[s] == 0;
    }
    uint32_t n = free_slots < 4 ? free_slots : 4;
    if (n == 0) {
        return;
    }
    weft_entity_t out[4];
    weft_component_t cs[2] = {comp[0], comp[1]};
    cr_assert(eq(int, weft_entity_create_with(world, n, cs, 2, NULL, out), WEFT_OK));
    for (uint32_t i = 0, s = 0; i < n; s++) {
        if (m.handle[s] == 0) {
            memset(m.has[s], 0, sizeof m.has[s]);
            m.handle[s] = out[i++];
            mark_add((int)s, 0);
            mark_add((int)s, 1);
        }
    }
}

/* Iterate the write query: every row it hands out counts as written. */
static void op_write_iteration(void) {
    weft_iter_t it;
    cr_assert(eq(int, weft_query_iter(qw, 0, 0, &it), WEFT_OK));
    while (weft_iter_next(&it)) {
        for (uint32_t i = 0; i < it.rows; i++) {
            m.changed[slot_of(weft_iter_entity(&it, i))][0] = epoch;
        }
    }
}

Test(change, model_against_reference, .init = setup, .fini = teardown, .timeout = 120) {
    uint64_t seed = seed_from_env();
    fprintf(stderr, "change model: seed %llu (replay with WEFT_TEST_SEED=%llu)\n",
            (unsigned long long)seed, (unsigned long long)seed);
    rng = seed ? seed : 1;
    check_epoch(seed, 0); /* first iteration: never marked, so every row passes (none yet) */
    for (uint32_t op = 1; op <= OPS; op++) {
        uint32_t kind = below(100);
        int s = random_live();
        if (kind < 15 || s < 0) {
            op_create();
        } else if (kind < 85) {
            op_single(s);
        } else if (kind < 92) {
            op_bulk();
        } else if (kind < 95) {
            op_create_with();
        } else if (kind < 97) {
            op_write_iteration();
        } else if (kind < 98 && weft_component_rows(world, comp[2]) > 1) {
            cr_assert(eq(int, weft_component_sort(world, comp[2], by_value, NULL), WEFT_OK));
        }
        if (op % CHECK_EVERY == 0) {
            check_epoch(seed, op);
        }
    }
}

Test(change, first_iteration_sees_every_row, .init = setup, .fini = teardown) {
    weft_entity_t e = test_entity(world);
    cr_assert(eq(int, weft_component_add(world, e, comp[0], NULL), WEFT_OK));
    weft_query_t *fresh = make_query(TERM(comp[0], WEFT_ACCESS_READ, WEFT_CHANGE_ADDED), NO_TERM);
    cr_assert(eq(u32, weft_query_entity_count(fresh), 1));
    weft_query_mark_seen(fresh);
    cr_assert(eq(u32, weft_query_entity_count(fresh), 0));
}

Test(change, bad_filters_are_refused, .init = setup, .fini = teardown) {
    weft_component_t multi = {0};
    cr_assert(
        eq(int,
           weft_component_register(
               world,
               &(weft_component_desc_t){.name = "Multi", .size = 4, .flags = WEFT_COMPONENT_MULTI},
               &multi),
           WEFT_OK));
    weft_query_t *q = NULL;
    weft_query_desc_t d = {.terms = {TERM(multi, WEFT_ACCESS_READ, WEFT_CHANGE_CHANGED)}};
    cr_assert(eq(int, weft_query_create(world, &d, &q), WEFT_EINVAL));
    d = (weft_query_desc_t){.terms = {TERM(comp[0], WEFT_ACCESS_READ, (weft_change_filter_t)7)}};
    cr_assert(eq(int, weft_query_create(world, &d, &q), WEFT_EINVAL));
    cr_assert(q == NULL);
}

/* ---- the counter wraps ------------------------------------------------------------------ */

/* Run epochs across the 2^32 wrap of the counter: the filter stays exact. */
Test(change, exact_across_counter_wrap, .init = setup, .fini = teardown) {
    uint64_t seed = seed_from_env();
    fprintf(stderr, "change wrap: seed %llu\n", (unsigned long long)seed);
    rng = seed ? seed : 1;
    world->change_tick = 0xFFFFFFF0u; /* a few epochs before the wrap */
    world->tick_clamped = world->change_tick;
    for (int s = 0; s < 64; s++) {
        op_create();
    }
    check_epoch(seed, 0);
    for (uint32_t op = 1; op <= 4000; op++) {
        int s = random_live();
        if (s < 0) {
            op_create();
        } else {
            op_single(s);
        }
        if (op % 20 == 0) {
            check_epoch(seed, op);
        }
    }
    cr_assert(world->change_tick < 0xFFFFFFF0u, "the counter wrapped");
}

/* A row left alone while the counter runs on for more than 2^31 ticks must not come back as
 * changed: the periodic clamp keeps old ticks within reach (weft__change_clamp). */
Test(change, old_rows_stay_unchanged_over_long_runs, .init = setup, .fini = teardown) {
    weft_entity_t e = test_entity(world);
    cr_assert(eq(int, weft_component_add(world, e, comp[0], NULL), WEFT_OK));
    weft_query_mark_seen(qa);
    cr_assert(eq(u32, weft_query_entity_count(qa), 0));
    for (int step = 0; step < 6; step++) { /* 6 * (2^29 + 1) ticks: past 2^31 */
        world->change_tick += WEFT__TICK_CLAMP_EVERY + 1u;
        weft__change_clamp(world);
        weft_query_mark_seen(qa); /* the query keeps running */
        cr_assert(eq(u32, weft_query_entity_count(qa), 0), "step %d: an old row counts as changed",
                  step);
    }
    cr_assert(weft_component_get_mut(world, e, comp[0]) != NULL);
    cr_assert(eq(u32, weft_query_entity_count(qa), 1));
}

/* A query that has not run for longer than the clamp age sees old rows as changed (the
 * documented conservative rule), never misses a real change. */
Test(change, long_idle_query_is_conservative, .init = setup, .fini = teardown) {
    weft_entity_t e = test_entity(world);
    weft_entity_t f = test_entity(world);
    cr_assert(eq(int, weft_component_add(world, e, comp[0], NULL), WEFT_OK));
    cr_assert(eq(int, weft_component_add(world, f, comp[0], NULL), WEFT_OK));
    weft_query_mark_seen(qa);
    cr_assert(weft_component_get_mut(world, f, comp[0]) != NULL);
    for (int step = 0; step < 6; step++) {
        world->change_tick += WEFT__TICK_CLAMP_EVERY + 1u;
        weft__change_clamp(world);
    }
    cr_assert(eq(u32, weft_query_entity_count(qa), 2));
}

/* ---- the scan's group reads --------------------------------------------------------------- */

/* A tick at a random distance from `since`, often at the distances where a signed difference
 * could go wrong (0, 1, the clamp age) and on both sides. */
static uint32_t tick_near(uint32_t since) {
    static const int32_t edge[] = {
        0, 1, -1, 2, -2, 1 << 30, -(1 << 30), (1 << 30) - 1, -((1 << 30) - 1)};
    int32_t d = below(2) ? edge[below(sizeof edge / sizeof edge[0])]
                         : (int32_t)(below(1u << 31)) - (1 << 30);
    return since + (uint32_t)d;
}

/* weft__change_dirty8 and weft__change_rows16 (vector loads on x86, change.h) agree with
 * weft__change_block_dirty and tick-by-tick compares, for random ticks around the window and
 * windows on both sides of the counter's wrap. */
Test(change, group_reads_match_tick_by_tick_reads, .init = setup, .fini = teardown) {
    uint64_t seed = seed_from_env();
    fprintf(stderr, "change group reads: seed %llu\n", (unsigned long long)seed);
    rng = seed ? seed : 1;
    enum { ROWS = 512, BLOCKS = ROWS / 16 };
    for (int i = 0; i < ROWS; i++) {
        weft_entity_t e = test_entity(world);
        cr_assert(eq(int, weft_component_add(world, e, comp[0], NULL), WEFT_OK));
    }
    weft__pool_t *pool = &world->components[comp[0].id]->pool;
    cr_assert(pool->tick_added != NULL && pool->count == ROWS);
    for (int round = 0; round < 150; round++) {
        uint32_t since = round % 3 == 0 ? 0xFFFFFFFFu - below(64) : (uint32_t)next_rand();
        for (uint32_t r = 0; r < ROWS; r++) {
            pool->tick_added[r] = tick_near(since);
            weft_atomic_store_relaxed(&pool->tick_changed[r], tick_near(since));
        }
        for (uint32_t k = 0; k < 2u * BLOCKS; k++) {
            weft_atomic_store_relaxed(&pool->tick_blocks[k], tick_near(since));
        }
        for (uint32_t g = 0; g < BLOCKS; g += 8) {
            uint32_t want = 0;
            for (uint32_t i = 0; i < 8; i++) {
                want |= (uint32_t)weft__change_block_dirty(pool, g + i, since) << i;
            }
            cr_assert(eq(u32, weft__change_dirty8(pool, g, since), want),
                      "seed %llu round %d: blocks %u..%u", (unsigned long long)seed, round, g,
                      g + 7);
        }
        for (uint32_t b = 0; b < BLOCKS; b++) {
            uint32_t want_c = 0, want_a = 0;
            for (uint32_t i = 0; i < 16; i++) {
                uint32_t r = b * 16 + i;
                want_c |= (uint32_t)weft__tick_newer(
                              weft_atomic_load_relaxed(&pool->tick_changed[r]), since)
                          << i;
                want_a |= (uint32_t)weft__tick_newer(pool->tick_added[r], since) << i;
            }
            cr_assert(eq(u32, weft__change_rows16(pool, b, since, false), want_c),
                      "seed %llu round %d: changed ticks of block %u", (unsigned long long)seed,
                      round, b);
            cr_assert(eq(u32, weft__change_rows16(pool, b, since, true), want_a),
                      "seed %llu round %d: added ticks of block %u", (unsigned long long)seed,
                      round, b);
        }
    }
}

/* A pool of thousands of rows (whole groups of 8 tick blocks) iterated in chunks of random
 * size, with sparse writes through set and get_mut, swap removes (row moves) and re-adds, a
 * query that skips epochs, the counter crossing its wrap: the filters match the model. */
Test(change, large_pools_in_random_chunks_match_model, .init = setup, .fini = teardown) {
    enum { LN = 3000, EPOCHS = 30 };
    uint64_t seed = seed_from_env();
    fprintf(stderr, "change large pools: seed %llu\n", (unsigned long long)seed);
    rng = seed ? seed : 1;
    world->change_tick = 0xFFFFFFE0u; /* the wrap falls inside the run */
    world->tick_clamped = world->change_tick;
    weft_entity_t *h = calloc(LN, sizeof *h);
    uint32_t *chg = calloc(LN, sizeof *chg), *addb = calloc(LN, sizeof *addb);
    bool *has_a = calloc(LN, 1), *has_b = calloc(LN, 1), *got = calloc(LN, 1);
    uint32_t *slot_of_index = calloc(4 * LN, sizeof *slot_of_index);
    uint32_t *found = calloc(LN + 1, sizeof *found);
    cr_assert(h && chg && addb && has_a && has_b && got && slot_of_index && found);
    uint32_t ep = 0, slow_since = 0;
    for (uint32_t i = 0; i < LN; i++) {
        h[i] = test_entity(world);
        cr_assert(weft_entity_index(h[i]) < 4u * LN);
        slot_of_index[weft_entity_index(h[i])] = i;
        cr_assert(eq(int, weft_component_add(world, h[i], comp[0], NULL), WEFT_OK));
        has_a[i] = true;
        if (below(2)) {
            cr_assert(eq(int, weft_component_add(world, h[i], comp[1], NULL), WEFT_OK));
            has_b[i] = true;
        }
    }
    for (; ep < EPOCHS; ep++) {
        bool slow_turn = ep % 3u == 2u;
        weft_query_t *qs[3] = {qa, qb, qa_slow};
        for (int k = 0; k < (slow_turn ? 3 : 2); k++) {
            uint32_t chunk_rows = yielded_slots(qs[k], LN, slot_of_index, found, got, seed, ep, k);
            for (uint32_t i = 0; i < LN; i++) {
                bool want = k == 0   ? has_a[i] && chg[i] == ep
                            : k == 1 ? has_b[i] && addb[i] == ep
                                     : has_a[i] && chg[i] >= slow_since;
                cr_assert(eq(int, got[i], want),
                          "seed %llu epoch %u chunk_rows %u: query %d, entity %u: matched %d, "
                          "model says %d",
                          (unsigned long long)seed, ep, chunk_rows, k, i, got[i], want);
            }
            weft_query_mark_seen(qs[k]);
        }
        if (slow_turn) {
            slow_since = ep + 1u;
        }
        /* The next epoch's changes: about 1% of the rows, a few moves and adds. */
        for (uint32_t n = 0; n < LN / 100u; n++) {
            uint32_t i = below(LN);
            unsigned char buf[16] = {0};
            switch (below(6)) {
            case 0:
            case 1:
                cr_assert(eq(int, weft_component_set(world, h[i], comp[0], buf), WEFT_OK));
                has_a[i] = true;
                chg[i] = ep + 1u;
                break;
            case 2:
                if (weft_component_get_mut(world, h[i], comp[0]) != NULL) {
                    chg[i] = ep + 1u;
                }
                break;
            case 3: /* a swap remove moves the last row into its place */
                if (has_a[i]) {
                    cr_assert(eq(int, weft_component_remove(world, h[i], comp[0]), WEFT_OK));
                    has_a[i] = false;
                }
                break;
            case 4:
                if (!has_b[i]) {
                    cr_assert(eq(int, weft_component_add(world, h[i], comp[1], NULL), WEFT_OK));
                    has_b[i] = true;
                    addb[i] = ep + 1u;
                }
                break;
            default:
                if (has_b[i]) {
                    cr_assert(eq(int, weft_component_remove(world, h[i], comp[1]), WEFT_OK));
                    has_b[i] = false;
                }
                break;
            }
        }
    }
    cr_assert(world->change_tick < 0xFFFFFFE0u, "the counter wrapped");
    free(h), free(chg), free(addb), free(has_a), free(has_b), free(got), free(slot_of_index);
    free(found);
}

/* ---- out of memory ------------------------------------------------------------------------ */

/* Every allocation of tracking (query create, pool growth with ticks) may fail: the call
 * returns WEFT_ENOMEM, the world stays as it was and the filter stays exact afterwards. */
Test(change, out_of_memory_leaves_world_unchanged, .init = setup, .fini = teardown) {
    weft_query_mark_seen(qa);
    uint32_t made = 0;
    for (size_t k = 1; k < 400; k++) {
        alloc_state.fail_at = alloc_state.calls + k;
        weft_entity_t e = 0;
        if (weft_entity_create(world, &e) != WEFT_OK) {
            alloc_state.fail_at = 0;
            continue;
        }
        uint64_t before = weft_world_hash(world);
        weft_result_t r = weft_component_add(world, e, comp[0], NULL);
        alloc_state.fail_at = 0;
        if (r == WEFT_ENOMEM) {
            cr_assert(eq(u64, weft_world_hash(world), before));
        } else {
            cr_assert(eq(int, r, WEFT_OK));
            made++;
        }
        cr_assert(eq(u32, weft_query_entity_count(qa), made));
    }
    weft_component_t d = test_register(world, "D", 4);
    for (size_t k = 1; k < 64; k++) {
        alloc_state.fail_at = alloc_state.calls + k;
        weft_query_t *q = NULL;
        weft_query_desc_t desc = {.terms = {TERM(d, WEFT_ACCESS_READ, WEFT_CHANGE_CHANGED)}};
        weft_result_t r = weft_query_create(world, &desc, &q);
        alloc_state.fail_at = 0;
        cr_assert(r == WEFT_OK || r == WEFT_ENOMEM);
        cr_assert(eq(int, r == WEFT_OK, q != NULL));
        if (r == WEFT_OK) {
            break;
        }
    }
}

/* ---- dirty epochs (change.h: main-thread writes as dirty bits) ---------------------------- */

/* Row `row` is pending in the open epoch: its dirty bit, or an entry of the log (change.h). */
static bool dirty_pending(const weft__pool_t *pool, uint32_t row) {
    for (uint32_t i = 0; i < weft__change_log_len(pool); i++) {
        if (weft__change_log_row(pool, i) == row) {
            return true;
        }
    }
    return weft__change_dirty_get(pool, row);
}

/* Main-thread writes at the world's tick go to the pool's dirty bits: three queries on A with
 * windows 1, 2 and 5 epochs long (so a closing epoch is sometimes dropped, sometimes copied
 * into the row ticks), random first writes of an epoch (get_mut: no epoch change, set: closes
 * the old epoch), swap removes and re-adds between the writes and the checks, and the ordered
 * pool C (moves, ordered removes, sorts: the bits are settled before rows move). Every check
 * iterates in random chunks and compares with the model. */
Test(change, dirty_epochs_match_model_with_lagging_queries_and_moves, .init = setup,
     .fini = teardown) {
    enum { LN = 2000, EPOCHS = 40, NQ = 4 };
    uint64_t seed = seed_from_env();
    fprintf(stderr, "change dirty epochs: seed %llu (replay with WEFT_TEST_SEED=%llu)\n",
            (unsigned long long)seed, (unsigned long long)seed);
    rng = seed ? seed : 1;
    weft_query_t *q5 = make_query(TERM(comp[0], WEFT_ACCESS_READ, WEFT_CHANGE_CHANGED), NO_TERM);
    weft_query_t *qs[NQ] = {qa, qa_slow, q5, qc};
    const uint32_t every[NQ] = {1, 2, 5, 1}, term[NQ] = {0, 0, 0, 2};
    weft_entity_t *h = calloc(LN, sizeof *h);
    uint32_t(*chg)[NC] = calloc(LN, sizeof *chg);
    bool(*has)[NC] = calloc(LN, sizeof *has);
    bool *got = calloc(LN, 1);
    uint32_t *slot_of_index = calloc(4 * LN, sizeof *slot_of_index);
    uint32_t *found = calloc(LN + 1, sizeof *found);
    cr_assert(h && chg && has && got && slot_of_index && found);
    uint32_t from[NQ] = {0}; /* first epoch each query has not seen */
    uint32_t deferred = 0, settled = 0, logged = 0, full = 0;
    for (uint32_t i = 0; i < LN; i++) {
        h[i] = test_entity(world);
        slot_of_index[weft_entity_index(h[i])] = i;
        for (int c = 0; c < NC; c += 2) {
            cr_assert(eq(int, weft_component_add(world, h[i], comp[c], NULL), WEFT_OK));
            has[i][c] = true;
        }
    }
    weft__pool_t *pa = &world->components[comp[0].id]->pool;
    for (uint32_t ep = 1; ep <= EPOCHS; ep++) {
        if (ep % 8u == 0) { /* a burst of get_mut on A: more rows than the log holds */
            uint32_t first = below(LN);
            unsigned char buf[16] = {0}; /* a set opens the epoch at this tick */
            cr_assert(eq(int, weft_component_set(world, h[first], comp[0], buf), WEFT_OK));
            has[first][0] = true;
            chg[first][0] = ep;
            for (uint32_t n = 0; n < LN / 8u; n++) {
                uint32_t i = below(LN), before = weft__change_log_len(pa);
                if (weft_component_get_mut(world, h[i], comp[0]) != NULL) {
                    chg[i][0] = ep;
                    full +=
                        before == WEFT__DIRTY_LOG_CAP(pa->cap) && weft__change_log_len(pa) == 1u;
                }
            }
        }
        /* This epoch's changes: about 2% of the rows. */
        for (uint32_t n = 0; n < LN / 50u; n++) {
            uint32_t i = below(LN);
            int c = below(3) == 0 ? 2 : 0;
            unsigned char buf[16] = {0};
            switch (below(8)) {
            case 0:
            case 1:
                cr_assert(eq(int, weft_component_set(world, h[i], comp[c], buf), WEFT_OK));
                has[i][c] = true;
                chg[i][c] = ep;
                break;
            case 2:
            case 3:
                if (weft_component_get_mut(world, h[i], comp[c]) != NULL) {
                    chg[i][c] = ep;
                    uint32_t row = weft__pool_row(pa, weft_entity_index(h[i]));
                    if (c == 0 && pa->dirty_open && pa->dirty_tick == world->change_tick) {
                        cr_assert(dirty_pending(pa, row));
                        logged += weft__change_log_len(pa) != 0;
                        deferred += !weft__tick_newer(weft__change_row_tick(pa, row),
                                                      world->change_tick - 1u);
                    }
                }
                break;
            case 4: { /* row_mut of a random row */
                uint32_t rows = weft_component_rows(world, comp[c]);
                if (rows != 0) {
                    uint32_t row = below(rows);
                    weft_entity_t e = weft_component_entity_at(world, comp[c], row);
                    cr_assert(weft_component_row_mut(world, comp[c], row) != NULL);
                    chg[slot_of_index[weft_entity_index(e)]][c] = ep;
                }
                break;
            }
            case 5: /* remove (C keeps order), then maybe add back: an add is a write */
                if (has[i][c]) {
                    weft_result_t r = c == 2 ? weft_component_remove_ordered(world, h[i], comp[c])
                                             : weft_component_remove(world, h[i], comp[c]);
                    cr_assert(eq(int, r, WEFT_OK));
                    has[i][c] = false;
                }
                if (below(2)) {
                    cr_assert(eq(int, weft_component_add(world, h[i], comp[c], NULL), WEFT_OK));
                    has[i][c] = true;
                    chg[i][c] = ep;
                }
                break;
            case 6: { /* move a row of the ordered pool */
                uint32_t rows = weft_component_rows(world, comp[2]);
                if (rows > 1) {
                    cr_assert(eq(int,
                                 weft_component_move_row(world, comp[2], below(rows), below(rows)),
                                 WEFT_OK));
                }
                break;
            }
            default:
                if (below(20) == 0) {
                    cr_assert(
                        eq(int, weft_component_sort(world, comp[2], by_value, NULL), WEFT_OK));
                }
                break;
            }
        }
        for (int k = 0; k < NQ; k++) {
            if (ep % every[k] != 0) {
                continue;
            }
            bool open_before = pa->dirty_open;
            uint32_t chunk_rows = yielded_slots(qs[k], LN, slot_of_index, found, got, seed, ep, k);
            for (uint32_t i = 0; i < LN; i++) {
                bool want = has[i][term[k]] && chg[i][term[k]] >= from[k];
                cr_assert(eq(int, got[i], want),
                          "seed %llu epoch %u chunk_rows %u: query %d, entity %u: matched %d, "
                          "model says %d",
                          (unsigned long long)seed, ep, chunk_rows, k, i, got[i], want);
            }
            weft_query_mark_seen(qs[k]);
            from[k] = ep + 1u;
            settled += open_before;
        }
    }
    /* The test went through the deferred path (rows whose tick was not stored). */
    cr_assert(deferred > 0 && settled > 0, "deferred %u, settled %u", deferred, settled);
    /* ... and through the log, full at times (moved into the bits by a write). */
    cr_assert(logged > 0 && full > 0, "logged %u, full %u", logged, full);
    free(h), free(chg), free(has), free(got), free(slot_of_index), free(found);
}

/* ---- the write list (change.h, THE WRITE LIST) ------------------------------------------ */

/* Entity indices a whole-pool iteration of q yields, in order (at most cap). */
static uint32_t collect_whole(weft_query_t *q, uint32_t *out, uint32_t cap) {
    return collect_chunks(q, 0, out, cap);
}

/* Main-thread writes of A (set, get_mut, row_mut, with repeats) against a model of each
 * epoch's first-write order. An epoch opened by a set, with no row added, removed or moved
 * and no more distinct rows than the list holds, yields its rows in the order of their first
 * write, each once; any other epoch (opened by a get_mut at a later tick, a swap remove and
 * re-add in it, more rows than the list holds) yields the same set in row order. Every epoch
 * is also read in random chunks (set only). */
Test(change, changed_rows_come_in_first_write_order_while_the_write_list_holds, .init = setup,
     .fini = teardown) {
    enum { LN = 3000, EPOCHS = 120 };
    uint64_t seed = seed_from_env();
    fprintf(stderr, "change write list: seed %llu (replay with WEFT_TEST_SEED=%llu)\n",
            (unsigned long long)seed, (unsigned long long)seed);
    rng = seed ? seed : 1;
    weft_entity_t *h = calloc(LN, sizeof *h);
    uint32_t *slot_of_index = calloc(4 * LN, sizeof *slot_of_index);
    uint32_t *order = calloc(LN, sizeof *order), *found = calloc(LN + 1, sizeof *found);
    uint32_t *seen = calloc(LN, sizeof *seen); /* epoch + 1 of each slot's last write */
    bool *got = calloc(LN, 1), *absent = calloc(LN, 1);
    cr_assert(h && slot_of_index && order && found && seen && got && absent);
    for (uint32_t i = 0; i < LN; i++) {
        h[i] = test_entity(world);
        slot_of_index[weft_entity_index(h[i])] = i;
        cr_assert(eq(int, weft_component_add(world, h[i], comp[0], NULL), WEFT_OK));
    }
    weft_query_mark_seen(qa);
    weft__pool_t *pa = &world->components[comp[0].id]->pool;
    uint32_t listed = 0, scanned = 0, overflowed = 0;
    for (uint32_t ep = 1; ep <= EPOCHS; ep++) {
        uint32_t n = 0; /* distinct rows written this epoch, in first-write order */
        bool moved = false;
        for (uint32_t i = 0; i < LN; i++) { /* removed last epoch: added back (a write) */
            if (absent[i]) {
                cr_assert(eq(int, weft_component_add(world, h[i], comp[0], NULL), WEFT_OK));
                absent[i] = false;
                seen[i] = ep;
                order[n++] = weft_entity_index(h[i]);
                moved = true;
            }
        }
        /* A set closes the last epoch and opens one; a get_mut opens one only when none is
         * open, else it stores its row's tick (change.h, DIRTY ROWS). */
        bool opened_by_set = below(4) != 0;
        bool opens = opened_by_set || !pa->dirty_open;
        /* A small range makes repeats frequent; sometimes more rows than the list holds. */
        uint32_t range = below(3) == 0 ? 40u : LN;
        uint32_t writes = below(4) == 0 ? 3u * WEFT__DIRTY_LOG_CAP(pa->cap) : below(100);
        uint32_t move_at = below(6) == 0 ? 1u + below(writes + 1u) : UINT32_MAX;
        for (uint32_t w = 0; w <= writes; w++) {
            uint32_t i = below(range);
            unsigned char buf[16] = {0};
            uint32_t how = w == 0 ? (opened_by_set ? 0u : 1u) : below(3);
            if (absent[i]) {
                continue;
            }
            if (w == move_at && below(2)) { /* a swap remove and re-add: rows move */
                cr_assert(eq(int, weft_component_remove(world, h[i], comp[0]), WEFT_OK));
                cr_assert(eq(int, weft_component_add(world, h[i], comp[0], NULL), WEFT_OK));
                moved = true;
            } else if (w == move_at) { /* the last row's entity goes (no row moves) */
                uint32_t last = weft_component_rows(world, comp[0]) - 1u;
                uint32_t sl = slot_of_index[weft_entity_index(
                    weft_component_entity_at(world, comp[0], last))];
                cr_assert(eq(int, weft_component_remove(world, h[sl], comp[0]), WEFT_OK));
                absent[sl] = true;
                moved = true;
                continue;
            } else if (how == 0) {
                cr_assert(eq(int, weft_component_set(world, h[i], comp[0], buf), WEFT_OK));
            } else if (how == 1) {
                cr_assert(weft_component_get_mut(world, h[i], comp[0]) != NULL);
            } else {
                uint32_t row = weft__pool_row(pa, weft_entity_index(h[i]));
                cr_assert(weft_component_row_mut(world, comp[0], row) != NULL);
            }
            if (seen[i] != ep) {
                seen[i] = ep;
                order[n++] = weft_entity_index(h[i]);
            }
        }
        bool fits = n <= WEFT__DIRTY_LOG_CAP(pa->cap);
        uint32_t kept = 0; /* the written rows still present, in first-write order */
        for (uint32_t j = 0; j < n; j++) {
            if (!absent[slot_of_index[order[j]]]) {
                order[kept++] = order[j];
            }
        }
        n = kept;
        bool in_order = opens && !moved && fits;
        uint32_t got_n = collect_whole(qa, found, LN + 1);
        cr_assert(eq(u32, got_n, n), "seed %llu epoch %u: %u rows yielded, %u written",
                  (unsigned long long)seed, ep, got_n, n);
        memset(got, 0, LN);
        for (uint32_t j = 0; j < got_n; j++) {
            uint32_t sl = slot_of_index[found[j]];
            bool fresh = !got[sl] && seen[sl] == ep && !absent[sl]; /* written, not yielded yet */
            cr_assert(fresh, "seed %llu epoch %u: entity %u yielded twice or not written",
                      (unsigned long long)seed, ep, found[j]);
            got[sl] = true;
            if (in_order) {
                cr_assert(eq(u32, found[j], order[j]),
                          "seed %llu epoch %u: row %u of the changed rows is not the %u-th "
                          "first written",
                          (unsigned long long)seed, ep, j, j);
            } else if (j != 0) {
                cr_assert(weft__pool_row(pa, found[j - 1]) < weft__pool_row(pa, found[j]),
                          "seed %llu epoch %u: not in row order", (unsigned long long)seed, ep);
            }
        }
        /* The same set in chunks of a random size. */
        uint32_t chunk_rows = 1u + below(LN);
        uint32_t cn = collect_chunks(qa, chunk_rows, found, LN + 1);
        cr_assert(eq(u32, cn, n), "seed %llu epoch %u chunk_rows %u", (unsigned long long)seed, ep,
                  chunk_rows);
        for (uint32_t j = 0; j < cn; j++) {
            cr_assert(seen[slot_of_index[found[j]]] == ep && !absent[slot_of_index[found[j]]]);
        }
        listed += in_order && n > 1;
        scanned += !in_order && n > 1;
        overflowed += opens && !moved && !fits;
        weft_query_mark_seen(qa);
    }
    cr_assert(listed > 0 && scanned > 0 && overflowed > 0, "listed %u, scanned %u, overflowed %u",
              listed, scanned, overflowed);
    free(h), free(slot_of_index), free(order), free(found), free(seen), free(got), free(absent);
}

/* ---- the fast write's key (change.h) ----------------------------------------------------- */

typedef struct other_writer {
    weft_entity_t target; /* an entity of `world` with A */
    bool logged;          /* the write went to world's log */
    uint32_t row_tick;    /* the target row's tick after the write */
} other_writer_t;

/* A thread with a log key of its own (it tracks a pool of its own world, where its writes
 * are logged) writes A of `world`, whose tracking thread is the test's. */
static void *other_thread_writes(void *arg) {
    other_writer_t *o = arg;
    test_alloc_t own_alloc = {0};
    weft_world_t *own = test_world(&own_alloc);
    weft_component_t x = test_register(own, "X", 4);
    weft_query_desc_t d = {.terms = {TERM(x, WEFT_ACCESS_READ, WEFT_CHANGE_CHANGED)}};
    weft_query_t *q = NULL;
    weft_entity_t e = test_entity(own), f = test_entity(own);
    uint32_t v = 1;
    bool ok = weft_query_create(own, &d, &q) == WEFT_OK &&
              weft_component_set(own, e, x, &v) == WEFT_OK && /* opens its epoch */
              weft_component_set(own, f, x, &v) == WEFT_OK;
    weft__pool_t *own_pool = &own->components[x.id]->pool;
    ok = ok && weft__change_log_len(own_pool) == 1u; /* the second set was logged: a key */
    weft__pool_t *pa = &world->components[comp[0].id]->pool;
    uint32_t before = weft__change_log_len(pa);
    ok = ok && weft_component_get_mut(world, o->target, comp[0]) != NULL;
    o->logged = !ok || weft__change_log_len(pa) != before;
    o->row_tick = weft__change_row_tick(pa, weft__pool_row(pa, weft_entity_index(o->target)));
    weft_world_destroy(own);
    return NULL;
}

/* Only the tracking thread, outside every system chunk, at the open epoch's tick, appends its
 * writes to the log; one compare decides (change.h, THE FAST WRITE'S KEY). A write inside a
 * chunk stores the chunk's tick even at the epoch's world tick, the next write outside it is
 * logged again, and another thread's write stores the world's tick even when that thread
 * logs writes to a world of its own. */
Test(change, only_the_tracking_thread_outside_chunks_logs_its_writes, .init = setup,
     .fini = teardown) {
    weft_entity_t e[3];
    for (int i = 0; i < 3; i++) {
        e[i] = test_entity(world);
        cr_assert(eq(int, weft_component_add(world, e[i], comp[0], NULL), WEFT_OK));
    }
    weft_query_mark_seen(qa);
    world->change_tick += 2u; /* the adds' tick is seen: the writes below are newer */
    weft__pool_t *pa = &world->components[comp[0].id]->pool;
    unsigned char buf[16] = {0};
    cr_assert(eq(int, weft_component_set(world, e[0], comp[0], buf), WEFT_OK));
    uint32_t now = world->change_tick, len = weft__change_log_len(pa);
    cr_assert(pa->dirty_open && pa->dirty_tick == now);
    cr_assert(weft_component_get_mut(world, e[1], comp[0]) != NULL);
    cr_assert(eq(u32, weft__change_log_len(pa), len + 1u), "the tracking thread's write is logged");
    /* Inside a chunk (its tick need not move the world's): the row tick, not the log. */
    uint32_t chunk_tick = now + 7u, row2 = weft__pool_row(pa, weft_entity_index(e[2]));
    weft__change_scope_t outer = weft__change_enter(world, chunk_tick);
    cr_assert(weft_component_get_mut(world, e[2], comp[0]) != NULL);
    weft__change_leave(outer);
    cr_assert(eq(u32, weft__change_log_len(pa), len + 1u), "a chunk's write is not logged");
    cr_assert(eq(u32, weft__change_row_tick(pa, row2), chunk_tick));
    cr_assert(weft_component_get_mut(world, e[2], comp[0]) != NULL);
    cr_assert(eq(u32, weft__change_log_len(pa), len + 2u), "logged again after the chunk");
    /* Another thread. */
    other_writer_t o = {.target = e[1]};
    pthread_t t;
    cr_assert(eq(int, pthread_create(&t, NULL, other_thread_writes, &o), 0));
    cr_assert(eq(int, pthread_join(t, NULL), 0));
    cr_assert(not(o.logged), "another thread's write is not logged");
    cr_assert(eq(u32, o.row_tick, now), "it stores the world's tick");
    /* Every write is seen once by the filter. */
    uint32_t n = 0;
    weft_iter_t it;
    weft_query_iter(qa, 0, 0, &it);
    while (weft_iter_next(&it)) {
        n += it.rows;
    }
    cr_assert(eq(u32, n, 3u));
}
