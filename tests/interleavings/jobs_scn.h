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

static inline weft_jobs_t *scn_jobs_create(uint32_t workers, uint32_t spin_us) {
    weft_jobs_desc_t d = {0};
    d.worker_count = workers;
    d.queue_capacity = 16;
    d.scratch_size = 64;
    d.spin_us = spin_us;
    d.allocator = mc_allocator;
    weft_jobs_t *jobs = NULL;
    weft_result_t r = weft_jobs_create(&d, &jobs);
    mc_check(r == WEFT_OK, "weft_jobs_create: %d", (int)r);
    return jobs;
}

/* Run `fn(arg)` as another modelled thread while this one (worker 0) waits in a join, then
 * destroy the job system. */
static inline void scn_run_beside(weft_jobs_t *jobs, mc_fn_t fn, void *arg) {
    int e = mc_thread_start(fn, arg);
    mc_thread_join(e);
    weft_jobs_destroy(jobs);
}

#endif /* WEFT_TESTS_JOBS_SCN_H */
