/* internal_store.c: the ordered hierarchy store (src/hier/hierarchy_store.h) against an
 * independent model — random forests under random attach / detach / re-parent / remove, the
 * order invariant after every step, world matrices equal to a reference recursion bit for
 * bit, cycles rejected without change, and both passes bit-identical.
 *
 * Loops over thousands of nodes check with plain C (CHECK: hr_check on the file's `fail`),
 * stop at the first mismatch and assert once per session or batch, naming node, step and
 * seed: the suites run with --full-stats, which prints every passing assertion. */
#include <criterion/criterion.h>

#include "hier_ref.h"
#include "src/hier/hierarchy_store.h"
#include "wt_sanitizer.h"

TestSuite(hier_store, .timeout = 120);

/* Expected failures are part of these tests: keep them off stderr. */
static void quiet_fn(weft_log_level_t level, weft_result_t code, const char *msg, const char *file,
                     int line, void *user) {
    (void)level, (void)code, (void)msg, (void)file, (void)line, (void)user;
}
static const weft_logger_t quiet_log = {.fn = quiet_fn};
#define QUIET (&quiet_log)

/* The first failure of the running test (each test runs in its own process). */
static hr_fail_t fail;
#define CHECK(cond, ...) hr_check(&fail, (cond), __VA_ARGS__)

/* ---- model -------------------------------------------------------------- */

/* Node ids 1..cap are entities id | 1 << 32 (generation 1). */
typedef struct model {
    uint32_t cap;     /* ids 1..cap may exist */
    uint32_t next;    /* next id to add */
    uint32_t *parent; /* id -> parent id, 0 for roots */
    uint32_t *nchild; /* id -> number of children (lets removals skip scanning for them) */
    bool *alive;      /* id is a node */
    weft_mat4_t *ref; /* reference world per id */
    uint8_t *done;    /* ref computed in this round */
    uint8_t *mark;    /* scratch flags, all zero between uses */
    uint32_t *stack;  /* scratch */
} model_t;

static weft__hentity_t ent(uint32_t id) { return id == 0 ? 0 : ((weft__hentity_t)1 << 32) | id; }

static void model_init(model_t *m, uint32_t cap) {
    m->cap = cap;
    m->next = 1;
    m->parent = calloc(cap + 1, sizeof(uint32_t));
    m->nchild = calloc(cap + 1, sizeof(uint32_t));
    m->alive = calloc(cap + 1, sizeof(bool));
    m->ref = calloc(cap + 1, sizeof(weft_mat4_t));
    m->done = calloc(cap + 1, 1);
    m->mark = calloc(cap + 1, 1);
    m->stack = calloc(cap + 1, sizeof(uint32_t));
}

static void model_fini(model_t *m) {
    free(m->parent);
    free(m->nchild);
    free(m->alive);
    free(m->ref);
    free(m->done);
    free(m->mark);
    free(m->stack);
}

/* Make `p` (0: none) the model parent of c. */
static void model_set_parent(model_t *m, uint32_t c, uint32_t p) {
    if (m->parent[c] != 0) {
        m->nchild[m->parent[c]]--;
    }
    m->parent[c] = p;
    if (p != 0) {
        m->nchild[p]++;
    }
}

static bool model_is_ancestor(const model_t *m, uint32_t a, uint32_t x) {
    for (; x != 0; x = m->parent[x]) {
        if (x == a) {
            return true;
        }
    }
    return false;
}

static uint32_t random_live(const model_t *m, hr_rng_t *r) {
    for (int tries = 0; tries < 64; tries++) {
        const uint32_t id = 1 + hr_below(r, m->next - 1);
        if (m->alive[id]) {
            return id;
        }
    }
    for (uint32_t id = 1; id < m->next; id++) {
        if (m->alive[id]) {
            return id;
        }
    }
    return 0;
}

static const weft_transform_t *local_of(const weft__hstore_t *s, uint32_t id) {
    return &s->rows.local[weft__hstore_row(s, ent(id))];
}

/* ---- checks ------------------------------------------------------------- */

/* Structure: the store's own invariants (ORDER first of all) and agreement with the model.
 * Returns false (failure recorded) at the first disagreement. */
static bool check_structure(const weft__hstore_t *s, const model_t *m) {
    const char *why = weft__hstore_check(s);
    if (!CHECK(why == NULL, "store invariant broken: %s", why)) {
        return false;
    }
    uint32_t live = 0;
    for (uint32_t id = 1; id < m->next; id++) {
        const uint32_t row = weft__hstore_row(s, ent(id));
        if (!m->alive[id]) {
            if (!CHECK(row == WEFT__HROW_NONE, "removed node %u still in the store", id)) {
                return false;
            }
            continue;
        }
        live++;
        if (!CHECK(row != WEFT__HROW_NONE, "node %u missing", id)) {
            return false;
        }
        const uint32_t p = s->rows.parent[row];
        const weft__hentity_t pe = p == WEFT__HROW_NONE ? 0 : s->rows.ent[p];
        if (!CHECK(pe == ent(m->parent[id]), "node %u: parent %llx, model says %u", id,
                   (unsigned long long)pe, m->parent[id])) {
            return false;
        }
    }
    return CHECK(live == s->live, "%u live nodes in the store, model has %u", s->live, live);
}

/* Worlds: every node's world equals the reference recursion over the model's parents, bit
 * for bit; false (failure recorded) at the first node that differs. Iterative (explicit stack) so deep chains cannot overflow the C stack. */
static bool check_worlds(const weft__hstore_t *s, model_t *m) {
    memset(m->done, 0, m->cap + 1);
    for (uint32_t id = 1; id < m->next; id++) {
        if (!m->alive[id] || m->done[id]) {
            continue;
        }
        uint32_t top = 0;
        for (uint32_t x = id; x != 0 && !m->done[x]; x = m->parent[x]) {
            m->stack[top++] = x;
        }
        while (top > 0) {
            const uint32_t x = m->stack[--top];
            const uint32_t row = weft__hstore_row(s, ent(x));
            const uint32_t p = m->parent[x];
            m->ref[x] = hr_node_world(&s->rows.local[row], &s->rows.link[row].inverse_bind,
                                      p == 0 ? NULL : &m->ref[p]);
            m->done[x] = 1;
        }
    }
    for (uint32_t id = 1; id < m->next; id++) {
        if (!m->alive[id]) {
            continue;
        }
        const uint32_t row = weft__hstore_row(s, ent(id));
        if (!CHECK(hr_mat_eq(&s->rows.world[row], &m->ref[id]),
                   "node %u (row %u, depth %u): world differs from the reference", id, row,
                   weft__hstore_depth(s, row))) {
            return false;
        }
    }
    return true;
}

/* FNV-1a over everything observable in the store (to prove "nothing changed"). */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) { /* word at a time: these arrays are large */
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x100000001B3ull;
    }
    for (; i < n; i++) {
        h = (h ^ b[i]) * 0x100000001B3ull;
    }
    return h;
}

static uint64_t store_hash(const weft__hstore_t *s) {
    const weft__hrows_t *w = &s->rows;
    const size_t n = s->count;
    uint64_t h = 0xCBF29CE484222325ull;
    h = fnv(h, &s->count, sizeof(s->count));
    h = fnv(h, &s->live, sizeof(s->live));
    h = fnv(h, &s->holes, sizeof(s->holes));
    h = fnv(h, &s->levels_valid, sizeof(s->levels_valid));
    h = fnv(h, w->ent, n * sizeof(*w->ent));
    h = fnv(h, w->parent, n * sizeof(uint32_t));
    h = fnv(h, w->first_child, n * sizeof(uint32_t));
    h = fnv(h, w->next_sib, n * sizeof(uint32_t));
    h = fnv(h, w->prev_sib, n * sizeof(uint32_t));
    h = fnv(h, w->local, n * sizeof(*w->local));
    h = fnv(h, w->link, n * sizeof(*w->link));
    h = fnv(h, w->world, n * sizeof(*w->world));
    return h;
}

/* ---- random operations -------------------------------------------------- */

static void op_add(weft__hstore_t *s, model_t *m, hr_rng_t *r) {
    if (m->next > m->cap) {
        return;
    }
    const uint32_t id = m->next++;
    const weft_transform_t t = hr_transform(r);
    CHECK(weft__hstore_add(s, ent(id), &t) == WEFT_OK, "adding node %u failed", id);
    m->alive[id] = true;
    m->parent[id] = 0;
}

static void op_attach(weft__hstore_t *s, model_t *m, hr_rng_t *r) {
    uint32_t c = random_live(m, r);
    uint32_t p = random_live(m, r);
    /* Now and then aim at a cycle on purpose: c an ancestor of p, or p itself. */
    if (p != 0 && hr_below(r, 8) == 0) {
        c = p;
        for (uint32_t x = m->parent[p]; x != 0; x = m->parent[x]) {
            if (hr_below(r, 2) == 0) {
                c = x;
            }
        }
    }
    if (c == 0 || p == 0) {
        return;
    }
    if (model_is_ancestor(m, c, p)) {
        /* Hashing the whole store is O(n): on large stores only now and then. */
        const bool hash = s->count <= 5000 || hr_below(r, 1024) == 0;
        const uint64_t before = hash ? store_hash(s) : 0;
        CHECK(weft__hstore_attach(s, ent(c), ent(p), QUIET) == WEFT_ECYCLE,
              "attaching node %u under its descendant %u was not rejected as a cycle", c, p);
        CHECK(!hash || store_hash(s) == before,
              "the rejected cycle (node %u under %u) changed the store", c, p);
        return;
    }
    weft_mat4_t inv;
    const uint32_t prow = weft__hstore_row(s, ent(p));
    const uint32_t crow = weft__hstore_row(s, ent(c));
    if (!CHECK(weft_mat4_inverse(&s->rows.world[prow], &inv),
               "node %u (the new parent of %u) has a singular world matrix", p, c)) {
        return;
    }
    const weft_mat4_t cworld = s->rows.world[crow];
    const bool had_parent = m->parent[c] != 0;
    const weft_transform_t local_before = s->rows.local[crow];
    if (!CHECK(weft__hstore_attach(s, ent(c), ent(p), QUIET) == WEFT_OK,
               "attaching node %u under %u failed", c, p)) {
        return;
    }
    model_set_parent(m, c, p);
    const uint32_t row = weft__hstore_row(s, ent(c));
    CHECK(memcmp(&s->rows.link[row].inverse_bind, &inv, sizeof(inv)) == 0,
          "node %u: the bind is not the inverse of parent %u's world at attach time", c, p);
    const weft_transform_t want = had_parent ? weft_transform_from_matrix(&cworld) : local_before;
    CHECK(memcmp(&s->rows.local[row], &want, sizeof(want)) == 0,
          "node %u: re-parenting must bake the world into local, a root keeps its local", c);
}

static void op_detach(weft__hstore_t *s, model_t *m, hr_rng_t *r) {
    const uint32_t c = random_live(m, r);
    if (c == 0) {
        return;
    }
    const uint32_t row = weft__hstore_row(s, ent(c));
    const weft_mat4_t world = s->rows.world[row];
    const weft_transform_t local = s->rows.local[row];
    const bool had_parent = m->parent[c] != 0;
    if (!CHECK(weft__hstore_detach(s, ent(c), QUIET) == WEFT_OK, "detaching node %u failed", c)) {
        return;
    }
    model_set_parent(m, c, 0);
    const weft_transform_t want = had_parent ? weft_transform_from_matrix(&world) : local;
    CHECK(memcmp(local_of(s, c), &want, sizeof(want)) == 0,
          "node %u: detach must bake the world into local", c);
}

static void op_remove(weft__hstore_t *s, model_t *m, hr_rng_t *r, bool subtree) {
    const uint32_t e = random_live(m, r);
    if (e == 0) {
        return;
    }
    const weft__hentity_t *removed = NULL;
    uint32_t n = 0;
    /* The exact expected count only on small models (O(n * depth)); on large ones the
     * model/store agreement check after the step catches a missed or extra node. */
    uint32_t expect = 0;
    const bool count_expected = m->next <= 5000;
    for (uint32_t id = 1; count_expected && id < m->next; id++) {
        if (m->alive[id] && (id == e || (subtree && model_is_ancestor(m, e, id)))) {
            expect++;
        }
    }
    if (!CHECK(weft__hstore_remove(s, ent(e), subtree, &removed, &n, QUIET) == WEFT_OK,
               "removing node %u (%s) failed", e, subtree ? "subtree" : "detach children")) {
        return;
    }
    if (subtree) {
        CHECK(!count_expected || n == expect,
              "removing the subtree of node %u reported %u entities, model has %u", e, n, expect);
        /* Every listed node is e or a live descendant, listed after its parent: `mark`
         * flags the nodes listed so far (cleared again below). */
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t id = (uint32_t)(removed[i] & 0xffffffffu);
            const bool valid = id >= 1 && id < m->next;
            if (!CHECK(valid && m->alive[id] && model_is_ancestor(m, e, id),
                       "removing the subtree of node %u listed %llx, not in it", e,
                       (unsigned long long)removed[i])) {
                break;
            }
            CHECK(id == e || m->mark[m->parent[id]],
                  "removing the subtree of node %u listed node %u before its parent %u", e, id,
                  m->parent[id]);
            m->mark[id] = 1;
        }
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t id = (uint32_t)(removed[i] & 0xffffffffu);
            if (id >= 1 && id < m->next) {
                m->mark[id] = 0;
            }
        }
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t id = (uint32_t)(removed[i] & 0xffffffffu);
            if (id >= 1 && id < m->next && id != e) {
                m->alive[id] = false;
                model_set_parent(m, id, 0);
            }
        }
    } else {
        /* e's children become roots; the scan ends once all of them are found */
        for (uint32_t id = 1; id < m->next && m->nchild[e] > 0; id++) {
            if (m->alive[id] && m->parent[id] == e) {
                model_set_parent(m, id, 0);
            }
        }
    }
    m->alive[e] = false;
    model_set_parent(m, e, 0);
}

static bool op_update(weft__hstore_t *s, hr_rng_t *r) {
    switch (hr_below(r, 3)) {
    case 0:
        return CHECK(weft__hstore_update(s, WEFT__HPASS_SEQUENTIAL, false, NULL) == WEFT_OK,
                     "the sequential pass failed");
    case 1:
        return CHECK(weft__hstore_update(s, WEFT__HPASS_LEVELS, true, NULL) == WEFT_OK,
                     "the level pass (regrouping) failed");
    default:
        return CHECK(weft__hstore_update(s, WEFT__HPASS_LEVELS, false, NULL) == WEFT_OK,
                     "the level pass (index) failed");
    }
}

/* One random session: `steps` operations on up to `cap` nodes; full checks every `every`.
 * Stops at the first failure and asserts once, naming the node, step and seed. */
static void run_random(const char *name, uint32_t cap, uint32_t steps, uint32_t every,
                       uint32_t prefill) {
    hr_rng_t r = hr_seeded(&fail, name);
    weft__hstore_t s;
    weft__hstore_init(&s, NULL, QUIET);
    model_t m;
    model_init(&m, cap);
    for (uint32_t i = 0; i < prefill && !fail.failed; i++) {
        op_add(&s, &m, &r);
    }
    for (uint32_t i = 0; i < prefill && !fail.failed; i++) {
        if (hr_below(&r, 4) != 0) {
            op_attach(&s, &m, &r);
        }
    }
    for (uint32_t step = 0; step < steps && !fail.failed; step++) {
        fail.step = step;
        const uint32_t k = hr_below(&r, 100);
        if (k < 20) {
            op_add(&s, &m, &r);
        } else if (k < 55) {
            op_attach(&s, &m, &r);
        } else if (k < 70) {
            op_detach(&s, &m, &r);
        } else if (k < 76) {
            op_remove(&s, &m, &r, false);
        } else if (k < 79) {
            op_remove(&s, &m, &r, true);
        } else if (k < 90) {
            const uint32_t id = random_live(&m, &r);
            if (id != 0) {
                const uint32_t row = weft__hstore_row(&s, ent(id));
                s.rows.local[row] = hr_transform(&r);
                s.rows.flags[row] |= WEFT__HFLAG_CHANGED; /* what weft_hier_local does */
            }
        }
        /* after every step: the order invariant (and, every `every` steps, the worlds) */
        if (!fail.failed && (step % every == 0 || step + 1 == steps)) {
            (void)(check_structure(&s, &m) && op_update(&s, &r) && check_worlds(&s, &m));
        }
    }
    model_fini(&m);
    weft__hstore_fini(&s);
    cr_assert(!fail.failed, "%s: %s", name, hr_fail_message(&fail));
}

Test(hier_store, random_small_forests_match_the_reference_after_every_step) {
    for (int round = 0; round < 20; round++) {
        run_random("small forest", 64, 600, 1, 16);
    }
}

Test(hier_store, random_medium_forest_matches_the_reference) {
    run_random("medium forest", 4000, 20000, 50, 2000);
}

/* The store is single-threaded: ThreadSanitizer has nothing to check here beyond what the
 * medium forest runs, so its builds take a tenth of the large forest (CI time). */
Test(hier_store, random_large_forest_matches_the_reference_periodically) {
    const uint32_t k = WT_TSAN ? 10 : 1;
    run_random("large forest", 100000 / k, 40000 / k, 5000 / k, 100000 / k);
}

/* ---- the sparse pass by runs --------------------------------------------- */

/* Add nodes ids m->next.. (n in all) to an empty store in row order, each a root (1 in 32,
 * and the first) or a child of a `cursor` node that moves forward at random: the parents of
 * the rows that have one never decrease, so the layout is NESTED (hierarchy_store.h) and the
 * sparse pass marks by runs. After a root the cursor jumps past it, which NESTED requires;
 * with `break_nesting` it sometimes does not (a root inside a run of children), and the pass
 * must notice and follow the child lists instead. */
static void add_nested_forest(weft__hstore_t *s, model_t *m, hr_rng_t *r, uint32_t n,
                              bool break_nesting) {
    uint32_t cursor = m->next;
    for (uint32_t k = 0; k < n && !fail.failed; k++) {
        const uint32_t id = m->next;
        op_add(s, m, r);
        if (k == 0 || hr_below(r, 32) == 0) {
            if (!break_nesting || hr_below(r, 4) != 0) {
                cursor = id;
            }
            continue;
        }
        cursor += hr_below(r, 3) == 0 ? 1 : 0;
        cursor = cursor < id ? cursor : id - 1;
        const weft__hattach_t mode = (weft__hattach_t)hr_below(r, 2);
        if (CHECK(weft__hstore_attach_mode(s, ent(id), ent(cursor), mode, QUIET) == WEFT_OK,
                  "attaching node %u under %u failed", id, cursor)) {
            model_set_parent(m, id, cursor);
        }
    }
}

/* The rows a sparse pass must recompute: every live row that is DIRTY or lies below one
 * (rows in order, parents first; hole rows are never DIRTY). */
static uint32_t rows_to_recompute(const weft__hstore_t *s) {
    uint8_t *need = malloc(s->count + 1u);
    cr_assert(need != NULL);
    uint32_t k = 0;
    for (uint32_t row = 0; row < s->count; row++) {
        const uint32_t p = s->rows.parent[row];
        need[row] = (uint8_t)((s->rows.flags[row] & WEFT__HFLAG_DIRTY) != 0 ||
                              (p != WEFT__HROW_NONE && need[p]));
        k += need[row];
    }
    free(need);
    return k;
}

/* One session over a nested forest of n nodes: rounds of random new locals (few, or a third
 * of the nodes), now and then an attach, detach or removal (which may keep or break NESTED)
 * or a regrouping level pass; after each sequential update, the worlds equal the reference
 * bit for bit and the pass recomputed exactly the changed rows and their descendants.
 * Returns the number of updates that marked by runs. */
static uint32_t run_nested(const char *name, uint32_t n, uint32_t steps, bool break_nesting) {
    hr_rng_t r = hr_seeded(&fail, name);
    weft__hstore_t s;
    weft__hstore_init(&s, NULL, QUIET);
    model_t m;
    model_init(&m, n + steps);
    add_nested_forest(&s, &m, &r, n, break_nesting);
    uint32_t by_runs = 0;
    for (uint32_t step = 0; step < steps && !fail.failed; step++) {
        fail.step = step;
        /* The first half keeps NESTED (a new node under the last row or its parent: no
         * parent decreases); the second half may break it. */
        const uint32_t kind = hr_below(&r, 16);
        if (kind < 2 && s.count > 0 && m.next <= m.cap) {
            const uint32_t last = s.count - 1, id = m.next;
            const uint32_t prow =
                kind == 0 || s.rows.parent[last] == WEFT__HROW_NONE ? last : s.rows.parent[last];
            const uint32_t pid = (uint32_t)(s.rows.ent[prow] & 0xffffffffu);
            op_add(&s, &m, &r);
            if (prow != last || s.rows.ent[last] != 0) { /* not under a hole */
                if (CHECK(weft__hstore_attach_mode(&s, ent(id), ent(pid),
                                                   (weft__hattach_t)hr_below(&r, 2),
                                                   QUIET) == WEFT_OK,
                          "attaching node %u under %u failed", id, pid)) {
                    model_set_parent(&m, id, pid);
                }
            }
        } else if (step >= steps / 2 && kind == 2) {
            op_attach(&s, &m, &r);
        } else if (step >= steps / 2 && kind == 3) {
            op_detach(&s, &m, &r);
        } else if (step >= steps / 2 && kind == 4) {
            op_remove(&s, &m, &r, hr_below(&r, 2) == 0);
        } else if (kind == 5) {
            (void)op_update(&s, &r); /* the level pass may regroup the rows */
        }
        const uint32_t edits = hr_below(&r, 8) == 0 ? n / 3 : hr_below(&r, 12);
        for (uint32_t k = 0; k < edits; k++) {
            const uint32_t id = random_live(&m, &r);
            if (id != 0) {
                const uint32_t row = weft__hstore_row(&s, ent(id));
                s.rows.local[row] = hr_transform(&r);
                s.rows.flags[row] |= WEFT__HFLAG_CHANGED; /* what weft_hier_local does */
            }
        }
        const uint32_t want = rows_to_recompute(&s);
        if (!CHECK(weft__hstore_update(&s, WEFT__HPASS_SEQUENTIAL, false, NULL) == WEFT_OK,
                   "the sequential pass failed")) {
            break;
        }
        /* Spans built (before or by this pass) and NESTED: this pass marked by runs. */
        const bool spans = s.spans_state == 2 && s.nested;
        by_runs += spans;
        CHECK(s.recomputed == want, "the pass recomputed %u rows, expected %u (%s)", s.recomputed,
              want, spans ? "by runs" : "by child lists");
        (void)(check_structure(&s, &m) && check_worlds(&s, &m));
    }
    model_fini(&m);
    weft__hstore_fini(&s);
    cr_assert(!fail.failed, "%s: %s", name, hr_fail_message(&fail));
    return by_runs;
}

Test(hier_store, the_sparse_pass_by_runs_matches_the_reference_over_random_nested_forests) {
    uint32_t by_runs = 0;
    for (int round = 0; round < 8; round++) {
        by_runs += run_nested("nested forest", 200 + 400 * (uint32_t)round, 120, false);
    }
    cr_assert(by_runs > 8 * 120 / 5, "only %u updates marked by runs", by_runs);
}

Test(hier_store, the_sparse_pass_falls_back_to_child_lists_when_a_root_splits_a_run) {
    for (int round = 0; round < 8; round++) {
        (void)run_nested("nested forest with stray roots", 300 + 300 * (uint32_t)round, 80, true);
    }
}

/* ---- targeted cases ------------------------------------------------------ */

static uint32_t row_of(const weft__hstore_t *s, uint32_t id) {
    return weft__hstore_row(s, ent(id));
}

/* Add nodes first..last with identity transforms; asserts once. */
static void add_identity_nodes(weft__hstore_t *s, uint32_t first, uint32_t last) {
    hr_fail_init(&fail, 0);
    const weft_transform_t id = weft_transform_identity();
    for (uint32_t e = first; e <= last && !fail.failed; e++) {
        CHECK(weft__hstore_add(s, ent(e), &id) == WEFT_OK, "adding node %u failed", e);
    }
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
}

Test(hier_store, the_write_ups_counter_example_orders_e2_e3_e4) {
    weft__hstore_t s;
    weft__hstore_init(&s, NULL, QUIET);
    add_identity_nodes(&s, 1, 4);
    cr_assert(weft__hstore_attach(&s, ent(4), ent(3), QUIET) == WEFT_OK);
    cr_assert(weft__hstore_attach(&s, ent(2), ent(1), QUIET) == WEFT_OK);
    cr_assert(weft__hstore_attach(&s, ent(3), ent(2), QUIET) == WEFT_OK);
    cr_assert(weft__hstore_check(&s) == NULL);
    cr_assert(row_of(&s, 1) < row_of(&s, 2));
    cr_assert(row_of(&s, 2) < row_of(&s, 3));
    cr_assert(row_of(&s, 3) < row_of(&s, 4));
    weft__hstore_fini(&s);
}

Test(hier_store, attaching_to_self_or_a_descendant_is_a_cycle_and_changes_nothing) {
    weft__hstore_t s;
    weft__hstore_init(&s, NULL, QUIET);
    add_identity_nodes(&s, 1, 5);
    cr_assert(weft__hstore_attach(&s, ent(2), ent(1), QUIET) == WEFT_OK);
    cr_assert(weft__hstore_attach(&s, ent(3), ent(2), QUIET) == WEFT_OK);
    cr_assert(weft__hstore_attach(&s, ent(4), ent(3), QUIET) == WEFT_OK);
    const uint64_t before = store_hash(&s);
    cr_assert(weft__hstore_attach(&s, ent(1), ent(1), QUIET) == WEFT_ECYCLE);
    cr_assert(weft__hstore_attach(&s, ent(1), ent(4), QUIET) == WEFT_ECYCLE);
    cr_assert(weft__hstore_attach(&s, ent(2), ent(3), QUIET) == WEFT_ECYCLE);
    cr_assert(store_hash(&s) == before);
    cr_assert(weft__hstore_attach(&s, ent(9), ent(1), QUIET) == WEFT_ENOENT);
    cr_assert(store_hash(&s) == before);
    weft__hstore_fini(&s);
}

Test(hier_store, attaching_under_a_singular_parent_fails_and_changes_nothing) {
    weft__hstore_t s;
    weft__hstore_init(&s, NULL, QUIET);
    weft_transform_t flat = weft_transform_identity();
    flat.scale.y = 0.0f;
    const weft_transform_t id = weft_transform_identity(); /* two nodes: no loop */
    cr_assert(weft__hstore_add(&s, ent(1), &flat) == WEFT_OK);
    cr_assert(weft__hstore_add(&s, ent(2), &id) == WEFT_OK);
    const uint64_t before = store_hash(&s);
    cr_assert(weft__hstore_attach(&s, ent(2), ent(1), QUIET) == WEFT_EINVAL);
    cr_assert(store_hash(&s) == before);
    weft__hstore_fini(&s);
}

Test(hier_store, attach_of_a_later_parent_moves_only_the_subtree) {
    weft__hstore_t s;
    weft__hstore_init(&s, NULL, QUIET);
    add_identity_nodes(&s, 1, 1000);
    /* 1 <- 2 <- 3 (three nodes), then attach 1 under 1000 (a later row). */
    cr_assert(weft__hstore_attach(&s, ent(2), ent(1), QUIET) == WEFT_OK);
    cr_assert(weft__hstore_attach(&s, ent(3), ent(2), QUIET) == WEFT_OK);
    cr_assert(s.moved_rows == 0, "parents created first never move anything");
    cr_assert(weft__hstore_attach(&s, ent(1), ent(1000), QUIET) == WEFT_OK);
    cr_assert(s.moved_rows == 3, "exactly the 3-node subtree moved, not %llu rows",
              (unsigned long long)s.moved_rows);
    cr_assert(weft__hstore_check(&s) == NULL);
    weft__hstore_fini(&s);
}

Test(hier_store, level_pass_and_sequential_pass_are_bit_identical) {
    hr_rng_t r = hr_seeded(&fail, "levels vs sequential");
    weft__hstore_t a, b, c;
    weft__hstore_init(&a, NULL, QUIET);
    weft__hstore_init(&b, NULL, QUIET);
    weft__hstore_init(&c, NULL, QUIET);
    const uint32_t n = WT_TSAN ? 5000 : 50000; /* single-threaded: see the large forest */
    for (uint32_t i = 1; i <= n && !fail.failed; i++) {
        const weft_transform_t t = hr_transform(&r);
        CHECK(weft__hstore_add(&a, ent(i), &t) == WEFT_OK &&
                  weft__hstore_add(&b, ent(i), &t) == WEFT_OK &&
                  weft__hstore_add(&c, ent(i), &t) == WEFT_OK,
              "adding node %u failed", i);
    }
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
    for (uint32_t i = 2; i <= n && !fail.failed; i++) {
        fail.step = i;
        /* wide and shallow-ish: parent among the first i/8 nodes, sometimes a later one */
        uint32_t p = 1 + hr_below(&r, i / 8 + 1);
        if (hr_below(&r, 50) == 0) {
            p = 1 + hr_below(&r, n);
        }
        weft_result_t ra = weft__hstore_attach(&a, ent(i), ent(p), QUIET);
        CHECK(weft__hstore_attach(&b, ent(i), ent(p), QUIET) == ra &&
                  weft__hstore_attach(&c, ent(i), ent(p), QUIET) == ra,
              "attaching node %u under %u gave different results in the three stores", i, p);
        if (i % (n / 5) == 0) {
            CHECK(weft__hstore_update(&a, WEFT__HPASS_SEQUENTIAL, false, NULL) == WEFT_OK &&
                      weft__hstore_update(&b, WEFT__HPASS_LEVELS, true, NULL) == WEFT_OK &&
                      weft__hstore_update(&c, WEFT__HPASS_LEVELS, false, NULL) == WEFT_OK,
                  "an intermediate pass failed");
        }
    }
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
    cr_assert(weft__hstore_update(&a, WEFT__HPASS_SEQUENTIAL, false, NULL) == WEFT_OK);
    cr_assert(weft__hstore_update(&b, WEFT__HPASS_LEVELS, true, NULL) == WEFT_OK);
    cr_assert(weft__hstore_update(&c, WEFT__HPASS_LEVELS, false, NULL) == WEFT_OK);
    cr_assert(b.levels_valid && weft__hstore_check(&b) == NULL);
    fail.step = -1;
    for (uint32_t i = 1; i <= n && !fail.failed; i++) {
        const weft_mat4_t *wa = &a.rows.world[weft__hstore_row(&a, ent(i))];
        CHECK(hr_mat_eq(wa, &b.rows.world[weft__hstore_row(&b, ent(i))]),
              "node %u: the level pass (regrouped) differs from the sequential pass", i);
        CHECK(hr_mat_eq(wa, &c.rows.world[weft__hstore_row(&c, ent(i))]),
              "node %u: the level pass (index) differs from the sequential pass", i);
    }
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
    weft__hstore_fini(&a);
    weft__hstore_fini(&b);
    weft__hstore_fini(&c);
}

Test(hier_store, level_sort_groups_rows_by_depth) {
    weft__hstore_t s;
    weft__hstore_init(&s, NULL, QUIET);
    /* Build children before parents so that the sort has work to do. */
    add_identity_nodes(&s, 1, 200);
    for (uint32_t e = 200; e >= 2 && !fail.failed; e--) {
        CHECK(weft__hstore_attach(&s, ent(e), ent(e / 2), QUIET) == WEFT_OK,
              "attaching node %u under %u failed", e, e / 2);
    }
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
    cr_assert(weft__hstore_level_sort(&s) == WEFT_OK);
    cr_assert(weft__hstore_check(&s) == NULL);
    cr_assert(s.holes == 0 && s.count == 200);
    for (uint32_t r = 1; r < s.count && !fail.failed; r++) {
        CHECK(weft__hstore_depth(&s, r - 1) <= weft__hstore_depth(&s, r),
              "row %u is deeper than row %u after the level sort", r - 1, r);
    }
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
    cr_assert(s.level_count == 8, "levels: %u", s.level_count); /* 2^7 = 128 <= 200 < 256 */
    weft__hstore_fini(&s);
}
