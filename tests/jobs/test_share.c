/* test_share.c: worker participation — weft_jobs_worker_stats and the benchmarks' share
 * figure (bench/share.c), which must tell a real multi-worker run from one whose work all
 * ran on one thread. */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <time.h>

#include "share.h"
#include "weft/jobs.h"

static weft_jobs_t *jobs;

static void setup(void) {
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 2}, &jobs), WEFT_OK);
}
static void teardown(void) { weft_jobs_destroy(jobs); }

TestSuite(worker_share, .init = setup, .fini = teardown, .timeout = 60);

/* A body that returns only once `want` bodies have entered, so the loop cannot finish unless
 * that many workers run at once. Bounded: after 10 s it gives up and records a timeout (the
 * assertion then fails instead of the test hanging). */
typedef struct rendezvous {
    atomic_uint entered;
    atomic_uint timed_out;
    unsigned want;
} rendezvous_t;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void meet(rendezvous_t *r) {
    atomic_fetch_add(&r->entered, 1u);
    double t0 = now_s();
    while (atomic_load(&r->entered) < r->want) {
        if (now_s() - t0 > 10.0) {
            atomic_store(&r->timed_out, 1u);
            return;
        }
    }
}

static void meet_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)begin;
    (void)end;
    (void)worker;
    meet(ctx);
}

static void meet_job(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    meet(arg);
}

static void nothing(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)ctx;
    (void)begin;
    (void)end;
    (void)worker;
}

Test(worker_share, a_loop_both_workers_must_enter_reports_a_share_above_zero) {
    rendezvous_t r = {.want = 2};
    wb_share_t sh;
    uint64_t per[2];
    wb_share_begin(&sh, jobs);
    cr_assert_eq(weft_parallel_for(jobs, 2, 1, meet_range, &r), WEFT_OK);
    double share = wb_share_end(&sh, per);
    cr_assert_eq(atomic_load(&r.timed_out), 0u, "the second worker never entered the loop");
    cr_expect_eq(per[0], 1u, "worker 0 ran %llu ranges", (unsigned long long)per[0]);
    cr_expect_eq(per[1], 1u, "worker 1 ran %llu ranges", (unsigned long long)per[1]);
    cr_assert_float_eq(share, 0.5, 1e-12, "share %f", share);
}

Test(worker_share, jobs_both_workers_must_run_count_for_both) {
    rendezvous_t r = {.want = 2};
    weft_job_desc_t d[2] = {{.fn = meet_job, .arg = &r}, {.fn = meet_job, .arg = &r}};
    weft_counter_t c = {0};
    wb_share_t sh;
    wb_share_begin(&sh, jobs);
    cr_assert_eq(weft_job_submit(jobs, d, 2, &c), WEFT_OK);
    cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    double share = wb_share_end(&sh, NULL);
    cr_assert_eq(atomic_load(&r.timed_out), 0u, "the two jobs never ran side by side");
    cr_assert_float_eq(share, 0.5, 1e-12, "share %f", share);
}

Test(worker_share, a_loop_forced_onto_the_caller_reports_zero) {
    wb_share_t sh;
    uint64_t per[2];
    wb_share_begin(&sh, jobs);
    /* grain == count: one range, which the caller runs without publishing anything */
    for (int i = 0; i < 1000; i++) {
        cr_assert_eq(weft_parallel_for(jobs, 64, 64, nothing, NULL), WEFT_OK);
    }
    double share = wb_share_end(&sh, per);
    cr_expect_eq(per[0], 1000u);
    cr_expect_eq(per[1], 0u);
    cr_assert_eq(share, 0.0, "share %f", share);
}

Test(worker_share, one_worker_and_no_job_system_report_zero) {
    weft_jobs_t *one = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 1}, &one), WEFT_OK);
    wb_share_t sh;
    wb_share_begin(&sh, one);
    cr_assert_eq(weft_parallel_for(one, 1000, 1, nothing, NULL), WEFT_OK);
    cr_expect_eq(wb_share_end(&sh, NULL), 0.0);
    weft_jobs_destroy(one);
    wb_share_begin(&sh, NULL);
    cr_expect_eq(wb_share_end(&sh, NULL), 0.0);
}

Test(worker_share, stats_reject_a_bad_worker_index_in_every_build) {
    weft_worker_stats_t st;
    cr_expect_eq(weft_jobs_worker_stats(jobs, 2, &st), WEFT_EINVAL);
    cr_expect_eq(weft_jobs_worker_stats(jobs, 0, NULL), WEFT_EINVAL);
    cr_expect_eq(weft_jobs_worker_stats(NULL, 0, &st), WEFT_EINVAL);
    cr_expect_eq(weft_jobs_worker_stats(jobs, 1, &st), WEFT_OK);
}

Test(worker_share, parallel_for_helpers_are_not_counted_as_jobs) {
    weft_worker_stats_t before[2], after[2];
    for (uint32_t w = 0; w < 2; w++) {
        cr_assert_eq(weft_jobs_worker_stats(jobs, w, &before[w]), WEFT_OK);
    }
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(weft_parallel_for(jobs, 256, 1, nothing, NULL), WEFT_OK);
    }
    uint64_t ranges = 0;
    for (uint32_t w = 0; w < 2; w++) {
        cr_assert_eq(weft_jobs_worker_stats(jobs, w, &after[w]), WEFT_OK);
        cr_expect_eq(after[w].jobs, before[w].jobs, "worker %u counted helper jobs", w);
        ranges += after[w].ranges - before[w].ranges;
    }
    cr_assert_eq(ranges, 256u * 100u);
}
