/* jobs_scn.h: a real job system (the model-checked build of jobs/) sized for the checker:
 * two workers (the scenario's main thread and one spawned worker), small deques and
 * scratch, the checker's allocator, and a short spin: the checker's clock moves 20 µs a
 * reading, so spin_us 1 ends after one poll and an idle worker sleeps within a few
 * operations, while spin_us 200 polls about ten times, yielding after each poll. */
#ifndef WEFT_TESTS_JOBS_SCN_H
#define WEFT_TESTS_JOBS_SCN_H

#include "mc.h"
#include "mc_platform.h"
#include "weft/jobs.h"

/* The job system of `d` (the checker's sizes and allocator filled in). */
static inline weft_jobs_t *scn_jobs_create_desc(weft_jobs_desc_t d, uint32_t spin_us) {
    d.queue_capacity = 16;
    d.scratch_size = 64;
    d.spin_us = spin_us;
    d.allocator = mc_allocator;
    weft_jobs_t *jobs = NULL;
    weft_result_t r = weft_jobs_create(&d, &jobs);
    mc_check(r == WEFT_OK, "weft_jobs_create: %d", (int)r);
    return jobs;
}

static inline weft_jobs_t *scn_jobs_create(uint32_t workers, uint32_t spin_us) {
    return scn_jobs_create_desc((weft_jobs_desc_t){.worker_count = workers}, spin_us);
}

/* An engine's executor for the checker: every task weft submits starts as a modelled thread
 * of its own (an engine with a thread free for each; weft keeps at most one task per lent
 * worker outstanding, so a scenario stays within MC_MAX_THREADS). Never joined: destroy
 * waits until every drain task has returned (jobs/executor.c). */
static inline void scn_executor_submit(void (*task)(void *arg), void *arg, void *user) {
    (void)user;
    (void)mc_thread_start(task, arg);
}

/* scn_jobs_create's job system with `lent` executor threads instead of spawned workers. */
static inline weft_jobs_t *scn_jobs_create_lent(uint32_t lent, uint32_t spin_us) {
    weft_executor_t e = {.thread_count = lent, .submit = scn_executor_submit};
    return scn_jobs_create_desc((weft_jobs_desc_t){.executor = e}, spin_us);
}

/* Run `fn(arg)` as another modelled thread while this one (worker 0) waits in a join, then
 * destroy the job system. */
static inline void scn_run_beside(weft_jobs_t *jobs, mc_fn_t fn, void *arg) {
    int e = mc_thread_start(fn, arg);
    mc_thread_join(e);
    weft_jobs_destroy(jobs);
}

#endif /* WEFT_TESTS_JOBS_SCN_H */
