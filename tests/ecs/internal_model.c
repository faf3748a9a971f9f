/* internal_model.c: model-based randomised test of the ECS core.
 *
 * One million random operations (create, destroy, add, set, remove, remove keeping order,
 * move row, sort, group membership changes through adds/removes of grouped components, stale
 * handles) run against the world and against a plain reference model. After every operation
 * the touched entity is checked in full (liveness, component set, values, sparse <-> dense,
 * signature); every CHECK_EVERY operations the whole world is checked (every pool's sparse <->
 * dense agreement, counts, group alignment, the ordered pool's exact row order, every
 * generation, the free list, and a chunked query with an exclude against the model). Each
 * pool switches to 4-byte sparse entries at a random operation (it is a one-way switch
 * normally reached only past 2^24 rows), so both encodings, and the re-encoding of a live
 * index, face the same checks. The seed is printed; WT_SEED=<n> replays a run and
 * WEFT_MODEL_OPS=<n> changes the number of operations. Includes private headers to see the
 * invariants. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <time.h>

#include "ecs_fixture.h"
#include "src/core/entity.h"
#include "src/core/group.h"
#include "src/core/pool.h"
#include "src/core/signature.h"
#include "src/core/world.h"
#include "weft_test.h"

enum {
    MAX_E = 256,      /* model entity slots */
    NC = 4,           /* components: A, B (grouped), C (ordered pool), T (tag) */
    CHECK_EVERY = 64, /* full check period */
    DEAD_KEEP = 64,   /* stale handles remembered */
};

typedef struct model {
    weft_entity_t handle[MAX_E]; /* 0: model slot unused */
    uint32_t value[MAX_E][NC];   /* first 4 bytes of each component's data */
    bool has[MAX_E][NC];
    int c_order[MAX_E]; /* model slots in C's row order */
    int c_count;
    weft_entity_t dead[DEAD_KEEP];
    int dead_n;
    uint32_t live;
} model_t;

static weft_world_t *world;
static weft_query_t *query;    /* A (write), C (read), excluding T */
static int slot_of[4 * MAX_E]; /* entity index -> model slot, -1: none */
static weft_component_t comp[NC];
static const size_t comp_size[NC] = {12, 4, 8, 0};
static model_t m;
static uint64_t rng;

static uint64_t next(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

static uint32_t below(uint32_t n) { return (uint32_t)(next() % n); }

/* ---- checks ---- */

static weft__pool_t *pool_of(int c) { return &world->components[comp[c].id]->pool; }

static void check_entity(int s) {
    weft_entity_t e = m.handle[s];
    if (e == 0) {
        return;
    }
    cr_assert(weft_entity_is_alive(world, e), "model slot %d should be alive", s);
    uint32_t idx = weft_entity_index(e);
    uint32_t slot = weft__entity_slot_raw(world, idx);
    uint32_t n;
    const uint32_t *ids = weft__sig_ids(world, weft__slot_sig(slot), &n);
    uint32_t k = 0;
    for (int c = 0; c < NC; c++) {
        cr_assert(eq(int, weft_component_has(world, e, comp[c]), m.has[s][c]), "has c=%d", c);
        uint32_t row = weft__pool_row(pool_of(c), idx);
        cr_assert(eq(int, row != WEFT__ROW_NONE, m.has[s][c]));
        if (!m.has[s][c]) {
            continue;
        }
        cr_assert(k < n && ids[k] == comp[c].id, "signature lists c=%d", c);
        k++;
        cr_assert(row < pool_of(c)->count, "row < pool_of(c)->count (%u vs %u)", (unsigned)(row),
                  (unsigned)(pool_of(c)->count));
        cr_assert(eq(u32, pool_of(c)->dense[row], idx), "sparse -> dense agreement");
        if (comp_size[c] >= 4) {
            uint32_t v;
            memcpy(&v, weft_component_get(world, e, comp[c]), 4);
            cr_assert(eq(u32, v, m.value[s][c]), "value of c=%d", c);
        }
    }
    cr_assert(eq(u32, k, n), "signature has no extra components");
}

static void check_all(void) {
    for (int s = 0; s < MAX_E; s++) {
        check_entity(s);
    }
    for (int d = 0; d < m.dead_n; d++) {
        cr_assert(not(weft_entity_is_alive(world, m.dead[d])), "stale handle seen alive");
    }
    cr_assert(eq(u32, weft_entity_count(world), m.live));
    uint32_t slots = weft_atomic_load_relaxed(&world->slot_count);
    cr_assert(eq(u32, world->free_count + m.live + 1u, slots), "free list + live = slots");
    for (uint32_t f = 0; f < world->free_count; f++) {
        cr_assert(eq(u32, weft__slot_sig(weft__entity_slot_raw(world, world->free_list[f])),
                     WEFT__SIG_DEAD));
    }
    for (int c = 0; c < NC; c++) {
        const weft__pool_t *p = pool_of(c);
        uint32_t want = 0;
        for (int s = 0; s < MAX_E; s++) {
            want += m.handle[s] && m.has[s][c];
        }
        cr_assert(eq(u32, p->count, want), "row count of c=%d", c);
        bool ascending = true;
        for (uint32_t r = 0; r < p->count; r++) {
            cr_assert(eq(u32, weft__pool_row(p, p->dense[r]), r), "dense -> sparse agreement");
            ascending = ascending && (r == 0 || p->dense[r - 1] < p->dense[r]);
        }
        cr_assert(not(p->ascending && !ascending), "c=%d is flagged ascending but is not", c);
    }
    cr_assert(weft__group_check(world, pool_of(0)->group), "group alignment");
    /* the query sees exactly the model's matches, with the right data */
    uint32_t want = 0, seen = 0;
    for (int s = 0; s < MAX_E; s++) {
        want += m.handle[s] && m.has[s][0] && m.has[s][2] && !m.has[s][3];
    }
    for (uint32_t k = 0; k < weft_query_chunk_count(query, 16); k++) {
        weft_iter_t it;
        weft_query_iter(query, 16, k, &it);
        while (weft_iter_next(&it)) {
            for (uint32_t i = 0; i < it.rows; i++, seen++) {
                weft_entity_t e = weft_iter_entity(&it, i);
                int s = slot_of[weft_entity_index(e)];
                cr_assert(s >= 0 && m.handle[s] == e, "query returned a stranger");
                cr_assert(m.has[s][0] && m.has[s][2] && !m.has[s][3], "query match");
                uint32_t a, c;
                memcpy(&a, weft_iter_get(&it, 0, i), 4);
                memcpy(&c, weft_iter_get(&it, 1, i), 4);
                cr_assert(a == m.value[s][0] && c == m.value[s][2], "query data");
            }
        }
    }
    cr_assert(eq(u32, seen, want), "query count");
    cr_assert(eq(u32, pool_of(2)->count, (uint32_t)m.c_count));
    for (int r = 0; r < m.c_count; r++) {
        cr_assert(
            eq(u64, weft_component_entity_at(world, comp[2], (uint32_t)r), m.handle[m.c_order[r]]),
            "ordered pool row %d", r);
    }
}

/* ---- model mirror of C's row order ---- */

static int c_find(int s) {
    for (int r = 0; r < m.c_count; r++) {
        if (m.c_order[r] == s) {
            return r;
        }
    }
    return -1;
}

static void c_remove_swap(int s) {
    int r = c_find(s);
    m.c_order[r] = m.c_order[--m.c_count];
}

static void c_remove_ordered(int s) {
    int r = c_find(s);
    memmove(m.c_order + r, m.c_order + r + 1, (size_t)(m.c_count - r - 1) * sizeof(int));
    m.c_count--;
}

static int cmp_value(weft_entity_t ea, const void *a, weft_entity_t eb, const void *b, void *u) {
    (void)ea;
    (void)eb;
    (void)u;
    uint32_t x, y;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    return (x > y) - (x < y);
}

static void c_sort(void) {
    for (int i = 1; i < m.c_count; i++) { /* stable insertion sort by value */
        int s = m.c_order[i], j = i;
        while (j > 0 && m.value[m.c_order[j - 1]][2] > m.value[s][2]) {
            m.c_order[j] = m.c_order[j - 1];
            j--;
        }
        m.c_order[j] = s;
    }
}

/* ---- operations ---- */

static int random_live(void) {
    if (m.live == 0) {
        return -1;
    }
    for (;;) {
        int s = (int)below(MAX_E);
        if (m.handle[s]) {
            return s;
        }
    }
}

static int op(void) {
    uint32_t kind = below(100);
    int s = random_live();
    int c = (int)below(NC);
    if (kind < 12 || s < 0) { /* create */
        int f = (int)below(MAX_E);
        if (m.handle[f]) {
            return -1;
        }
        cr_assert(eq(int, weft_entity_create(world, &m.handle[f]), WEFT_OK));
        cr_assert(weft_entity_index(m.handle[f]) < 4 * MAX_E,
                  "weft_entity_index(m.handle[f]) < 4 * MAX_E (%u vs %u)",
                  (unsigned)(weft_entity_index(m.handle[f])), (unsigned)(4 * MAX_E));
        slot_of[weft_entity_index(m.handle[f])] = f;
        memset(m.has[f], 0, sizeof m.has[f]);
        m.live++;
        return f;
    }
    weft_entity_t e = m.handle[s];
    if (kind < 22) { /* destroy */
        cr_assert(eq(int, weft_entity_destroy(world, e), WEFT_OK));
        if (m.has[s][2]) {
            c_remove_swap(s);
        }
        m.dead[m.dead_n < DEAD_KEEP ? m.dead_n++ : (int)below(DEAD_KEEP)] = e;
        m.handle[s] = 0;
        slot_of[weft_entity_index(e)] = -1;
        m.live--;
        return -1;
    }
    if (kind < 25 && m.dead_n > 0) { /* stale handle */
        weft_entity_t d = m.dead[below((uint32_t)m.dead_n)];
        cr_assert(eq(int, weft_component_add(world, d, comp[c], NULL), WEFT_ESTALE));
        cr_assert(eq(int, weft_entity_destroy(world, d), WEFT_ESTALE));
        cr_assert(weft_component_get(world, d, comp[c]) == NULL);
        return -1;
    }
    if (kind < 55) { /* add or set */
        uint32_t v = (uint32_t)next();
        unsigned char buf[12] = {0};
        memcpy(buf, &v, 4);
        bool set = kind >= 45;
        weft_result_t r = set ? weft_component_set(world, e, comp[c], buf)
                              : weft_component_add(world, e, comp[c], NULL);
        if (m.has[s][c] && !set) {
            cr_assert(eq(int, r, WEFT_EEXIST));
            return s;
        }
        cr_assert(eq(int, r, WEFT_OK));
        if (!m.has[s][c] && c == 2) {
            m.c_order[m.c_count++] = s;
        }
        m.has[s][c] = true;
        m.value[s][c] = set ? v : 0;
        return s;
    }
    if (kind < 80) { /* remove (swap) */
        weft_result_t r = weft_component_remove(world, e, comp[c]);
        cr_assert(eq(int, r, m.has[s][c] ? WEFT_OK : WEFT_ENOENT));
        if (m.has[s][c] && c == 2) {
            c_remove_swap(s);
        }
        m.has[s][c] = false;
        return s;
    }
    if (kind < 88) { /* remove keeping order (C), refused on grouped A */
        weft_component_t t = c == 0 ? comp[0] : comp[2];
        weft_result_t r = weft_component_remove_ordered(world, e, t);
        int tc = c == 0 ? 0 : 2;
        if (!m.has[s][tc]) {
            cr_assert(eq(int, r, WEFT_ENOENT));
        } else if (tc == 0) {
            cr_assert(eq(int, r, WEFT_ESTATE));
        } else {
            cr_assert(eq(int, r, WEFT_OK));
            c_remove_ordered(s);
            m.has[s][2] = false;
        }
        return s;
    }
    if (kind < 98) { /* move a row of C */
        if (m.c_count == 0) {
            return -1;
        }
        uint32_t from = below((uint32_t)m.c_count), to = below((uint32_t)m.c_count);
        cr_assert(eq(int, weft_component_move_row(world, comp[2], from, to), WEFT_OK));
        int moving = m.c_order[from];
        if (from < to) {
            memmove(m.c_order + from, m.c_order + from + 1, (to - from) * sizeof(int));
        } else {
            memmove(m.c_order + to + 1, m.c_order + to, (from - to) * sizeof(int));
        }
        m.c_order[to] = moving;
        return moving;
    }
    cr_assert(eq(int, weft_component_sort(world, comp[2], cmp_value, NULL), WEFT_OK));
    c_sort();
    return -1;
}

TestSuite(model, .timeout = 300);

Test(model, a_million_random_operations_agree_with_the_reference_model) {
    uint64_t seed = wt_seed("model");
    uint64_t ops = wt_env_u64("WEFT_MODEL_OPS", 1000000);
    fprintf(stderr, "model: %llu operations\n", (unsigned long long)ops);
    rng = seed ? seed : 1;
    test_alloc_t a = {0};
    world = test_world(&a);
    cr_assert(world != NULL);
    const char *names[NC] = {"A", "B", "C", "T"};
    for (int c = 0; c < NC; c++) {
        comp[c] = test_register(world, names[c], comp_size[c]);
    }
    weft_group_t g;
    weft_group_desc_t gd = {.components = {comp[0], comp[1]}};
    cr_assert(eq(int, weft_group_create(world, &gd, &g), WEFT_OK));
    weft_query_desc_t qd = {.terms = {{.component = comp[0], .access = WEFT_ACCESS_WRITE},
                                      {.component = comp[2], .access = WEFT_ACCESS_READ}},
                            .exclude = {comp[3]}};
    cr_assert(eq(int, weft_query_create(world, &qd, &query), WEFT_OK));
    memset(&m, 0, sizeof m);
    for (int i = 0; i < 4 * MAX_E; i++) {
        slot_of[i] = -1;
    }
    uint64_t widen_at[NC];
    for (int c = 0; c < NC; c++) {
        widen_at[c] = ops ? next() % ops : 0;
    }
    for (uint64_t i = 0; i < ops; i++) {
        for (int c = 0; c < NC; c++) {
            if (i == widen_at[c]) {
                cr_assert(eq(int, pool_of(c)->sparse_wide, 0));
                cr_assert(eq(int, weft__pool_widen(world, pool_of(c)), WEFT_OK));
                cr_assert(eq(int, pool_of(c)->sparse_wide, 1));
                check_all();
            }
        }
        int touched = op();
        if (touched >= 0) {
            check_entity(touched);
        }
        if (i % CHECK_EVERY == 0) {
            check_all();
        }
    }
    check_all();
    weft_world_destroy(world);
    cr_expect(eq(sz, a.live_bytes, 0));
}
