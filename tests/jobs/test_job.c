/* test_job.c: submitting jobs — exactly-once execution, dependencies (submit_after),
 * priorities, main-thread jobs, the job context, inline mode, and bad arguments. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "weft/jobs.h"

static weft_jobs_t *jobs;

static void setup_threaded(void) {
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 4}, &jobs), WEFT_OK);
}
static void teardown(void) { weft_jobs_destroy(jobs); }

TestSuite(job, .init = setup_threaded, .fini = teardown, .timeout = 60);

static atomic_uint spare_count; /* target of jobs whose count nobody checks */

static void count_job(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    atomic_fetch_add((atomic_uint *)arg, 1u);
}

Test(job, every_submitted_job_runs_exactly_once) {
    enum { N = 5000 };
    static atomic_uint hits[N];
    static weft_job_desc_t d[N];
    for (int i = 0; i < N; ++i) {
        atomic_store(&hits[i], 0u);
        d[i] = (weft_job_desc_t){.fn = count_job, .arg = &hits[i]};
    }
    weft_counter_t c = {0};
    cr_assert_eq(weft_job_submit(jobs, d, N, &c), WEFT_OK);
    cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    int first_bad = -1;
    for (int i = 0; i < N && first_bad < 0; ++i) {
        first_bad = atomic_load(&hits[i]) == 1u ? -1 : i;
    }
    cr_assert_eq(first_bad, -1, "job %d ran %u times", first_bad,
                 first_bad < 0 ? 1u : atomic_load(&hits[first_bad]));
}

Test(job, zero_jobs_is_a_no_op) {
    weft_counter_t c = {0};
    cr_expect_eq(weft_job_submit(jobs, NULL, 0, &c), WEFT_OK);
    cr_expect(weft_counter_is_done(&c));
}

typedef struct ctx_probe {
    atomic_uint ok;
    weft_jobs_t *jobs;
} ctx_probe_t;

static void check_ctx(void *arg, const weft_job_ctx_t *ctx) {
    ctx_probe_t *p = arg;
    if (ctx->jobs == p->jobs && ctx->tag == 0xABCDu && ctx->worker < 4u) {
        atomic_fetch_add(&p->ok, 1u);
    }
}

Test(job, job_context_carries_tag_worker_and_job_system) {
    ctx_probe_t p = {0, jobs};
    weft_job_desc_t d = {.fn = check_ctx, .arg = &p, .tag = 0xABCDu, .name = "probe"};
    weft_counter_t c = {0};
    for (int i = 0; i < 50; ++i) {
        cr_assert_eq(weft_job_submit(jobs, &d, 1, &c), WEFT_OK);
    }
    cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    cr_expect_eq(atomic_load(&p.ok), 50u);
}

/* ---- dependencies ---- */

typedef struct chain {
    atomic_uint step;  /* the next step expected */
    atomic_uint wrong; /* steps that ran out of order */
} chain_t;

typedef struct chain_arg {
    chain_t *chain;
    unsigned step;
} chain_arg_t;

static void chain_job(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    chain_arg_t *a = arg;
    unsigned expect = a->step;
    if (!atomic_compare_exchange_strong(&a->chain->step, &expect, a->step + 1u)) {
        atomic_fetch_add(&a->chain->wrong, 1u);
    }
}

/* A job that holds its counter above zero until the test lets it go. */
static void hold_until(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    while (!atomic_load((atomic_int *)arg)) {
        sched_yield();
    }
}

Test(job, submit_after_runs_a_chain_in_dependency_order) {
    enum { N = 200 };
    chain_t chain = {0};
    static chain_arg_t args[N];
    static weft_counter_t done[N];
    /* Link 0 waits behind `gate`, held non-zero by a running job, so the whole chain is
     * parked before anything may start: order can only come from the counters. */
    weft_counter_t gate = {0};
    atomic_int go = 0;
    weft_job_desc_t holder = {.fn = hold_until, .arg = &go};
    cr_assert_eq(weft_job_submit(jobs, &holder, 1, &gate), WEFT_OK);
    for (int i = 0; i < N; ++i) {
        weft_counter_init(&done[i]);
        args[i] = (chain_arg_t){&chain, (unsigned)i};
        weft_job_desc_t d = {.fn = chain_job, .arg = &args[i]};
        weft_counter_t *dep = i ? &done[i - 1] : &gate;
        cr_assert_eq(weft_job_submit_after(jobs, &d, 1, &dep, 1, &done[i]), WEFT_OK);
    }
    cr_expect_eq(atomic_load(&chain.step), 0u, "a link ran before its dependency");
    atomic_store(&go, 1);
    cr_assert_eq(weft_counter_wait(jobs, &done[N - 1]), WEFT_OK);
    cr_expect_eq(atomic_load(&chain.wrong), 0u);
    cr_expect_eq(atomic_load(&chain.step), (unsigned)N);
}

Test(job, submit_after_finished_counters_runs_at_once) {
    weft_counter_t a = {0}, b = {0}, done = {0};
    atomic_uint ran = 0;
    weft_job_desc_t d = {.fn = count_job, .arg = &ran};
    weft_counter_t *deps[3] = {&a, &b, &a}; /* repeats allowed */
    cr_assert_eq(weft_job_submit_after(jobs, &d, 1, deps, 3, &done), WEFT_OK);
    cr_assert_eq(weft_counter_wait(jobs, &done), WEFT_OK);
    cr_expect_eq(atomic_load(&ran), 1u);
}

typedef struct join_probe {
    atomic_uint a_done, b_done; /* the two dependencies' jobs finished */
    atomic_uint bad;            /* the joined job ran too early */
    atomic_uint ran;            /* the joined job ran */
} join_probe_t;

static void dep_a(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    atomic_fetch_add(&((join_probe_t *)arg)->a_done, 1u);
}
static void dep_b(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    atomic_fetch_add(&((join_probe_t *)arg)->b_done, 1u);
}
static void joined(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    join_probe_t *p = arg;
    if (atomic_load(&p->a_done) != 50u || atomic_load(&p->b_done) != 50u) {
        atomic_fetch_add(&p->bad, 1u);
    }
    atomic_fetch_add(&p->ran, 1u);
}

Test(job, a_batch_after_two_counters_starts_when_both_reach_zero) {
    for (int round = 0; round < 50; ++round) {
        join_probe_t p = {0};
        weft_counter_t a = {0}, b = {0}, done = {0};
        weft_job_desc_t da[50], db[50], dj[10];
        for (int i = 0; i < 50; ++i) {
            da[i] = (weft_job_desc_t){.fn = dep_a, .arg = &p};
            db[i] = (weft_job_desc_t){.fn = dep_b, .arg = &p};
        }
        for (int i = 0; i < 10; ++i) {
            dj[i] = (weft_job_desc_t){.fn = joined, .arg = &p};
        }
        cr_assert_eq(weft_job_submit(jobs, da, 50, &a), WEFT_OK);
        cr_assert_eq(weft_job_submit(jobs, db, 50, &b), WEFT_OK);
        weft_counter_t *deps[2] = {&a, &b};
        cr_assert_eq(weft_job_submit_after(jobs, dj, 10, deps, 2, &done), WEFT_OK);
        cr_assert_eq(weft_counter_wait(jobs, &done), WEFT_OK);
        cr_assert_eq(atomic_load(&p.bad), 0u);
        cr_assert_eq(atomic_load(&p.ran), 10u);
        cr_assert(weft_counter_is_done(&a) && weft_counter_is_done(&b));
    }
}

Test(job, submit_after_its_own_completion_counter_is_edeadlk) {
    weft_counter_t done = {0};
    weft_job_desc_t d = {.fn = count_job, .arg = &spare_count};
    weft_counter_t *dep = &done;
    cr_expect_eq(weft_job_submit_after(jobs, &d, 1, &dep, 1, &done), WEFT_EDEADLK);
    cr_expect(weft_counter_is_done(&done), "nothing was submitted");
}

/* ---- main-thread jobs ---- */

static void on_main(void *arg, const weft_job_ctx_t *ctx) {
    if (ctx->worker == 0 && weft_jobs_worker_index(ctx->jobs) == 0) {
        atomic_fetch_add((atomic_uint *)arg, 1u);
    }
}

static void submit_main_jobs(void *arg, const weft_job_ctx_t *ctx) {
    weft_job_desc_t d = {.fn = on_main, .arg = arg, .main_thread = true};
    /* From a worker job: the pinned job must still run on worker 0. No counter: the test
     * waits on the outer counter and then on destroy-free polling below. */
    weft_job_submit(ctx->jobs, &d, 1, NULL);
}

Test(job, main_thread_jobs_run_only_on_worker_zero) {
    atomic_uint on_zero = 0;
    weft_job_desc_t d[100];
    for (int i = 0; i < 100; ++i) {
        d[i] = (weft_job_desc_t){.fn = on_main, .arg = &on_zero, .main_thread = true};
    }
    weft_counter_t c = {0};
    cr_assert_eq(weft_job_submit(jobs, d, 100, &c), WEFT_OK);
    cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    cr_expect_eq(atomic_load(&on_zero), 100u);
}

Test(job, main_thread_jobs_submitted_by_workers_run_on_worker_zero) {
    atomic_uint on_zero = 0;
    weft_job_desc_t d[20];
    for (int i = 0; i < 20; ++i) {
        d[i] = (weft_job_desc_t){.fn = submit_main_jobs, .arg = &on_zero};
    }
    weft_counter_t c = {0};
    cr_assert_eq(weft_job_submit(jobs, d, 20, &c), WEFT_OK);
    cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    /* The pinned jobs have no counter; waiting on an empty counter with a main-thread
     * job queued still runs it, so loop over short waits until all 20 ran. */
    weft_counter_t none = {0};
    while (atomic_load(&on_zero) < 20u) {
        weft_job_desc_t noop = {.fn = count_job, .arg = &spare_count, .main_thread = true};
        cr_assert_eq(weft_job_submit(jobs, &noop, 1, &none), WEFT_OK);
        cr_assert_eq(weft_counter_wait(jobs, &none), WEFT_OK);
    }
    cr_expect_eq(atomic_load(&on_zero), 20u);
}

/* ---- priorities (one worker: order is exact) ---- */

typedef struct order_log {
    int n;
    char seq[64];
} order_log_t;

static void log_high(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    order_log_t *l = arg;
    l->seq[l->n++] = 'H';
}
static void log_normal(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    order_log_t *l = arg;
    l->seq[l->n++] = 'N';
}
static void log_low(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    order_log_t *l = arg;
    l->seq[l->n++] = 'L';
}

Test(job, high_priority_runs_before_normal_and_low_runs_last) {
    weft_jobs_t *one = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 1}, &one), WEFT_OK);
    order_log_t log = {0};
    weft_job_desc_t d[9];
    for (int i = 0; i < 3; ++i) {
        d[i * 3 + 0] = (weft_job_desc_t){.fn = log_low, .arg = &log, .priority = WEFT_PRIORITY_LOW};
        d[i * 3 + 1] = (weft_job_desc_t){.fn = log_normal, .arg = &log};
        d[i * 3 + 2] =
            (weft_job_desc_t){.fn = log_high, .arg = &log, .priority = WEFT_PRIORITY_HIGH};
    }
    weft_counter_t c = {0};
    cr_assert_eq(weft_job_submit(one, d, 9, &c), WEFT_OK);
    cr_assert_eq(weft_counter_wait(one, &c), WEFT_OK);
    weft_jobs_destroy(one);
    cr_expect_str_eq(log.seq, "HHHNNNLLL");
}

/* ---- contract violations ---- */

static void *submit_unregistered(void *arg) {
    weft_job_desc_t d = {.fn = count_job, .arg = &spare_count};
    return (void *)(intptr_t)weft_job_submit(arg, &d, 1, NULL);
}

/* Broken contracts are their documented error in every build. */
Test(job, bad_arguments_return_einval) {
    weft_job_desc_t d = {.fn = NULL};
    cr_expect_eq(weft_job_submit(jobs, &d, 1, NULL), WEFT_EINVAL);
    pthread_t t;
    void *r = NULL;
    pthread_create(&t, NULL, submit_unregistered, jobs);
    pthread_join(t, &r);
    cr_expect_eq((weft_result_t)(intptr_t)r, WEFT_EINVAL);
}

/* ---- inline mode ---- */

typedef struct inline_log {
    weft_jobs_t *jobs;
    int n;
    int seq[32];
    pthread_t caller;
    int foreign; /* jobs that ran on another thread */
} inline_log_t;

typedef struct inline_arg {
    inline_log_t *log;
    int id;
} inline_arg_t;

static void inline_leaf(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    inline_arg_t *a = arg;
    a->log->seq[a->log->n++] = a->id;
    if (!pthread_equal(pthread_self(), a->log->caller)) {
        a->log->foreign += 1;
    }
}

static inline_arg_t nested_args[2];

static void inline_parent(void *arg, const weft_job_ctx_t *ctx) {
    inline_arg_t *a = arg;
    a->log->seq[a->log->n++] = a->id;
    /* Children queue behind the running job (ids 10, 11), in submission order. */
    nested_args[0] = (inline_arg_t){a->log, 10};
    nested_args[1] = (inline_arg_t){a->log, 11};
    weft_job_desc_t d[2] = {{.fn = inline_leaf, .arg = &nested_args[0]},
                            {.fn = inline_leaf, .arg = &nested_args[1]}};
    weft_job_submit(ctx->jobs, d, 2, NULL);
}

Test(job, inline_mode_runs_everything_on_the_caller_in_submission_order) {
    weft_jobs_t *in = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.execution = WEFT_EXECUTION_INLINE}, &in),
                 WEFT_OK);
    cr_expect_eq(weft_jobs_worker_count(in), 1u);
    inline_log_t log = {.jobs = in, .caller = pthread_self()};
    inline_arg_t args[4] = {{&log, 1}, {&log, 2}, {&log, 3}, {&log, 4}};
    weft_counter_t c1 = {0}, c2 = {0};
    weft_job_desc_t a = {.fn = inline_leaf, .arg = &args[0]};
    cr_assert_eq(weft_job_submit(in, &a, 1, &c1), WEFT_OK);
    cr_expect(weft_counter_is_done(&c1), "inline: done inside submit");
    weft_job_desc_t held = {.fn = inline_leaf, .arg = &args[2]};
    weft_counter_t *dep = &c2;
    weft_job_desc_t parent = {.fn = inline_parent, .arg = &args[1], .priority = WEFT_PRIORITY_LOW};
    weft_counter_t c3 = {0};
    /* Job 2 (the parent) runs inside its submit and queues 10 and 11 behind itself;
     * job 3, submitted after c2, runs at once since c2 is already zero by then. */
    cr_assert_eq(weft_job_submit(in, &parent, 1, &c2), WEFT_OK);
    cr_assert_eq(weft_job_submit_after(in, &held, 1, &dep, 1, &c3), WEFT_OK);
    weft_job_desc_t last = {.fn = inline_leaf, .arg = &args[3], .priority = WEFT_PRIORITY_HIGH};
    cr_assert_eq(weft_job_submit(in, &last, 1, NULL), WEFT_OK);
    weft_jobs_destroy(in);
    int want[] = {1, 2, 10, 11, 3, 4};
    cr_assert_eq(log.n, 6);
    for (int i = 0; i < 6; ++i) {
        cr_expect_eq(log.seq[i], want[i], "position %d: got %d want %d", i, log.seq[i], want[i]);
    }
    cr_expect_eq(log.foreign, 0);
}
