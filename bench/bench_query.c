/* bench_query.c: the "query" suite — change detection (weft_query_term_t.filter).
 *
 * DESIGN
 * N entities (1,000,000; 100,000 with --quick) carry Position and Velocity (3 floats each),
 * created in one run so rows follow entity order. Each repetition is one "frame": 1% of the
 * entities, drawn at random (a fresh draw per repetition), are written, half through
 * weft_component_set and half through weft_component_get_mut.
 *
 * changed_1pct_vs_full: after the frame's writes to Position, the time to iterate a query
 * with a CHANGED filter on Position (summing the three floats of every match, then
 * weft_query_mark_seen) against the time to iterate the same query without the filter over
 * every row (the same sum): what a system pays to find the frame's changes with and without
 * change detection. The ratio is the median over repetitions of the pair timed back to back.
 * The changed iteration must yield exactly the written entities (checked every repetition).
 *
 * change_tracking_write_cost: the same writes to Position (tracked: a query filters on it)
 * and to Velocity (untracked: no query filters on it), both pools identical in size and row
 * order, timed back to back in alternating order; ratio = tracked / untracked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "weft.h"

#define SUITE "query"
#define WRITE_FRAMES 8 /* frames of 1% writes timed per repetition of the write cost */

typedef struct v3 {
    float x, y, z;
} v3_t;

typedef struct bench {
    weft_world_t *w;
    weft_component_t pos, vel;
    weft_query_t *changed; /* Position, CHANGED */
    weft_query_t *full;    /* Position, no filter */
    weft_entity_t *es;
    uint32_t n;
    uint32_t *pick; /* this frame's written entity positions */
    uint32_t npick;
    uint8_t *mark; /* dedup of picks */
    uint64_t rng;
} bench_t;

static uint64_t next_rand(bench_t *b) {
    b->rng ^= b->rng << 13;
    b->rng ^= b->rng >> 7;
    b->rng ^= b->rng << 17;
    return b->rng;
}

static void must(weft_result_t r, const char *what) {
    if (r != WEFT_OK) {
        fprintf(stderr, "bench query: %s: %s\n", what, weft_last_error());
        exit(1);
    }
}

static void setup(bench_t *b, uint32_t n) {
    memset(b, 0, sizeof *b);
    b->n = n;
    b->rng = 0x9E3779B97F4A7C15ull;
    weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE};
    must(weft_world_create(&d, &b->w), "world");
    weft_component_desc_t p = {.name = "Position", .size = sizeof(v3_t)};
    weft_component_desc_t v = {.name = "Velocity", .size = sizeof(v3_t)};
    must(weft_component_register(b->w, &p, &b->pos), "register");
    must(weft_component_register(b->w, &v, &b->vel), "register");
    b->es = malloc((size_t)n * sizeof *b->es);
    b->pick = malloc((size_t)n / 100u * sizeof *b->pick + sizeof *b->pick);
    b->mark = calloc(n, 1);
    v3_t *vals = malloc((size_t)n * sizeof *vals);
    if (!b->es || !b->pick || !b->mark || !vals) {
        fprintf(stderr, "bench query: out of memory\n");
        exit(1);
    }
    for (uint32_t i = 0; i < n; i++) {
        vals[i] = (v3_t){(float)i, 1.0f, 2.0f};
    }
    weft_component_t cs[2] = {b->pos, b->vel};
    const void *values[2] = {vals, vals};
    must(weft_entity_create_with(b->w, n, cs, 2, values, b->es), "create");
    free(vals);
    weft_query_desc_t qc = {
        .terms = {
            {.component = b->pos, .access = WEFT_ACCESS_READ, .filter = WEFT_CHANGE_CHANGED}}};
    weft_query_desc_t qf = {.terms = {{.component = b->pos, .access = WEFT_ACCESS_READ}}};
    must(weft_query_create(b->w, &qc, &b->changed), "query");
    must(weft_query_create(b->w, &qf, &b->full), "query");
    weft_query_mark_seen(b->changed);
}

static void teardown(bench_t *b) {
    weft_world_destroy(b->w);
    free(b->es);
    free(b->pick);
    free(b->mark);
}

/* Draw 1% of the entities, distinct, in random order. */
static void draw(bench_t *b) {
    uint32_t want = b->n / 100u;
    b->npick = 0;
    while (b->npick < want) {
        uint32_t i = (uint32_t)(next_rand(b) % b->n);
        if (!b->mark[i]) {
            b->mark[i] = 1;
            b->pick[b->npick++] = i;
        }
    }
    for (uint32_t k = 0; k < b->npick; k++) {
        b->mark[b->pick[k]] = 0;
    }
}

/* The frame's writes to component c: even picks through set, odd ones through get_mut. */
static void write_picks(bench_t *b, weft_component_t c) {
    for (uint32_t k = 0; k < b->npick; k++) {
        weft_entity_t e = b->es[b->pick[k]];
        if (k & 1u) {
            v3_t *p = weft_component_get_mut(b->w, e, c);
            p->x += 1.0f;
        } else {
            v3_t v = {(float)k, 3.0f, 4.0f};
            weft_component_set(b->w, e, c, &v);
        }
    }
}

/* Sum every matched Position of q (one chunk, as one system would); *rows gets the matches. */
static double iterate(weft_query_t *q, uint32_t *rows) {
    weft_iter_t it;
    float sum = 0;
    uint32_t n = 0;
    weft_query_iter(q, 0, 0, &it);
    while (weft_iter_next(&it)) {
        const v3_t *p = it.columns[0];
        for (uint32_t i = 0; i < it.rows; i++) {
            sum += p[i].x + p[i].y + p[i].z;
        }
        n += it.rows;
    }
    *rows = n;
    return sum;
}

/* One figure per repetition. */
static double *times(int reps) {
    double *t = malloc((size_t)reps * sizeof *t);
    if (t == NULL) {
        fprintf(stderr, "bench query: out of memory\n");
        exit(1);
    }
    return t;
}

static void changed_vs_full(wb_ctx_t *ctx, bench_t *b, int reps) {
    double *tc = times(reps), *tf = times(reps);
    wb_describe(ctx, SUITE, "changed_1pct_vs_full", "weft",
                "after 1% random rows of Position were written (set or get_mut): iterate a "
                "query with a CHANGED filter on Position, summing the 3 floats of each match, "
                "then weft_query_mark_seen");
    wb_describe(ctx, SUITE, "changed_1pct_vs_full", "full",
                "iterate the same query without the filter over every row, same sum");
    wb_describe(ctx, SUITE, "changed_1pct_vs_full", "ratio",
                "median over reps of changed ns / full ns, timed back to back");
    for (int r = 0; r < reps; r++) {
        draw(b);
        write_picks(b, b->pos);
        uint32_t nc = 0, nf = 0;
        double t0 = wb_now_ns();
        double sc = iterate(b->changed, &nc);
        weft_query_mark_seen(b->changed);
        double t1 = wb_now_ns();
        double sf = iterate(b->full, &nf);
        double t2 = wb_now_ns();
        wb_sink(&sc);
        wb_sink(&sf);
        if (nc != b->npick || nf != b->n) {
            fprintf(stderr, "bench query: changed query matched %u of %u written rows\n", nc,
                    b->npick);
            exit(1);
        }
        tc[r] = t1 - t0;
        tf[r] = t2 - t1;
    }
    double ratio = wb_median_ratio(tc, tf, reps);
    wb_report(ctx, SUITE, "changed_1pct_vs_full", "weft", 1, wb_median(tc, reps) / 1e3, "us",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "changed_1pct_vs_full", "full", 1, wb_median(tf, reps) / 1e3, "us",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "changed_1pct_vs_full", "ratio", 1, ratio, "x", WB_AT_MOST, 0.1);
    free(tc);
    free(tf);
}

static void write_cost(wb_ctx_t *ctx, bench_t *b, int reps) {
    double *tt = times(reps), *tu = times(reps);
    wb_describe(ctx, SUITE, "change_tracking_write_cost", "weft",
                "1% random rows per frame, 8 frames, written half through weft_component_set "
                "and half through get_mut, to Position (tracked: a query filters on it); ns "
                "per write");
    wb_describe(ctx, SUITE, "change_tracking_write_cost", "untracked",
                "the same writes to Velocity (same size and rows, no filter on it)");
    wb_describe(ctx, SUITE, "change_tracking_write_cost", "ratio",
                "median over reps of tracked ns / untracked ns, timed back to back in "
                "alternating order");
    for (int r = 0; r < reps; r++) {
        double t_tracked = 0, t_untracked = 0;
        for (int f = 0; f < WRITE_FRAMES; f++) {
            draw(b);
            for (int side = 0; side < 2; side++) {
                bool tracked = (side == 0) == ((r + f) % 2 == 0);
                double t0 = wb_now_ns();
                write_picks(b, tracked ? b->pos : b->vel);
                double t = wb_now_ns() - t0;
                if (tracked) {
                    t_tracked += t;
                } else {
                    t_untracked += t;
                }
            }
        }
        weft_query_mark_seen(b->changed);
        tt[r] = t_tracked / (WRITE_FRAMES * (double)b->npick);
        tu[r] = t_untracked / (WRITE_FRAMES * (double)b->npick);
    }
    double ratio = wb_median_ratio(tt, tu, reps);
    wb_report(ctx, SUITE, "change_tracking_write_cost", "weft", 1, wb_median(tt, reps), "ns",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "change_tracking_write_cost", "untracked", 1, wb_median(tu, reps), "ns",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "change_tracking_write_cost", "ratio", 1, ratio, "x", WB_AT_MOST, 1.1);
    free(tt);
    free(tu);
}

void wb_suite_query(wb_ctx_t *ctx);

void wb_suite_query(wb_ctx_t *ctx) {
    uint32_t n = wb_quick(ctx) ? 100000u : 1000000u;
    int reps = wb_reps(ctx) * 2 + 1; /* cheap cases: more pairs steady the medians */
    bench_t b;
    setup(&b, n);
    wb_note(ctx, SUITE, "%u entities with Position and Velocity, 1%% written per frame", n);
    changed_vs_full(ctx, &b, reps);
    write_cost(ctx, &b, reps);
    teardown(&b);
}
