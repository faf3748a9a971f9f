/* bench_sched.c: the "sched" suite — what a frame of the scheduler costs and how it scales.
 *
 * Cases, each run interleaved with its baseline, rep by rep, medians reported:
 * - frame_64_systems: 64 systems matching 1 entity each, every 4th writing a shared component
 *   (so some conflict), per frame at 1 and 2 workers; frame_64_empty: the same systems when
 *   they match nothing (reference).
 * - frame_1m: a parallel pos += vel * dt system over 1M grouped entities at 1 and 2 workers,
 *   beside OpenMP's raw 2-thread loop and a raw 1-thread loop over plain arrays;
 *   frame_1m_speedup = t(1) / t(2); frame_1m_vs_openmp = t(weft, 2) / t(OpenMP, 2).
 * - frame_1m_paced: the frame_1m world at 2 workers with 16 ms of idling before every frame
 *   (a game's pacing) against its frames back to back, and the CPU the idle gaps burn; the
 *   same at 1 worker shows what idling costs the frame with no worker to wake, and frame_1m's
 *   raw 1-thread and OpenMP 2-thread loops paced the same way what it costs with no runtime.
 * - frame_64x256: 64 independent systems x 256 rows with ~20 ns of work per row, one job per
 *   system, at 1 and 2 workers; frame_64x256_speedup is the median of paired per-rep ratios.
 * - frame_mixed: 12 systems of mixed sizes (1k .. 1M rows) and conflicts over 1M entities;
 *   frame_mixed_speedup = t(1) / t(2).
 * - churn: 100k entities, 12 systems, ~6% of the entities changing structure per frame
 *   through command buffers, at 1 and 2 workers: churn_speedup (paired), the apply alone
 *   (churn_apply, from the trace's apply events) with churn_apply_speedup (serial apply at 1
 *   worker vs the split dry run and placed apply at 2, as the measured rules pick) and its
 *   share of the 1-worker frame; churn_apply_share counts parallel-for ranges only, which in
 *   this world are the split dry run's alone (its systems run as ready-list items; the placed
 *   apply's replay lanes run as jobs, beside the systems' drain jobs, and are not counted).
 * - many_systems: 250 independent chains of 3 systems, each chain on its own component, 4 or
 *   64 rows per system, 0, 1 or 5 us of work per system, at every count of wb_worker_counts
 *   (1 and 2 on a 2-core machine; paired speedups at each, and at 2 workers the 0 us ratio
 *   and the per-system threaded dispatch cost, where the targets are stated).
 * - many_systems_build: registering 750, 3,000, 6,000 and 12,000 systems over 250 components
 *   (N / 250 writers per component) and building their schedule; the 6,000-system frame at 1
 *   and 2 workers.
 * - many_types: 4,000 component types and 3,000 or 12,000 systems (each writing one type
 *   and looking up another): registration and schedule build time per system at both sizes,
 *   and the 12,000-system frame at 1 and 2 workers.
 * WB_SCHED_CASE=<name> runs only the case of that name.
 * Every figure at 2 workers comes with `<case>_share` (bench/share.h): the fraction of the
 * jobs run by the less busy worker, so a 2-worker figure whose work all ran on the calling
 * thread reads 0 (frame_64_systems: its phase is too cheap to hand out, by the measured-cost
 * rule in weft/system.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "share.h"
#include "sim_check.h"
#include "weft.h"

#ifdef WB_HAVE_OPENMP
#include <omp.h>
#endif

#define SUITE "sched"

typedef struct vec3 {
    float x, y, z;
} vec3_t;

static weft_world_t *make_world(uint32_t workers) {
    weft_world_t *w = NULL;
    weft_world_desc_t d = {.worker_count = workers};
    if (weft_world_create(&d, &w) != WEFT_OK) {
        return NULL;
    }
    return w;
}

static weft_component_t reg(weft_world_t *w, const char *name, size_t size) {
    weft_component_t c = {0};
    (void)weft_component_register(w, &(weft_component_desc_t){.name = name, .size = size}, &c);
    return c;
}

/* Run `frames` frames; returns ns per frame, or -1 on failure. */
static double time_frames(weft_world_t *w, int frames) {
    double t0 = wb_now_ns();
    for (int i = 0; i < frames; i++) {
        if (weft_world_progress(w, 0.016f) != WEFT_OK) {
            return -1.0;
        }
    }
    return (wb_now_ns() - t0) / frames;
}

/* Time w1 (1 worker) and w2 (2 workers) back to back, rep by rep, after `warm` frames each:
 * t1[r], t2[r] are ns per frame over `frames` frames divided by `scale`. With `sim`, `traced`
 * frames of each world are traced for the simulator right after each of its blocks
 * (bench/sim_check.h; sides[0] is w1, sides[1] w2). Returns w2's share (bench/share.h) over
 * the timed and traced frames. */
static double time_paired_sampled(weft_world_t *w1, weft_world_t *w2, int warm, int frames,
                                  int reps, double scale, double *t1, double *t2,
                                  wb_sim_samples_t *sim, const wb_sim_side_t *sides,
                                  uint32_t traced) {
    time_frames(w1, warm); /* warm up: schedule built, costs measured, buffers sized */
    time_frames(w2, warm);
    wb_share_t sh;
    wb_share_begin(&sh, weft_world_jobs(w2));
    for (int r = 0; r < reps; r++) {
        t1[r] = time_frames(w1, frames) / scale;
        if (sim) {
            wb_sim_sample(sim, &sides[0], 0, t1[r] * scale / 1e6, traced);
        }
        t2[r] = time_frames(w2, frames) / scale;
        if (sim) {
            wb_sim_sample(sim, &sides[1], 1, t2[r] * scale / 1e6, traced);
        }
    }
    return wb_share_end(&sh, NULL);
}

static double time_paired(weft_world_t *w1, weft_world_t *w2, int warm, int frames, int reps,
                          double scale, double *t1, double *t2) {
    return time_paired_sampled(w1, w2, warm, frames, reps, scale, t1, t2, NULL, NULL, 0);
}

/* ---- frame_64_systems -------------------------------------------------------- >>frame64 */

static void bump(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        float *x = it->columns[0];
        for (uint32_t i = 0; i < it->rows; i++) {
            x[i] += 1.0f;
        }
    }
}

/* 64 components, 64 systems; system i iterates component i; every 4th also writes "shared". */
static weft_world_t *make_64(uint32_t workers, bool with_entities) {
    weft_world_t *w = make_world(workers);
    if (!w) {
        return NULL;
    }
    weft_component_t shared = reg(w, "shared", sizeof(float));
    for (int i = 0; i < 64; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%02d", i);
        weft_component_t c = reg(w, name, sizeof(float));
        if (with_entities) {
            weft_entity_t e;
            float v = 0;
            (void)weft_entity_create(w, &e);
            (void)weft_component_set(w, e, c, &v);
        }
        snprintf(name, sizeof name, "s%02d", i);
        weft_system_desc_t d = {
            .name = name, .fn = bump, .terms = {{.component = c, .access = WEFT_ACCESS_WRITE}}};
        if (i % 4 == 0) {
            d.writes[0] = shared;
        }
        if (weft_system_register(w, &d, NULL) != WEFT_OK) {
            weft_world_destroy(w);
            return NULL;
        }
    }
    return w;
}

static void case_frame_64(wb_ctx_t *ctx) {
    int reps = wb_reps(ctx), frames = wb_quick(ctx) ? 2000 : 20000;
    weft_world_t *w1 = make_64(1, true), *w2 = make_64(2, true), *we = make_64(1, false);
    double *t1 = calloc((size_t)reps, sizeof *t1), *t2 = calloc((size_t)reps, sizeof *t2);
    double *te = calloc((size_t)reps, sizeof *te);
    if (!w1 || !w2 || !we || !t1 || !t2 || !te) {
        wb_note(ctx, SUITE, "frame_64_systems: setup failed: %s", weft_last_error());
        goto done;
    }
    wb_describe(ctx, SUITE, "frame_64_systems", "weft",
                "weft_world_progress: 64 systems, 1 row each (x += 1), every 4th also writes a "
                "shared component; mean frame time over 20000 frames");
    time_frames(w1, 500); /* warm up: schedule built, buffers sized, workers spinning */
    time_frames(w2, 500);
    time_frames(we, 500);
    wb_share_t sh;
    wb_share_begin(&sh, weft_world_jobs(w2));
    for (int r = 0; r < reps; r++) {
        t1[r] = time_frames(w1, frames) / 1000.0;
        t2[r] = time_frames(w2, frames) / 1000.0;
        te[r] = time_frames(we, frames) / 1000.0;
    }
    double share = wb_share_end(&sh, NULL);
    wb_report(ctx, SUITE, "frame_64_systems", "weft", 1, wb_median(t1, reps), "us", WB_AT_MOST,
              3.0);
    wb_report(ctx, SUITE, "frame_64_systems", "weft", 2, wb_median(t2, reps), "us", WB_AT_MOST,
              5.0);
    wb_report_share(ctx, SUITE, "frame_64_systems", 2, share, WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "frame_64_empty", "weft", 1, wb_median(te, reps), "us", WB_NO_TARGET, 0);
done:
    weft_world_destroy(w1);
    weft_world_destroy(w2);
    weft_world_destroy(we);
    free(t1);
    free(t2);
    free(te);
}

/* ---- frame_64x256 ----------------------------------------------------------- >>frame64x256 */

/* About 20 ns of arithmetic per row: a dependent chain of multiply-adds per row, written back
 * so it cannot be dropped. Not inlined, so weft's body, the raw loop and OpenMP run the very
 * same machine code whatever the bounds (inlined into a loop of constant bounds the compiler
 * vectorised it, 4x faster than the same source in weft's body). frame_64x256 reports the
 * measured ns per row at 1 worker. */
#define WORK20_STEPS 32
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline)) /* one copy of the machine code for weft, raw and OpenMP */
#endif
static void
work20_rows(float *x, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        float v = x[i];
        for (int k = 0; k < WORK20_STEPS; k++) {
            v = v * 0.9999f + 0.5f;
        }
        x[i] = v;
    }
}

static void work20(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        work20_rows(it->columns[0], it->rows);
    }
}

/* The same work without weft: 64 arrays of 256 floats, one after the other (raw) or spread
 * over 2 OpenMP threads one array at a time (the machine's own speedup for this work). */
static double raw_64x256_us(float (*a)[256], int frames, int threads) {
    double t0 = wb_now_ns();
    for (int f = 0; f < frames; f++) {
        if (threads == 1) {
            for (int k = 0; k < 64; k++) {
                work20_rows(a[k], 256);
            }
        } else {
#ifdef WB_HAVE_OPENMP
#pragma omp parallel for num_threads(2) schedule(dynamic, 1)
            for (int k = 0; k < 64; k++) {
                work20_rows(a[k], 256);
            }
#endif
        }
    }
    wb_sink(a);
    return (wb_now_ns() - t0) / frames / 1000.0;
}

/* 64 components with 256 entities each; system i writes component i only: 64 independent
 * systems, one job each (not parallel, so never split). */
static weft_world_t *make_64x256(uint32_t workers) {
    weft_world_t *w = make_world(workers);
    if (!w) {
        return NULL;
    }
    for (int i = 0; i < 64; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%02d", i);
        weft_component_t c = reg(w, name, sizeof(float));
        for (int k = 0; k < 256; k++) {
            weft_entity_t e;
            float v = (float)k;
            if (weft_entity_create(w, &e) != WEFT_OK ||
                weft_component_set(w, e, c, &v) != WEFT_OK) {
                goto fail;
            }
        }
        snprintf(name, sizeof name, "s%02d", i);
        weft_system_desc_t d = {
            .name = name, .fn = work20, .terms = {{.component = c, .access = WEFT_ACCESS_WRITE}}};
        if (weft_system_register(w, &d, NULL) != WEFT_OK) {
            goto fail;
        }
    }
    return w;
fail:
    weft_world_destroy(w);
    return NULL;
}

static void case_frame_64x256(wb_ctx_t *ctx) {
    int reps = wb_reps(ctx), frames = wb_quick(ctx) ? 100 : 400;
    weft_world_t *w1 = make_64x256(1), *w2 = make_64x256(2);
    double *t1 = calloc((size_t)reps, sizeof *t1), *t2 = calloc((size_t)reps, sizeof *t2);
    double *r1 = calloc((size_t)reps, sizeof *r1), *o2 = calloc((size_t)reps, sizeof *o2);
    float(*a)[256] = calloc(64, sizeof *a);
    if (!w1 || !w2 || !t1 || !t2 || !r1 || !o2 || !a) {
        wb_note(ctx, SUITE, "frame_64x256: setup failed: %s", weft_last_error());
        goto done;
    }
    wb_describe(ctx, SUITE, "frame_64x256", "weft",
                "weft_world_progress: 64 independent systems x 256 rows, ~20 ns of arithmetic "
                "per row (32 dependent multiply-adds), one job per system; mean frame time");
    wb_describe(ctx, SUITE, "frame_64x256_speedup", "ratio",
                "median over reps of weft@1 / weft@2, the two worlds timed back to back");
    wb_describe(ctx, SUITE, "frame_64x256", "raw", "the same rows as 64 plain arrays, 1 thread");
    wb_describe(ctx, SUITE, "frame_64x256", "openmp",
                "the same 64 arrays, omp parallel for num_threads(2) schedule(dynamic,1)");
    wb_describe(ctx, SUITE, "frame_64x256_speedup", "openmp",
                "median over reps of raw@1 / openmp@2: what this machine gives this work");
    time_frames(w1, 50); /* warm up: schedule built, costs measured, buffers sized */
    time_frames(w2, 50);
    wb_share_t sh;
    wb_share_begin(&sh, weft_world_jobs(w2));
    for (int r = 0; r < reps; r++) {
        t1[r] = time_frames(w1, frames) / 1000.0;
        t2[r] = time_frames(w2, frames) / 1000.0;
        r1[r] = raw_64x256_us(a, frames, 1);
#ifdef WB_HAVE_OPENMP
        o2[r] = raw_64x256_us(a, frames, 2);
#endif
    }
    double share = wb_share_end(&sh, NULL);
    double sp = wb_median_ratio(t1, t2, reps);
    wb_report(ctx, SUITE, "frame_64x256", "weft", 1, wb_median(t1, reps), "us", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "frame_64x256_ns_per_row", "weft", 1,
              wb_median(t1, reps) * 1000.0 / (64.0 * 256.0), "ns", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "frame_64x256", "weft", 2, wb_median(t2, reps), "us", WB_NO_TARGET, 0);
    wb_report_scaled(ctx, SUITE, "frame_64x256_speedup", "ratio", 2, sp, "x", WB_AT_LEAST, 1.7,
                     share);
    wb_report_share(ctx, SUITE, "frame_64x256", 2, share, WB_AT_LEAST, 0.4);
    wb_report(ctx, SUITE, "frame_64x256", "raw", 1, wb_median(r1, reps), "us", WB_NO_TARGET, 0);
#ifdef WB_HAVE_OPENMP
    wb_report(ctx, SUITE, "frame_64x256", "openmp", 2, wb_median(o2, reps), "us", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "frame_64x256_speedup", "openmp", 2, wb_median_ratio(r1, o2, reps), "x",
              WB_NO_TARGET, 0);
#endif
done:
    weft_world_destroy(w1);
    weft_world_destroy(w2);
    free(t1);
    free(t2);
    free(r1);
    free(o2);
    free(a);
}

/* ---- frame_1m ------------------------------------------------------------------ >>frame1m */

static void move(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    float dt = ctx->dt;
    while (weft_iter_next(it)) {
        vec3_t *p = it->columns[0];
        const vec3_t *v = it->columns[1];
        if (p && v) {
            for (uint32_t i = 0; i < it->rows; i++) {
                p[i].x += v[i].x * dt;
                p[i].y += v[i].y * dt;
                p[i].z += v[i].z * dt;
            }
            continue;
        }
        for (uint32_t i = 0; i < it->rows; i++) {
            vec3_t *pp = weft_iter_get(it, 0, i);
            const vec3_t *vv = weft_iter_get(it, 1, i);
            pp->x += vv->x * dt;
            pp->y += vv->y * dt;
            pp->z += vv->z * dt;
        }
    }
}

/* A world of n entities with grouped Position and Velocity; pos/vel out for other systems. */
static weft_world_t *make_moving(uint32_t workers, uint32_t n, weft_component_t *pos,
                                 weft_component_t *vel) {
    weft_world_t *w = make_world(workers);
    if (!w) {
        return NULL;
    }
    *pos = reg(w, "Position", sizeof(vec3_t));
    *vel = reg(w, "Velocity", sizeof(vec3_t));
    weft_group_t g;
    if (weft_group_create(w, &(weft_group_desc_t){.components = {*pos, *vel}}, &g) != WEFT_OK ||
        weft_component_reserve(w, *pos, n) != WEFT_OK ||
        weft_component_reserve(w, *vel, n) != WEFT_OK) {
        weft_world_destroy(w);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        weft_entity_t e;
        vec3_t p = {(float)i, 0, 0}, v = {1, 0.5f, 0.25f};
        if (weft_entity_create(w, &e) != WEFT_OK || weft_component_set(w, e, *pos, &p) != WEFT_OK ||
            weft_component_set(w, e, *vel, &v) != WEFT_OK) {
            weft_world_destroy(w);
            return NULL;
        }
    }
    return w;
}

static weft_world_t *make_1m(uint32_t workers, uint32_t n) {
    weft_component_t pos, vel;
    weft_world_t *w = make_moving(workers, n, &pos, &vel);
    if (w && weft_system_register(
                 w,
                 &(weft_system_desc_t){.name = "move",
                                       .fn = move,
                                       .parallel = true,
                                       .chunk_size = 16384,
                                       .terms = {{.component = pos, .access = WEFT_ACCESS_WRITE},
                                                 {.component = vel, .access = WEFT_ACCESS_READ}}},
                 NULL) != WEFT_OK) {
        weft_world_destroy(w);
        w = NULL;
    }
    return w;
}

static void raw_move(vec3_t *p, const vec3_t *v, long n, float dt) {
    for (long i = 0; i < n; i++) {
        p[i].x += v[i].x * dt;
        p[i].y += v[i].y * dt;
        p[i].z += v[i].z * dt;
    }
}

#ifdef WB_HAVE_OPENMP
static void omp_move(vec3_t *p, const vec3_t *v, long n, float dt) {
#pragma omp parallel for num_threads(2) schedule(static)
    for (long i = 0; i < n; i++) {
        p[i].x += v[i].x * dt;
        p[i].y += v[i].y * dt;
        p[i].z += v[i].z * dt;
    }
}
#endif

static void case_frame_1m(wb_ctx_t *ctx) {
    int reps = wb_reps(ctx), frames = wb_quick(ctx) ? 5 : 20;
    uint32_t n = 1000000;
    weft_world_t *w1 = make_1m(1, n), *w2 = make_1m(2, n);
    vec3_t *p = malloc(n * sizeof *p), *v = malloc(n * sizeof *v);
    double *t1 = calloc((size_t)reps, sizeof *t1), *t2 = calloc((size_t)reps, sizeof *t2);
    double *to = calloc((size_t)reps, sizeof *to), *tr = calloc((size_t)reps, sizeof *tr);
    double *sp = calloc((size_t)reps, sizeof *sp), *vo = calloc((size_t)reps, sizeof *vo);
    if (!w1 || !w2 || !p || !v || !t1 || !t2 || !to || !tr || !sp || !vo) {
        wb_note(ctx, SUITE, "frame_1m: setup failed: %s", weft_last_error());
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        p[i] = (vec3_t){(float)i, 0, 0};
        v[i] = (vec3_t){1, 0.5f, 0.25f};
    }
    wb_describe(ctx, SUITE, "frame_1m", "weft",
                "weft_world_progress: one parallel system p += v * dt over 1M grouped entities "
                "(chunks of 16384 rows), mean of 20 frames");
    wb_describe(ctx, SUITE, "frame_1m", "raw", "the same loop over two plain arrays, 1 thread");
    wb_describe(ctx, SUITE, "frame_1m", "openmp",
                "the same loop over the plain arrays, omp parallel for num_threads(2) static");
    wb_describe(ctx, SUITE, "frame_1m_speedup", "ratio",
                "median over reps of weft@1 / weft@2, timed back to back");
    wb_describe(ctx, SUITE, "frame_1m_vs_openmp", "ratio",
                "median over reps of weft@2 / openmp@2, timed in the same rep");
    time_frames(w1, 3);
    time_frames(w2, 3);
    wb_share_t sh;
    wb_share_begin(&sh, weft_world_jobs(w2));
    /* Order per rep: raw, weft 1, weft 2, OpenMP. OpenMP threads keep spinning for a while
     * after their region (libgomp's default wait policy); the raw reference loop runs next,
     * so that spinning overlaps the reference rather than a weft measurement. Every case
     * runs one untimed frame first: raw and OpenMP share arrays, so without it raw started
     * on data OpenMP had just pulled into cache and weft on data untouched since the last
     * rep, which read as weft@1 1.30 ms vs raw 0.88 (a raw loop over weft's own columns,
     * run cold, took 1.25). */
    for (int r = 0; r < reps; r++) {
        raw_move(p, v, n, 0.016f);
        double t0 = wb_now_ns();
        for (int f = 0; f < frames; f++) {
            raw_move(p, v, n, 0.016f);
        }
        tr[r] = (wb_now_ns() - t0) / frames / 1e6;
        time_frames(w1, 1);
        t1[r] = time_frames(w1, frames) / 1e6;
        time_frames(w2, 1);
        t2[r] = time_frames(w2, frames) / 1e6;
#ifdef WB_HAVE_OPENMP
        omp_move(p, v, n, 0.016f);
        t0 = wb_now_ns();
        for (int f = 0; f < frames; f++) {
            omp_move(p, v, n, 0.016f);
        }
        to[r] = (wb_now_ns() - t0) / frames / 1e6;
        vo[r] = t2[r] / to[r];
#endif
        sp[r] = t1[r] / t2[r];
        wb_sink(p);
    }
    wb_report(ctx, SUITE, "frame_1m", "weft", 1, wb_median(t1, reps), "ms", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "frame_1m", "weft", 2, wb_median(t2, reps), "ms", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "frame_1m", "raw", 1, wb_median(tr, reps), "ms", WB_NO_TARGET, 0);
    double share = wb_share_end(&sh, NULL);
    wb_report_scaled(ctx, SUITE, "frame_1m_speedup", "ratio", 2, wb_median(sp, reps), "x",
                     WB_AT_LEAST, 1.9, share);
    wb_report_share(ctx, SUITE, "frame_1m", 2, share, WB_NO_TARGET, 0);
#ifdef WB_HAVE_OPENMP
    wb_report(ctx, SUITE, "frame_1m", "openmp", 2, wb_median(to, reps), "ms", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "frame_1m_vs_openmp", "ratio", 2, wb_median(vo, reps), "x", WB_AT_MOST,
              1.1);
#else
    wb_note(ctx, SUITE, "frame_1m_vs_openmp: built without OpenMP, baseline skipped");
#endif
done:
    weft_world_destroy(w1);
    weft_world_destroy(w2);
    free(p);
    free(v);
    free(t1);
    free(t2);
    free(to);
    free(tr);
    free(sp);
    free(vo);
}

/* ---- frame_1m_paced ------------------------------------------------------------ >>paced */

/* One rep of frame_1m_paced on `w`: a warm frame, `frames` frames back to back (times in fb),
 * `frames` frames each after 16 ms of sleep (fp); *ratio gets the median paced frame over the
 * median back-to-back one, *burn the process's CPU time in the gaps over their wall time. */
static void paced_rep(weft_world_t *w, int frames, double *fb, double *fp, double *tb, double *tp,
                      double *ratio, double *burn) {
    time_frames(w, 1);
    for (int f = 0; f < frames; f++) {
        fb[f] = time_frames(w, 1) / 1e6;
    }
    double idle_cpu = 0, idle_wall = 0;
    for (int f = 0; f < frames; f++) {
        double c0 = wb_cpu_ns(), t0 = wb_now_ns();
        wb_sleep_ns(16000000L);
        idle_cpu += wb_cpu_ns() - c0;
        idle_wall += wb_now_ns() - t0;
        fp[f] = time_frames(w, 1) / 1e6;
    }
    *tb = wb_median(fb, frames);
    *tp = wb_median(fp, frames);
    *ratio = *tp / *tb;
    *burn = idle_cpu / idle_wall;
}

/* The same pacing for a raw loop `fn` over plain arrays (no weft): the median frame after 16 ms
 * of sleep over the median frame back to back, as paced_rep does. */
typedef void (*paced_loop_t)(vec3_t *p, const vec3_t *v, long n, float dt);
static double paced_raw(paced_loop_t fn, vec3_t *p, const vec3_t *v, long n, int frames, double *fb,
                        double *fp) {
    fn(p, v, n, 0.016f);
    for (int f = 0; f < frames; f++) {
        double t0 = wb_now_ns();
        fn(p, v, n, 0.016f);
        fb[f] = wb_now_ns() - t0;
    }
    for (int f = 0; f < frames; f++) {
        wb_sleep_ns(16000000L);
        double t0 = wb_now_ns();
        fn(p, v, n, 0.016f);
        fp[f] = wb_now_ns() - t0;
    }
    wb_sink(p);
    return wb_median(fp, frames) / wb_median(fb, frames);
}

/* frame_1m_paced: the frame_1m world at 2 workers, every frame after 16 ms of idling (a game's
 * frame rate), against the same world's frames back to back, both in every rep; each side is
 * the median of its frames in the rep, the ratio the median over reps of paced / back to
 * back. frame_1m_paced_idle_burn: the process's CPU time during the idle gaps over their wall
 * time, in cores (workers spinning or woken for nothing while the engine does other work).
 * The same world at 1 worker, alternated rep by rep, has no worker to wake: its ratio is what
 * idling costs the frame itself on the machine (caches refilled, clocks), which no wake-up
 * policy can take back. The same pacing of frame_1m's raw loops over plain arrays, in the same
 * reps (raw: 1 thread; openmp: 2 threads, libgomp's default wait policy), gives the machine's
 * own cost of idling with no runtime at all, beside which weft's ratios read. raw_8m: the raw
 * 1-thread loop paced the same way over 8M entities (192 MB, far beyond a last-level cache),
 * whose frames find their data in memory whether paced or not: where it reads ~1.0 while the
 * 1M raw loop (24 MB) reads well above, what idling costs the 1M frame is the cache residency
 * that back-to-back frames keep and paced ones lose (to other processes, other VMs), not a
 * wake-up. */
static void case_frame_1m_paced(wb_ctx_t *ctx) {
    int reps = wb_reps(ctx), frames = wb_quick(ctx) ? 4 : 12;
    weft_world_t *w = make_1m(2, 1000000), *w1 = make_1m(1, 1000000);
    double *tb = calloc((size_t)reps, sizeof *tb), *tp = calloc((size_t)reps, sizeof *tp);
    double *ratio = calloc((size_t)reps, sizeof *ratio), *burn = calloc((size_t)reps, sizeof *burn);
    double *ratio1 = calloc((size_t)reps, sizeof *ratio1);
    double *ratio_raw = calloc((size_t)reps, sizeof *ratio_raw);
    double *ratio_omp = calloc((size_t)reps, sizeof *ratio_omp);
    double *fb = calloc((size_t)frames, sizeof *fb), *fp = calloc((size_t)frames, sizeof *fp);
    double *ratio_8m = calloc((size_t)reps, sizeof *ratio_8m);
    const long n = 1000000, n8 = 8 * n;
    vec3_t *p = malloc((size_t)n * sizeof *p), *v = malloc((size_t)n * sizeof *v);
    vec3_t *p8 = malloc((size_t)n8 * sizeof *p8), *v8 = malloc((size_t)n8 * sizeof *v8);
    if (!w || !w1 || !tb || !tp || !ratio || !burn || !ratio1 || !ratio_raw || !ratio_omp || !fb ||
        !fp || !p || !v || !ratio_8m || !p8 || !v8) {
        wb_note(ctx, SUITE, "frame_1m_paced: setup failed: %s", weft_last_error());
        goto done;
    }
    wb_describe(ctx, SUITE, "frame_1m_paced", "weft",
                "the frame_1m world at 2 workers, each frame after 16 ms of idling (main thread "
                "asleep); median frame per rep");
    wb_describe(ctx, SUITE, "frame_1m_back_to_back", "weft",
                "the same world's frames one after another in the same rep; median frame");
    wb_describe(ctx, SUITE, "frame_1m_paced_vs_back_to_back", "ratio",
                "median over reps of paced / back-to-back median frame; at 1 worker (a world of "
                "its own, reps alternated) what idling costs the frame with no worker to wake");
    wb_describe(ctx, SUITE, "frame_1m_paced_vs_back_to_back", "raw",
                "frame_1m's raw loop over two plain arrays, 1 thread, paced the same way in the "
                "same reps: median over reps of paced / back-to-back median frame");
    wb_describe(ctx, SUITE, "frame_1m_paced_vs_back_to_back", "openmp",
                "the same for frame_1m's omp parallel for num_threads(2) static loop");
    wb_describe(ctx, SUITE, "frame_8m_paced_vs_back_to_back", "raw",
                "the raw 1-thread loop paced the same way over 8M entities (192 MB): data that "
                "no cache holds between frames, paced or not");
    wb_describe(ctx, SUITE, "frame_1m_paced_idle_burn", "weft",
                "process CPU time during the 16 ms gaps / their wall time");
    for (long i = 0; i < n8; i++) {
        p8[i] = (vec3_t){(float)i, 0, 0};
        v8[i] = (vec3_t){1, 0.5f, 0.25f};
        if (i < n) {
            p[i] = p8[i];
            v[i] = v8[i];
        }
    }
    time_frames(w, 3);
    time_frames(w1, 3);
    wb_share_t sh;
    wb_share_begin(&sh, weft_world_jobs(w));
    for (int r = 0; r < reps; r++) {
        double b1, p1, u1;
        paced_rep(w1, frames, fb, fp, &b1, &p1, &ratio1[r], &u1);
        paced_rep(w, frames, fb, fp, &tb[r], &tp[r], &ratio[r], &burn[r]);
        ratio_raw[r] = paced_raw(raw_move, p, v, n, frames, fb, fp);
        ratio_8m[r] = paced_raw(raw_move, p8, v8, n8, frames, fb, fp);
#ifdef WB_HAVE_OPENMP
        ratio_omp[r] = paced_raw(omp_move, p, v, n, frames, fb, fp);
#endif
    }
    double share = wb_share_end(&sh, NULL);
    wb_report(ctx, SUITE, "frame_1m_back_to_back", "weft", 2, wb_median(tb, reps), "ms",
              WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "frame_1m_paced", "weft", 2, wb_median(tp, reps), "ms", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "frame_1m_paced_vs_back_to_back", "ratio", 1, wb_median(ratio1, reps),
              "x", WB_NO_TARGET, 0);
    wb_report_scaled(ctx, SUITE, "frame_1m_paced_vs_back_to_back", "ratio", 2,
                     wb_median(ratio, reps), "x", WB_AT_MOST, 1.05, share);
    wb_report_share(ctx, SUITE, "frame_1m_paced", 2, share, WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "frame_1m_paced_idle_burn", "weft", 2, wb_median(burn, reps), "core",
              WB_AT_MOST, 0.05);
    wb_report(ctx, SUITE, "frame_1m_paced_vs_back_to_back", "raw", 1, wb_median(ratio_raw, reps),
              "x", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "frame_8m_paced_vs_back_to_back", "raw", 1, wb_median(ratio_8m, reps),
              "x", WB_NO_TARGET, 0);
#ifdef WB_HAVE_OPENMP
    wb_report(ctx, SUITE, "frame_1m_paced_vs_back_to_back", "openmp", 2, wb_median(ratio_omp, reps),
              "x", WB_NO_TARGET, 0);
#endif
done:
    weft_world_destroy(w);
    weft_world_destroy(w1);
    free(tb);
    free(tp);
    free(ratio);
    free(burn);
    free(ratio1);
    free(ratio_raw);
    free(ratio_omp);
    free(ratio_8m);
    free(fb);
    free(fp);
    free(p);
    free(v);
    free(p8);
    free(v8);
}

/* ---- frame_mixed -------------------------------------------------------------- >>mixed */

/* Generic body: term 0 (written) is pulled toward the sum of the other terms' first floats,
 * `work` times per row; user = work. */
static void mixed_body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    uint32_t work = (uint32_t)(uintptr_t)ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            float acc = 0;
            for (uint32_t t = 1; t < it->term_count; t++) {
                acc += *(const float *)weft_iter_get(it, t, i);
            }
            float *x = weft_iter_get(it, 0, i);
            for (uint32_t k = 0; k < work; k++) {
                *x = *x * 0.999f + acc * 0.001f;
            }
        }
    }
}

typedef struct mixed_sys {
    const char *name;
    int terms[3];  /* component slots; terms[0] written, others read; -1 ends */
    bool parallel; /* chunked */
    uint32_t work; /* inner iterations per row */
} mixed_sys_t;

enum { M_POS, M_VEL, M_HP, M_MASS, M_COLOR, M_HEADING, M_AI, M_TIMER, M_TIMER2, M_COUNT };

static const mixed_sys_t mixed_systems[12] = {
    {"move", {M_POS, M_VEL, -1}, true, 0}, /* uses move() */
    {"gravity", {M_VEL, -1, -1}, true, 1},       {"regen", {M_HP, -1, -1}, true, 4},
    {"decay", {M_HP, M_MASS, -1}, true, 4},      {"massgrow", {M_MASS, -1, -1}, true, 2},
    {"colorize", {M_COLOR, M_POS, -1}, true, 4}, {"heading", {M_HEADING, M_VEL, -1}, false, 2},
    {"ai", {M_AI, M_POS, -1}, false, 8},         {"timer", {M_TIMER, M_AI, -1}, false, 2},
    {"timer2", {M_TIMER2, -1, -1}, false, 2},    {"friction", {M_VEL, M_MASS, -1}, true, 2},
    {"late", {M_COLOR, M_HP, M_VEL}, true, 2},
};

static weft_world_t *make_mixed(uint32_t workers, uint32_t n) {
    weft_component_t c[M_COUNT];
    weft_world_t *w = make_moving(workers, n, &c[M_POS], &c[M_VEL]);
    if (!w) {
        return NULL;
    }
    const char *names[] = {"", "", "Hp", "Mass", "Color", "Heading", "Ai", "Timer", "Timer2"};
    for (int k = M_HP; k < M_COUNT; k++) {
        c[k] = reg(w, names[k], sizeof(float));
    }
    /* Membership by index: 1/2 Hp, 1/4 Mass, 1/10 Color+Heading, 1/100 Ai+Timer, 1/1000 Timer2. */
    const uint32_t every[M_COUNT] = {1, 1, 2, 4, 10, 10, 100, 100, 1000};
    float one = 1.0f;
    for (uint32_t r = 0; r < n; r++) {
        weft_entity_t e = weft_component_entity_at(w, c[M_POS], r);
        uint32_t idx = weft_entity_index(e);
        for (int k = M_HP; k < M_COUNT; k++) {
            if (idx % every[k] == 0 && weft_component_set(w, e, c[k], &one) != WEFT_OK) {
                goto fail;
            }
        }
    }
    for (int s = 0; s < 12; s++) {
        const mixed_sys_t *m = &mixed_systems[s];
        weft_system_desc_t d = {.name = m->name,
                                .fn = s == 0 ? move : mixed_body,
                                .user = (void *)(uintptr_t)m->work,
                                .parallel = m->parallel,
                                .chunk_size = 16384};
        for (int t = 0; t < 3 && m->terms[t] >= 0; t++) {
            d.terms[t] =
                (weft_query_term_t){.component = c[m->terms[t]],
                                    .access = t == 0 ? WEFT_ACCESS_WRITE : WEFT_ACCESS_READ};
        }
        if (weft_system_register(w, &d, NULL) != WEFT_OK) {
            goto fail;
        }
    }
    return w;
fail:
    weft_world_destroy(w);
    return NULL;
}

static void case_frame_mixed(wb_ctx_t *ctx) {
    int reps = wb_reps(ctx), frames = wb_quick(ctx) ? 3 : 10;
    uint32_t n = 1000000;
    weft_world_t *w1 = make_mixed(1, n), *w2 = make_mixed(2, n);
    double *t1 = calloc((size_t)reps, sizeof *t1), *t2 = calloc((size_t)reps, sizeof *t2);
    double *sp = calloc((size_t)reps, sizeof *sp);
    if (!w1 || !w2 || !t1 || !t2 || !sp) {
        wb_note(ctx, SUITE, "frame_mixed: setup failed: %s", weft_last_error());
        goto done;
    }
    wb_describe(ctx, SUITE, "frame_mixed", "weft",
                "weft_world_progress: 12 systems of 1k..1M rows with mixed conflicts over 1M "
                "entities, mean of 10 frames");
    wb_describe(ctx, SUITE, "frame_mixed_speedup", "ratio",
                "median over reps of weft@1 / weft@2, timed back to back");
    time_frames(w1, 2);
    time_frames(w2, 2);
    wb_share_t sh;
    wb_share_begin(&sh, weft_world_jobs(w2));
    for (int r = 0; r < reps; r++) {
        t1[r] = time_frames(w1, frames) / 1e6;
        t2[r] = time_frames(w2, frames) / 1e6;
        sp[r] = t1[r] / t2[r];
    }
    double share = wb_share_end(&sh, NULL);
    wb_report(ctx, SUITE, "frame_mixed", "weft", 1, wb_median(t1, reps), "ms", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "frame_mixed", "weft", 2, wb_median(t2, reps), "ms", WB_NO_TARGET, 0);
    wb_report_scaled(ctx, SUITE, "frame_mixed_speedup", "ratio", 2, wb_median(sp, reps), "x",
                     WB_AT_LEAST, 1.8, share);
    wb_report_share(ctx, SUITE, "frame_mixed", 2, share, WB_NO_TARGET, 0);
done:
    weft_world_destroy(w1);
    weft_world_destroy(w2);
    free(t1);
    free(t2);
    free(sp);
}

/* ---- churn --------------------------------------------------------------------- >>churn */

/* A churn-heavy frame as an engine writes it: 100k entities, 12 systems in one phase, ~6% of
 * the entities changing structure every frame through command buffers (entities whose hp
 * runs out are destroyed and replaced by a fresh one with 9 components, a timer toggles a
 * tag, heat adds and burning removes a status component). Components are plain (no hooks),
 * so with 2 workers the apply is placed in parallel (weft/command.h). */

#define CHURN_N 100000u

typedef struct churn_comps {
    weft_component_t pos, vel, hp, timer, heat, burning, tag, rot, scale, color, mass, score, glow;
} churn_comps_t;

static uint32_t churn_hash(uint64_t x) {
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 29);
}

/* A fresh entity's components (also how the world is populated). */
static void churn_fill(uint64_t key, vec3_t *p, vec3_t *v, int32_t *hp, int32_t *timer) {
    uint32_t h = churn_hash(key);
    *p = (vec3_t){(float)(h & 1023), (float)((h >> 10) & 1023), 0};
    *v = (vec3_t){(float)((h >> 20) & 7) - 3.5f, 1.0f, 0.25f};
    *hp = 10 + (int32_t)(h % 91);           /* ~1/55 of the entities expire per frame */
    *timer = 10 + (int32_t)((h >> 8) % 91); /* ~1/55 toggle their tag per frame */
}

static void churn_move(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            vec3_t *p = weft_iter_get(it, 0, i);
            const vec3_t *v = weft_iter_get(it, 1, i);
            p->x += v->x * ctx->dt;
            p->y += v->y * ctx->dt;
            p->z += v->z * ctx->dt;
        }
    }
}

static void churn_damp(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            vec3_t *v = weft_iter_get(it, 0, i);
            v->x *= 0.999f;
            v->y = v->y * 0.998f + 0.001f;
        }
    }
}

/* hp runs down; at zero: destroy, and spawn a replacement with 9 components. */
static void churn_age(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const churn_comps_t *c = ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            int32_t *hp = weft_iter_get(it, 0, i);
            if (--*hp > 0) {
                continue;
            }
            weft_entity_t e = weft_iter_entity(it, i);
            (void)weft_cmd_destroy(ctx->cmd, e);
            weft_entity_t n = weft_cmd_create(ctx->cmd);
            vec3_t p, v, one = {1, 1, 1};
            int32_t h, t;
            float z = 0;
            churn_fill(e * 31u + 7u, &p, &v, &h, &t);
            (void)weft_cmd_set(ctx->cmd, n, c->pos, &p);
            (void)weft_cmd_set(ctx->cmd, n, c->vel, &v);
            (void)weft_cmd_set(ctx->cmd, n, c->hp, &h);
            (void)weft_cmd_set(ctx->cmd, n, c->timer, &t);
            (void)weft_cmd_set(ctx->cmd, n, c->heat, &z);
            (void)weft_cmd_set(ctx->cmd, n, c->rot, &z);
            (void)weft_cmd_set(ctx->cmd, n, c->scale, &one);
            (void)weft_cmd_set(ctx->cmd, n, c->mass, &z);
            (void)weft_cmd_set(ctx->cmd, n, c->score, &h);
        }
    }
}

/* A timer toggles the tag when it runs out, then restarts. */
static void churn_tick(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const churn_comps_t *c = ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            int32_t *t = weft_iter_get(it, 0, i);
            if (--*t > 0) {
                continue;
            }
            weft_entity_t e = weft_iter_entity(it, i);
            *t = 40 + (int32_t)(churn_hash(e) % 31);
            if (weft_component_has(ctx->world, e, c->tag)) {
                (void)weft_cmd_remove(ctx->cmd, e, c->tag);
            } else {
                (void)weft_cmd_add(ctx->cmd, e, c->tag);
            }
        }
    }
}

/* Heat builds up; past a threshold the entity starts burning (a status component). */
static void churn_heat(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const churn_comps_t *c = ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            float *h = weft_iter_get(it, 0, i);
            const vec3_t *p = weft_iter_get(it, 1, i);
            *h += 0.5f + (p->x > 512.0f ? 0.5f : 0.0f);
            if (*h >= 40.0f) {
                *h = 0;
                int32_t burn = 10;
                (void)weft_cmd_set(ctx->cmd, weft_iter_entity(it, i), c->burning, &burn);
            }
        }
    }
}

static void churn_burn(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const churn_comps_t *c = ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            int32_t *b = weft_iter_get(it, 0, i);
            if (--*b <= 0) {
                (void)weft_cmd_remove(ctx->cmd, weft_iter_entity(it, i), c->burning);
            }
        }
    }
}

/* Arithmetic-only systems over the other components: out = f(out, in). */
static void churn_arith(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            float *o = weft_iter_get(it, 0, i);
            float x = *o;
            for (int k = 0; k < 8; k++) {
                x = x * 0.999f + 0.01f;
            }
            *o = x;
        }
    }
}

static weft_world_t *make_churn(uint32_t workers, churn_comps_t *c) {
    weft_world_t *w = make_world(workers);
    if (!w) {
        return NULL;
    }
    c->pos = reg(w, "pos", sizeof(vec3_t));
    c->vel = reg(w, "vel", sizeof(vec3_t));
    c->hp = reg(w, "hp", sizeof(int32_t));
    c->timer = reg(w, "timer", sizeof(int32_t));
    c->heat = reg(w, "heat", sizeof(float));
    c->burning = reg(w, "burning", sizeof(int32_t));
    c->tag = reg(w, "tag", 0);
    c->rot = reg(w, "rot", sizeof(float));
    c->scale = reg(w, "scale", sizeof(vec3_t));
    c->color = reg(w, "color", sizeof(float));
    c->mass = reg(w, "mass", sizeof(float));
    c->score = reg(w, "score", sizeof(int32_t));
    c->glow = reg(w, "glow", sizeof(float));
    for (uint32_t i = 0; i < CHURN_N; i++) {
        weft_entity_t e;
        vec3_t p, v, one = {1, 1, 1};
        int32_t h, t;
        float z = 0;
        if (weft_entity_create(w, &e) != WEFT_OK) {
            weft_world_destroy(w);
            return NULL;
        }
        churn_fill(i, &p, &v, &h, &t);
        (void)weft_component_set(w, e, c->pos, &p);
        (void)weft_component_set(w, e, c->vel, &v);
        (void)weft_component_set(w, e, c->hp, &h);
        (void)weft_component_set(w, e, c->timer, &t);
        (void)weft_component_set(w, e, c->heat, &z);
        (void)weft_component_set(w, e, c->rot, &z);
        (void)weft_component_set(w, e, c->scale, &one);
        (void)weft_component_set(w, e, c->mass, &z);
        (void)weft_component_set(w, e, c->score, &h);
        if (i % 3 == 0) {
            (void)weft_component_set(w, e, c->color, &z);
            (void)weft_component_add(w, e, c->tag, NULL);
        }
    }
#define CHURN_T(comp, acc) \
    { .component = (comp), .access = WEFT_ACCESS_##acc }
    const weft_system_desc_t ds[12] = {
        {.name = "move",
         .fn = churn_move,
         .terms = {CHURN_T(c->pos, WRITE), CHURN_T(c->vel, READ)}},
        {.name = "damp", .fn = churn_damp, .terms = {CHURN_T(c->vel, WRITE)}},
        {.name = "age", .fn = churn_age, .terms = {CHURN_T(c->hp, WRITE)}},
        {.name = "tick", .fn = churn_tick, .terms = {CHURN_T(c->timer, WRITE)}, .reads = {c->tag}},
        {.name = "heat",
         .fn = churn_heat,
         .terms = {CHURN_T(c->heat, WRITE), CHURN_T(c->pos, READ)}},
        {.name = "burn", .fn = churn_burn, .terms = {CHURN_T(c->burning, WRITE)}},
        {.name = "spin", .fn = churn_arith, .terms = {CHURN_T(c->rot, WRITE)}},
        {.name = "grow",
         .fn = churn_arith,
         .terms = {CHURN_T(c->mass, WRITE), CHURN_T(c->rot, READ)}},
        {.name = "color", .fn = churn_arith, .terms = {CHURN_T(c->color, WRITE)}},
        {.name = "glow",
         .fn = churn_arith,
         .terms = {CHURN_T(c->glow, WRITE), CHURN_T(c->tag, READ)}},
        {.name = "score", .fn = churn_arith, .terms = {CHURN_T(c->score, WRITE)}},
        {.name = "fade",
         .fn = churn_arith,
         .terms = {CHURN_T(c->heat, WRITE), CHURN_T(c->tag, READ)}},
    };
#undef CHURN_T
    for (int i = 0; i < 12; i++) {
        weft_system_desc_t d = ds[i];
        d.user = c;
        d.parallel = true;
        if (weft_system_register(w, &d, NULL) != WEFT_OK) {
            weft_world_destroy(w);
            return NULL;
        }
    }
    return w;
}

/* Frames with the trace on; returns the mean apply time (ns) of the phase per frame, or -1. */
static double churn_apply_ns(weft_world_t *w, int frames, weft_trace_event_t *ev, uint32_t cap) {
    if (weft_trace_enable(w, &(weft_trace_desc_t){.capacity = cap}) != WEFT_OK) {
        return -1.0;
    }
    double sum = 0;
    for (int f = 0; f < frames; f++) {
        if (weft_world_progress(w, 0.016f) != WEFT_OK) {
            sum = -1.0 * frames;
            break;
        }
        uint32_t n = weft_trace_events(w, ev, cap);
        for (uint32_t k = 0; k < n && k < cap; k++) {
            if (ev[k].system == 0 && ev[k].kind == WEFT_TRACE_JOB) { /* the whole apply */
                sum += (double)(ev[k].end_ns - ev[k].begin_ns);
            }
        }
    }
    weft_trace_disable(w);
    return sum / frames;
}

static void case_churn(wb_ctx_t *ctx) {
    int reps = wb_reps(ctx), frames = wb_quick(ctx) ? 10 : 40;
    churn_comps_t c1, c2;
    weft_world_t *w1 = make_churn(1, &c1), *w2 = make_churn(2, &c2);
    double *t1 = calloc((size_t)reps, sizeof *t1), *t2 = calloc((size_t)reps, sizeof *t2);
    double *a1 = calloc((size_t)reps, sizeof *a1), *a2 = calloc((size_t)reps, sizeof *a2);
    double *f1 = calloc((size_t)reps, sizeof *f1);
    uint32_t cap = 4096;
    weft_trace_event_t *ev = calloc(cap, sizeof *ev);
    wb_sim_samples_t samples = {0};
    if (!w1 || !w2 || !t1 || !t2 || !a1 || !a2 || !f1 || !ev) {
        wb_note(ctx, SUITE, "churn: setup failed: %s", weft_last_error());
        goto done;
    }
    wb_describe(ctx, SUITE, "churn", "weft",
                "weft_world_progress: 100k entities, 12 parallel systems in one phase, ~6% of "
                "the entities changing structure per frame through command buffers (destroy + "
                "create with 9 components, tag add/remove, status set/remove); mean frame time");
    wb_describe(ctx, SUITE, "churn_speedup", "ratio",
                "median over reps of weft@1 / weft@2, the two worlds timed back to back");
    wb_describe(ctx, SUITE, "churn_apply", "weft",
                "the phase's command apply alone (stage + apply, the trace's apply event), mean "
                "per frame over frames run with the trace on");
    wb_describe(ctx, SUITE, "churn_apply_speedup", "ratio",
                "median over reps of apply@1 (serial) / apply@2 (placed or serial, as the "
                "measured rule in weft/command.h picks), timed back to back");
    wb_describe(ctx, SUITE, "churn_apply_share_of_frame", "ratio",
                "median over reps of apply@1 / frame@1 (frames with the trace on)");
    /* a few frames of each world traced for the simulator right after each of its blocks */
    const wb_sim_side_t sides[2] = {{w1, wb_sim_progress, w1}, {w2, wb_sim_progress, w2}};
    const uint32_t traced = 8; /* a 5 ms frame's noise needs a few, as the 40-frame block has */
    if (!wb_sim_samples_init(&samples, (uint32_t)reps)) {
        wb_note(ctx, SUITE, "churn: setup failed: out of memory");
        goto done;
    }
    double share =
        time_paired_sampled(w1, w2, 20, frames, reps, 1e6, t1, t2, &samples, sides, traced);
    /* The apply's share: its split dry run is the only parallel-for work of the churn world
     * (its phase has edges, so its systems run as ready-list items; the replay lanes are
     * jobs, as are the systems' drain jobs, so they cannot be told apart here). */
    wb_share_t sha;
    wb_share_begin_ranges(&sha, weft_world_jobs(w2));
    for (int r = 0; r < reps; r++) {
        double t0 = wb_now_ns();
        a1[r] = churn_apply_ns(w1, frames, ev, cap) / 1e6;
        f1[r] = (wb_now_ns() - t0) / frames / 1e6;
        a2[r] = churn_apply_ns(w2, frames, ev, cap) / 1e6;
    }
    double share_apply = wb_share_end(&sha, NULL);
    wb_report(ctx, SUITE, "churn", "weft", 1, wb_median(t1, reps), "ms", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "churn", "weft", 2, wb_median(t2, reps), "ms", WB_NO_TARGET, 0);
    wb_report_scaled(ctx, SUITE, "churn_speedup", "ratio", 2, wb_median_ratio(t1, t2, reps), "x",
                     WB_AT_LEAST, 1.8, share);
    wb_report_share(ctx, SUITE, "churn", 2, share, WB_AT_LEAST, 0.4);
    wb_report(ctx, SUITE, "churn_apply_share_of_frame", "ratio", 1, wb_median_ratio(a1, f1, reps),
              "x", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "churn_apply", "weft", 1, wb_median(a1, reps), "ms", WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "churn_apply", "weft", 2, wb_median(a2, reps), "ms", WB_NO_TARGET, 0);
    wb_report_scaled(ctx, SUITE, "churn_apply_speedup", "ratio", 2, wb_median_ratio(a1, a2, reps),
                     "x", WB_AT_LEAST, 1.6, share_apply);
    wb_report_share(ctx, SUITE, "churn_apply", 2, share_apply, WB_NO_TARGET, 0);
    wb_report(ctx, SUITE, "churn_entities", "weft", 2, (double)weft_entity_count(w2), "count",
              WB_NO_TARGET, 0);
    (void)wb_sim_check(ctx, SUITE, "churn", sides, &samples, NULL);
done:
    wb_sim_samples_free(&samples);
    weft_world_destroy(w1);
    weft_world_destroy(w2);
    free(t1);
    free(t2);
    free(a1);
    free(a2);
    free(f1);
    free(ev);
}

/* ---- many_systems ------------------------------------------------------------ >>many */

/* Many small systems, the shape of a known executor bottleneck report: 250 independent chains
 * of 3 systems, chain i over its own marker component m<i> (each of its systems writes it, so
 * the three run in registration order and chains share nothing), `rows` entities per marker,
 * and `work_us` of arithmetic per system spread over its rows. 750 systems in one phase. */

#define MANY_CHAINS 250
#define MANY_PER_CHAIN 3

typedef struct many_cfg {
    uint32_t rows;      /* entities per marker component */
    uint32_t work_us;   /* arithmetic per system */
    uint64_t row_steps; /* multiply-add steps per row (work_us spread over rows) */
} many_cfg_t;

#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static float
many_spin(float v, uint64_t steps) {
    for (uint64_t k = 0; k < steps; k++) {
        v = v * 0.9999f + 0.5f;
    }
    return v;
}

/* One dependent chain through all the system's rows, so the work takes the same time
 * whatever the row count (independent short chains per row would overlap in the CPU). */
static void many_body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const many_cfg_t *cfg = ctx->user;
    float v = 0.0f;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            float *x = weft_iter_get(it, 0, i);
            v = many_spin(v + *x * 1e-6f, cfg->row_steps);
            *x = v;
        }
    }
}

/* Multiply-add steps per microsecond on this machine: the fastest of 9 timings, since
 * interference on a shared machine only ever slows a timing down. */
static double many_steps_per_us(void) {
    double best = 0;
    float x = 1.0f;
    for (int k = 0; k < 9; k++) {
        double t0 = wb_now_ns();
        x = many_spin(x, 1000000);
        double rate = 1000000.0 / ((wb_now_ns() - t0) / 1000.0);
        best = rate > best ? rate : best;
    }
    wb_sink(&x);
    return best;
}

static weft_world_t *make_many(uint32_t workers, many_cfg_t *cfg) {
    weft_world_t *w = make_world(workers);
    if (!w) {
        return NULL;
    }
    for (int i = 0; i < MANY_CHAINS; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%03d", i);
        weft_component_t c = reg(w, name, sizeof(float));
        if (c.id == 0) {
            goto fail;
        }
        for (uint32_t k = 0; k < cfg->rows; k++) {
            weft_entity_t e;
            float v = (float)k;
            if (weft_entity_create(w, &e) != WEFT_OK ||
                weft_component_set(w, e, c, &v) != WEFT_OK) {
                goto fail;
            }
        }
        for (int j = 0; j < MANY_PER_CHAIN; j++) {
            snprintf(name, sizeof name, "s%03d_%d", i, j);
            weft_system_desc_t d = {.name = name,
                                    .fn = many_body,
                                    .user = cfg,
                                    .terms = {{.component = c, .access = WEFT_ACCESS_WRITE}}};
            if (weft_system_register(w, &d, NULL) != WEFT_OK) {
                goto fail;
            }
        }
    }
    return w;
fail:
    weft_world_destroy(w);
    return NULL;
}

/* One variant at every measured worker count (wb_worker_counts): t[k * reps + r] is rep r's
 * mean frame (us) at counts[k], the counts timed back to back within each rep; share[k] as
 * time_paired's. Returns false on failure. */
static bool many_variant(wb_ctx_t *ctx, many_cfg_t *cfg, const uint32_t *counts, uint32_t nc,
                         int reps, double *t, double *share) {
    int frames = wb_quick(ctx) ? 5 : 20;
    weft_world_t *w[WB_MAX_COUNTS] = {0};
    bool ok = true;
    for (uint32_t k = 0; ok && k < nc; k++) {
        w[k] = make_many(counts[k], cfg);
        ok = w[k] != NULL;
    }
    if (ok) {
        wb_share_t sh[WB_MAX_COUNTS];
        for (uint32_t k = 0; k < nc; k++) {
            time_frames(w[k], 10); /* warm up: schedule built, costs measured, buffers sized */
            wb_share_begin(&sh[k], weft_world_jobs(w[k]));
        }
        for (int r = 0; r < reps; r++) {
            for (uint32_t k = 0; k < nc; k++) {
                t[(size_t)k * (size_t)reps + (size_t)r] = time_frames(w[k], frames) / 1000.0;
            }
        }
        for (uint32_t k = 0; k < nc; k++) {
            share[k] = wb_share_end(&sh[k], NULL);
        }
    } else {
        wb_note(ctx, SUITE, "many_systems: setup failed: %s", weft_last_error());
    }
    for (uint32_t k = 0; k < nc; k++) {
        weft_world_destroy(w[k]);
    }
    return ok;
}

static void case_many_systems(wb_ctx_t *ctx) {
    int reps = wb_reps(ctx);
    uint32_t counts[WB_MAX_COUNTS];
    const uint32_t nc = wb_worker_counts(ctx, counts);
    double *t = calloc((size_t)nc * (size_t)reps, sizeof *t), *d = calloc((size_t)reps, sizeof *d);
    if (!t || !d) {
        free(t);
        free(d);
        return;
    }
    double per_us = many_steps_per_us();
    wb_report(ctx, SUITE, "many_systems_steps_per_us", "weft", 1, per_us, "count", WB_NO_TARGET, 0);
    wb_describe(ctx, SUITE, "many_systems", "weft",
                "weft_world_progress: 250 independent chains of 3 systems (750 systems, one "
                "phase), chain i writing its own component, R rows per component, W us of "
                "multiply-adds per system (one dependent chain through its rows; W at the "
                "fastest rate measured, many_systems_steps_per_us, so a loaded machine takes "
                "longer: the 1-worker frame shows it); mean frame time at every worker count "
                "(--workers), the counts timed back to back in each rep");
    wb_describe(ctx, SUITE, "many_systems", "ratio",
                "speedup: median over reps of weft@1 / weft@N, timed back to back; 0us_ratio: "
                "median of weft@2 / weft@1; the unsuffixed 5us/1us speedup is the smaller of "
                "the two row counts at 2 workers, the 0us ratio the larger");
    wb_describe(ctx, SUITE, "many_systems_dispatch_ns", "weft",
                "per-system cost of the 2-worker frame beyond the 1-worker frame's, with 1 us "
                "of work: (2 * t2 - t1) / 750 (both workers' time, less the same work inline)");
    static const uint32_t rows[2] = {4, 64}, work[3] = {0, 1, 5};
    uint32_t two = UINT32_MAX; /* index of the 2-worker count: the targets are stated there */
    for (uint32_t k = 0; k < nc; k++) {
        two = counts[k] == 2 ? k : two;
    }
    double sp5 = 1e9, sp1 = 1e9, r0 = 0, dispatch = 0, sh5 = 1, sh1 = 1, sh_d = 0;
    for (int wi = 0; wi < 3; wi++) {
        for (int ri = 0; ri < 2; ri++) {
            many_cfg_t cfg = {rows[ri], work[wi], (uint64_t)(per_us * work[wi] / rows[ri] + 0.5)};
            double share[WB_MAX_COUNTS] = {0};
            if (!many_variant(ctx, &cfg, counts, nc, reps, t, share)) {
                continue;
            }
            char name[64], spname[64];
            snprintf(name, sizeof name, "many_systems_%urows_%uus", rows[ri], work[wi]);
            snprintf(spname, sizeof spname, "many_systems_%urows_%uus_speedup", rows[ri], work[wi]);
            const double *t1 = t; /* counts[0] is always 1 */
            for (uint32_t k = 0; k < nc; k++) {
                double *tk = t + (size_t)k * (size_t)reps;
                /* every ratio before the median: wb_median sorts its input in place */
                double sp = wb_median_ratio(t1, tk, reps), r = wb_median_ratio(tk, t1, reps);
                for (int q = 0; k == two && q < reps; q++) {
                    d[q] = (2.0 * tk[q] - t1[q]) * 1000.0 / (MANY_CHAINS * MANY_PER_CHAIN);
                }
                wb_report(ctx, SUITE, name, "weft", counts[k], wb_median(tk, reps), "us",
                          WB_NO_TARGET, 0);
                if (counts[k] < 2) {
                    continue;
                }
                wb_report_share(ctx, SUITE, name, counts[k], share[k], WB_NO_TARGET, 0);
                wb_report_scaled(ctx, SUITE, spname, "ratio", counts[k], sp, "x", WB_NO_TARGET, 0,
                                 share[k]);
                if (k != two) {
                    continue;
                }
                if (work[wi] == 5 && sp < sp5) {
                    sp5 = sp;
                    sh5 = share[k] < sh5 ? share[k] : sh5;
                } else if (work[wi] == 1) {
                    sp1 = sp < sp1 ? sp : sp1;
                    sh1 = share[k] < sh1 ? share[k] : sh1;
                    double dm = wb_median(d, reps);
                    if (dm > dispatch) {
                        dispatch = dm;
                        sh_d = share[k];
                    }
                } else if (work[wi] == 0) {
                    r0 = r > r0 ? r : r0;
                }
            }
        }
    }
    if (two != UINT32_MAX) {
        wb_report_scaled(ctx, SUITE, "many_systems_5us_speedup", "ratio", 2, sp5, "x", WB_AT_LEAST,
                         1.9, sh5);
        wb_report_scaled(ctx, SUITE, "many_systems_1us_speedup", "ratio", 2, sp1, "x", WB_AT_LEAST,
                         1.8, sh1);
        wb_report(ctx, SUITE, "many_systems_0us_ratio", "ratio", 2, r0, "x", WB_AT_MOST, 1.1);
        wb_report_scaled(ctx, SUITE, "many_systems_dispatch_ns", "weft", 2, dispatch, "ns",
                         WB_AT_MOST, 100, sh_d);
    }
    free(t);
    free(d);
}

/* ---- many_systems_build ------------------------------------------------------- >>build */

/* Registration and schedule build at scale: n systems over 250 marker components (4 rows
 * each), system i writing component i mod 250, so each component has n / 250 writers that
 * chain in registration order (48 at 12,000). Registration is timed over all n calls, the
 * build as the first weft_schedule_order after them (it builds the graph and the tables a
 * frame reads; the frame itself is not in it). */

#define BUILD_COMPONENTS 250

/* The shape of a build world: ncomp marker types (4 rows each), n systems, system i writing
 * type i mod ncomp and, when `lookups`, also declaring a read of type (7i + 1) mod ncomp
 * (a weft_component_get lookup: it adds conflicts, not rows). */
typedef struct build_shape {
    uint32_t ncomp;
    uint32_t n;
    bool lookups;
} build_shape_t;

typedef struct build_times {
    double types_ns;   /* registering the types, per type */
    double reg_ns;     /* registering the systems, per system (wall) */
    double reg_cpu_ns; /* the same in process CPU time */
    double build_ms;   /* the first weft_schedule_order */
} build_times_t;

static weft_world_t *make_build_world(uint32_t workers, build_shape_t sh, build_times_t *bt) {
    weft_world_t *w = make_world(workers);
    weft_component_t *comp = calloc(sh.ncomp, sizeof *comp);
    if (!w || !comp) {
        weft_world_destroy(w);
        free(comp);
        return NULL;
    }
    double t0 = wb_now_ns();
    for (uint32_t i = 0; i < sh.ncomp; i++) {
        char name[16];
        snprintf(name, sizeof name, "b%03u", i);
        comp[i] = reg(w, name, sizeof(float));
    }
    bt->types_ns = (wb_now_ns() - t0) / sh.ncomp;
    for (uint32_t i = 0; i < sh.ncomp; i++) {
        for (int k = 0; k < 4 && comp[i].id; k++) {
            weft_entity_t e;
            float v = (float)k;
            if (weft_entity_create(w, &e) != WEFT_OK ||
                weft_component_set(w, e, comp[i], &v) != WEFT_OK) {
                comp[i].id = 0;
            }
        }
        if (comp[i].id == 0) {
            weft_world_destroy(w);
            free(comp);
            return NULL;
        }
    }
    double c0 = wb_cpu_ns();
    t0 = wb_now_ns();
    for (uint32_t i = 0; i < sh.n; i++) {
        char name[16];
        snprintf(name, sizeof name, "s%05u", i);
        uint32_t wi = i % sh.ncomp, ri = (uint32_t)((7ull * i + 1u) % sh.ncomp);
        weft_system_desc_t d = {.name = name,
                                .fn = bump,
                                .terms = {{.component = comp[wi], .access = WEFT_ACCESS_WRITE}}};
        if (sh.lookups && ri != wi) {
            d.reads[0] = comp[ri];
        }
        if (weft_system_register(w, &d, NULL) != WEFT_OK) {
            weft_world_destroy(w);
            free(comp);
            return NULL;
        }
    }
    free(comp);
    double t1 = wb_now_ns(), c1 = wb_cpu_ns();
    uint32_t count = 0;
    weft_result_t r = weft_schedule_order(w, NULL, 0, &count);
    double t2 = wb_now_ns();
    if (r != WEFT_OK || count != sh.n) {
        weft_world_destroy(w);
        return NULL;
    }
    bt->reg_ns = (t1 - t0) / sh.n;
    bt->reg_cpu_ns = (c1 - c0) / sh.n;
    bt->build_ms = (t2 - t1) / 1e6;
    return w;
}

/* Paired 1- and 2-worker frames of two worlds of one shape, reported as `name` with its
 * share. */
static void report_build_frames(wb_ctx_t *ctx, const char *name, build_shape_t sh) {
    int freps = wb_reps(ctx), frames = wb_quick(ctx) ? 5 : 20;
    double *t1 = calloc((size_t)freps, sizeof *t1), *t2 = calloc((size_t)freps, sizeof *t2);
    build_times_t ig;
    weft_world_t *w1 = t1 && t2 ? make_build_world(1, sh, &ig) : NULL;
    weft_world_t *w2 = w1 ? make_build_world(2, sh, &ig) : NULL;
    if (w1 && w2) {
        double share = time_paired(w1, w2, 10, frames, freps, 1000.0, t1, t2);
        wb_report(ctx, SUITE, name, "weft", 1, wb_median(t1, freps), "us", WB_NO_TARGET, 0);
        wb_report(ctx, SUITE, name, "weft", 2, wb_median(t2, freps), "us", WB_NO_TARGET, 0);
        wb_report_share(ctx, SUITE, name, 2, share, WB_NO_TARGET, 0);
    } else {
        wb_note(ctx, SUITE, "%s: setup failed: %s", name, weft_last_error());
    }
    weft_world_destroy(w1);
    weft_world_destroy(w2);
    free(t1);
    free(t2);
}

/* Median registration and build times of `reps` fresh worlds of one shape; false when none
 * could be built. */
static bool measure_build(wb_ctx_t *ctx, build_shape_t sh, build_times_t *med) {
    int reps = wb_quick(ctx) ? 1 : 3;
    double types[8], reg[8], cpu[8], build[8];
    int ok = 0;
    for (int r = 0; r < reps && r < 8; r++) {
        build_times_t bt;
        weft_world_t *w = make_build_world(1, sh, &bt);
        if (w) {
            types[ok] = bt.types_ns;
            reg[ok] = bt.reg_ns;
            cpu[ok] = bt.reg_cpu_ns;
            build[ok++] = bt.build_ms;
        }
        weft_world_destroy(w);
    }
    if (ok) {
        *med = (build_times_t){wb_median(types, ok), wb_median(reg, ok), wb_median(cpu, ok),
                               wb_median(build, ok)};
    }
    return ok != 0;
}

static void case_many_systems_build(wb_ctx_t *ctx) {
    wb_describe(ctx, SUITE, "register_ns_per_system", "weft",
                "weft_system_register: N systems over 250 marker components, system i writing "
                "component i mod 250 (N / 250 writers per component); total time / N, median "
                "over reps; unsuffixed: N = 12,000");
    wb_describe(ctx, SUITE, "register_cpu_ns_per_system", "weft",
                "the same registrations in process CPU time (one worker: no other thread of "
                "the process runs), so a loaded machine's waiting is left out");
    wb_describe(ctx, SUITE, "schedule_build_ms", "weft",
                "the first weft_schedule_order after registering them (graph and frame tables "
                "built); median over reps; unsuffixed: N = 12,000");
    wb_describe(ctx, SUITE, "many_systems_build_frame_6000", "weft",
                "weft_world_progress of the 6,000-system world once built (one phase, 250 "
                "chains of 24, 4 rows each), 1 and 2 workers timed back to back; mean frame");
    static const uint32_t sizes[4] = {750, 3000, 6000, 12000};
    for (int si = 0; si < 4; si++) {
        build_times_t bt;
        if (!measure_build(ctx, (build_shape_t){BUILD_COMPONENTS, sizes[si], false}, &bt)) {
            wb_note(ctx, SUITE, "many_systems_build %u: setup failed: %s", sizes[si],
                    weft_last_error());
            continue;
        }
        char name[64];
        bool last = si == 3;
        snprintf(name, sizeof name, "register_ns_per_system_%u", sizes[si]);
        wb_report(ctx, SUITE, last ? "register_ns_per_system" : name, "weft", 1, bt.reg_ns, "ns",
                  last ? WB_AT_MOST : WB_NO_TARGET, 5000);
        snprintf(name, sizeof name, "register_cpu_ns_per_system_%u", sizes[si]);
        wb_report(ctx, SUITE, name, "weft", 1, bt.reg_cpu_ns, "ns", WB_NO_TARGET, 0);
        snprintf(name, sizeof name, "schedule_build_ms_%u", sizes[si]);
        wb_report(ctx, SUITE, last ? "schedule_build_ms" : name, "weft", 1, bt.build_ms, "ms",
                  last ? WB_AT_MOST : WB_NO_TARGET, 20);
    }
    report_build_frames(ctx, "many_systems_build_frame_6000",
                        (build_shape_t){BUILD_COMPONENTS, 6000, false});
}

/* ---- many_types ------------------------------------------------------------- >>many_types */

/* A world with many component types: 4,000 marker types (ids far past 255), 3,000 and 12,000
 * systems, system i writing type i mod 4,000 and looking up type (7i + 1) mod 4,000, so each
 * type has N / 4,000 writers and as many readers. Per-system registration and build times
 * at both sizes show whether the cost per system grows with N (it would, were conflicts
 * found by testing pairs); the 12,000-system frame runs at 1 and 2 workers. */
#define MANY_TYPES 4000u

static void case_many_types(wb_ctx_t *ctx) {
    wb_describe(ctx, SUITE, "many_types_type_register_ns", "weft",
                "weft_component_register of 4,000 marker types into a fresh world, per type");
    wb_describe(ctx, SUITE, "many_types_register_ns_per_system", "weft",
                "weft_system_register: N systems over 4,000 types, system i writing type "
                "i mod 4,000 and reading (lookup) type (7i + 1) mod 4,000; total / N, median "
                "over reps; unsuffixed: N = 12,000");
    wb_describe(ctx, SUITE, "many_types_build_ns_per_system", "weft",
                "the first weft_schedule_order after the registrations (graph and frame "
                "tables), per system; unsuffixed: N = 12,000");
    wb_describe(ctx, SUITE, "many_types_frame_12000", "weft",
                "weft_world_progress of the 12,000-system, 4,000-type world once built (4 "
                "rows per type), 1 and 2 workers timed back to back; mean frame");
    static const uint32_t sizes[2] = {3000, 12000};
    for (int si = 0; si < 2; si++) {
        build_times_t bt;
        if (!measure_build(ctx, (build_shape_t){MANY_TYPES, sizes[si], true}, &bt)) {
            wb_note(ctx, SUITE, "many_types %u: setup failed: %s", sizes[si], weft_last_error());
            continue;
        }
        char name[64];
        bool last = si == 1;
        if (last) {
            wb_report(ctx, SUITE, "many_types_type_register_ns", "weft", 1, bt.types_ns, "ns",
                      WB_NO_TARGET, 0);
        }
        snprintf(name, sizeof name, "many_types_register_ns_per_system%s", last ? "" : "_3000");
        wb_report(ctx, SUITE, name, "weft", 1, bt.reg_ns, "ns", WB_NO_TARGET, 0);
        snprintf(name, sizeof name, "many_types_build_ns_per_system%s", last ? "" : "_3000");
        wb_report(ctx, SUITE, name, "weft", 1, bt.build_ms * 1e6 / sizes[si], "ns", WB_NO_TARGET,
                  0);
    }
    report_build_frames(ctx, "many_types_frame_12000", (build_shape_t){MANY_TYPES, 12000, true});
}

void wb_suite_sched(wb_ctx_t *ctx);

/* WB_SCHED_CASE=<name> runs only the case of that name (a whole suite run is long). */
static bool want(const char *name) {
    const char *only = getenv("WB_SCHED_CASE");
    return !only || !only[0] || strcmp(name, only) == 0;
}

void wb_suite_sched(wb_ctx_t *ctx) {
    static const struct {
        const char *name;
        void (*fn)(wb_ctx_t *ctx);
    } cases[] = {
        {"frame_64", case_frame_64},         {"frame_64x256", case_frame_64x256},
        {"frame_1m", case_frame_1m},         {"frame_1m_paced", case_frame_1m_paced},
        {"frame_mixed", case_frame_mixed},   {"churn", case_churn},
        {"many_systems", case_many_systems}, {"many_systems_build", case_many_systems_build},
        {"many_types", case_many_types}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (want(cases[i].name)) {
            cases[i].fn(ctx);
        }
    }
}
