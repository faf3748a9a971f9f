/* test_bulk.c: the bulk calls (weft_entity_create_with, weft_component_add_n / set_n /
 * remove_n, weft_query_destroy_all) against the equivalent single-entity calls.
 *
 * - model_*: random mixes of bulk and single calls on world A, the same changes made with
 *   single calls only on world B, and a plain-array reference model. After every operation
 *   the two world hashes and the hook counts must agree (bulk calls promise the world the
 *   single calls make, row for row); every few operations every value is compared with the
 *   model and the group is checked. The seed is printed; WT_SEED=<n> replays a run.
 * - errors_*: every error path returns its code and leaves the world hash unchanged.
 * - oom_*: a scenario of bulk calls with the k-th allocation failing, for every k.
 * - hooks_* and groups_*: the documented hook order and group alignment. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <time.h>

#include "ecs_fixture.h"
#include "weft_test.h"

/* ---- shared ------------------------------------------------------------------- >>shared */

enum { NC = 4, MAXE = 4096, VMAX = 16 };
static const char *const cname[NC] = {"P", "V", "M", "T"};
static const size_t csize[NC] = {12, 12, 8, 0}; /* T is a tag */
#define MARK 0x5A                               /* what M's on_add writes into its row */

/* Hook counters of one world: [kind][component]; kind 0 add, 1 set, 2 remove. */
typedef struct hooks {
    uint64_t n[3][NC];
    uint64_t nonzero_on_add; /* on_add saw a row that was not zero-initialised */
} hooks_t;

static void hook_count(weft_world_t *w, weft_entity_t e, weft_component_t c, void *ptr, void *user,
                       int kind) {
    (void)w, (void)e;
    hooks_t *h = user;
    uint32_t k = c.id - 1u; /* registered first, in order: ids 1..NC */
    h->n[kind][k]++;
    if (kind == 0) {
        for (size_t i = 0; i < csize[k]; i++) {
            if (((unsigned char *)ptr)[i] != 0) {
                h->nonzero_on_add++;
                break;
            }
        }
        if (k == 2) { /* M: on_add initialises its row */
            memset(ptr, MARK, csize[k]);
        }
    }
}
static void on_add(weft_world_t *w, weft_entity_t e, weft_component_t c, void *p, void *u) {
    hook_count(w, e, c, p, u, 0);
}
static void on_set(weft_world_t *w, weft_entity_t e, weft_component_t c, void *p, void *u) {
    hook_count(w, e, c, p, u, 1);
}
static void on_remove(weft_world_t *w, weft_entity_t e, weft_component_t c, void *p, void *u) {
    hook_count(w, e, c, p, u, 2);
}

/* A world with P, V, M, T (every hook counting into *h) and, when grouped, the group {P, V}. */
typedef struct side {
    test_alloc_t a;
    hooks_t h;
    weft_world_t *w;
    weft_component_t c[NC];
    weft_group_t g;
    weft_query_t *q[4];
} side_t;

static void side_init(side_t *s, bool grouped) {
    memset(s, 0, sizeof *s);
    s->w = test_world(&s->a);
    cr_assert(s->w != NULL);
    for (int k = 0; k < NC; k++) {
        weft_component_desc_t d = {.name = cname[k],
                                   .size = csize[k],
                                   .on_add = on_add,
                                   .on_set = on_set,
                                   .on_remove = on_remove,
                                   .hook_user = &s->h};
        cr_assert(eq(int, weft_component_register(s->w, &d, &s->c[k]), WEFT_OK));
        cr_assert(eq(u32, s->c[k].id, (uint32_t)k + 1u));
    }
    if (grouped) {
        weft_group_desc_t gd = {.components = {s->c[0], s->c[1]}};
        cr_assert(eq(int, weft_group_create(s->w, &gd, &s->g), WEFT_OK));
    }
    weft_query_desc_t qd[4] = {
        {.terms = {{.component = s->c[0], .access = WEFT_ACCESS_READ}}},
        {.terms = {{.component = s->c[0], .access = WEFT_ACCESS_READ},
                   {.component = s->c[1], .access = WEFT_ACCESS_READ}}},
        {.terms = {{.component = s->c[1], .access = WEFT_ACCESS_READ}}, .exclude = {s->c[3]}},
        {.terms = {{.component = s->c[3], .access = WEFT_ACCESS_READ},
                   {.component = s->c[2], .access = WEFT_ACCESS_READ}}},
    };
    for (int i = 0; i < 4; i++) {
        cr_assert(eq(int, weft_query_create(s->w, &qd[i], &s->q[i]), WEFT_OK));
    }
}

static void side_fini(side_t *s) {
    weft_world_destroy(s->w);
    cr_expect(eq(sz, s->a.live_bytes, 0), "the world leaked %zu bytes", s->a.live_bytes);
}

/* The group invariant through the public API (rows [0, n) agree; no later row has both). */
static void expect_aligned(const side_t *s) {
    if (s->g.id == 0) {
        return;
    }
    weft_world_t *w = s->w;
    uint32_t n = weft_group_rows(w, s->g);
    const uint32_t *ents = weft_group_entities(w, s->g);
    for (uint32_t r = 0; r < n; r++) {
        weft_entity_t e = weft_entity_from_index(w, ents[r]);
        cr_assert(eq(u64, weft_component_entity_at(w, s->c[0], r), e), "group row %u", r);
        cr_assert(eq(u64, weft_component_entity_at(w, s->c[1], r), e), "group row %u", r);
    }
    for (int k = 0; k < 2; k++) {
        for (uint32_t r = n; r < weft_component_rows(w, s->c[k]); r++) {
            weft_entity_t e = weft_component_entity_at(w, s->c[k], r);
            cr_assert(not(weft_component_has(w, e, s->c[1 - k])), "row %u past the prefix", r);
        }
    }
}

static uint64_t rng;
static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static uint32_t below(uint32_t n) { return n ? (uint32_t)(rnd() % n) : 0; }

static uint64_t test_seed(const char *what) {
    uint64_t seed = wt_seed(what);
    return seed ? seed : 1;
}

/* ---- the reference model ----------------------------------------------------- >>model */

typedef struct model {
    bool alive[MAXE];
    weft_entity_t handle[MAXE];
    bool has[NC][MAXE];
    unsigned char val[NC][MAXE][VMAX];
} model_t;

static model_t m;
static side_t A, B;

static void model_create(weft_entity_t e) {
    uint32_t i = weft_entity_index(e);
    cr_assert(lt(u32, i, MAXE));
    m.alive[i] = true;
    m.handle[i] = e;
    for (int k = 0; k < NC; k++) {
        m.has[k][i] = false;
    }
}

/* Component k added (value NULL: on_add's result) or set on e. */
static void model_put(int k, weft_entity_t e, const void *value) {
    uint32_t i = weft_entity_index(e);
    if (!m.has[k][i]) {
        memset(m.val[k][i], k == 2 ? MARK : 0, csize[k]);
    }
    m.has[k][i] = true;
    if (value != NULL) {
        memcpy(m.val[k][i], value, csize[k]);
    }
}

static void model_destroy(weft_entity_t e) {
    uint32_t i = weft_entity_index(e);
    m.alive[i] = false;
    for (int k = 0; k < NC; k++) {
        m.has[k][i] = false;
    }
}

/* Every value of `s` against the model. */
static void expect_model(const side_t *s) {
    uint32_t live = 0;
    for (uint32_t i = 1; i < MAXE; i++) {
        if (!m.alive[i]) {
            cr_assert(eq(u64, weft_entity_from_index(s->w, i), 0), "slot %u should be free", i);
            continue;
        }
        live++;
        cr_assert(weft_entity_is_alive(s->w, m.handle[i]), "slot %u", i);
        for (int k = 0; k < NC; k++) {
            cr_assert(eq(int, weft_component_has(s->w, m.handle[i], s->c[k]), m.has[k][i]),
                      "slot %u component %s", i, cname[k]);
            if (m.has[k][i] && csize[k] != 0) {
                const void *p = weft_component_get(s->w, m.handle[i], s->c[k]);
                cr_assert(eq(int, memcmp(p, m.val[k][i], csize[k]), 0), "slot %u value of %s", i,
                          cname[k]);
            }
        }
    }
    cr_assert(eq(u32, weft_entity_count(s->w), live));
    expect_aligned(s);
}

/* Up to `max` distinct live entities, in random order, that have (want 1) or lack (want 0)
 * component k; want -1: any. Returns how many. */
static uint32_t pick(weft_entity_t *out, uint32_t max, int k, int want) {
    static weft_entity_t cand[MAXE];
    uint32_t n = 0;
    for (uint32_t i = 1; i < MAXE; i++) {
        if (m.alive[i] && (want < 0 || m.has[k][i] == (want == 1))) {
            cand[n++] = m.handle[i];
        }
    }
    uint32_t take = n < max ? n : max;
    for (uint32_t i = 0; i < take; i++) {
        uint32_t j = i + below(n - i);
        weft_entity_t t = cand[i];
        cand[i] = cand[j];
        cand[j] = t;
        out[i] = cand[i];
    }
    return take;
}

static void random_bytes(unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        p[i] = (unsigned char)rnd();
    }
}

/* ---- one random operation on both worlds ----------------------------------- >>operation */

static uint32_t live_count(void) {
    uint32_t n = 0;
    for (uint32_t i = 1; i < MAXE; i++) {
        n += m.alive[i];
    }
    return n;
}

static void op_create_with(void) {
    static weft_entity_t ea[200], eb[200];
    static unsigned char vals[NC][200 * VMAX];
    uint32_t n = below(8) == 0 ? below(200) : below(40);
    if (live_count() + n >= MAXE - 1) {
        return;
    }
    weft_component_t ca[NC], cb[NC];
    const void *va[NC];
    int order[NC] = {0, 1, 2, 3};
    for (int i = NC - 1; i > 0; i--) {
        int j = (int)below((uint32_t)i + 1u), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    uint32_t count = below(NC + 1);
    bool no_values = below(6) == 0;
    for (uint32_t j = 0; j < count; j++) {
        int k = order[j];
        ca[j] = A.c[k];
        cb[j] = B.c[k];
        va[j] = NULL;
        if (below(4) != 0) {
            random_bytes(vals[j], (size_t)n * csize[k]);
            va[j] = vals[j];
        }
    }
    cr_assert(
        eq(int, weft_entity_create_with(A.w, n, ca, count, no_values ? NULL : va, ea), WEFT_OK));
    cr_assert(eq(int, weft_entity_create_n(B.w, n, eb), WEFT_OK));
    for (uint32_t i = 0; i < n; i++) {
        cr_assert(eq(u64, ea[i], eb[i]), "handle %u", i);
        model_create(ea[i]);
        for (uint32_t j = 0; j < count; j++) {
            int k = order[j];
            const unsigned char *v =
                no_values || va[j] == NULL ? NULL : vals[j] + (size_t)i * csize[k];
            if (v != NULL) {
                cr_assert(eq(int, weft_component_set(B.w, eb[i], cb[j], v), WEFT_OK));
            } else {
                cr_assert(eq(int, weft_component_add(B.w, eb[i], cb[j], NULL), WEFT_OK));
            }
            model_put(k, ea[i], v);
        }
    }
}

static void op_array(int kind) { /* 0 add_n, 1 set_n, 2 remove_n */
    static weft_entity_t es[100];
    static unsigned char vals[100 * VMAX];
    int k = (int)below(NC);
    uint32_t n = pick(es, below(3) == 0 ? below(100) : below(33), k, kind == 1 ? -1 : kind == 2);
    random_bytes(vals, (size_t)n * csize[k]);
    if (kind == 0) {
        cr_assert(eq(int, weft_component_add_n(A.w, es, n, A.c[k]), WEFT_OK), "%s",
                  weft_last_error());
    } else if (kind == 1) {
        cr_assert(eq(int, weft_component_set_n(A.w, es, n, A.c[k], vals), WEFT_OK), "%s",
                  weft_last_error());
    } else {
        cr_assert(eq(int, weft_component_remove_n(A.w, es, n, A.c[k]), WEFT_OK), "%s",
                  weft_last_error());
    }
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *v = vals + (size_t)i * csize[k];
        if (kind == 0) {
            cr_assert(eq(int, weft_component_add(B.w, es[i], B.c[k], NULL), WEFT_OK));
            model_put(k, es[i], NULL);
        } else if (kind == 1) {
            cr_assert(eq(int, weft_component_set(B.w, es[i], B.c[k], v), WEFT_OK));
            model_put(k, es[i], v);
        } else {
            cr_assert(eq(int, weft_component_remove(B.w, es[i], B.c[k]), WEFT_OK));
            m.has[k][weft_entity_index(es[i])] = false;
        }
    }
}

static void op_destroy_all(void) {
    static weft_entity_t es[MAXE];
    int qi = (int)below(4);
    uint32_t n = 0, destroyed = 0;
    weft_iter_t it;
    cr_assert(eq(int, weft_query_iter(B.q[qi], 0, 0, &it), WEFT_OK));
    while (weft_iter_next(&it)) {
        for (uint32_t i = 0; i < it.rows; i++) {
            es[n++] = weft_iter_entity(&it, i);
        }
    }
    cr_assert(eq(int, weft_query_destroy_all(A.q[qi], &destroyed), WEFT_OK));
    cr_assert(eq(u32, destroyed, n));
    cr_assert(eq(int, weft_entity_destroy_n(B.w, es, n), WEFT_OK));
    for (uint32_t i = 0; i < n; i++) {
        model_destroy(es[i]);
    }
    cr_assert(eq(u32, weft_query_entity_count(A.q[qi]), 0));
}

static void op_single(void) {
    weft_entity_t e;
    int k = (int)below(NC);
    unsigned char v[VMAX];
    random_bytes(v, sizeof v);
    switch (below(5)) {
    case 0:
        if (live_count() + 1 < MAXE - 1) {
            weft_entity_t eb;
            cr_assert(eq(int, weft_entity_create(A.w, &e), WEFT_OK));
            cr_assert(eq(int, weft_entity_create(B.w, &eb), WEFT_OK));
            cr_assert(eq(u64, e, eb));
            model_create(e);
        }
        break;
    case 1:
        if (pick(&e, 1, 0, -1)) {
            cr_assert(eq(int, weft_entity_destroy(A.w, e), WEFT_OK));
            cr_assert(eq(int, weft_entity_destroy(B.w, e), WEFT_OK));
            model_destroy(e);
        }
        break;
    case 2:
        if (pick(&e, 1, k, 0)) {
            cr_assert(eq(int, weft_component_add(A.w, e, A.c[k], NULL), WEFT_OK));
            cr_assert(eq(int, weft_component_add(B.w, e, B.c[k], NULL), WEFT_OK));
            model_put(k, e, NULL);
        }
        break;
    case 3:
        if (pick(&e, 1, k, -1)) {
            cr_assert(eq(int, weft_component_set(A.w, e, A.c[k], v), WEFT_OK));
            cr_assert(eq(int, weft_component_set(B.w, e, B.c[k], v), WEFT_OK));
            model_put(k, e, v);
        }
        break;
    default:
        if (pick(&e, 1, k, 1)) {
            cr_assert(eq(int, weft_component_remove(A.w, e, A.c[k]), WEFT_OK));
            cr_assert(eq(int, weft_component_remove(B.w, e, B.c[k]), WEFT_OK));
            m.has[k][weft_entity_index(e)] = false;
        }
        break;
    }
}

static void run_model(bool grouped, const char *what, int ops) {
    rng = test_seed(what);
    memset(&m, 0, sizeof m);
    side_init(&A, grouped);
    side_init(&B, grouped);
    for (int op = 0; op < ops; op++) {
        uint32_t r = below(100);
        const char *name;
        if (r < 15) {
            name = "create_with";
            op_create_with();
        } else if (r < 30) {
            name = "add_n";
            op_array(0);
        } else if (r < 45) {
            name = "set_n";
            op_array(1);
        } else if (r < 58) {
            name = "remove_n";
            op_array(2);
        } else if (r < 60) {
            name = "destroy_all";
            op_destroy_all();
        } else {
            name = "single";
            op_single();
        }
        cr_assert(eq(u64, weft_world_hash(A.w), weft_world_hash(B.w)),
                  "op %d (%s): bulk and single worlds differ", op, name);
        cr_assert(eq(int, memcmp(&A.h, &B.h, sizeof A.h), 0), "op %d (%s): hook counts differ", op,
                  name);
        if (op % 64 == 0 || op == ops - 1) {
            expect_model(&A);
            expect_model(&B);
        }
    }
    cr_assert(eq(u64, A.h.nonzero_on_add, 0), "an on_add saw a row that was not zeroed");
    side_fini(&A);
    side_fini(&B);
}

TestSuite(bulk, .timeout = 300);

Test(bulk, model_random_mix_matches_single_calls_with_a_group) {
    run_model(true, "model grouped", 3000);
}

Test(bulk, model_random_mix_matches_single_calls_without_groups) {
    run_model(false, "model plain", 3000);
}

/* ---- hook order and groups -------------------------------------------------------- >>hooks */

typedef struct event {
    int kind;
    uint32_t c;
    weft_entity_t e;
    float first; /* the row's first float when the hook ran */
} event_t;

static event_t events[64];
static int nevents;

static void rec(weft_entity_t e, weft_component_t c, void *p, int kind) {
    float f = 0;
    memcpy(&f, p, sizeof f);
    events[nevents++] = (event_t){kind, c.id, e, f};
}
static void rec_add(weft_world_t *w, weft_entity_t e, weft_component_t c, void *p, void *u) {
    (void)w, (void)u;
    rec(e, c, p, 0);
}
static void rec_set(weft_world_t *w, weft_entity_t e, weft_component_t c, void *p, void *u) {
    (void)w, (void)u;
    rec(e, c, p, 1);
}

Test(bulk, hooks_fire_per_component_on_add_on_zeroed_rows_then_on_set_on_the_values) {
    test_alloc_t a = {0};
    weft_world_t *w = test_world(&a);
    weft_component_t ca, cb;
    weft_component_desc_t da = {.name = "A", .size = 12, .on_add = rec_add, .on_set = rec_set};
    weft_component_desc_t db = {.name = "B", .size = 12, .on_set = rec_set};
    cr_assert(eq(int, weft_component_register(w, &da, &ca), WEFT_OK));
    cr_assert(eq(int, weft_component_register(w, &db, &cb), WEFT_OK));
    vec3_t va[3] = {{1, 0, 0}, {2, 0, 0}, {3, 0, 0}}, vb[3] = {{4, 0, 0}, {5, 0, 0}, {6, 0, 0}};
    weft_component_t comps[2] = {cb, ca};
    const void *vals[2] = {vb, va};
    weft_entity_t e[3];
    nevents = 0;
    cr_assert(eq(int, weft_entity_create_with(w, 3, comps, 2, vals, e), WEFT_OK));
    /* B (given first): on_set for e0..e2 with its values; then A: on_add e0..e2 on zeroed
     * rows, then on_set e0..e2 with its values. */
    event_t want[9] = {
        {1, cb.id, e[0], 4}, {1, cb.id, e[1], 5}, {1, cb.id, e[2], 6},
        {0, ca.id, e[0], 0}, {0, ca.id, e[1], 0}, {0, ca.id, e[2], 0},
        {1, ca.id, e[0], 1}, {1, ca.id, e[1], 2}, {1, ca.id, e[2], 3},
    };
    cr_assert(eq(int, nevents, 9));
    for (int i = 0; i < 9; i++) {
        cr_assert(eq(int, events[i].kind, want[i].kind), "event %d", i);
        cr_assert(eq(u32, events[i].c, want[i].c), "event %d", i);
        cr_assert(eq(u64, events[i].e, want[i].e), "event %d", i);
        cr_assert(eq(flt, events[i].first, want[i].first), "event %d", i);
    }
    /* set_n: on_add only for the entity that lacked A, then on_set for all in array order. */
    weft_entity_t f;
    cr_assert(eq(int, weft_entity_create(w, &f), WEFT_OK));
    weft_entity_t arr[2] = {f, e[1]};
    vec3_t nv[2] = {{7, 0, 0}, {8, 0, 0}};
    nevents = 0;
    cr_assert(eq(int, weft_component_set_n(w, arr, 2, ca, nv), WEFT_OK));
    cr_assert(eq(int, nevents, 3));
    cr_assert(eq(int, events[0].kind, 0));
    cr_assert(eq(u64, events[0].e, f));
    cr_assert(eq(flt, events[0].first, 0));
    cr_assert(eq(u64, events[1].e, f));
    cr_assert(eq(flt, events[1].first, 7));
    cr_assert(eq(u64, events[2].e, e[1]));
    cr_assert(eq(flt, events[2].first, 8));
    weft_world_destroy(w);
    cr_expect(eq(sz, a.live_bytes, 0));
}

Test(bulk, groups_stay_aligned_when_the_batch_lands_behind_rows_outside_the_prefix) {
    side_t s;
    side_init(&s, true);
    weft_world_t *w = s.w;
    /* rows outside the prefix in both pools, so the alignment swaps for real */
    weft_entity_t lone[20];
    cr_assert(eq(int, weft_entity_create_with(w, 10, &s.c[0], 1, NULL, lone), WEFT_OK));
    cr_assert(eq(int, weft_entity_create_with(w, 10, &s.c[1], 1, NULL, lone + 10), WEFT_OK));
    weft_entity_t both[50];
    vec3_t pv[50], vv[50];
    for (int i = 0; i < 50; i++) {
        pv[i] = (vec3_t){(float)i, 1, 1};
        vv[i] = (vec3_t){(float)i, 2, 2};
    }
    const void *vals[2] = {pv, vv};
    cr_assert(eq(int, weft_entity_create_with(w, 50, s.c, 2, vals, both), WEFT_OK));
    expect_aligned(&s);
    cr_assert(eq(u32, weft_group_rows(w, s.g), 50));
    const vec3_t *col = weft_group_column(w, s.g, s.c[0]);
    for (uint32_t r = 0; r < 50; r++) {
        cr_assert(eq(flt, col[r].x, (float)r), "the batch is the prefix, in order");
    }
    /* the lone P entities join through add_n, in array order */
    cr_assert(eq(int, weft_component_add_n(w, lone, 10, s.c[1]), WEFT_OK));
    expect_aligned(&s);
    cr_assert(eq(u32, weft_group_rows(w, s.g), 60));
    cr_assert(eq(int, weft_component_remove_n(w, both + 5, 30, s.c[0]), WEFT_OK));
    expect_aligned(&s);
    cr_assert(eq(u32, weft_group_rows(w, s.g), 30));
    cr_assert(eq(int, weft_component_set_n(w, both, 50, s.c[0], pv), WEFT_OK));
    expect_aligned(&s);
    cr_assert(eq(u32, weft_group_rows(w, s.g), 60));
    uint32_t d = 0;
    cr_assert(eq(int, weft_query_destroy_all(s.q[1], &d), WEFT_OK));
    cr_assert(eq(u32, d, 60));
    expect_aligned(&s);
    cr_assert(eq(u32, weft_group_rows(w, s.g), 0));
    side_fini(&s);
}

/* Two worlds with a multi-instance component: remove_n and destroy_all (the driving term
 * repeats each owner) against the single calls. */
Test(bulk, multi_instance_remove_n_and_destroy_all_match_single_calls) {
    test_alloc_t a[2] = {{0}};
    weft_world_t *w[2];
    weft_component_t c[2], p[2];
    weft_query_t *q[2];
    weft_entity_t e[12];
    for (int k = 0; k < 2; k++) {
        w[k] = test_world(&a[k]);
        weft_component_desc_t d = {.name = "Multi", .size = 8, .flags = WEFT_COMPONENT_MULTI};
        cr_assert(eq(int, weft_component_register(w[k], &d, &c[k]), WEFT_OK));
        p[k] = test_register(w[k], "P", 12);
        cr_assert(eq(int, weft_entity_create_with(w[k], 12, &p[k], 1, NULL, e), WEFT_OK));
        for (int i = 0; i < 12; i++) {
            for (int j = 0; j < 1 + i % 3; j++) {
                cr_assert(
                    eq(int, weft_component_add_instance(w[k], e[i], c[k], NULL, NULL), WEFT_OK));
            }
        }
        weft_query_desc_t qd = {.terms = {{.component = c[k], .access = WEFT_ACCESS_READ}}};
        cr_assert(eq(int, weft_query_create(w[k], &qd, &q[k]), WEFT_OK));
    }
    cr_assert(eq(int, weft_component_add_n(w[0], e, 2, c[0]), WEFT_EINVAL), "multi is refused");
    cr_assert(eq(int, weft_component_remove_n(w[0], e + 2, 4, c[0]), WEFT_OK));
    for (int i = 2; i < 6; i++) {
        cr_assert(eq(int, weft_component_remove(w[1], e[i], c[1]), WEFT_OK));
    }
    cr_assert(eq(u64, weft_world_hash(w[0]), weft_world_hash(w[1])));
    uint32_t d = 0;
    cr_assert(eq(int, weft_query_destroy_all(q[0], &d), WEFT_OK));
    cr_assert(eq(u32, d, 8));
    weft_entity_t seen[64]; /* the single-call side: handles in iteration order, repeated */
    uint32_t ns = 0;
    weft_iter_t it;
    cr_assert(eq(int, weft_query_iter(q[1], 0, 0, &it), WEFT_OK));
    while (weft_iter_next(&it)) {
        for (uint32_t i = 0; i < it.rows; i++) {
            seen[ns++] = weft_iter_entity(&it, i);
        }
    }
    cr_assert(eq(u32, ns, 15), "each owner appears once per instance (1 + i % 3)");
    cr_assert(eq(int, weft_entity_destroy_n(w[1], seen, ns), WEFT_OK));
    cr_assert(eq(u64, weft_world_hash(w[0]), weft_world_hash(w[1])));
    cr_assert(eq(u32, weft_entity_count(w[0]), 4));
    for (int k = 0; k < 2; k++) {
        weft_world_destroy(w[k]);
        cr_expect(eq(sz, a[k].live_bytes, 0));
    }
}

/* ---- errors: the code, and the world unchanged ------------------------------------ >>errors */

static side_t E;
static weft_component_t multi, linkc;
static weft_entity_t ents[100];

static void errors_setup(void) {
    side_init(&E, true);
    weft_component_desc_t dm = {.name = "Multi", .size = 8, .flags = WEFT_COMPONENT_MULTI};
    weft_component_desc_t dl = {
        .name = "Link", .size = 16, .entity_field_count = 1, .entity_fields = {8}};
    cr_assert(eq(int, weft_component_register(E.w, &dm, &multi), WEFT_OK));
    cr_assert(eq(int, weft_component_register(E.w, &dl, &linkc), WEFT_OK));
    cr_assert(eq(int, weft_entity_create_with(E.w, 100, E.c, 1, NULL, ents), WEFT_OK));
    cr_assert(eq(int, weft_component_add_n(E.w, ents, 50, E.c[1]), WEFT_OK));
    cr_assert(eq(int, weft_entity_destroy(E.w, ents[99]), WEFT_OK)); /* ents[99] is stale */
}

static void errors_teardown(void) { side_fini(&E); }

#define EXPECT_REFUSED(call, code, fn)                                                         \
    do {                                                                                       \
        uint64_t h_ = weft_world_hash(E.w);                                                    \
        hooks_t hk_ = E.h;                                                                     \
        weft_result_t r_ = (call);                                                             \
        char msg_[512];                                                                        \
        snprintf(msg_, sizeof msg_, "%s", weft_last_error());                                  \
        cr_assert(eq(str, (char *)weft_result_name(r_), (char *)weft_result_name(code)), "%s", \
                  #call);                                                                      \
        cr_assert(eq(u64, weft_world_hash(E.w), h_), "changed by failed: %s", #call);          \
        cr_assert(eq(int, memcmp(&hk_, &E.h, sizeof hk_), 0), "hooks ran: %s", #call);         \
        cr_assert(strstr(msg_, fn) != NULL, "message '%s' names %s", msg_, fn);                \
    } while (0)

Test(bulk, errors_null_world_is_einval_everywhere, .init = errors_setup, .fini = errors_teardown) {
    weft_entity_t e[1];
    weft_component_t c = {1};
    EXPECT_REFUSED(weft_entity_create_with(NULL, 1, &c, 1, NULL, e), WEFT_EINVAL,
                   "weft_entity_create_with");
    EXPECT_REFUSED(weft_component_add_n(NULL, e, 1, c), WEFT_EINVAL, "weft_component_add_n");
    EXPECT_REFUSED(weft_component_set_n(NULL, e, 1, c, e), WEFT_EINVAL, "weft_component_set_n");
    EXPECT_REFUSED(weft_component_remove_n(NULL, e, 1, c), WEFT_EINVAL, "weft_component_remove_n");
    uint32_t d = 7;
    EXPECT_REFUSED(weft_query_destroy_all(NULL, &d), WEFT_EINVAL, "weft_query_destroy_all");
    cr_assert(eq(u32, d, 0));
}

Test(bulk, errors_create_with_refuses_bad_arguments_and_leaves_the_world_unchanged,
     .init = errors_setup, .fini = errors_teardown) {
    const char *fn = "weft_entity_create_with";
    weft_entity_t out[40];
    weft_component_t two[2] = {E.c[0], E.c[0]};
    weft_component_t bad[2] = {E.c[0], {200}};
    weft_component_t mul[2] = {E.c[1], multi};
    EXPECT_REFUSED(weft_entity_create_with(E.w, 40, E.c, 2, NULL, NULL), WEFT_EINVAL, fn);
    EXPECT_REFUSED(weft_entity_create_with(E.w, 40, NULL, 2, NULL, out), WEFT_EINVAL, fn);
    EXPECT_REFUSED(weft_entity_create_with(E.w, 40, two, 2, NULL, out), WEFT_EINVAL, fn);
    EXPECT_REFUSED(weft_entity_create_with(E.w, 40, bad, 2, NULL, out), WEFT_EINVAL, fn);
    EXPECT_REFUSED(weft_entity_create_with(E.w, 40, mul, 2, NULL, out), WEFT_EINVAL, fn);
    /* a placeholder (index 0, generation != 0) in the entity field of value 17 */
    unsigned char links[40 * 16] = {0};
    weft_entity_t ph = weft_entity_make(0, 3);
    memcpy(links + 17 * 16 + 8, &ph, sizeof ph);
    const void *lv[2] = {NULL, links};
    weft_component_t lc[2] = {E.c[0], linkc};
    memset(out, 0xFF, sizeof out);
    EXPECT_REFUSED(weft_entity_create_with(E.w, 40, lc, 2, lv, out), WEFT_EINVAL, fn);
    for (int i = 0; i < 40; i++) {
        cr_assert(eq(u64, out[i], 0), "out[%d] is zeroed on failure", i);
    }
}

Test(bulk, errors_create_with_past_entity_limit_is_ecapacity) {
    test_alloc_t a = {0};
    weft_world_t *w = NULL;
    weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE,
                           .worker_count = 1,
                           .entity_limit = 64,
                           .allocator = test_allocator(&a),
                           .logger = {.fn = test_quiet_log}};
    cr_assert(eq(int, weft_world_create(&d, &w), WEFT_OK));
    weft_component_t c = test_register(w, "P", 12);
    weft_entity_t out[100];
    cr_assert(eq(int, weft_entity_create_with(w, 30, &c, 1, NULL, out), WEFT_OK));
    uint64_t h = weft_world_hash(w);
    cr_assert(eq(int, weft_entity_create_with(w, 40, &c, 1, NULL, out), WEFT_ECAPACITY));
    cr_assert(eq(u64, weft_world_hash(w), h));
    cr_assert(eq(u32, weft_component_rows(w, c), 30));
    weft_world_destroy(w);
    cr_expect(eq(sz, a.live_bytes, 0));
}

Test(bulk, errors_add_n_refuses_stale_repeated_present_and_multi, .init = errors_setup,
     .fini = errors_teardown) {
    const char *fn = "weft_component_add_n";
    weft_entity_t es[60];
    for (int i = 0; i < 60; i++) {
        es[i] = ents[50 + i % 49]; /* lack V */
    }
    /* stale in the middle (both the pairwise and the bitmap sizes) */
    weft_entity_t small[3] = {ents[60], ents[99], ents[61]};
    EXPECT_REFUSED(weft_component_add_n(E.w, small, 3, E.c[1]), WEFT_ESTALE, fn);
    cr_assert(strstr(weft_last_error(), "es[1]") != NULL, "%s", weft_last_error());
    es[40] = ents[99];
    EXPECT_REFUSED(weft_component_add_n(E.w, es, 45, E.c[1]), WEFT_ESTALE, fn);
    es[40] = weft_entity_make(5000, 0); /* never handed out */
    EXPECT_REFUSED(weft_component_add_n(E.w, es, 45, E.c[1]), WEFT_ESTALE, fn);
    es[40] = 0; /* null */
    EXPECT_REFUSED(weft_component_add_n(E.w, es, 45, E.c[1]), WEFT_ESTALE, fn);
    es[40] = ents[90];
    /* repeats: es[49] repeats es[0] (bitmap path), and a small array */
    EXPECT_REFUSED(weft_component_add_n(E.w, es, 55, E.c[1]), WEFT_EINVAL, fn);
    weft_entity_t rep[3] = {ents[60], ents[61], ents[60]};
    EXPECT_REFUSED(weft_component_add_n(E.w, rep, 3, E.c[1]), WEFT_EINVAL, fn);
    /* one already has it */
    weft_entity_t pres[3] = {ents[60], ents[10], ents[61]};
    EXPECT_REFUSED(weft_component_add_n(E.w, pres, 3, E.c[1]), WEFT_EEXIST, fn);
    EXPECT_REFUSED(weft_component_add_n(E.w, pres, 3, multi), WEFT_EINVAL, fn);
    EXPECT_REFUSED(weft_component_add_n(E.w, pres, 3, (weft_component_t){0}), WEFT_EINVAL, fn);
    EXPECT_REFUSED(weft_component_add_n(E.w, NULL, 3, E.c[2]), WEFT_EINVAL, fn);
    /* and the good call still works afterwards */
    cr_assert(eq(int, weft_component_add_n(E.w, es, 49, E.c[1]), WEFT_OK));
    expect_aligned(&E);
}

Test(bulk, errors_set_n_refuses_stale_repeated_null_values_and_placeholders, .init = errors_setup,
     .fini = errors_teardown) {
    const char *fn = "weft_component_set_n";
    vec3_t v[100] = {{0}};
    weft_entity_t es[100];
    memcpy(es, ents, sizeof es);
    EXPECT_REFUSED(weft_component_set_n(E.w, es, 100, E.c[0], v), WEFT_ESTALE, fn);
    es[99] = ents[3];
    EXPECT_REFUSED(weft_component_set_n(E.w, es, 100, E.c[0], v), WEFT_EINVAL, fn);
    EXPECT_REFUSED(weft_component_set_n(E.w, es, 10, E.c[0], NULL), WEFT_EINVAL, fn);
    EXPECT_REFUSED(weft_component_set_n(E.w, es, 10, multi, v), WEFT_EINVAL, fn);
    unsigned char links[10 * 16] = {0};
    weft_entity_t ph = weft_entity_make(0, 1);
    memcpy(links + 9 * 16 + 8, &ph, sizeof ph);
    EXPECT_REFUSED(weft_component_set_n(E.w, es, 10, linkc, links), WEFT_EINVAL, fn);
    cr_assert(eq(int, weft_component_set_n(E.w, es, 99, E.c[1], v), WEFT_OK));
    expect_aligned(&E);
}

Test(bulk, errors_remove_n_refuses_stale_repeated_and_absent, .init = errors_setup,
     .fini = errors_teardown) {
    const char *fn = "weft_component_remove_n";
    weft_entity_t es[50];
    memcpy(es, ents, sizeof es);
    weft_entity_t st[2] = {ents[1], ents[99]};
    EXPECT_REFUSED(weft_component_remove_n(E.w, st, 2, E.c[1]), WEFT_ESTALE, fn);
    weft_entity_t ab[2] = {ents[1], ents[70]};
    EXPECT_REFUSED(weft_component_remove_n(E.w, ab, 2, E.c[1]), WEFT_ENOENT, fn);
    es[45] = es[2];
    EXPECT_REFUSED(weft_component_remove_n(E.w, es, 50, E.c[1]), WEFT_EINVAL, fn);
    EXPECT_REFUSED(weft_component_remove_n(E.w, es, 50, (weft_component_t){99}), WEFT_EINVAL, fn);
    cr_assert(eq(int, weft_component_remove_n(E.w, es, 45, E.c[1]), WEFT_OK));
    expect_aligned(&E);
}

#if WEFT_DEBUG >= 1
static weft_result_t from_hook = WEFT_OK;
static void structural_hook(weft_world_t *w, weft_entity_t e, weft_component_t c, void *p,
                            void *u) {
    (void)p, (void)u;
    from_hook = weft_component_add_n(w, &e, 1, (weft_component_t){c.id - 1u});
}

Test(bulk, errors_a_bulk_call_from_a_hook_is_estate_in_debug_builds) {
    test_alloc_t a = {0};
    weft_world_t *w = test_world(&a);
    weft_component_t p = test_register(w, "P", 12), q;
    weft_component_desc_t d = {.name = "Q", .size = 4, .on_add = structural_hook};
    cr_assert(eq(int, weft_component_register(w, &d, &q), WEFT_OK));
    weft_entity_t e[2];
    cr_assert(eq(int, weft_entity_create_with(w, 2, &q, 1, NULL, e), WEFT_OK));
    cr_assert(eq(int, from_hook, WEFT_ESTATE));
    cr_assert(not(weft_component_has(w, e[0], p)));
    weft_world_destroy(w);
}
#endif

/* ---- out of memory at every allocation ----------------------------------------------- >>oom */

typedef struct oom_run {
    test_alloc_t *a;
    int ooms;
} oom_run_t;

/* As test_oom.c's STEP: on WEFT_ENOMEM the world must be unchanged; heal and retry. */
#define STEP(s, w, call)                                                                  \
    do {                                                                                  \
        uint64_t h_ = weft_world_hash(w);                                                 \
        uint32_t n_ = weft_entity_count(w);                                               \
        weft_result_t r_ = (call);                                                        \
        if (r_ == WEFT_ENOMEM) {                                                          \
            (s)->ooms++;                                                                  \
            cr_assert(eq(u64, weft_world_hash(w), h_), "changed by failed: %s", #call);   \
            cr_assert(eq(u32, weft_entity_count(w), n_), "changed by failed: %s", #call); \
            (s)->a->fail_at = 0;                                                          \
            r_ = (call);                                                                  \
        }                                                                                 \
        cr_assert(eq(int, r_, WEFT_OK), "%s -> %s", #call, weft_result_name(r_));         \
    } while (0)

static void count_add(weft_world_t *w, weft_entity_t e, weft_component_t c, void *p, void *u) {
    (void)w, (void)e, (void)c, (void)p;
    ++*(int *)u;
}

static void oom_scenario(oom_run_t *s, weft_world_t *w) {
    static int adds;
    weft_component_t c[4];
    weft_group_t g;
    weft_query_t *q;
    static weft_entity_t e[3000];
    static vec3_t v[3000];
    for (int i = 0; i < 3000; i++) {
        v[i] = (vec3_t){(float)i, (float)(i * 3), 1};
    }
    weft_component_desc_t d[4] = {
        {.name = "P", .size = 12},
        {.name = "V", .size = 12},
        {.name = "T", .size = 0},
        {.name = "H", .size = 8, .on_add = count_add, .hook_user = &adds}};
    for (int k = 0; k < 4; k++) {
        STEP(s, w, weft_component_register(w, &d[k], &c[k]));
    }
    weft_group_desc_t gd = {.components = {c[0], c[1]}};
    STEP(s, w, weft_group_create(w, &gd, &g));
    weft_query_desc_t qd = {.terms = {{.component = c[2], .access = WEFT_ACCESS_READ}}};
    STEP(s, w, weft_query_create(w, &qd, &q));
    const void *vals[3] = {v, v + 1, NULL};
    STEP(s, w, weft_entity_create_with(w, 1500, c, 3, vals, e));            /* grows every pool */
    STEP(s, w, weft_entity_create_with(w, 1000, c + 1, 1, vals, e + 1500)); /* V only */
    STEP(s, w, weft_component_add_n(w, e + 1500, 1000, c[0]));              /* join the group */
    STEP(s, w, weft_component_set_n(w, e + 1000, 1500, c[3], v));           /* half new, on_add */
    STEP(s, w, weft_component_set_n(w, e + 500, 1500, c[3], v + 7));        /* overlap */
    STEP(s, w, weft_component_remove_n(w, e + 200, 1800, c[1]));
    STEP(s, w, weft_query_destroy_all(q, NULL)); /* the 1500 tagged ones: free list */
    STEP(s, w, weft_entity_create_with(w, 2000, c, 4, NULL, e)); /* recycles, then fresh */
    STEP(s, w, weft_component_remove_n(w, e, 3, c[2]));
}

static void oom_sweep(int fail_after) {
    uint64_t want;
    size_t calls_total;
    {
        test_alloc_t a = {0};
        oom_run_t s = {.a = &a};
        weft_world_t *w = test_world(&a);
        size_t base = a.calls;
        oom_scenario(&s, w);
        calls_total = a.calls - base;
        want = weft_world_hash(w);
        cr_assert(eq(int, s.ooms, 0));
        weft_world_destroy(w);
    }
    int seen = 0;
    for (size_t k = 1; k <= calls_total; k++) {
        test_alloc_t a = {0};
        oom_run_t s = {.a = &a};
        weft_world_t *w = test_world(&a);
        a.fail_at = a.calls + k;
        a.fail_after = fail_after;
        oom_scenario(&s, w);
        cr_assert(eq(u64, weft_world_hash(w), want), "k = %zu ends in another world", k);
        seen += s.ooms;
        weft_world_destroy(w);
        cr_assert(eq(sz, a.live_bytes, 0), "k = %zu leaked", k);
    }
    cr_expect(eq(int, seen, (int)calls_total), "every allocation was made to fail once");
}

Test(bulk, oom_failing_the_kth_allocation_leaves_the_world_unchanged) { oom_sweep(0); }

Test(bulk, oom_failing_every_allocation_from_the_kth_leaves_the_world_unchanged) { oom_sweep(1); }
