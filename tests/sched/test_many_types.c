/* test_many_types.c: worlds with many component types. Ids past the views' 256-bit fast path
 * (256, 257, 511) and at the top of the range (65,535, 65,536) work in queries, direct calls,
 * command buffers (serial and placed apply), snapshots and archives, checked against a
 * reference model; the scheduler orders systems whose conflicts are only on such ids, and its
 * conflict list names the right ids. Randomised tests print their seed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "weft.h"
#include "weft_test.h"

/* ---- a world with n uint32_t types named T<id> ---- */

static weft_world_t *types_world(uint32_t n, uint32_t workers) {
    weft_world_t *w = NULL;
    weft_world_desc_t d = {.worker_count = workers};
    cr_assert(eq(int, weft_world_create(&d, &w), WEFT_OK), "%s", weft_last_error());
    for (uint32_t i = 1; i <= n; i++) {
        char name[16];
        snprintf(name, sizeof name, "T%u", i);
        weft_component_t c;
        weft_component_desc_t cd = {.name = name, .size = sizeof(uint32_t)};
        weft_result_t r = weft_component_register(w, &cd, &c);
        if (r != WEFT_OK || c.id != i) {
            cr_fatal("registering T%u: %s", i, weft_last_error());
        }
    }
    return w;
}

static uint64_t rng_state;
static uint32_t rnd(uint32_t n) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33) % n;
}

static uint64_t seed_from_env(void) { return wt_seed("many_types"); }

/* ---- the reference model ---- */

#define NPICK 12
#define NENT 96
static const uint32_t picks[NPICK] = {1,    2,     255,   256,   257,   511,
                                      4096, 40000, 65280, 65534, 65535, 65536};

typedef struct model {
    weft_entity_t e[NENT];
    bool has[NENT][NPICK];
    uint32_t val[NENT][NPICK];
} model_t;

static weft_component_t pick(uint32_t k) { return (weft_component_t){picks[k]}; }

/* The world holds exactly the model: every pick's presence and value on every entity, and
 * every pool's row count. */
static void expect_model(weft_world_t *w, const model_t *m, const char *when) {
    for (uint32_t k = 0; k < NPICK; k++) {
        uint32_t rows = 0;
        for (uint32_t i = 0; i < NENT; i++) {
            const uint32_t *p = weft_component_get(w, m->e[i], pick(k));
            if ((p != NULL) != m->has[i][k] || (p && *p != m->val[i][k])) {
                cr_fatal("%s: entity %u, id %u: world %s %u, model %s %u", when, i, picks[k],
                         p ? "has" : "lacks", p ? *p : 0, m->has[i][k] ? "has" : "lacks",
                         m->val[i][k]);
            }
            rows += m->has[i][k];
        }
        cr_expect(eq(u32, weft_component_rows(w, pick(k)), rows), "%s: rows of id %u", when,
                  picks[k]);
    }
}

/* Queries over two picks minus a third match the model's entities and values. */
static void expect_queries(weft_world_t *w, const model_t *m) {
    for (int q = 0; q < 24; q++) {
        uint32_t a = rnd(NPICK), b = rnd(NPICK), x = rnd(NPICK);
        if (a == b || x == a || x == b) {
            continue;
        }
        weft_query_desc_t qd = {.terms = {{.component = pick(a)}, {.component = pick(b)}},
                                .exclude = {pick(x)}};
        weft_query_t *query = NULL;
        cr_assert(eq(int, weft_query_create(w, &qd, &query), WEFT_OK), "%s", weft_last_error());
        uint64_t want_n = 0, want_sum = 0, got_n = 0, got_sum = 0;
        for (uint32_t i = 0; i < NENT; i++) {
            if (m->has[i][a] && m->has[i][b] && !m->has[i][x]) {
                want_n++;
                want_sum += (uint64_t)m->val[i][a] * 3u + m->val[i][b];
            }
        }
        weft_iter_t it;
        cr_assert(eq(int, weft_query_iter(query, 0, 0, &it), WEFT_OK));
        while (weft_iter_next(&it)) {
            for (uint32_t r = 0; r < it.rows; r++) {
                got_n++;
                got_sum += (uint64_t)((const uint32_t *)weft_iter_get(&it, 0, r))[0] * 3u +
                           ((const uint32_t *)weft_iter_get(&it, 1, r))[0];
            }
        }
        cr_expect(eq(u64, got_n, want_n), "query %u & %u - %u: entities", picks[a], picks[b],
                  picks[x]);
        cr_expect(eq(u64, got_sum, want_sum), "query %u & %u - %u: values", picks[a], picks[b],
                  picks[x]);
        weft_query_destroy(query);
    }
}

/* ---- commands from a system ---- */

typedef struct cmd_op {
    uint32_t ent, k, val;
    bool remove;
} cmd_op_t;

typedef struct cmd_plan {
    const model_t *m;
    cmd_op_t ops[1024];
    uint32_t n;
} cmd_plan_t;

static void record_ops(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    const cmd_plan_t *p = ctx->user;
    for (uint32_t i = 0; i < p->n; i++) {
        const cmd_op_t *op = &p->ops[i];
        weft_entity_t e = p->m->e[op->ent];
        if (op->remove) {
            weft_cmd_remove(ctx->cmd, e, pick(op->k));
        } else {
            weft_cmd_set(ctx->cmd, e, pick(op->k), &op->val);
        }
    }
}

/* Random sets and removes, applied to the model (a remove of a missing component is a no-op
 * there and a logged ENOENT in the apply). */
static void plan_ops(cmd_plan_t *p, model_t *m, uint32_t n) {
    p->n = n;
    for (uint32_t i = 0; i < n; i++) {
        cmd_op_t *op = &p->ops[i];
        *op = (cmd_op_t){
            .ent = rnd(NENT), .k = rnd(NPICK), .val = rnd(1u << 30), .remove = rnd(3) == 0};
        if (op->remove) {
            m->has[op->ent][op->k] = false;
        } else {
            m->has[op->ent][op->k] = true;
            m->val[op->ent][op->k] = op->val;
        }
    }
}

/* Random direct sets and removes, mirrored in the model. */
static void direct_ops(weft_world_t *w, model_t *m, uint32_t n) {
    for (uint32_t s = 0; s < n; s++) {
        uint32_t i = rnd(NENT), k = rnd(NPICK);
        if (rnd(3) == 0) {
            weft_result_t r = weft_component_remove(w, m->e[i], pick(k));
            cr_assert(eq(int, r, m->has[i][k] ? WEFT_OK : WEFT_ENOENT), "remove id %u", picks[k]);
            m->has[i][k] = false;
        } else {
            uint32_t v = rnd(1u << 30);
            cr_assert(eq(int, weft_component_set(w, m->e[i], pick(k), &v), WEFT_OK), "%s",
                      weft_last_error());
            m->has[i][k] = true;
            m->val[i][k] = v;
        }
    }
}

Test(many_types, ids_past_255_and_up_to_65536_match_a_reference_in_every_path) {
    rng_state = seed_from_env();
    weft_world_t *w = types_world(WEFT_MAX_COMPONENTS - 1u, 2);
    static model_t m;
    memset(&m, 0, sizeof m);
    for (uint32_t i = 0; i < NENT; i++) {
        cr_assert(eq(int, weft_entity_create(w, &m.e[i]), WEFT_OK));
    }
    direct_ops(w, &m, 1500);
    expect_model(w, &m, "direct calls");
    expect_queries(w, &m);

    /* Command buffers: the first frames take the placed apply (2 workers, plain pools), the
     * cost model may then pick either; both must land the same changes. */
    static cmd_plan_t plan;
    plan.m = &m;
    weft_system_desc_t sd = {.name = "record", .fn = record_ops, .user = &plan};
    cr_assert(eq(int, weft_system_register(w, &sd, NULL), WEFT_OK), "%s", weft_last_error());
    for (int frame = 0; frame < 6; frame++) {
        plan_ops(&plan, &m, 700); /* past WEFT__CMD_PLACE_MIN_OPS (512) */
        cr_assert(eq(int, weft_world_progress(w, 0.016f), WEFT_OK), "%s", weft_last_error());
        expect_model(w, &m, "command apply");
    }
    plan.n = 0;
    expect_queries(w, &m);

    /* Snapshot: capture, change, restore. */
    weft_snapshot_t *snap = NULL;
    cr_assert(eq(int, weft_snapshot_create(w, &snap), WEFT_OK));
    cr_assert(eq(int, weft_snapshot_capture(w, snap), WEFT_OK), "%s", weft_last_error());
    static model_t saved;
    saved = m;
    uint64_t hash = weft_world_hash(w);
    direct_ops(w, &m, 300);
    cr_assert(eq(int, weft_snapshot_restore(w, snap), WEFT_OK), "%s", weft_last_error());
    cr_expect(eq(u64, weft_world_hash(w), hash));
    m = saved;
    expect_model(w, &m, "snapshot restore");
    weft_snapshot_destroy(snap);

    /* Archive: save the whole world, destroy every entity, load it back with its ids. */
    weft_membuf_t buf = {0};
    weft_writer_t wr = weft_membuf_writer(&buf);
    cr_assert(eq(int, weft_archive_save(w, NULL, &wr), WEFT_OK), "%s", weft_last_error());
    for (uint32_t i = 0; i < NENT; i++) {
        cr_assert(eq(int, weft_entity_destroy(w, m.e[i]), WEFT_OK));
    }
    for (uint32_t k = 0; k < NPICK; k++) {
        cr_expect(eq(u32, weft_component_rows(w, pick(k)), 0));
    }
    weft_archive_load_desc_t ld = {.keep_ids = true};
    cr_assert(eq(int, weft_archive_load_memory(w, buf.data, buf.size, &ld, NULL), WEFT_OK), "%s",
              weft_last_error());
    expect_model(w, &m, "archive load");
    expect_queries(w, &m);
    weft_membuf_free(&buf);
    weft_world_destroy(w);
}

/* ---- the scheduler over high ids ---- */

#define NSYS 40
#define NSLOT 8
static const uint32_t slots[NSLOT] = {3, 200, 255, 256, 300, 511, 512, 700};

typedef struct sys_decl {
    uint32_t nr, nw;
    uint32_t r[3], w[3]; /* indices into slots */
    uint32_t index;
} sys_decl_t;

typedef struct sched_case {
    weft_entity_t e; /* the one entity carrying every slot's component */
    sys_decl_t d[NSYS];
} sched_case_t;

static sched_case_t sc;

/* Each written slot becomes a hash of itself, the reads and the system's index: any
 * reordering of conflicting systems changes the result. */
static uint32_t step(uint32_t old, uint32_t reads, uint32_t index) {
    return old * 2654435761u + reads * 40503u + index + 1u;
}

static void sched_body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    const sys_decl_t *d = ctx->user;
    uint32_t reads = 0;
    for (uint32_t i = 0; i < d->nr; i++) {
        reads += *(const uint32_t *)weft_component_get(ctx->world, sc.e,
                                                       (weft_component_t){slots[d->r[i]]});
    }
    for (uint32_t i = 0; i < d->nw; i++) {
        uint32_t *p = weft_component_get_mut(ctx->world, sc.e, (weft_component_t){slots[d->w[i]]});
        *p = step(*p, reads, d->index);
    }
}

static bool declares(const sys_decl_t *d, uint32_t slot, bool write) {
    for (uint32_t i = 0; i < d->nw; i++) {
        if (d->w[i] == slot) {
            return true;
        }
    }
    for (uint32_t i = 0; !write && i < d->nr; i++) {
        if (d->r[i] == slot) {
            return true;
        }
    }
    return false;
}

Test(many_types, the_scheduler_orders_conflicts_on_high_ids_and_names_them) {
    rng_state = seed_from_env();
    weft_world_t *w = types_world(700, 4);
    cr_assert(eq(int, weft_entity_create(w, &sc.e), WEFT_OK));
    uint32_t ref[NSLOT];
    for (uint32_t s = 0; s < NSLOT; s++) {
        ref[s] = s;
        cr_assert(
            eq(int, weft_component_set(w, sc.e, (weft_component_t){slots[s]}, &ref[s]), WEFT_OK));
    }
    for (uint32_t i = 0; i < NSYS; i++) {
        sys_decl_t *d = &sc.d[i];
        *d = (sys_decl_t){.index = i};
        uint32_t used = 0; /* a slot at most once per system */
        for (uint32_t t = 0; t < 4; t++) {
            uint32_t s = rnd(NSLOT);
            if ((used >> s) & 1u) {
                continue;
            }
            used |= 1u << s;
            if (rnd(2) && d->nw < 3) {
                d->w[d->nw++] = s;
            } else if (d->nr < 3) {
                d->r[d->nr++] = s;
            }
        }
        char name[16];
        snprintf(name, sizeof name, "s%02u", i);
        weft_system_desc_t sd = {.name = name, .fn = sched_body, .user = d};
        for (uint32_t k = 0; k < d->nr; k++) {
            sd.reads[k] = (weft_component_t){slots[d->r[k]]};
        }
        for (uint32_t k = 0; k < d->nw; k++) {
            sd.writes[k] = (weft_component_t){slots[d->w[k]]};
        }
        cr_assert(eq(int, weft_system_register(w, &sd, NULL), WEFT_OK), "%s", weft_last_error());
    }
    /* The conflict list: every pair that shares a slot one of them writes, named by the
     * smallest such id. */
    static weft_system_conflict_t got[NSYS * NSYS];
    uint32_t ngot = 0, nwant = 0;
    cr_assert(eq(int, weft_schedule_conflicts(w, got, NSYS * NSYS, &ngot), WEFT_OK));
    for (uint32_t a = 0; a < NSYS; a++) {
        for (uint32_t b = a + 1; b < NSYS; b++) {
            uint32_t id = UINT32_MAX;
            for (uint32_t s = 0; s < NSLOT; s++) {
                bool c = (declares(&sc.d[a], s, true) && declares(&sc.d[b], s, false)) ||
                         (declares(&sc.d[b], s, true) && declares(&sc.d[a], s, false));
                id = c && slots[s] < id ? slots[s] : id;
            }
            if (id == UINT32_MAX) {
                continue;
            }
            cr_assert(lt(u32, nwant, ngot), "missing conflict s%02u / s%02u on id %u", a, b, id);
            cr_expect(eq(u32, got[nwant].first.id, a + 1u));
            cr_expect(eq(u32, got[nwant].second.id, b + 1u));
            cr_expect(eq(u32, got[nwant].component.id, id), "s%02u / s%02u", a, b);
            nwant++;
        }
    }
    cr_expect(eq(u32, ngot, nwant), "conflicting pairs");
    /* Frames at 4 workers give what running the systems in registration order gives. */
    for (int frame = 0; frame < 10; frame++) {
        cr_assert(eq(int, weft_world_progress(w, 0.016f), WEFT_OK), "%s", weft_last_error());
        for (uint32_t i = 0; i < NSYS; i++) {
            const sys_decl_t *d = &sc.d[i];
            uint32_t reads = 0;
            for (uint32_t k = 0; k < d->nr; k++) {
                reads += ref[d->r[k]];
            }
            for (uint32_t k = 0; k < d->nw; k++) {
                ref[d->w[k]] = step(ref[d->w[k]], reads, i);
            }
        }
    }
    for (uint32_t s = 0; s < NSLOT; s++) {
        cr_expect(eq(u32,
                     *(const uint32_t *)weft_component_get(w, sc.e, (weft_component_t){slots[s]}),
                     ref[s]),
                  "id %u after 10 frames", slots[s]);
    }
    weft_world_destroy(w);
}

/* ---- views ---- */

static bool view_ok;

static void view_body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    const weft_view_t *v = ctx->view;
    bool ok = weft_view_can_read(v, (weft_component_t){3}) &&
              !weft_view_can_write(v, (weft_component_t){3}) &&
              weft_view_can_write(v, (weft_component_t){300}) &&
              weft_view_can_read(v, (weft_component_t){300}) &&
              weft_view_can_read(v, (weft_component_t){650}) &&
              !weft_view_can_write(v, (weft_component_t){650}) &&
              !weft_view_can_read(v, (weft_component_t){301}) &&
              !weft_view_can_read(v, (weft_component_t){300 & 255u}) &&
              !weft_view_can_read(v, (weft_component_t){650 & 255u});
    weft_view_t sub;
    weft_component_t r[1] = {{650}}, wr[1] = {{300}};
    ok = ok && weft_view_narrow(v, r, 1, NULL, 0, &sub) == WEFT_OK &&
         weft_view_can_read(&sub, r[0]) && !weft_view_can_read(&sub, wr[0]);
    ok = ok && weft_view_narrow(v, NULL, 0, r, 1, &sub) == WEFT_EACCESS;
    ok = ok && weft_view_narrow(v, NULL, 0, wr, 1, &sub) == WEFT_OK &&
         weft_view_can_write(&sub, wr[0]) && !weft_view_can_read(&sub, (weft_component_t){3});
    view_ok = ok;
}

Test(many_types, a_view_lists_high_ids_beside_its_bitsets) {
    weft_world_t *w = types_world(700, 1);
    weft_system_desc_t sd = {
        .name = "v", .fn = view_body, .reads = {{3}, {650}}, .writes = {{300}}};
    cr_assert(eq(int, weft_system_register(w, &sd, NULL), WEFT_OK), "%s", weft_last_error());
    cr_assert(eq(int, weft_world_progress(w, 0.016f), WEFT_OK));
    cr_expect(view_ok);
    weft_world_destroy(w);
}
