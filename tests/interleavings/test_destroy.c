/* test_destroy.c: weft_jobs_destroy (jobs/worker.c) under the interleaving checker.
 *
 * - Draining: worker 0 submits a job and destroys at once; worker 1 may steal the job, so
 *   destroy sleeps until worker 1's `finished` tally catches up. Regression test for a lost
 *   wake-up the checker found: the worker read the phase with acquire only on its way to
 *   idle, so it could miss DRAINING while destroy missed its tally (both asleep).
 * - Draining with an executor: the same, but worker 1 is a lent thread driven by a drain
 *   task (jobs/executor.c). Regression test for a lost wake-up seen under TSan: the drain
 *   went from its job to parking without the busy -> idle kick, so destroy, which read the
 *   tally before the job finished, slept for good.
 * - A registered thread E inside a call: E runs its own weft_parallel_for, whose first range
 *   holds it inside until worker 0 is about to destroy. Destroy must wait until E has left
 *   the call; the checker retires the memory destroy frees, so any later touch by E fails
 *   the execution. */
#include "jobs/platform/atomic.h"
#include "jobs_scn.h"
#include "mc_test.h"

typedef struct dst_scn {
    weft_jobs_t *jobs;
    weft_atomic_u32 inside, go;
    uint32_t out;
} dst_scn_t;

static dst_scn_t ds;

static void job_yields(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    dst_scn_t *s = arg;
    for (int i = 0; i < 3; ++i) {
        mc_pause(); /* a longer job: the other threads run meanwhile */
    }
    s->out = 5;
    mc_plain_write(&s->out, "the job's result");
}

/* arg non-NULL: worker 1 is a lent thread (an executor's drain task), not a spawned one. */
static void drain_main(void *arg) {
    dst_scn_t *s = &ds;
    s->jobs = arg ? scn_jobs_create_lent(1, 1) : scn_jobs_create(2, 1);
    weft_job_desc_t j = {.fn = job_yields, .arg = s, .name = "J"};
    mc_check(weft_job_submit(s->jobs, &j, 1, NULL) == WEFT_OK, "submit");
    weft_jobs_destroy(s->jobs);
    mc_plain_read(&s->out, "the job's result");
}

/* A range of E's own parallel-for: the first one tells main that E is inside the call and
 * holds it there until main is about to destroy. */
static void range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)end;
    (void)worker;
    dst_scn_t *s = ctx;
    if (begin == 0) {
        weft_atomic_store_release(&s->inside, 1u);
        while (weft_atomic_load_acquire(&s->go) == 0u) {
            weft_cpu_relax();
        }
    }
}

static void registered(void *arg) {
    dst_scn_t *s = arg;
    mc_check(weft_jobs_register_thread(s->jobs) == WEFT_OK, "register");
    weft_result_t r = weft_parallel_for(s->jobs, 2, 1, range, s);
    mc_check(r == WEFT_OK, "parallel_for: %d", (int)r);
    /* no further call: destroy may return from here on */
}

static void inside_main(void *arg) {
    (void)arg;
    dst_scn_t *s = &ds;
    s->jobs = scn_jobs_create(2, 1);
    weft_atomic_init(&s->inside, 0u);
    weft_atomic_init(&s->go, 0u);
    int e = mc_thread_start(registered, s);
    while (weft_atomic_load_acquire(&s->inside) == 0u) {
        weft_cpu_relax();
    }
    weft_atomic_store_release(&s->go, 1u);
    weft_jobs_destroy(s->jobs); /* E is inside weft_parallel_for */
    mc_thread_join(e);
}

/* The planted variants run at pre-emption bound 1, where each is caught. The drain runs at
 * 3 (13,765 executions), the lent thread's drain at 3 (5,842), the registered thread inside a
 * call at 2. */
static mc_result_t run(const char *name, mc_fn_t fn, void *arg, const char *plant) {
    return mc_test_run(name, fn, arg, 1, NULL, plant);
}

static int lent = 1; /* drain_main's arg: worker 1 is a lent thread */

static mc_result_t run_weakened(const char *name, mc_fn_t fn, const char *weaken) {
    return mc_test_run(name, fn, NULL, 1, weaken, NULL);
}

Test(destroy, drains_a_job_the_other_worker_stole) {
    mc_result_t r = mc_test_run("destroy: drain a stolen job", drain_main, NULL, 3, NULL, NULL);
    mc_assert_clean(r);
}

Test(destroy, drains_a_job_a_lent_thread_took) {
    mc_result_t r =
        mc_test_run("destroy: drain a job a lent thread took", drain_main, &lent, 3, NULL, NULL);
    mc_assert_clean(r);
}

/* Planted: the drain task goes from its job to parking without the busy -> idle kick. */
Test(destroy, planted_drain_without_the_idle_kick_loses_the_drain_wake_up) {
    mc_result_t r = run("destroy planted: drain skips the idle kick", drain_main, &lent,
                        "drain_skips_idle_kick");
    mc_assert_caught(r, "the lost drain wake-up of a lent thread");
    cr_assert(strstr(r.message, "deadlock") != NULL, "%s", r.message);
}

Test(destroy, waits_for_a_registered_thread_inside_a_call) {
    mc_result_t r =
        mc_test_run("destroy: registered thread inside a wait", inside_main, NULL, 2, NULL, NULL);
    mc_assert_clean(r);
}

/* Planted: destroy ignores the count of registered threads inside a call, so it may free
 * the job system while the registered thread is still inside. */
Test(destroy, planted_destroy_ignoring_callers_frees_under_the_caller) {
    mc_result_t r = run("destroy planted: ignores callers inside", inside_main, NULL,
                        "destroy_ignores_callers");
    mc_assert_caught(r, "the early free");
}

/* Planted: the kick's seq_cst load of the sleeper count made relaxed. Worker 1 finishes the
 * stolen job, sees DRAINING on its way to idle and kicks, but reads the count from before
 * worker 0 registered as a sleeper, so it does not wake worker 0, which read the tally
 * before the job finished: both asleep. */
Test(destroy, planted_relaxed_sleeper_load_in_the_kick_loses_the_drain_wake_up) {
    mc_result_t r = run_weakened("destroy planted: kick's sleepers load relaxed", drain_main,
                                 "weft__sleep_kick:load_seq_cst");
    mc_assert_caught(r, "the lost drain wake-up");
    cr_assert(strstr(r.message, "deadlock") != NULL, "%s", r.message);
}
