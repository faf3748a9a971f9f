/* test_parallel_for.c: weft_parallel_for — coverage, boundaries, nesting, callers. */
#define _GNU_SOURCE 1 /* pthread_condattr_setclock, clock_gettime */

#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "weft/jobs.h"

static weft_jobs_t *jobs;

static void setup(void) {
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 3}, &jobs), WEFT_OK);
}
static void teardown(void) { weft_jobs_destroy(jobs); /* NULL (already destroyed) is ignored */ }

TestSuite(parallel_for, .init = setup, .fini = teardown, .timeout = 60);

typedef struct cover {
    atomic_uchar *hits;  /* per index */
    uint64_t count;      /* items */
    uint64_t grain;      /* expected grain (0: any) */
    atomic_uint bad;     /* ranges with wrong bounds or worker */
    atomic_uint workers; /* bit per worker that took part */
    uint32_t nworkers;   /* worker count */
    bool registered;     /* the caller is a registered thread: its ranges see UINT32_MAX */
} cover_t;

static void cover_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    cover_t *c = ctx;
    bool worker_ok = worker < c->nworkers || (c->registered && worker == UINT32_MAX);
    if (begin >= end || end > c->count || !worker_ok ||
        (c->grain && (begin % c->grain != 0 || (end - begin != c->grain && end != c->count)))) {
        atomic_fetch_add(&c->bad, 1u);
        return;
    }
    atomic_fetch_or(&c->workers, 1u << (worker & 31u));
    for (uint64_t i = begin; i < end; ++i) {
        atomic_fetch_add(&c->hits[i], 1u);
    }
}

static void check_cover(weft_jobs_t *j, uint64_t count, uint64_t grain) {
    cover_t c = {.count = count, .grain = grain, .nworkers = weft_jobs_worker_count(j)};
    c.hits = calloc(count ? count : 1, sizeof *c.hits);
    cr_assert_eq(weft_parallel_for(j, count, grain, cover_range, &c), WEFT_OK);
    cr_expect_eq(atomic_load(&c.bad), 0u, "count %llu grain %llu", (unsigned long long)count,
                 (unsigned long long)grain);
    uint64_t first_bad = count;
    for (uint64_t i = 0; i < count && first_bad == count; ++i) {
        first_bad = atomic_load(&c.hits[i]) == 1u ? count : i;
    }
    cr_assert_eq(first_bad, count, "index %llu of %llu (grain %llu) not covered exactly once",
                 (unsigned long long)first_bad, (unsigned long long)count,
                 (unsigned long long)grain);
    free(c.hits);
}

Test(parallel_for, every_index_is_covered_exactly_once) {
    uint64_t counts[] = {1, 2, 7, 100, 4096, 100003};
    uint64_t grains[] = {0, 1, 3, 64, 1000};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i) {
        for (size_t g = 0; g < sizeof grains / sizeof grains[0]; ++g) {
            check_cover(jobs, counts[i], grains[g]);
        }
    }
}

Test(parallel_for, zero_count_calls_nothing) {
    cr_expect_eq(weft_parallel_for(jobs, 0, 0, cover_range, NULL), WEFT_OK);
}

typedef struct spin_ctx {
    atomic_uint workers; /* bit per worker that ran a range */
} spin_ctx_t;

static void spin_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)begin;
    (void)end;
    spin_ctx_t *s = ctx;
    atomic_fetch_or(&s->workers, 1u << worker);
    /* Other workers hold their range until the caller has run one: if the caller never
     * took part, this test hangs and times out instead of passing by luck of timing. */
    while (worker != 0 && !(atomic_load(&s->workers) & 1u)) {
        sched_yield();
    }
}

Test(parallel_for, the_calling_thread_takes_part) {
    spin_ctx_t s = {0};
    cr_assert_eq(weft_parallel_for(jobs, 512, 1, spin_range, &s), WEFT_OK);
    cr_expect(atomic_load(&s.workers) & 1u, "worker 0 (the caller) ran no range");
}

typedef struct nest {
    weft_jobs_t *jobs;
    atomic_ullong sum; /* sum over all inner indices */
    atomic_uint bad;   /* inner calls that failed */
} nest_t;

static void inner_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    nest_t *n = ctx;
    unsigned long long s = 0;
    for (uint64_t i = begin; i < end; ++i) {
        s += i;
    }
    atomic_fetch_add(&n->sum, s);
}

static void outer_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    nest_t *n = ctx;
    for (uint64_t i = begin; i < end; ++i) {
        if (weft_parallel_for(n->jobs, 1000, 10, inner_range, n) != WEFT_OK) {
            atomic_fetch_add(&n->bad, 1u);
        }
    }
}

Test(parallel_for, nested_parallel_for_completes) {
    nest_t n = {.jobs = jobs};
    cr_assert_eq(weft_parallel_for(jobs, 64, 1, outer_range, &n), WEFT_OK);
    cr_expect_eq(atomic_load(&n.bad), 0u);
    cr_expect_eq(atomic_load(&n.sum), 64ull * (999ull * 1000ull / 2ull));
}

static void pfor_in_job(void *arg, const weft_job_ctx_t *ctx) {
    nest_t *n = arg;
    if (weft_parallel_for(ctx->jobs, 8, 1, outer_range, n) != WEFT_OK) {
        atomic_fetch_add(&n->bad, 1u);
    }
}

Test(parallel_for, parallel_for_inside_jobs_completes) {
    nest_t n = {.jobs = jobs};
    weft_job_desc_t d[8];
    for (int i = 0; i < 8; ++i) {
        d[i] = (weft_job_desc_t){.fn = pfor_in_job, .arg = &n};
    }
    weft_counter_t c = {0};
    cr_assert_eq(weft_job_submit(jobs, d, 8, &c), WEFT_OK);
    cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    cr_expect_eq(atomic_load(&n.bad), 0u);
    cr_expect_eq(atomic_load(&n.sum), 64ull * (999ull * 1000ull / 2ull));
}

typedef struct deep {
    weft_jobs_t *jobs;
    uint32_t levels;    /* nesting levels still to open below this one */
    atomic_uint leaves; /* innermost ranges run */
    atomic_uint bad;    /* calls that failed */
} deep_t;

typedef struct deep_level {
    deep_t *d;
    uint32_t levels; /* levels to open below */
} deep_level_t;

static void deep_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    deep_level_t *l = ctx;
    for (uint64_t i = begin; i < end; ++i) {
        if (l->levels == 0) {
            atomic_fetch_add(&l->d->leaves, 1u);
            continue;
        }
        deep_level_t below = {l->d, l->levels - 1u};
        if (weft_parallel_for(l->d->jobs, 3, 1, deep_range, &below) != WEFT_OK) {
            atomic_fetch_add(&l->d->bad, 1u);
        }
    }
}

Test(parallel_for, nesting_deeper_than_the_per_thread_slots_completes) {
    /* 7 levels of 3 ranges: deeper than the slots a thread keeps for nested loops, so the
     * innermost levels run on their calling worker alone. */
    deep_t d = {.jobs = jobs};
    deep_level_t top = {&d, 6};
    cr_assert_eq(weft_parallel_for(jobs, 3, 1, deep_range, &top), WEFT_OK);
    cr_expect_eq(atomic_load(&d.bad), 0u);
    cr_expect_eq(atomic_load(&d.leaves), 2187u, "3^7 innermost ranges expected");
}

typedef struct closing {
    atomic_uint ranges; /* ranges run */
    atomic_bool closed; /* set once weft_parallel_for returned */
    atomic_uint late;   /* ranges run after that */
} closing_t;

static void closing_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    closing_t *c = ctx;
    if (atomic_load(&c->closed)) {
        atomic_fetch_add(&c->late, 1u);
    }
    atomic_fetch_add(&c->ranges, (unsigned)(end - begin));
}

Test(parallel_for, back_to_back_loops_never_run_a_range_after_returning) {
    /* Helpers of a finished loop may still start (they were stolen late); they must find
     * nothing to run, neither in their own loop nor in the next one in the same slot. */
    enum { LOOPS = 3000, COUNT = 24 };
    closing_t *c = calloc(LOOPS, sizeof *c);
    int first_bad = -1;
    for (int i = 0; i < LOOPS; ++i) {
        uint64_t grain = (uint64_t)(1 + i % 3);
        weft_result_t r = weft_parallel_for(jobs, COUNT, grain, closing_range, &c[i]);
        atomic_store(&c[i].closed, true);
        if ((r != WEFT_OK || atomic_load(&c[i].ranges) != COUNT) && first_bad < 0) {
            first_bad = i;
        }
    }
    /* Destroy runs every job still queued (straggling helpers included) before it returns. */
    weft_jobs_destroy(jobs);
    jobs = NULL;
    unsigned late = 0, changed = 0;
    for (int i = 0; i < LOOPS; ++i) {
        late += atomic_load(&c[i].late);
        changed += atomic_load(&c[i].ranges) != COUNT;
    }
    free(c);
    cr_expect_eq(first_bad, -1, "loop %d returned before all its ranges ran", first_bad);
    cr_expect_eq(late, 0u, "%u ranges ran after their loop returned", late);
    cr_expect_eq(changed, 0u, "%u loops ran some items twice", changed);
}

typedef struct bounds_log {
    uint64_t begins[64]; /* begin of each range, indexed by begin / grain */
    uint64_t ends[64];
    atomic_uint calls;
} bounds_log_t;

static void log_bounds(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    bounds_log_t *l = ctx;
    l->begins[begin / 10] = begin;
    l->ends[begin / 10] = end;
    atomic_fetch_add(&l->calls, 1u);
}

Test(parallel_for, boundaries_depend_only_on_count_and_grain) {
    weft_jobs_t *other = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 1}, &other), WEFT_OK);
    bounds_log_t a = {0}, b = {0};
    cr_assert_eq(weft_parallel_for(jobs, 455, 10, log_bounds, &a), WEFT_OK);
    cr_assert_eq(weft_parallel_for(other, 455, 10, log_bounds, &b), WEFT_OK);
    weft_jobs_destroy(other);
    cr_assert_eq(atomic_load(&a.calls), 46u);
    cr_assert_eq(atomic_load(&b.calls), 46u);
    for (int k = 0; k < 46; ++k) {
        cr_expect_eq(a.begins[k], (uint64_t)k * 10u);
        cr_expect_eq(a.ends[k], k == 45 ? 455u : (uint64_t)k * 10u + 10u);
        cr_expect_eq(a.begins[k], b.begins[k]);
        cr_expect_eq(a.ends[k], b.ends[k]);
    }
}

static void *pfor_from_registered(void *arg) {
    weft_jobs_t *j = arg;
    if (weft_jobs_register_thread(j) != WEFT_OK) {
        return (void *)1;
    }
    cover_t c = {
        .count = 5000, .grain = 7, .nworkers = weft_jobs_worker_count(j), .registered = true};
    c.hits = calloc(5000, sizeof *c.hits);
    weft_result_t r = weft_parallel_for(j, 5000, 7, cover_range, &c);
    int bad = r != WEFT_OK || atomic_load(&c.bad) != 0;
    for (int i = 0; i < 5000; ++i) {
        bad |= atomic_load(&c.hits[i]) != 1u;
    }
    free(c.hits);
    return (void *)(intptr_t)(bad ? 2 : 0);
}

Test(parallel_for, registered_threads_can_run_a_parallel_for) {
    pthread_t t[2];
    for (int i = 0; i < 2; ++i) {
        pthread_create(&t[i], NULL, pfor_from_registered, jobs);
    }
    for (int i = 0; i < 2; ++i) {
        void *r = (void *)9;
        pthread_join(t[i], &r);
        cr_expect_eq((intptr_t)r, 0);
    }
}

/* ---- registered callers never wait for workers that cannot come ---- */

typedef struct blocked_loop {
    weft_jobs_t *jobs;
    uint32_t workers;
    atomic_uint blockers_in; /* blocker jobs running (each holds a spawned worker) */
    atomic_int loop_done;    /* the registered thread's loop returned */
    atomic_uint ranges;      /* ranges run */
    atomic_uint not_caller;  /* ranges that saw a worker index other than UINT32_MAX */
    weft_result_t result;    /* what the registered thread's loop returned */
    int finished;            /* guarded by lock: the registered thread is done */
    pthread_mutex_t lock;
    pthread_cond_t cond;
} blocked_loop_t;

/* Holds its worker until the registered thread's loop has returned. */
static void hold_worker(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    blocked_loop_t *b = arg;
    atomic_fetch_add(&b->blockers_in, 1u);
    while (!atomic_load(&b->loop_done)) {
        sched_yield();
    }
}

static void count_caller_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    blocked_loop_t *b = ctx;
    atomic_fetch_add(&b->ranges, 1u);
    size_t size = 1;
    /* the caller's ranges have no scratch: NULL and size 0, in every build */
    void *scratch = weft_jobs_scratch(b->jobs, worker, &size);
    if (worker != UINT32_MAX || end - begin != 10u || scratch != NULL || size != 0) {
        atomic_fetch_add(&b->not_caller, 1u);
    }
}

static void *blocked_loop_thread(void *arg) {
    blocked_loop_t *b = arg;
    b->result = weft_jobs_register_thread(b->jobs);
    if (b->result == WEFT_OK) {
        /* Occupy every spawned worker with a job that waits for our loop. */
        weft_job_desc_t d = {.fn = hold_worker, .arg = b};
        for (uint32_t i = 1; i < b->workers && b->result == WEFT_OK; ++i) {
            b->result = weft_job_submit(b->jobs, &d, 1, NULL);
        }
        while (b->result == WEFT_OK && atomic_load(&b->blockers_in) + 1u < b->workers) {
            sched_yield();
        }
    }
    if (b->result == WEFT_OK) {
        b->result = weft_parallel_for(b->jobs, 1000, 10, count_caller_range, b);
    }
    atomic_store(&b->loop_done, 1);
    pthread_mutex_lock(&b->lock);
    b->finished = 1;
    pthread_cond_signal(&b->cond);
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* The creating thread (worker 0) blocks outside the job system, as a thread joining the
 * registered one would, and every spawned worker is held by a job that waits for the
 * loop: only the registered caller can run its loop. It waits with a deadline, so the test
 * fails instead of hanging if the loop waits for workers. */
static void registered_loop_with_every_worker_busy(uint32_t workers) {
    weft_jobs_t *j = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = workers}, &j), WEFT_OK);
    blocked_loop_t b = {.jobs = j, .workers = workers};
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&b.cond, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&b.lock, NULL);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, blocked_loop_thread, &b), 0);
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += 20;
    int rc = 0;
    pthread_mutex_lock(&b.lock);
    while (!b.finished && rc == 0) {
        rc = pthread_cond_timedwait(&b.cond, &b.lock, &deadline);
    }
    int finished = b.finished;
    pthread_mutex_unlock(&b.lock);
    cr_assert(finished,
              "the registered thread's parallel_for on %u worker(s) did not return "
              "within 20 s while no worker could run it",
              workers);
    pthread_join(t, NULL);
    cr_expect_eq(b.result, WEFT_OK);
    cr_expect_eq(atomic_load(&b.ranges), 100u);
    cr_expect_eq(atomic_load(&b.not_caller), 0u,
                 "every range ran on the registered caller, with worker UINT32_MAX and no scratch");
    weft_jobs_destroy(j);
    pthread_cond_destroy(&b.cond);
    pthread_mutex_destroy(&b.lock);
}

Test(parallel_for, registered_caller_on_one_worker_runs_its_loop_while_worker_zero_is_blocked) {
    registered_loop_with_every_worker_busy(1);
}

Test(parallel_for, registered_caller_on_two_workers_runs_its_loop_while_every_worker_is_busy) {
    registered_loop_with_every_worker_busy(2);
}

typedef struct order {
    uint64_t next;    /* expected next begin */
    int out_of_order; /* ranges that did not start where the previous ended */
    uint32_t worker_sum;
} order_t;

static void in_order(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    order_t *o = ctx;
    o->out_of_order += begin != o->next;
    o->next = end;
    o->worker_sum += worker;
}

Test(parallel_for, inline_mode_runs_ranges_in_order_on_the_caller) {
    weft_jobs_t *in = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.execution = WEFT_EXECUTION_INLINE}, &in),
                 WEFT_OK);
    order_t o = {0};
    cr_assert_eq(weft_parallel_for(in, 1000, 33, in_order, &o), WEFT_OK);
    weft_jobs_destroy(in);
    cr_expect_eq(o.next, 1000u);
    cr_expect_eq(o.out_of_order, 0);
    cr_expect_eq(o.worker_sum, 0u);
}

/* A broken contract is its documented error in every build (debug builds too). */
Test(parallel_for, null_fn_is_einval) {
    cr_expect_eq(weft_parallel_for(jobs, 10, 1, NULL, NULL), WEFT_EINVAL);
}

/* ... unless the program opted in to aborting on contract errors. */
Test(parallel_for, null_fn_aborts_when_contract_abort_is_on, .signal = SIGABRT) {
    weft_set_contract_abort(true);
    weft_parallel_for(jobs, 10, 1, NULL, NULL);
}

/* weft_jobs_help_loop: a job busy with a list of its own (the ECS's ready list) takes part in
 * a loop another job opened. */
typedef struct help_loop {
    weft_jobs_t *jobs;
    atomic_uint b_running;  /* the helping job has started */
    atomic_uint loop_open;  /* the loop's first range has started */
    atomic_uint caller;     /* the loop caller's worker index */
    atomic_uint helped;     /* ranges run by another worker before the helper gave up */
    atomic_uint gave_up;    /* the helper is done asking (its ranges, if any, have run) */
    atomic_uint help_said;  /* 1 + what weft_jobs_help_loop returned */
    atomic_uint other_help; /* worker index the helper saw */
} help_loop_t;

static uint64_t mono_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The caller's ranges wait (at most 5 s) until another worker ran one or the helper gave
 * up: without help the caller would run them all before anyone else could. */
static void help_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    help_loop_t *h = ctx;
    (void)begin;
    (void)end;
    if (worker != atomic_load(&h->caller)) {
        if (!atomic_load(&h->gave_up)) { /* only the busy job runs ranges before it gives up */
            atomic_fetch_add(&h->helped, 1u);
        }
        return;
    }
    atomic_store(&h->loop_open, 1u);
    uint64_t until = mono_ns() + 5000000000u;
    while (!atomic_load(&h->helped) && !atomic_load(&h->gave_up) && mono_ns() < until) {
        sched_yield();
    }
}

static void help_caller_job(void *arg, const weft_job_ctx_t *ctx) {
    help_loop_t *h = arg;
    atomic_store(&h->caller, ctx->worker);
    (void)weft_parallel_for(h->jobs, 64, 1, help_range, h);
}

static void help_busy_job(void *arg, const weft_job_ctx_t *ctx) {
    help_loop_t *h = arg;
    atomic_store(&h->b_running, 1u);
    uint64_t until = mono_ns() + 5000000000u;
    while (!atomic_load(&h->loop_open) && mono_ns() < until) {
        sched_yield();
    }
    atomic_store(&h->other_help, ctx->worker);
    atomic_store(&h->help_said, 1u + (weft_jobs_help_loop(h->jobs, ctx->worker) ? 1u : 0u));
    atomic_store(&h->gave_up, 1u);
}

/* Workers 1 and 2 are both in jobs when the loop opens (the creating thread, worker 0, spins
 * outside the job system): no idle worker can join it, so its ranges on another worker
 * than the caller's were run by the busy job's weft_jobs_help_loop. */
Test(parallel_for, a_busy_job_helps_a_loop_another_job_opened) {
    help_loop_t h = {.jobs = jobs, .caller = UINT32_MAX};
    weft_counter_t c;
    weft_counter_init(&c);
    weft_job_desc_t busy = {.fn = help_busy_job, .arg = &h};
    cr_assert_eq(weft_job_submit(jobs, &busy, 1, &c), WEFT_OK);
    while (!atomic_load(&h.b_running)) {
        sched_yield();
    }
    weft_job_desc_t caller = {.fn = help_caller_job, .arg = &h};
    cr_assert_eq(weft_job_submit(jobs, &caller, 1, &c), WEFT_OK);
    while (!atomic_load(&h.gave_up)) {
        sched_yield();
    }
    cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    cr_expect_eq(atomic_load(&h.help_said), 2u, "weft_jobs_help_loop found no loop to help");
    cr_expect_gt(atomic_load(&h.helped), 0u, "no range ran on the busy job's worker");
    cr_expect_neq(atomic_load(&h.other_help), atomic_load(&h.caller));
    /* nothing open now: it returns false at once, and ignores a thread that is no worker */
    cr_expect(!weft_jobs_help_loop(jobs, 0)); /* the creating thread is worker 0 */
    cr_expect(!weft_jobs_help_loop(jobs, UINT32_MAX));
    cr_expect(!weft_jobs_help_loop(NULL, 0));
}
