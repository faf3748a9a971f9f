/* test_executor.c: weft's jobs on an engine's threads (weft_executor_t) — every range of a
 * parallel-for runs once and the lent threads take part, submitted jobs all run with worker
 * indices in range, weft never has more tasks queued than worker slots lent, destroy returns
 * only after every task it submitted has run, and bad executor descs are WEFT_EINVAL. The
 * engine's pool is tests/support/ext_pool.h. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdatomic.h>
#include <string.h>

#include "ext_pool.h"
#include "weft/jobs.h"

TestSuite(executor, .timeout = 120);

#define LENT 2u

static ext_pool_t pool;
static weft_jobs_t *jobs;

static void start(void) {
    cr_assert(ext_pool_start(&pool, LENT));
    weft_jobs_desc_t d = {.executor = ext_pool_executor(&pool)};
    cr_assert(eq(int, weft_jobs_create(&d, &jobs), WEFT_OK), "%s", weft_last_error());
    cr_assert(eq(u32, weft_jobs_worker_count(jobs), LENT + 1));
}

static void finish(void) {
    weft_jobs_destroy(jobs);
    ext_pool_stop(&pool);
}

#define ITEMS 200000u
static _Atomic uint8_t hits[ITEMS];

static void mark(void *arg, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)arg;
    (void)worker;
    for (uint64_t i = begin; i < end; i++) {
        atomic_fetch_add_explicit(&hits[i], 1, memory_order_relaxed);
    }
}

Test(executor, parallel_for_runs_every_range_once_and_the_lent_threads_take_part) {
    start();
    uint64_t lent_ranges = 0;
    for (int round = 0; round < 50; round++) {
        memset(hits, 0, sizeof hits);
        cr_assert(eq(int, weft_parallel_for(jobs, ITEMS, 500, mark, NULL), WEFT_OK));
        uint32_t wrong = 0;
        for (uint32_t i = 0; i < ITEMS; i++) {
            wrong += atomic_load_explicit(&hits[i], memory_order_relaxed) != 1;
        }
        cr_assert(eq(u32, wrong, 0), "round %d: %u items did not run exactly once", round, wrong);
    }
    for (uint32_t w = 1; w <= LENT; w++) {
        weft_worker_stats_t st;
        cr_assert(eq(int, weft_jobs_worker_stats(jobs, w, &st), WEFT_OK));
        lent_ranges += st.ranges;
    }
    finish();
    cr_expect(lent_ranges > 0, "the engine's threads ran none of 50 loops of 400 ranges");
    cr_expect(pool.ran > 0);
    /* Every queued task holds a worker slot; a task that gave its slot back may still be
     * returning (running, in the pool's count) when its slot's next task is queued. */
    cr_expect(le(u32, pool.max_queued, LENT), "weft had %u tasks queued for %u worker slots",
              pool.max_queued, LENT);
    cr_expect(le(u32, pool.max_outstanding, 2 * LENT),
              "%u tasks outstanding: more than the slots' queued tasks beside %u running",
              pool.max_outstanding, LENT);
}

static _Atomic uint32_t ran_jobs, bad_index;

static void count_job(void *arg, const weft_job_ctx_t *ctx) {
    (void)arg;
    if (ctx->worker > LENT || weft_jobs_worker_index(ctx->jobs) != ctx->worker) {
        atomic_fetch_add(&bad_index, 1);
    }
    size_t size = 0;
    unsigned char *scratch = weft_jobs_scratch(ctx->jobs, ctx->worker, &size);
    if (scratch == NULL || size == 0) {
        atomic_fetch_add(&bad_index, 1);
    } else {
        scratch[0] = (unsigned char)ctx->worker; /* private to this worker while it runs */
    }
    atomic_fetch_add(&ran_jobs, 1);
}

Test(executor, submitted_jobs_all_run_on_workers_with_valid_indices) {
    start();
    weft_job_desc_t descs[64];
    for (int i = 0; i < 64; i++) {
        descs[i] = (weft_job_desc_t){.fn = count_job};
    }
    for (int round = 0; round < 200; round++) {
        weft_counter_t done;
        weft_counter_init(&done);
        cr_assert(eq(int, weft_job_submit(jobs, descs, 64, &done), WEFT_OK));
        cr_assert(eq(int, weft_counter_wait(jobs, &done), WEFT_OK));
    }
    finish();
    cr_expect(eq(u32, atomic_load(&ran_jobs), 200u * 64u));
    cr_expect(eq(u32, atomic_load(&bad_index), 0));
}

Test(executor, destroy_returns_only_after_every_task_it_submitted_has_run) {
    for (int cycle = 0; cycle < 20; cycle++) {
        start();
        memset(hits, 0, sizeof hits);
        cr_assert(eq(int, weft_parallel_for(jobs, ITEMS, 100, mark, NULL), WEFT_OK));
        weft_jobs_destroy(jobs);
        pthread_mutex_lock(&pool.lock);
        uint64_t submitted = pool.submitted, ran = pool.ran;
        uint32_t running = pool.running, queued = pool.count;
        pthread_mutex_unlock(&pool.lock);
        /* Every task has run: none is still queued, and one the pool counts as running is
         * past its last touch of the job system, returning to the pool (weft/jobs.h). */
        cr_assert(eq(u32, queued, 0), "cycle %d: %u tasks still queued", cycle, queued);
        cr_assert(eq(u64, ran + running, submitted), "cycle %d: %llu of %llu tasks had run", cycle,
                  (unsigned long long)(ran + running), (unsigned long long)submitted);
        ext_pool_stop(&pool); /* joins the pool's threads: the returning tasks are done */
        cr_assert(eq(u64, pool.ran, submitted));
    }
}

static void nop_task_submit(void (*task)(void *arg), void *arg, void *user) {
    (void)task, (void)arg, (void)user;
}

Test(executor, bad_executor_descs_are_einval) {
    weft_jobs_t *j = NULL;
    weft_executor_t no_submit = {.thread_count = 2};
    weft_executor_t no_threads = {.submit = nop_task_submit};
    weft_executor_t two = {.thread_count = 2, .submit = nop_task_submit};
    cr_expect(
        eq(int, weft_jobs_create(&(weft_jobs_desc_t){.executor = no_submit}, &j), WEFT_EINVAL));
    cr_expect(
        eq(int, weft_jobs_create(&(weft_jobs_desc_t){.executor = no_threads}, &j), WEFT_EINVAL));
    cr_expect(eq(int,
                 weft_jobs_create(
                     &(weft_jobs_desc_t){.executor = two, .execution = WEFT_EXECUTION_INLINE}, &j),
                 WEFT_EINVAL));
    cr_expect(eq(int, weft_jobs_create(&(weft_jobs_desc_t){.executor = two, .worker_count = 2}, &j),
                 WEFT_EINVAL));
    cr_expect(j == NULL);
    cr_expect(
        eq(u32, weft_jobs_desc_resolved(&(weft_jobs_desc_t){.executor = two}).worker_count, 3));
}
