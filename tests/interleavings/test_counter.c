/* test_counter.c: counters and submit-after chains (jobs/counter.c, jobs/submit.c) under
 * the interleaving checker, on a real two-worker job system.
 *
 * Scenario: a registered external thread E submits A (counting down c1), B after c1
 * (counting c2) and C after c2 (counting c3): each later job's gate is parked on the
 * counter before it (WAITERS), so every zero transition takes the slow path. E waits on c2
 * (it spins, then sleeps with SLEEPERS set), lets c1 and c2 go, waits on c3 and lets it go.
 * Worker 1 runs the jobs; worker 0, the scenario's main thread, waits in a join meanwhile.
 * A writes x; B reads x and writes y; C reads y; E reads y after its first wait. A counter
 * that was let go must never be touched again: the finisher's zeroing RMW is its last
 * touch. */
#include "jobs_scn.h"
#include "mc_test.h"

typedef struct cnt_scn {
    weft_jobs_t *jobs;
    weft_counter_t c1, c2, c3;
    uint32_t x, y;
} cnt_scn_t;

static cnt_scn_t cs;

static void job_a(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    cnt_scn_t *s = arg;
    s->x = 1;
    mc_plain_write(&s->x, "x (A's result)");
}

static void job_b(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    cnt_scn_t *s = arg;
    mc_plain_read(&s->x, "x (A's result)");
    mc_check(s->x == 1u, "B ran before A's write");
    s->y = 2;
    mc_plain_write(&s->y, "y (B's result)");
}

static void job_c(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    cnt_scn_t *s = arg;
    mc_plain_read(&s->y, "y (B's result)");
}

static void external(void *arg) {
    cnt_scn_t *s = arg;
    mc_check(weft_jobs_register_thread(s->jobs) == WEFT_OK, "register");
    weft_job_desc_t a = {.fn = job_a, .arg = s, .name = "A"};
    weft_job_desc_t b = {.fn = job_b, .arg = s, .name = "B"};
    weft_job_desc_t c = {.fn = job_c, .arg = s, .name = "C"};
    mc_check(weft_job_submit(s->jobs, &a, 1, &s->c1) == WEFT_OK, "submit A");
    weft_counter_t *d1[1] = {&s->c1};
    mc_check(weft_job_submit_after(s->jobs, &b, 1, d1, 1, &s->c2) == WEFT_OK, "submit B");
    weft_counter_t *d2[1] = {&s->c2};
    mc_check(weft_job_submit_after(s->jobs, &c, 1, d2, 1, &s->c3) == WEFT_OK, "submit C");
    mc_check(weft_counter_wait(s->jobs, &s->c2) == WEFT_OK, "wait c2");
    mc_retire(&s->c1, sizeof s->c1, "counter c1");
    mc_retire(&s->c2, sizeof s->c2, "counter c2");
    mc_plain_read(&s->y, "y (B's result)");
    mc_check(s->y == 2u, "the wait returned before B's write");
    mc_check(weft_counter_wait(s->jobs, &s->c3) == WEFT_OK, "wait c3");
    mc_retire(&s->c3, sizeof s->c3, "counter c3");
    mc_check(weft_jobs_unregister_thread(s->jobs) == WEFT_OK, "unregister");
}

static void cnt_main(void *arg) {
    (void)arg;
    cnt_scn_t *s = &cs;
    s->x = s->y = 0;
    s->jobs = scn_jobs_create(2, 200);
    weft_counter_init(&s->c1);
    weft_counter_init(&s->c2);
    weft_counter_init(&s->c3);
    mc_name(&s->c1, "c1.word");
    mc_name(&s->c2, "c2.word");
    mc_name(&s->c3, "c3.word");
    scn_run_beside(s->jobs, external, s);
}

/* The planted variants run at pre-emption bound 1, where each is caught; the clean scenario
 * at 2 (100,886 executions). */
static mc_result_t run(const char *name, const char *weaken, const char *plant) {
    return mc_test_run(name, cnt_main, NULL, 1, weaken, plant);
}

Test(counter, chain_with_parked_gates_and_a_sleeping_waiter_is_clean) {
    mc_result_t r =
        mc_test_run("counter: A -> B -> C, external waiter", cnt_main, NULL, 2, NULL, NULL);
    mc_assert_clean(r);
}

/* Planted: the waiter's acquire load of the word made relaxed; seeing zero no longer
 * brings the finished jobs' writes with it. */
Test(counter, planted_relaxed_done_check_is_caught) {
    mc_result_t r =
        run("counter planted: is_done relaxed", "weft__count_is_done:load_acquire", NULL);
    mc_assert_caught(r, "the weakened is_done");
}

/* Planted: the finisher's count-down made relaxed; nothing publishes the job's writes. */
Test(counter, planted_relaxed_count_down_is_caught) {
    mc_result_t r =
        run("counter planted: finish relaxed", "weft__counter_finish_n:fetch_sub_acq_rel", NULL);
    mc_assert_caught(r, "the weakened count-down");
}

/* Planted: the slow-path finisher reads the counter once more after the RMW that zeroed
 * it, when a waiter may already have freed it. */
Test(counter, planted_touch_after_the_zeroing_rmw_is_caught) {
    mc_result_t r =
        run("counter planted: touch after release", NULL, "counter_touch_after_release");
    mc_assert_caught(r, "the touch after the last touch");
    cr_assert(strstr(r.message, "after") != NULL, "%s", r.message);
}
