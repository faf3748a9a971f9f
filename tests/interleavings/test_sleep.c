/* test_sleep.c: the sleep/wake handshake (jobs/sleep.c) under the interleaving checker.
 *
 * Scenario: worker 1 has nothing to do and decides to sleep while a registered thread E
 * submits a job J and waits for it; worker 0 (the scenario's main thread) waits in a join,
 * so only worker 1 can run J. A lost wake-up leaves every thread blocked, which the checker
 * reports as a deadlock. The paced variant gives worker 1 a predicted frame start to wake
 * up for (sleep.c, weft_jobs_frame_begin), so it sleeps in a timed wait that the checker
 * lets time out or be signalled. */
#include "jobs/jobs_impl.h"
#include "jobs_scn.h"
#include "mc_test.h"

typedef struct slp_scn {
    weft_jobs_t *jobs;
    weft_counter_t c;
    uint32_t out;
} slp_scn_t;

static slp_scn_t ss;

static void job_j(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    slp_scn_t *s = arg;
    s->out = 7;
    mc_plain_write(&s->out, "J's result");
}

static void submitter(void *arg) {
    slp_scn_t *s = arg;
    mc_check(weft_jobs_register_thread(s->jobs) == WEFT_OK, "register");
    weft_job_desc_t j = {.fn = job_j, .arg = s, .name = "J"};
    mc_check(weft_job_submit(s->jobs, &j, 1, &s->c) == WEFT_OK, "submit");
    mc_check(weft_counter_wait(s->jobs, &s->c) == WEFT_OK, "wait");
    mc_plain_read(&s->out, "J's result");
    mc_check(weft_jobs_unregister_thread(s->jobs) == WEFT_OK, "unregister");
}

static void slp_main(void *arg) {
    slp_scn_t *s = &ss;
    s->out = 0;
    s->jobs = scn_jobs_create(2, 1);
    if (arg) {
        /* A frame predicted 10 ms ahead of worker 1's clock (the checker's start at 0 every
         * execution): worker 1 sleeps until then unless work wakes it. Set before worker 1
         * can read it (it is created asleep or spinning; either order is explored). */
        weft_atomic_store_relaxed(&s->jobs->pace.window_ns, 0u);
        weft_atomic_store_relaxed(&s->jobs->pace.next_ns, 10000000u);
    }
    weft_counter_init(&s->c);
    scn_run_beside(s->jobs, submitter, s);
}

static int paced = 1; /* slp_main's arg: the paced variant */

/* The planted variants run at pre-emption bound 1, where each is caught; the clean scenario
 * at 2 (17,558 executions), the paced one at 1 (1,649). */
static mc_result_t run(const char *name, const char *weaken, const char *plant) {
    return mc_test_run(name, slp_main, NULL, 1, weaken, plant);
}

Test(sleep, a_job_arriving_while_a_worker_sleeps_until_a_predicted_frame_is_never_lost) {
    mc_result_t r = mc_test_run("sleep: job arrives while worker 1 sleeps for a paced frame",
                                slp_main, (void *)&paced, 1, NULL, NULL);
    mc_assert_clean(r);
}

/* Planted: after its timed wait runs out, the sleeper waits on for a fresh epoch without
 * looking for work again; a job published after it registered is lost. */
Test(sleep, planted_rearming_the_timed_wait_without_a_recheck_loses_the_wake_up) {
    mc_result_t r = mc_test_run("sleep planted: timed wait re-armed", slp_main, (void *)&paced, 1,
                                NULL, "pace_timeout_rearms");
    mc_assert_caught(r, "the lost wake-up");
    cr_assert(strstr(r.message, "deadlock") != NULL, "%s", r.message);
}

Test(sleep, a_job_arriving_during_the_sleep_decision_is_never_lost) {
    mc_result_t r = mc_test_run("sleep: job arrives while worker 1 decides to sleep", slp_main,
                                NULL, 2, NULL, NULL);
    mc_assert_clean(r);
}

/* Planted: the publisher's seq_cst load of the sleeper count made relaxed; it may miss a
 * sleeper that registered before the push. */
Test(sleep, planted_relaxed_sleeper_count_load_loses_the_wake_up) {
    mc_result_t r = run("sleep planted: publisher's sleepers load relaxed",
                        "weft__sleep_notify:load_seq_cst", NULL);
    mc_assert_caught(r, "the lost wake-up");
    cr_assert(strstr(r.message, "deadlock") != NULL, "%s", r.message);
}

/* Planted: the sleeper does not check for work again after registering as a sleeper. */
Test(sleep, planted_missing_recheck_before_sleeping_loses_the_wake_up) {
    mc_result_t r = run("sleep planted: no re-check", NULL, "sleep_skips_recheck");
    mc_assert_caught(r, "the lost wake-up");
    cr_assert(strstr(r.message, "deadlock") != NULL, "%s", r.message);
}

/* Regression: the schedule (pre-emption bound 2) in which worker 1 finished J, read the
 * phase with acquire as RUNNING although destroy had stored DRAINING, and so did not kick
 * worker 0, which had read its `finished` tally as 0 and slept: both asleep for ever. Fixed
 * by the seq_cst tally RMW and phase load on worker_main()'s busy -> idle transition. With
 * the fix the replay runs to the end. */
Test(sleep, regression_destroy_misses_the_last_tally) {
    mc_options_t o = {.name = "sleep: replay of the lost drain wake-up",
                      .preemptions = 2,
                      .stale_reads = 1,
                      .history = 3,
                      .replay = "104=1,174=1,175=1"};
    mc_result_t r = mc_explore(&o, slp_main, NULL);
    cr_assert(!r.failed, "%s", r.message);
    cr_assert_eq(r.executions, 1u);
}
