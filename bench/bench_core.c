/* bench_core.c: the "core" suite — iteration, joins, structural changes and memory of the ECS
 * core against raw C loops over plain arrays, in the same process and with the same flags.
 *
 * DESIGN
 * N entities (1,000,000; 100,000 with --quick) carry Position and Velocity (3 floats each).
 * Every repetition runs the raw loop and the weft loops back to back over the same sizes, and
 * the suite reports medians: ns per entity, and ratios weft/raw (unit "x") with the issue's
 * targets. The weft loops are written the way a parallel system's chunk job would be: one
 * weft_query_iter per chunk of CHUNK driving rows, then batches; a batch with contiguous
 * columns runs the same loop as the raw baseline, otherwise rows are fetched with
 * weft_iter_get. Each timed loop of the iteration case starts from evicted caches (a 128 MiB
 * write before it, wb_cold): the loops are memory-bound, and in a fixed order each side
 * would otherwise find in the last-level cache what its own previous loop, a different
 * number of loops earlier, left there (the raw loops ran closest to their data's last use and
 * came out up to 10% faster by that alone). Their ratios are medians over repetitions of the
 * pair's ratio (wb_median_ratio). Structural figures (create2, add, remove, destroy) are ns per operation on a
 * fresh world each repetition (world creation is not timed); bulk_create2 and bulk_add time
 * one bulk call against the single-call loop doing the same work on the same data (see
 * bulk()). bytes_per_entity counts every
 * byte the allocator hook hands out plus the committed entity table, divided by N. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common.h"
#include "weft.h"

#define SUITE "core"
#define CHUNK 4096u
#define DT 0.016f

/* The raw loops are the inner loops of the weft loops too: one copy of the machine code, so
 * the comparison measures only what weft adds around them. */
#if defined(__GNUC__) || defined(__clang__)
#define WB_NOINLINE __attribute__((noinline))
#else
#define WB_NOINLINE
#endif

typedef struct v3 {
    float x, y, z;
} v3_t;

/* ---- counting allocator ------------------------------------------------------ >>alloc */

typedef struct counter {
    size_t live; /* bytes handed out and not yet freed */
} counter_t;

static void *count_alloc(size_t size, size_t align, void *user) {
    ((counter_t *)user)->live += size;
    if (align < sizeof(void *)) {
        align = sizeof(void *);
    }
    return aligned_alloc(align, (size + align - 1) & ~(align - 1));
}

static void count_free(void *p, size_t size, void *user) {
    ((counter_t *)user)->live -= size;
    free(p);
}

typedef struct fixture {
    weft_world_t *w;
    counter_t mem;
    weft_component_t pos, vel, mass;
} fixture_t;

static void fixture_init(fixture_t *f) {
    memset(f, 0, sizeof *f);
    weft_world_desc_t d = {
        .execution = WEFT_EXECUTION_INLINE,
        .allocator = {.alloc = count_alloc, .free = count_free, .user = &f->mem}};
    if (weft_world_create(&d, &f->w) != WEFT_OK) {
        fprintf(stderr, "bench core: cannot create a world: %s\n", weft_last_error());
        exit(1);
    }
    weft_component_desc_t p = {.name = "Position", .size = sizeof(v3_t)};
    weft_component_desc_t v = {.name = "Velocity", .size = sizeof(v3_t)};
    weft_component_desc_t m = {.name = "Mass", .size = sizeof(float)};
    weft_component_register(f->w, &p, &f->pos);
    weft_component_register(f->w, &v, &f->vel);
    weft_component_register(f->w, &m, &f->mass);
}

/* n entities with Position and Velocity (values from the index); every second one gets Mass
 * when with_mass is set. */
static void populate(fixture_t *f, uint32_t n, bool with_mass) {
    for (uint32_t i = 0; i < n; i++) {
        weft_entity_t e;
        v3_t *p, *v;
        weft_entity_create(f->w, &e);
        weft_component_add(f->w, e, f->pos, (void **)&p);
        weft_component_add(f->w, e, f->vel, (void **)&v);
        *p = (v3_t){(float)i, 0, 0};
        *v = (v3_t){1, 2, 3};
        if (with_mass && i % 2 == 0) {
            float *m;
            weft_component_add(f->w, e, f->mass, (void **)&m);
            *m = 2.0f;
        }
    }
}

/* n entities with Position in creation order, then Velocity added in a shuffled order, so the
 * two pools' rows do not line up and the query must look Velocity up row by row (the
 * worst case for a query without a group; reported without a target). */
static void populate_shuffled(fixture_t *f, uint32_t n) {
    weft_entity_t *es = malloc(n * sizeof *es);
    for (uint32_t i = 0; i < n; i++) {
        v3_t *p;
        weft_entity_create(f->w, &es[i]);
        weft_component_add(f->w, es[i], f->pos, (void **)&p);
        *p = (v3_t){(float)i, 0, 0};
    }
    uint64_t x = 0x9E3779B97F4A7C15ull; /* fixed seed: the same order every run */
    for (uint32_t i = n - 1; i > 0; i--) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        uint32_t j = (uint32_t)((x * 0x2545F4914F6CDD1Dull) % (i + 1u));
        weft_entity_t tmp = es[i];
        es[i] = es[j];
        es[j] = tmp;
    }
    for (uint32_t i = 0; i < n; i++) {
        v3_t *v;
        weft_component_add(f->w, es[i], f->vel, (void **)&v);
        *v = (v3_t){1, 2, 3};
    }
    free(es);
}

static weft_query_t *query(fixture_t *f, bool mass) {
    weft_query_t *q = NULL;
    weft_query_desc_t d = {.terms = {{.component = f->pos, .access = WEFT_ACCESS_WRITE},
                                     {.component = f->vel, .access = WEFT_ACCESS_READ},
                                     {.component = f->mass, .access = WEFT_ACCESS_READ}}};
    if (!mass) {
        d.terms[2] = (weft_query_term_t){.component = {0}}; /* the list ends at a zero */
    }
    if (weft_query_create(f->w, &d, &q) != WEFT_OK) {
        fprintf(stderr, "bench core: query: %s\n", weft_last_error());
        exit(1);
    }
    return q;
}

/* ---- loops --------------------------------------------------------------------- >>loops */

WB_NOINLINE static void raw_move(v3_t *restrict p, const v3_t *restrict v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        p[i].x += v[i].x * DT;
        p[i].y += v[i].y * DT;
        p[i].z += v[i].z * DT;
    }
}

WB_NOINLINE static void raw_join(v3_t *restrict p, const v3_t *restrict v, const float *restrict m,
                                 uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        float k = DT / m[i];
        p[i].x += v[i].x * k;
        p[i].y += v[i].y * k;
        p[i].z += v[i].z * k;
    }
}

/* pos += vel * dt through the query, chunk by chunk; returns entities visited. */
static uint32_t weft_move(const weft_query_t *q) {
    uint32_t seen = 0, chunks = weft_query_chunk_count(q, CHUNK);
    for (uint32_t k = 0; k < chunks; k++) {
        weft_iter_t it;
        weft_query_iter(q, CHUNK, k, &it);
        while (weft_iter_next(&it)) {
            if (it.columns[0] && it.columns[1]) {
                raw_move(it.columns[0], it.columns[1], it.rows);
            } else {
                for (uint32_t i = 0; i < it.rows; i++) {
                    v3_t *p = weft_iter_get(&it, 0, i);
                    const v3_t *v = weft_iter_get(&it, 1, i);
                    p->x += v->x * DT;
                    p->y += v->y * DT;
                    p->z += v->z * DT;
                }
            }
            seen += it.rows;
        }
    }
    return seen;
}

static uint32_t weft_join(const weft_query_t *q) {
    uint32_t seen = 0, chunks = weft_query_chunk_count(q, CHUNK);
    for (uint32_t k = 0; k < chunks; k++) {
        weft_iter_t it;
        weft_query_iter(q, CHUNK, k, &it);
        while (weft_iter_next(&it)) {
            if (it.columns[0] && it.columns[1] && it.columns[2]) {
                raw_join(it.columns[0], it.columns[1], it.columns[2], it.rows);
            } else {
                for (uint32_t i = 0; i < it.rows; i++) {
                    v3_t *p = weft_iter_get(&it, 0, i);
                    const v3_t *v = weft_iter_get(&it, 1, i);
                    float k2 = DT / *(const float *)weft_iter_get(&it, 2, i);
                    p->x += v->x * k2;
                    p->y += v->y * k2;
                    p->z += v->z * k2;
                }
            }
            seen += it.rows;
        }
    }
    return seen;
}

/* ---- cases ------------------------------------------------------------------- >>cases */

static void report_ratio(wb_ctx_t *ctx, const char *name, double ratio, double target) {
    wb_report(ctx, SUITE, name, "ratio", 1, ratio, "x", target > 0 ? WB_AT_MOST : WB_NO_TARGET,
              target);
}

static void iteration(wb_ctx_t *ctx, uint32_t n, int reps) {
    v3_t *rp = malloc(n * sizeof *rp), *rv = malloc(n * sizeof *rv);
    float *rm = malloc(n * sizeof *rm);
    for (uint32_t i = 0; i < n; i++) {
        rp[i] = (v3_t){(float)i, 0, 0};
        rv[i] = (v3_t){1, 2, 3};
        rm[i] = 2.0f;
    }
    fixture_t grouped, plain, join, shuffled;
    fixture_init(&grouped);
    fixture_init(&plain);
    fixture_init(&join);
    fixture_init(&shuffled);
    populate_shuffled(&shuffled, n);
    weft_group_t g;
    weft_group_desc_t gd2 = {.components = {grouped.pos, grouped.vel}};
    weft_group_desc_t gd3 = {.components = {join.pos, join.vel, join.mass}};
    weft_group_create(grouped.w, &gd2, &g);
    weft_group_create(join.w, &gd3, &g);
    populate(&grouped, n, false);
    populate(&plain, n, false);
    populate(&join, n, true);
    weft_query_t *qg = query(&grouped, false), *qp = query(&plain, false), *qj = query(&join, true);
    weft_query_t *qs = query(&shuffled, false);
    uint32_t matched = weft_query_entity_count(qj);

    double *t = malloc((size_t)reps * 6 * sizeof *t);
    double *t_raw = t, *t_grp = t + reps, *t_qry = t + 2 * reps, *t_rj = t + 3 * reps,
           *t_wj = t + 4 * reps, *t_shf = t + 5 * reps;
    unsigned char *cold = malloc(WB_COLD_BYTES);
    if (t == NULL || cold == NULL) {
        fprintf(stderr, "bench core: out of memory\n");
        exit(1);
    }
    for (int r = 0; r < reps; r++) {
        double t0 = wb_cold(cold);
        raw_move(rp, rv, n);
        t_raw[r] = (wb_now_ns() - t0) / n;
        t0 = wb_cold(cold);
        uint32_t a = weft_move(qg);
        t_grp[r] = (wb_now_ns() - t0) / n;
        t0 = wb_cold(cold);
        uint32_t b = weft_move(qp);
        t_qry[r] = (wb_now_ns() - t0) / n;
        t0 = wb_cold(cold);
        raw_join(rp, rv, rm, matched);
        t_rj[r] = (wb_now_ns() - t0) / matched;
        t0 = wb_cold(cold);
        uint32_t c = weft_join(qj);
        t_wj[r] = (wb_now_ns() - t0) / matched;
        t0 = wb_cold(cold);
        uint32_t d = weft_move(qs);
        t_shf[r] = (wb_now_ns() - t0) / n;
        if (a != n || b != n || c != matched || d != n) {
            wb_note(ctx, SUITE, "visited %u/%u/%u/%u, expected %u/%u/%u/%u", a, b, c, d, n, n,
                    matched, n);
        }
    }
    free(cold);
    wb_sink(rp);
    /* the pairs' ratios (medians over reps) before wb_median sorts the arrays */
    double r_grp = wb_median_ratio(t_grp, t_raw, reps), r_qry = wb_median_ratio(t_qry, t_raw, reps);
    double r_shf = wb_median_ratio(t_shf, t_raw, reps), r_wj = wb_median_ratio(t_wj, t_rj, reps);
    double raw = wb_median(t_raw, reps), grp = wb_median(t_grp, reps), qry = wb_median(t_qry, reps);
    double rj = wb_median(t_rj, reps), wj = wb_median(t_wj, reps);
    wb_report(ctx, SUITE, "iter_raw", "raw", 1, raw, "ns", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "iter_group", "weft", 1, grp, "ns", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "iter_query", "weft", 1, qry, "ns", WB_NO_TARGET, 0);
    report_ratio(ctx, "iter_group_vs_raw", r_grp, 1.05);
    report_ratio(ctx, "iter_query_vs_raw", r_qry, 3.0);
    double shf = wb_median(t_shf, reps);
    wb_report(ctx, SUITE, "iter_query_shuffled", "weft", 1, shf, "ns", WB_NO_TARGET, 0);
    report_ratio(ctx, "iter_query_shuffled_vs_raw", r_shf, 0);
    wb_report(ctx, SUITE, "join3_raw", "raw", 1, rj, "ns", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "join3_group", "weft", 1, wj, "ns", WB_NO_TARGET, 0);
    report_ratio(ctx, "join3_group_vs_raw", r_wj, 1.1);
    free(t);
    free(rp);
    free(rv);
    free(rm);
    weft_world_destroy(grouped.w);
    weft_world_destroy(plain.w);
    weft_world_destroy(join.w);
    weft_world_destroy(shuffled.w);
}

/* create2, remove, add and destroy on a fresh world per repetition. */
static void structural(wb_ctx_t *ctx, uint32_t n, int reps) {
    weft_entity_t *es = malloc(n * sizeof *es);
    double *t = malloc((size_t)reps * 4 * sizeof *t);
    double *t_create = t, *t_remove = t + reps, *t_add = t + 2 * reps, *t_destroy = t + 3 * reps;
    for (int r = 0; r < reps; r++) {
        fixture_t f;
        fixture_init(&f);
        double t0 = wb_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            v3_t *p, *v;
            weft_entity_create(f.w, &es[i]);
            weft_component_add(f.w, es[i], f.pos, (void **)&p);
            weft_component_add(f.w, es[i], f.vel, (void **)&v);
            p->x = (float)i;
            v->y = 1.0f;
        }
        double t1 = wb_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            weft_component_remove(f.w, es[i], f.vel);
        }
        double t2 = wb_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            weft_component_add(f.w, es[i], f.vel, NULL);
        }
        double t3 = wb_now_ns();
        for (uint32_t i = 0; i < n; i++) {
            weft_entity_destroy(f.w, es[i]);
        }
        double t4 = wb_now_ns();
        if (weft_entity_count(f.w) != 0 || weft_component_rows(f.w, f.pos) != 0) {
            wb_note(ctx, SUITE, "structural: world not empty after destroy");
        }
        t_create[r] = (t1 - t0) / n;
        t_remove[r] = (t2 - t1) / n;
        t_add[r] = (t3 - t2) / n;
        t_destroy[r] = (t4 - t3) / n;
        weft_world_destroy(f.w);
    }
    wb_report(ctx, SUITE, "create2", "weft", 1, wb_median(t_create, reps), "ns", WB_AT_MOST, 60);
    wb_report(ctx, SUITE, "add", "weft", 1, wb_median(t_add, reps), "ns", WB_AT_MOST, 25);
    wb_report(ctx, SUITE, "remove", "weft", 1, wb_median(t_remove, reps), "ns", WB_AT_MOST, 20);
    wb_report(ctx, SUITE, "destroy", "weft", 1, wb_median(t_destroy, reps), "ns", WB_AT_MOST, 50);
    free(t);
    free(es);
}

/* ---- bulk calls ---------------------------------------------------------------- >>bulk */

/* Minor page faults of the process so far (first touches of fresh memory). */
static double page_faults(void) {
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? (double)u.ru_minflt : 0.0;
}

typedef struct bulk_data {
    uint32_t n;
    weft_entity_t *es;
    const v3_t *pv, *vv;
} bulk_data_t;

/* The four timed bodies: create n entities with Position and Velocity from pv and vv (bulk or
 * single calls), or add Velocity to n entities that have Position (setup not timed). Each
 * runs on a fresh world and returns ns per entity; *faults receives the page faults taken
 * inside the timed part and *hash the resulting world's hash. */
enum { BULK_CREATE, SINGLE_CREATE, BULK_ADD, SINGLE_ADD };

static double bulk_body(int which, const bulk_data_t *d, double *faults, uint64_t *hash,
                        bool *failed) {
    fixture_t f;
    fixture_init(&f);
    uint32_t n = d->n;
    weft_component_t pair[2] = {f.pos, f.vel};
    const void *vals[2] = {d->pv, d->vv};
    if (which == BULK_ADD || which == SINGLE_ADD) {
        *failed |= weft_entity_create_with(f.w, n, pair, 1, vals, d->es) != WEFT_OK;
    }
    double f0 = page_faults(), t0 = wb_now_ns();
    switch (which) {
    case BULK_CREATE:
        *failed |= weft_entity_create_with(f.w, n, pair, 2, vals, d->es) != WEFT_OK;
        break;
    case SINGLE_CREATE:
        *failed |= weft_entity_create_n(f.w, n, d->es) != WEFT_OK;
        *failed |= weft_component_reserve(f.w, f.pos, n) != WEFT_OK;
        *failed |= weft_component_reserve(f.w, f.vel, n) != WEFT_OK;
        for (uint32_t i = 0; i < n; i++) {
            weft_component_set(f.w, d->es[i], f.pos, &d->pv[i]);
            weft_component_set(f.w, d->es[i], f.vel, &d->vv[i]);
        }
        break;
    case BULK_ADD:
        *failed |= weft_component_add_n(f.w, d->es, n, f.vel) != WEFT_OK;
        break;
    default:
        for (uint32_t i = 0; i < n; i++) {
            weft_component_add(f.w, d->es[i], f.vel, NULL);
        }
        break;
    }
    double t1 = wb_now_ns();
    *faults = (page_faults() - f0) / n;
    *hash = weft_world_hash(f.w);
    weft_world_destroy(f.w);
    return (t1 - t0) / n;
}

/* Bulk calls against the single-entity calls doing the same work on the same data, on a fresh
 * world each (world creation and setup not timed), interleaved per repetition. Each timed run
 * follows an untimed run of the same body, so both sides find the heap holding the blocks
 * they are about to use and neither pays the kernel for first touches of its pools (on a VM
 * those faults cost up to tens of microseconds each and would decide the comparison by
 * which side happened to get recycled memory); both still fault in the entity table, which
 * each world reserves afresh. Page faults per entity are reported so this can be checked. */
static void bulk(wb_ctx_t *ctx, uint32_t n, int reps) {
    wb_describe(ctx, SUITE, "bulk_create2", "weft",
                "one weft_entity_create_with(n, {Position, Velocity}, two packed 12-byte value "
                "arrays) on a fresh world (pools empty, heap warm)");
    wb_describe(ctx, SUITE, "bulk_create2", "single",
                "weft_entity_create_n(n), weft_component_reserve(Position, n) and (Velocity, n), "
                "then weft_component_set of Position and Velocity per entity from the same "
                "value arrays, on a fresh world (heap warm)");
    wb_describe(ctx, SUITE, "bulk_create2", "ratio", "median over reps of bulk ns / single ns");
    wb_describe(ctx, SUITE, "bulk_add", "weft",
                "one weft_component_add_n(es, n, Velocity) over n entities that have Position "
                "(created in one call, not timed); Velocity pool empty, heap warm");
    wb_describe(ctx, SUITE, "bulk_add", "single",
                "weft_component_add(e, Velocity, NULL) per entity over the same n entities, "
                "same setup");
    wb_describe(ctx, SUITE, "bulk_add", "ratio", "median over reps of bulk ns / single ns");
    bulk_data_t d = {.n = n, .es = malloc(n * sizeof *d.es)};
    v3_t *pv = malloc(n * sizeof *pv), *vv = malloc(n * sizeof *vv);
    double *t = malloc((size_t)reps * 8 * sizeof *t);
    if (d.es == NULL || pv == NULL || vv == NULL || t == NULL) {
        wb_note(ctx, SUITE, "bulk: out of memory");
        free(d.es), free(pv), free(vv), free(t);
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        pv[i] = (v3_t){(float)i, 0, 0};
        vv[i] = (v3_t){1, 2, (float)i};
    }
    d.pv = pv;
    d.vv = vv;
    bool failed = false;
    for (int r = 0; r < reps; r++) {
        uint64_t hash[4];
        for (int which = 0; which < 4; which++) {
            double faults;
            (void)bulk_body(which, &d, &faults, &hash[which], &failed); /* warm the heap */
            t[which * reps + r] =
                bulk_body(which, &d, &t[(4 + which) * reps + r], &hash[which], &failed);
        }
        /* the same world, row for row */
        failed |= hash[BULK_CREATE] != hash[SINGLE_CREATE] || hash[BULK_ADD] != hash[SINGLE_ADD];
    }
    if (failed) {
        wb_note(ctx, SUITE, "bulk: a call failed or the bulk and single worlds differ: %s",
                weft_last_error());
    }
    double *tb = t + BULK_CREATE * reps, *ts = t + SINGLE_CREATE * reps;
    double *ab = t + BULK_ADD * reps, *as = t + SINGLE_ADD * reps;
    double create_ratio = wb_median_ratio(tb, ts, reps), add_ratio = wb_median_ratio(ab, as, reps);
    wb_report(ctx, SUITE, "bulk_create2", "weft", 1, wb_median(tb, reps), "ns", WB_AT_MOST, 20);
    wb_report(ctx, SUITE, "bulk_create2", "single", 1, wb_median(ts, reps), "ns", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "bulk_create2", "ratio", 1, create_ratio, "x", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "bulk_add", "weft", 1, wb_median(ab, reps), "ns", WB_AT_MOST, 12);
    wb_report(ctx, SUITE, "bulk_add", "single", 1, wb_median(as, reps), "ns", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "bulk_add", "ratio", 1, add_ratio, "x", WB_NO_TARGET, 0);
    double *pf = t + 4 * reps;
    double pf_cb = wb_median(pf, reps), pf_cs = wb_median(pf + reps, reps);
    double pf_ab = wb_median(pf + 2 * reps, reps), pf_as = wb_median(pf + 3 * reps, reps);
    wb_note(ctx, SUITE,
            "bulk: page faults per entity in the timed part (median): create2 bulk %.4f single "
            "%.4f, add bulk %.4f single %.4f",
            pf_cb, pf_cs, pf_ab, pf_as);
    free(t);
    free(vv);
    free(pv);
    free(d.es);
}

/* Bytes per entity with two 12-byte components: everything the allocator hook holds plus the
 * committed entity table. "reserved": the pools and the table are sized up front (the
 * documented bulk-load path); "grown": pools grow on demand (doubling, so up to half of the
 * dense and data arrays may be slack). */
static void memory(wb_ctx_t *ctx, uint32_t n) {
    for (int reserved = 1; reserved >= 0; reserved--) {
        fixture_t f;
        fixture_init(&f);
        if (reserved) {
            weft_entity_reserve(f.w, n);
            weft_component_reserve(f.w, f.pos, n);
            weft_component_reserve(f.w, f.vel, n);
        }
        populate(&f, n, false);
        weft_world_stats_t st;
        weft_world_stats(f.w, &st);
        if (st.heap_bytes != f.mem.live) {
            wb_note(ctx, SUITE, "world heap count %zu != allocator count %zu", st.heap_bytes,
                    f.mem.live);
        }
        double bpe = (double)(f.mem.live + st.vmem_bytes) / n;
        if (reserved) {
            wb_report(ctx, SUITE, "bytes_per_entity", "weft", 1, bpe, "B", WB_AT_MOST, 44);
        } else {
            wb_report(ctx, SUITE, "bytes_per_entity_grown", "weft", 1, bpe, "B", WB_NO_TARGET, 0);
        }
        weft_world_destroy(f.w);
    }
}

void wb_suite_core(wb_ctx_t *ctx);
/* core/iter_cpp_vs_c (iter_cpp_vs_c.c): a weft.hpp lambda system against the same C system. */
void wb_core_iter_cpp_vs_c(wb_ctx_t *ctx, uint32_t n, int reps);

void wb_suite_core(wb_ctx_t *ctx) {
    uint32_t n = wb_quick(ctx) ? 100000u : 1000000u;
    int reps = wb_reps(ctx);
    wb_note(ctx, SUITE, "N = %u entities, chunks of %u rows, %d repetitions, one thread", n, CHUNK,
            reps);
    iteration(ctx, n, reps);
    wb_core_iter_cpp_vs_c(ctx, n, reps);
    structural(ctx, n, reps);
    bulk(ctx, n, reps);
    memory(ctx, n);
}
