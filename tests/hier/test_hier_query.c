/* test_hier_query.c: the hierarchy's `local`, `world` and `link` as query terms (module row
 * views, weft/module.h): joins with user components against a model through attaches,
 * detaches, removals (holes) and subtree moves; the row readers; user systems writing `local`
 * and reading `world` by terms around the hierarchy system at 1, 2 and 8 workers; and the
 * refusals, which leave the world unchanged. */
#include <criterion/criterion.h>
#include <string.h>

#include "hier_ref.h"
#include "hier_world.h"
#include "weft.h"

TestSuite(hier_query, .timeout = 120);

static hr_fail_t fail;
#define CHECK(cond, ...) hr_check(&fail, (cond), __VA_ARGS__)

/* ---- joins against a model ------------------------------------------------------ */

enum { JN = 360, JROUNDS = 24, JOPS = 24, JQUERIES = 6 };

/* The model: per entity slot, what the world should hold. */
typedef struct jmodel {
    weft_entity_t e[JN];
    uint32_t n;         /* slots in use */
    bool alive[JN];     /* entity exists */
    bool node[JN];      /* is a hierarchy node */
    int32_t parent[JN]; /* parent slot, -1: a root (nodes only) */
    bool has_val[JN];   /* carries Val */
    uint32_t val[JN];   /* its Val */
    bool has_other[JN]; /* carries Other (excluded by one query) */
} jmodel_t;

static weft_component_t val_c, other_c;
static weft_hier_components_t jhc;

static int32_t slot_of(const jmodel_t *m, weft_entity_t e) {
    for (uint32_t i = 0; i < m->n; i++) {
        if (m->alive[i] && m->e[i] == e) {
            return (int32_t)i;
        }
    }
    return -1;
}

static void new_entity(weft_world_t *w, jmodel_t *m, hr_rng_t *r) {
    const uint32_t i = m->n++;
    cr_assert(weft_entity_create(w, &m->e[i]) == WEFT_OK);
    m->alive[i] = true;
    m->parent[i] = -1;
    if (hr_below(r, 4) != 0) {
        const weft_transform_t t = hr_transform(r);
        cr_assert(weft_hier_add(w, m->e[i], &t) == WEFT_OK);
        m->node[i] = true;
    }
    if (hr_below(r, 3) != 0) {
        m->val[i] = (uint32_t)hr_next(r);
        cr_assert(weft_component_set(w, m->e[i], val_c, &m->val[i]) == WEFT_OK);
        m->has_val[i] = true;
    }
    if (hr_below(r, 5) == 0) {
        cr_assert(weft_component_add(w, m->e[i], other_c, NULL) == WEFT_OK);
        m->has_other[i] = true;
    }
}

/* A random live slot, node or not as asked (-1: none found). */
static int32_t pick(const jmodel_t *m, hr_rng_t *r, bool node) {
    for (int tries = 0; tries < 64 && m->n != 0; tries++) {
        const uint32_t i = hr_below(r, m->n);
        if (m->alive[i] && m->node[i] == node) {
            return (int32_t)i;
        }
    }
    return -1;
}

/* Forget slot i and, for a subtree removal, every descendant (the model's children of a
 * node removed alone become roots). */
static void model_remove(jmodel_t *m, uint32_t i, bool subtree) {
    m->alive[i] = false;
    for (uint32_t k = 0; k < m->n; k++) {
        if (m->alive[k] && m->node[k] && m->parent[k] == (int32_t)i) {
            if (subtree) {
                model_remove(m, k, true);
            } else {
                m->parent[k] = -1;
            }
        }
    }
}

static bool model_is_ancestor(const jmodel_t *m, int32_t a, int32_t x) {
    for (; x >= 0; x = m->parent[x]) {
        if (x == a) {
            return true;
        }
    }
    return false;
}

static void random_op(weft_world_t *w, jmodel_t *m, hr_rng_t *r) {
    const uint32_t op = hr_below(r, 10);
    const int32_t a = pick(m, r, true), b = pick(m, r, true), plain = pick(m, r, false);
    if (op <= 3 && a >= 0 && b >= 0) { /* attach, in any row order (moves subtrees) */
        const weft_hier_attach_mode_t mode = op == 0 ? WEFT_HIER_KEEP_WORLD : WEFT_HIER_KEEP_LOCAL;
        const weft_result_t res = weft_hier_attach_ex(w, m->e[a], m->e[b], mode);
        if (model_is_ancestor(m, a, b)) {
            cr_assert(res == WEFT_ECYCLE, "attach into its own subtree: %s", weft_result_name(res));
        } else if (res == WEFT_OK) {
            m->parent[a] = b;
        } else {
            cr_assert(res == WEFT_EINVAL && mode == WEFT_HIER_KEEP_WORLD, "attach: %s",
                      weft_result_name(res));
        }
    } else if (op == 4 && a >= 0) {
        cr_assert(weft_hier_detach(w, m->e[a]) == WEFT_OK);
        m->parent[a] = -1;
    } else if (op == 5 && a >= 0) { /* plain destroy: children detached, a hole left */
        cr_assert(weft_entity_destroy(w, m->e[a]) == WEFT_OK);
        model_remove(m, (uint32_t)a, false);
    } else if (op == 6 && a >= 0) {
        cr_assert(weft_hier_destroy(w, m->e[a], WEFT_HIER_DESTROY_SUBTREE) == WEFT_OK);
        model_remove(m, (uint32_t)a, true);
    } else if (op == 7 && plain >= 0) {
        const weft_transform_t t = hr_transform(r);
        cr_assert(weft_hier_add(w, m->e[plain], &t) == WEFT_OK);
        m->node[plain] = true;
        m->parent[plain] = -1;
    } else if (op == 8) {
        const int32_t x = hr_below(r, 2) ? a : plain;
        if (x >= 0 && m->has_val[x]) {
            cr_assert(weft_component_remove(w, m->e[x], val_c) == WEFT_OK);
            m->has_val[x] = false;
        } else if (x >= 0) {
            m->val[x] = (uint32_t)hr_next(r);
            cr_assert(weft_component_set(w, m->e[x], val_c, &m->val[x]) == WEFT_OK);
            m->has_val[x] = true;
        }
    } else if (m->n < JN) {
        new_entity(w, m, r);
    }
}

/* The queries checked: their descs, and which model columns each needs. */
static weft_query_desc_t jdesc[JQUERIES];

static void make_descs(void) {
    const weft_component_t L = jhc.local, W = jhc.world, K = jhc.link, V = val_c;
    jdesc[0] = (weft_query_desc_t){.terms = {{.component = V}, {.component = W}}};
    jdesc[1] = (weft_query_desc_t){.terms = {{.component = V}, {.component = W}}, .drive = 1};
    jdesc[2] = (weft_query_desc_t){.terms = {{.component = W}, {.component = V}}, .drive = 1};
    jdesc[3] = (weft_query_desc_t){.terms = {{.component = L}, {.component = K}, {.component = V}}};
    jdesc[4] = (weft_query_desc_t){.terms = {{.component = W}, {.component = L}}};
    jdesc[5] = (weft_query_desc_t){
        .terms = {{.component = V}, {.component = W}}, .exclude = {other_c}, .drive = 2};
}

/* Whether model slot i should match query q. */
static bool expected(const jmodel_t *m, int q, uint32_t i) {
    if (!m->alive[i] || !m->node[i]) {
        return false;
    }
    return q == 4 || (m->has_val[i] && (q != 5 || !m->has_other[i]));
}

/* Check one entry: its entity is expected, seen once, and each term's data is the model's. */
static void check_entry(weft_world_t *w, const jmodel_t *m, int q, const weft_iter_t *it,
                        uint32_t k, uint32_t *seen) {
    const weft_entity_t e = weft_iter_entity(it, k);
    const int32_t i = slot_of(m, e);
    if (!CHECK(i >= 0 && expected(m, q, (uint32_t)i), "query %d: entity 0x%llx unexpected", q,
               (unsigned long long)e) ||
        !CHECK(seen[i]++ == 0, "query %d: slot %d seen twice", q, i)) {
        return;
    }
    for (uint32_t t = 0; t < it->term_count; t++) {
        const weft_component_t c = jdesc[q].terms[t].component;
        const void *got = weft_iter_get(it, t, k);
        const size_t size = c.id == val_c.id       ? sizeof(uint32_t)
                            : c.id == jhc.world.id ? sizeof(weft_mat4_t)
                            : c.id == jhc.local.id ? sizeof(weft_transform_t)
                                                   : sizeof(weft_parent_link_t);
        CHECK(it->columns[t] == NULL ||
                  got == (const unsigned char *)it->columns[t] + (size_t)k * size,
              "query %d: term %u's column and weft_iter_get agree", q, t);
        if (c.id == val_c.id) {
            CHECK(memcmp(got, &m->val[i], sizeof(uint32_t)) == 0, "query %d: slot %d Val", q, i);
        } else if (c.id == jhc.world.id) {
            const weft_mat4_t ref = hw_ref_world(w, e);
            CHECK(hr_mat_eq(got, &ref), "query %d: slot %d world differs from the formula", q, i);
        } else if (c.id == jhc.local.id) {
            CHECK(memcmp(got, weft_hier_local_read(w, e), sizeof(weft_transform_t)) == 0,
                  "query %d: slot %d local", q, i);
        } else {
            const weft_parent_link_t *l = got;
            const weft_entity_t p = m->parent[i] >= 0 ? m->e[m->parent[i]] : 0;
            CHECK(l->parent == p && memcmp(l, weft_hier_link(w, e), sizeof(*l)) == 0,
                  "query %d: slot %d link", q, i);
        }
    }
}

static void check_queries(weft_world_t *w, const jmodel_t *m, weft_query_t *const *qs) {
    static uint32_t seen[JN];
    for (int q = 0; q < JQUERIES; q++) {
        for (uint32_t chunk_rows = 0; chunk_rows <= 37; chunk_rows += 37) {
            memset(seen, 0, sizeof(seen));
            const uint32_t chunks = weft_query_chunk_count(qs[q], chunk_rows);
            for (uint32_t c = 0; c < chunks; c++) {
                weft_iter_t it;
                cr_assert(weft_query_iter(qs[q], chunk_rows, c, &it) == WEFT_OK);
                while (weft_iter_next(&it)) {
                    for (uint32_t k = 0; k < it.rows; k++) {
                        check_entry(w, m, q, &it, k, seen);
                    }
                }
            }
            for (uint32_t i = 0; i < m->n; i++) {
                CHECK(!expected(m, q, i) || seen[i] == 1,
                      "query %d (chunks of %u): slot %u "
                      "missed",
                      q, chunk_rows, i);
            }
        }
    }
}

/* The row readers tell the store's truth: every row is a node or a hole (null entity, NULL
 * data), and every node's row holds its data. */
static void check_rows(weft_world_t *w, const jmodel_t *m) {
    weft_hier_stats_t st;
    weft_hier_stats(w, &st);
    CHECK(weft_component_rows(w, jhc.world) == st.rows, "rows: %u, the store holds %u",
          weft_component_rows(w, jhc.world), st.rows);
    uint32_t nodes = 0;
    for (uint32_t r = 0; r < st.rows; r++) {
        const weft_entity_t e = weft_component_entity_at(w, jhc.world, r);
        const void *p = weft_component_row(w, jhc.world, r);
        nodes += e != 0;
        CHECK(e == 0 ? p == NULL
                     : p == (const void *)weft_hier_world(w, e) &&
                           weft_component_row(w, jhc.link, r) == (const void *)weft_hier_link(w, e),
              "row %u: entity 0x%llx and its data", r, (unsigned long long)e);
    }
    uint32_t model_nodes = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        model_nodes += m->alive[i] && m->node[i];
    }
    CHECK(nodes == model_nodes && nodes == st.nodes, "rows hold %u nodes, the model %u", nodes,
          model_nodes);
}

Test(hier_query, joins_with_world_local_and_link_see_the_models_rows_through_holes_and_moves) {
    hr_rng_t r = hr_seeded(&fail, "query joins");
    jmodel_t *m = calloc(1, sizeof(*m));
    weft_world_t *w = hw_new_world(1, WEFT_EXECUTION_INLINE);
    cr_assert(weft_hier_components(w, &jhc) == WEFT_OK);
    val_c = hw_component(w, "Val", sizeof(uint32_t), _Alignof(uint32_t));
    other_c = hw_component(w, "Other", 0, 0);
    make_descs();
    weft_query_t *qs[JQUERIES];
    for (int q = 0; q < JQUERIES; q++) {
        cr_assert(weft_query_create(w, &jdesc[q], &qs[q]) == WEFT_OK, "query %d: %s", q,
                  weft_last_error());
    }
    for (uint32_t i = 0; i < JN / 3; i++) {
        new_entity(w, m, &r);
    }
    bool saw_holes = false;
    for (int round = 0; round < JROUNDS && !fail.failed; round++) {
        fail.step = round;
        for (int k = 0; k < JOPS; k++) {
            random_op(w, m, &r);
        }
        /* Mostly the sequential pass, which keeps holes; every sixth round a LEVELS request,
         * which on this narrow forest runs the sequential pass too (rows move here through
         * subtree moves and compaction; test_hierarchy.c's wide forest is regrouped). */
        cr_assert(weft_hier_update(w, round % 6 == 5 ? WEFT_HIER_PASS_LEVELS
                                                     : WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
        weft_hier_stats_t st;
        weft_hier_stats(w, &st);
        saw_holes |= st.rows > st.nodes;
        check_queries(w, m, qs);
        check_rows(w, m);
    }
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
    weft_hier_stats_t st;
    weft_hier_stats(w, &st);
    cr_assert(saw_holes && st.moved_rows > 0, "the session met holes and subtree moves");
    weft_world_destroy(w);
    free(m);
}

/* ---- systems naming local and world as terms ------------------------------------ */

enum { SN = 1200, SFRAMES = 4 };
static weft_component_t seen_c;
static uint32_t frame;

/* The local change of node e in frame f (a pure function of both). */
static void move_local(weft_transform_t *t, weft_entity_t e, uint32_t f) {
    const uint32_t k = (uint32_t)e * 2654435761u + f * 40503u;
    if (k % 7u == 0u) {
        t->position.x += (float)(k % 13u) * 0.25f;
        t->rotation.w += (float)(k % 3u) * 0.125f;
    }
}

/* terms: local (write). Every row handed out counts as written; a few are changed. */
static void mover(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            move_local(weft_iter_get(it, 0, i), weft_iter_entity(it, i), frame);
        }
    }
}

/* terms: Seen (write), world (read). */
static void reader(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            memcpy(weft_iter_get(it, 0, i), weft_iter_get(it, 1, i), sizeof(weft_mat4_t));
        }
    }
}

/* SN nodes, each under a random earlier one (or a root), some attached keeping the world (a
 * bind that is not the identity), a hole left by a destroyed node every 50, Seen on every
 * node. */
static weft_world_t *sys_world(uint32_t workers, hr_rng_t r, weft_entity_t *e) {
    weft_world_t *w = hw_world_of(workers);
    cr_assert(weft_hier_components(w, &jhc) == WEFT_OK);
    seen_c = hw_component(w, "Seen", sizeof(weft_mat4_t), _Alignof(weft_mat4_t));
    for (uint32_t i = 0; i < SN; i++) {
        const weft_transform_t t = hr_transform(&r);
        cr_assert(weft_entity_create(w, &e[i]) == WEFT_OK);
        cr_assert(weft_hier_add(w, e[i], &t) == WEFT_OK);
        cr_assert(weft_component_add(w, e[i], seen_c, NULL) == WEFT_OK);
        if (i > 0 && hr_below(&r, 8) != 0) {
            cr_assert(weft_hier_attach_ex(w, e[i], e[hr_below(&r, i)],
                                          i % 3 == 0 ? WEFT_HIER_KEEP_WORLD
                                                     : WEFT_HIER_KEEP_LOCAL) == WEFT_OK);
        }
    }
    for (uint32_t i = 49; i < SN; i += 50) {
        cr_assert(weft_entity_destroy(w, e[i]) == WEFT_OK); /* children detached: holes */
        e[i] = 0;
    }
    cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
    return w;
}

/* A mover (terms: local, write), the hierarchy system and a reader (terms: Seen, world),
 * registered in that order: their terms order them mover -> hierarchy -> reader at every
 * worker count, so each frame the reader copies that frame's world matrices, and the moved
 * nodes are recomputed only if the mover's rows were marked changed. The model makes the same
 * changes with direct calls on one thread. */
Test(hier_query, systems_writing_local_and_reading_world_by_terms_match_the_model_at_1_2_8) {
    static weft_entity_t e[SN];
    const hr_rng_t seed = hr_seeded(&fail, "systems by terms");
    weft_world_t *m = sys_world(1, seed, e);
    for (uint32_t f = 0; f < SFRAMES; f++) {
        for (uint32_t i = 0; i < SN; i++) {
            if (e[i] != 0) {
                move_local(weft_hier_local(m, e[i]), e[i], f);
            }
        }
        cr_assert(weft_hier_update(m, WEFT_HIER_PASS_AUTO) == WEFT_OK);
        for (uint32_t i = 0; i < SN; i++) {
            if (e[i] != 0) {
                const weft_mat4_t ref = hw_ref_world(m, e[i]);
                cr_assert(hr_mat_eq(weft_hier_world(m, e[i]), &ref), "model node %u", i);
                cr_assert(weft_component_set(m, e[i], seen_c, &ref) == WEFT_OK);
            }
        }
    }
    const uint64_t model = weft_world_hash(m);
    weft_world_destroy(m);

    const uint32_t workers[3] = {1, 2, 8};
    for (int wi = 0; wi < 3; wi++) {
        weft_world_t *w = sys_world(workers[wi], seed, e);
        weft_system_t s;
        hw_system(w, &(weft_system_desc_t){
                         .name = "mover",
                         .fn = mover,
                         .terms = {{.component = jhc.local, .access = WEFT_ACCESS_WRITE}},
                         .chunk_size = 128,
                     });
        cr_assert(weft_hier_register_system(w, NULL, &s) == WEFT_OK);
        hw_system(w, &(weft_system_desc_t){
                         .name = "reader",
                         .fn = reader,
                         .terms = {{.component = seen_c, .access = WEFT_ACCESS_WRITE},
                                   {.component = jhc.world}},
                         .chunk_size = 128,
                     });
        for (frame = 0; frame < SFRAMES; frame++) {
            cr_assert(weft_world_progress(w, 0.0f) == WEFT_OK, "%s", weft_last_error());
        }
        cr_assert(weft_world_hash(w) == model, "%u workers: the world equals the model's",
                  workers[wi]);
        weft_world_destroy(w);
    }
}

/* ---- refusals -------------------------------------------------------------------- */

static void nothing(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    (void)ctx;
}

/* Creating a query or system that writes `world` or `link`, filters or excludes one of the
 * three, or takes an OPTIONAL term beside them is refused with a message naming the rule, and
 * the world (hash, systems) is unchanged. */
Test(hier_query, writing_world_or_link_by_a_term_is_refused_at_creation_and_changes_nothing) {
    static weft_entity_t e[SN];
    weft_world_t *w = sys_world(1, hr_seeded(&fail, "query refusals"), e);
    cr_assert(weft_world_progress(w, 0.0f) == WEFT_OK);
    const uint64_t before = weft_world_hash(w);
    const weft_query_term_t wr = {.access = WEFT_ACCESS_WRITE};
    struct {
        weft_query_desc_t d;
        const char *hint;
    } bad[] = {
        {{.terms = {{.component = jhc.world, .access = wr.access}}}, "weft_hier_update"},
        {{.terms = {{.component = seen_c}, {.component = jhc.link, .access = wr.access}}},
         "weft_hier_attach"},
        {{.terms = {{.component = jhc.world, .filter = WEFT_CHANGE_CHANGED}}}, "change filter"},
        {{.terms = {{.component = jhc.world}, {.component = seen_c, .oper = WEFT_TERM_OPTIONAL}}},
         "OPTIONAL"},
        {{.terms = {{.component = seen_c}}, .exclude = {jhc.local}}, "module-owned"},
    };
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        weft_query_t *q = (weft_query_t *)&bad; /* must come back NULL */
        cr_assert(weft_query_create(w, &bad[k].d, &q) == WEFT_EINVAL && q == NULL, "query %zu", k);
        cr_assert(strstr(weft_last_error(), bad[k].hint) != NULL, "query %zu: '%s' names %s", k,
                  weft_last_error(), bad[k].hint);
        weft_system_desc_t sd = {.name = "bad", .fn = nothing};
        memcpy(sd.terms, bad[k].d.terms, sizeof(sd.terms));
        memcpy(sd.exclude, bad[k].d.exclude, sizeof(sd.exclude));
        weft_system_t s;
        cr_assert(weft_system_register(w, &sd, &s) == WEFT_EINVAL, "system %zu", k);
    }
    cr_assert(weft_component_row_mut(w, jhc.world, 0) == NULL &&
                  strstr(weft_last_error(), "weft_hier_update") != NULL,
              "row_mut on world: %s", weft_last_error());
    cr_assert(weft_world_progress(w, 0.0f) == WEFT_OK);
    cr_assert(weft_world_hash(w) == before, "the refusals changed nothing");
    weft_world_destroy(w);
}
