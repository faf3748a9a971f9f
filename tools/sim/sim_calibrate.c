/* tools/sim/sim_calibrate.c: measuring the simulator's machine costs with weft's own job
 * system (sim_record.h, wt_sim_calibrate). Idling before a sample (to let a worker fall
 * asleep) is what the wake cost is measured from, not a workaround. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep under -std=c11 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_record.h"

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void sleep_ns(double ns) {
    struct timespec ts = {(time_t)(ns / 1e9), (long)(ns - (double)(time_t)(ns / 1e9) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, uint32_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n ? v[n / 2] : 0;
}

/* What handing a ready set to one more worker costs it before it runs anything. */
static void set_handout(wt_sim_costs_t *c) {
    c->handout_ns = c->job_ns + c->steal_ns + c->notice_ns;
}

static void empty_job(void *arg, const weft_job_ctx_t *ctx) { (void)arg, (void)ctx; }

static void empty_range(void *arg, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)arg, (void)begin, (void)end, (void)worker;
}

/* The start time a job writes; read by the submitting thread, which spins on the counter
 * without running jobs (weft_counter_is_done), so the other worker must take it. */
typedef struct stamp {
    double started;
} stamp_t;

static void stamp_job(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    ((stamp_t *)arg)->started = now_ns();
}

/* Submit one stamping job and return how long the other worker took to start it. */
static double handover(weft_jobs_t *jobs) {
    stamp_t s = {0};
    weft_counter_t done;
    weft_counter_init(&done);
    weft_job_desc_t d = {.fn = stamp_job, .arg = &s};
    double t0 = now_ns();
    if (weft_job_submit(jobs, &d, 1, &done) != WEFT_OK) {
        return 0;
    }
    while (!weft_counter_is_done(&done)) {
    }
    return s.started - t0; /* the counter's release orders the stamp before this read */
}

int wt_sim_calibrate(wt_sim_costs_t *out, uint32_t reps) {
    reps = reps ? reps : 201;
    memset(out, 0, sizeof *out);
    weft_jobs_desc_t want = {.worker_count = 1};
    weft_jobs_t *one = NULL, *two = NULL;
    if (weft_jobs_create(&want, &one) != WEFT_OK) {
        return -1;
    }
    want.worker_count = 2;
    if (weft_jobs_create(&want, &two) != WEFT_OK) {
        weft_jobs_destroy(one);
        return -1;
    }
    double *v = malloc((size_t)reps * sizeof *v);
    enum { BATCH = 256 };
    weft_job_desc_t batch[BATCH];
    for (uint32_t i = 0; i < BATCH; i++) {
        batch[i] = (weft_job_desc_t){.fn = empty_job};
    }
    int rc = v ? 0 : -1;
    for (uint32_t r = 0; rc == 0 && r < reps; r++) { /* own jobs, one thread */
        weft_counter_t c;
        weft_counter_init(&c);
        double t0 = now_ns();
        rc = weft_job_submit(one, batch, BATCH, &c) == WEFT_OK ? 0 : -1;
        rc = rc == 0 && weft_counter_wait(one, &c) == WEFT_OK ? 0 : -1;
        v[r] = (now_ns() - t0) / BATCH;
    }
    out->job_ns = rc == 0 ? median(v, reps) : 0;
    for (uint32_t r = 0; rc == 0 && r < reps; r++) { /* every job stolen by the other worker */
        weft_counter_t c;
        weft_counter_init(&c);
        double t0 = now_ns();
        rc = weft_job_submit(two, batch, BATCH, &c) == WEFT_OK ? 0 : -1;
        while (rc == 0 && !weft_counter_is_done(&c)) {
        }
        v[r] = (now_ns() - t0) / BATCH;
    }
    double stolen = rc == 0 ? median(v, reps) : 0;
    out->steal_ns = stolen > out->job_ns ? stolen - out->job_ns : 0;
    for (uint32_t r = 0; rc == 0 && r < reps; r++) { /* the other worker spinning */
        v[r] = handover(two);
    }
    out->notice_ns = rc == 0 ? median(v, reps) : 0;
    weft_jobs_desc_t resolved = weft_jobs_desc_resolved(&want);
    out->spin_ns = (double)resolved.spin_us * 1000.0;
    uint32_t sleepy = reps < 41 ? reps : 41; /* each sample idles two spin windows first */
    for (uint32_t r = 0; rc == 0 && r < sleepy; r++) {
        sleep_ns(2.0 * out->spin_ns + 200000.0);
        v[r] = handover(two);
    }
    out->wake_ns = rc == 0 ? median(v, sleepy) : 0;
    for (uint32_t r = 0; rc == 0 && r < reps; r++) { /* an empty loop claimed by both */
        double t0 = now_ns();
        rc = weft_parallel_for(two, 4096, 1, empty_range, NULL) == WEFT_OK ? 0 : -1;
        v[r] = (now_ns() - t0) * 2.0 / 4096.0; /* per claim, per participant */
    }
    out->claim_ns = rc == 0 ? median(v, reps) : 0;
    set_handout(out);
    free(v);
    weft_jobs_destroy(two);
    weft_jobs_destroy(one);
    return rc;
}

int wt_sim_calibrate_runs(wt_sim_costs_t *out, uint32_t reps, uint32_t runs) {
    wt_sim_costs_t c[WT_SIM_CALIBRATE_MAX_RUNS];
    if (runs == 0 || runs > WT_SIM_CALIBRATE_MAX_RUNS) {
        return -1;
    }
    for (uint32_t i = 0; i < runs; i++) {
        if (wt_sim_calibrate(&c[i], reps) != 0) {
            return -1;
        }
    }
    /* the measured costs, by their place in the struct */
    static const size_t measured[] = {
        offsetof(wt_sim_costs_t, job_ns),    offsetof(wt_sim_costs_t, steal_ns),
        offsetof(wt_sim_costs_t, notice_ns), offsetof(wt_sim_costs_t, wake_ns),
        offsetof(wt_sim_costs_t, spin_ns),   offsetof(wt_sim_costs_t, claim_ns)};
    *out = c[0];
    for (size_t f = 0; f < sizeof measured / sizeof measured[0]; f++) {
        double v[WT_SIM_CALIBRATE_MAX_RUNS];
        for (uint32_t i = 0; i < runs; i++) {
            v[i] = *(const double *)((const char *)&c[i] + measured[f]);
        }
        *(double *)((char *)out + measured[f]) = median(v, runs);
    }
    set_handout(out);
    return 0;
}
