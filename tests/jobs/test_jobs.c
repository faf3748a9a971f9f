/* test_jobs.c: the job system's lifecycle and queries — create/destroy, descs, worker
 * indices and names, scratch, registration, profiler hooks, allocator, shutdown. */
#define _GNU_SOURCE 1 /* pthread_getname_np */

#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/jobs.h"

TestSuite(jobs, .timeout = 60);

static void count_job(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    atomic_fetch_add((atomic_uint *)arg, 1u);
}

Test(jobs, null_desc_resolves_to_hardware_threads) {
    weft_jobs_t *jobs = NULL;
    cr_assert_eq(weft_jobs_create(NULL, &jobs), WEFT_OK);
    weft_jobs_desc_t d = weft_jobs_desc_resolved(NULL);
    cr_expect_geq(d.worker_count, 1u);
    cr_expect_eq(weft_jobs_worker_count(jobs), d.worker_count);
    weft_jobs_destroy(jobs);
}

Test(jobs, desc_resolved_fills_every_default) {
    weft_jobs_desc_t d = weft_jobs_desc_resolved(&(weft_jobs_desc_t){.worker_count = 3});
    cr_expect_eq(d.worker_count, 3u);
    cr_expect_eq(d.queue_capacity, 4096u);
    cr_expect_eq(d.scratch_size, (size_t)64 * 1024);
    cr_expect_eq(d.spin_us, 50u);
    cr_expect(d.allocator.alloc != NULL && d.allocator.free != NULL);
    weft_jobs_desc_t i = weft_jobs_desc_resolved(
        &(weft_jobs_desc_t){.worker_count = 5, .execution = WEFT_EXECUTION_INLINE});
    cr_expect_eq(i.worker_count, 1u);
}

Test(jobs, destroy_null_is_ignored) { weft_jobs_destroy(NULL); }

Test(jobs, create_and_destroy_repeatedly_while_idle) {
    for (int i = 0; i < 40; ++i) {
        weft_jobs_t *jobs = NULL;
        cr_assert_eq(
            weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 1u + (uint32_t)(i % 4)}, &jobs),
            WEFT_OK);
        weft_jobs_destroy(jobs);
    }
}

Test(jobs, destroy_finishes_every_submitted_job) {
    for (int i = 0; i < 20; ++i) {
        weft_jobs_t *jobs = NULL;
        cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 3}, &jobs), WEFT_OK);
        atomic_uint ran = 0;
        weft_job_desc_t d[100];
        for (int j = 0; j < 100; ++j) {
            d[j] = (weft_job_desc_t){.fn = count_job, .arg = &ran};
        }
        cr_assert_eq(weft_job_submit(jobs, d, 100, NULL), WEFT_OK);
        weft_jobs_destroy(jobs); /* no wait: destroy must run them */
        cr_assert_eq(atomic_load(&ran), 100u);
    }
}

Test(jobs, creating_thread_is_worker_zero) {
    weft_jobs_t *jobs = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 2}, &jobs), WEFT_OK);
    cr_expect_eq(weft_jobs_worker_index(jobs), 0u);
    weft_jobs_destroy(jobs);
}

static void *index_from_foreign_thread(void *arg) {
    return (void *)(uintptr_t)weft_jobs_worker_index(arg);
}

Test(jobs, unknown_thread_has_no_worker_index) {
    weft_jobs_t *jobs = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 2}, &jobs), WEFT_OK);
    pthread_t t;
    void *got = NULL;
    pthread_create(&t, NULL, index_from_foreign_thread, jobs);
    pthread_join(t, &got);
    cr_expect_eq((uint32_t)(uintptr_t)got, UINT32_MAX);
    weft_jobs_destroy(jobs);
}

typedef struct seen {
    atomic_uint bad;          /* jobs whose ctx disagreed with worker_index or had a bad name */
    atomic_uint by_worker[4]; /* jobs run per worker */
} seen_t;

typedef struct seen_arg {
    seen_t *seen;
    weft_jobs_t *jobs;
} seen_arg_t;

static void record_worker(void *arg, const weft_job_ctx_t *ctx) {
    seen_arg_t *a = arg;
    uint32_t w = weft_jobs_worker_index(ctx->jobs);
    char name[32] = "", want[32];
    pthread_getname_np(pthread_self(), name, sizeof name);
    snprintf(want, sizeof want, "weft-worker-%u", w);
    if (w != ctx->worker || w >= 4 || ctx->jobs != a->jobs || (w != 0 && strcmp(name, want))) {
        atomic_fetch_add(&a->seen->bad, 1u);
        return;
    }
    atomic_fetch_add(&a->seen->by_worker[w], 1u);
    /* Keep this worker busy a little so the others get a chance to steal. */
    for (volatile int i = 0; i < 20000; ++i) {
    }
}

Test(jobs, jobs_see_their_worker_index_and_workers_are_named) {
    weft_jobs_t *jobs = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 4}, &jobs), WEFT_OK);
    seen_t seen = {0};
    seen_arg_t arg = {&seen, jobs};
    weft_job_desc_t d[400];
    for (int j = 0; j < 400; ++j) {
        d[j] = (weft_job_desc_t){.fn = record_worker, .arg = &arg};
    }
    weft_counter_t c = {0};
    cr_assert_eq(weft_job_submit(jobs, d, 400, &c), WEFT_OK);
    cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    cr_expect_eq(atomic_load(&seen.bad), 0u);
    unsigned total = 0;
    for (int w = 0; w < 4; ++w) {
        total += atomic_load(&seen.by_worker[w]);
    }
    cr_expect_eq(total, 400u);
    weft_jobs_destroy(jobs);
}

static void scratch_job(void *arg, const weft_job_ctx_t *ctx) {
    atomic_uint *bad = arg;
    size_t size = 0;
    unsigned char *s = weft_jobs_scratch(ctx->jobs, ctx->worker, &size);
    if (!s || size != 4096) {
        atomic_fetch_add(bad, 1u);
        return;
    }
    /* Private to the worker: fill and check with the worker's own byte. */
    memset(s, (int)ctx->worker + 1, size);
    for (size_t i = 0; i < size; ++i) {
        if (s[i] != (unsigned char)(ctx->worker + 1)) {
            atomic_fetch_add(bad, 1u);
            return;
        }
    }
}

Test(jobs, scratch_is_private_per_worker) {
    weft_jobs_t *jobs = NULL;
    cr_assert_eq(
        weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 3, .scratch_size = 4096}, &jobs),
        WEFT_OK);
    void *a = weft_jobs_scratch(jobs, 0, NULL), *b = weft_jobs_scratch(jobs, 1, NULL);
    cr_expect(a != NULL && b != NULL && a != b);
    atomic_uint bad = 0;
    weft_job_desc_t d[300];
    for (int j = 0; j < 300; ++j) {
        d[j] = (weft_job_desc_t){.fn = scratch_job, .arg = &bad};
    }
    weft_counter_t c = {0};
    cr_assert_eq(weft_job_submit(jobs, d, 300, &c), WEFT_OK);
    cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    cr_expect_eq(atomic_load(&bad), 0u);
    weft_jobs_destroy(jobs);
}

static void *registered_thread(void *arg) {
    weft_jobs_t *jobs = arg;
    if (weft_jobs_register_thread(jobs) != WEFT_OK) {
        return (void *)1;
    }
    if (weft_jobs_register_thread(jobs) != WEFT_OK) { /* twice is fine */
        return (void *)2;
    }
    if (weft_jobs_worker_index(jobs) != UINT32_MAX) {
        return (void *)3;
    }
    atomic_uint ran = 0;
    weft_job_desc_t d[64];
    for (int j = 0; j < 64; ++j) {
        d[j] = (weft_job_desc_t){.fn = count_job, .arg = &ran};
    }
    for (int round = 0; round < 50; ++round) {
        weft_counter_t c = {0};
        if (weft_job_submit(jobs, d, 64, &c) != WEFT_OK || weft_counter_wait(jobs, &c) != WEFT_OK) {
            return (void *)4;
        }
    }
    return atomic_load(&ran) == 64u * 50u ? NULL : (void *)5;
}

Test(jobs, registered_threads_submit_and_wait) {
    weft_jobs_t *jobs = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 2}, &jobs), WEFT_OK);
    pthread_t t[3];
    for (int i = 0; i < 3; ++i) {
        pthread_create(&t[i], NULL, registered_thread, jobs);
    }
    for (int i = 0; i < 3; ++i) {
        void *r = (void *)9;
        pthread_join(t[i], &r);
        cr_expect_eq((uintptr_t)r, 0u, "registered thread %d failed at step %zu", i,
                     (size_t)(uintptr_t)r);
    }
    weft_jobs_destroy(jobs);
}

static void *register_and_report(void *jobs) {
    return (void *)(intptr_t)weft_jobs_register_thread(jobs);
}

Test(jobs, register_thread_in_inline_mode_is_refused) {
    weft_jobs_t *jobs = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.execution = WEFT_EXECUTION_INLINE}, &jobs),
                 WEFT_OK);
    pthread_t t;
    void *r = NULL;
    pthread_create(&t, NULL, register_and_report, jobs);
    pthread_join(t, &r);
    cr_expect_eq((weft_result_t)(intptr_t)r, WEFT_ESTATE);
    weft_jobs_destroy(jobs);
}

/* ---- registrations end with the job system or on unregister ---- */

typedef struct long_lived {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    weft_jobs_t *jobs;    /* guarded by lock: the job system to register with next */
    int round;            /* guarded by lock: bumped by the test thread per job system */
    int answered;         /* guarded by lock: rounds the registered thread has answered */
    weft_result_t result; /* guarded by lock: its last answer */
    int quit;             /* guarded by lock */
} long_lived_t;

/* Registers with each job system it is handed, runs a job through it, never unregisters. */
static void *long_lived_thread(void *arg) {
    long_lived_t *l = arg;
    pthread_mutex_lock(&l->lock);
    for (;;) {
        while (l->answered == l->round && !l->quit) {
            pthread_cond_wait(&l->cond, &l->lock);
        }
        if (l->quit) {
            break;
        }
        weft_jobs_t *jobs = l->jobs;
        pthread_mutex_unlock(&l->lock);
        weft_result_t r = weft_jobs_register_thread(jobs);
        atomic_uint ran = 0;
        weft_job_desc_t d = {.fn = count_job, .arg = &ran};
        weft_counter_t c = {0};
        if (r == WEFT_OK) {
            r = weft_job_submit(jobs, &d, 1, &c);
        }
        if (r == WEFT_OK) {
            r = weft_counter_wait(jobs, &c);
        }
        if (r == WEFT_OK && atomic_load(&ran) != 1u) {
            r = WEFT_EINVAL;
        }
        pthread_mutex_lock(&l->lock);
        l->result = r;
        l->answered += 1;
        pthread_cond_broadcast(&l->cond);
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

/* An allocator that hands freed blocks back (last freed first, same size), so each new job
 * system lands at the address of the one destroyed before it, as malloc may also do. */
typedef struct recycler {
    pthread_mutex_t lock;
    void *ptr[256];
    size_t size[256];
    int n;
} recycler_t;

static void *recycle_alloc(size_t size, size_t align, void *user) {
    recycler_t *r = user;
    pthread_mutex_lock(&r->lock);
    for (int i = r->n - 1; i >= 0; --i) {
        if (r->size[i] == size && (uintptr_t)r->ptr[i] % align == 0) {
            void *p = r->ptr[i];
            r->n -= 1;
            r->ptr[i] = r->ptr[r->n];
            r->size[i] = r->size[r->n];
            pthread_mutex_unlock(&r->lock);
            return p;
        }
    }
    pthread_mutex_unlock(&r->lock);
    return aligned_alloc(align, (size + align - 1) / align * align);
}

static void recycle_free(void *ptr, size_t size, void *user) {
    recycler_t *r = user;
    pthread_mutex_lock(&r->lock);
    if (r->n < 256) {
        r->ptr[r->n] = ptr;
        r->size[r->n] = size;
        r->n += 1;
        ptr = NULL;
    }
    pthread_mutex_unlock(&r->lock);
    free(ptr);
}

Test(jobs, a_long_lived_thread_registers_with_every_one_of_twelve_successive_job_systems) {
    long_lived_t l = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    static recycler_t rec = {.lock = PTHREAD_MUTEX_INITIALIZER};
    weft_jobs_desc_t desc = {
        .worker_count = 2,
        .allocator = {.alloc = recycle_alloc, .free = recycle_free, .user = &rec}};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, long_lived_thread, &l), 0);
    const weft_jobs_t *first = NULL;
    int same_address = 0;
    for (int i = 0; i < 12; ++i) {
        weft_jobs_t *jobs = NULL;
        cr_assert_eq(weft_jobs_create(&desc, &jobs), WEFT_OK);
        first = first ? first : jobs;
        same_address += jobs == first;
        pthread_mutex_lock(&l.lock);
        l.jobs = jobs;
        l.round += 1;
        pthread_cond_broadcast(&l.cond);
        while (l.answered != l.round) {
            pthread_cond_wait(&l.cond, &l.lock);
        }
        weft_result_t r = l.result;
        pthread_mutex_unlock(&l.lock);
        weft_jobs_destroy(jobs); /* the thread is still registered with it */
        cr_expect_eq(r, WEFT_OK, "job system %d: registering or using it gave %s", i + 1,
                     weft_result_name(r));
    }
    pthread_mutex_lock(&l.lock);
    l.quit = 1;
    pthread_cond_broadcast(&l.cond);
    pthread_mutex_unlock(&l.lock);
    pthread_join(t, NULL);
    cr_expect(same_address > 1, "the allocator did not reuse the job system's address");
    for (int i = 0; i < rec.n; ++i) {
        free(rec.ptr[i]);
    }
}

typedef struct cycler {
    weft_jobs_t *jobs;
    int failed_at;        /* 0: all cycles fine; else the 1-based cycle that failed */
    weft_result_t result; /* what failed there */
} cycler_t;

static void count_items(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    atomic_fetch_add((atomic_uint *)ctx, (unsigned)(end - begin));
}

/* 100 cycles of register, run a job and a loop, unregister. The loop's helper jobs may run
 * after the thread has unregistered and another thread owns its slot. */
static void *register_cycles(void *arg) {
    cycler_t *c = arg;
    for (int i = 1; i <= 100 && c->failed_at == 0; ++i) {
        atomic_uint ran = 0, items = 0;
        weft_job_desc_t d = {.fn = count_job, .arg = &ran};
        weft_counter_t done = {0};
        weft_result_t r = weft_jobs_register_thread(c->jobs);
        if (r == WEFT_OK) {
            r = weft_job_submit(c->jobs, &d, 1, &done);
        }
        if (r == WEFT_OK) {
            r = weft_parallel_for(c->jobs, 40, 1, count_items, &items);
        }
        if (r == WEFT_OK) {
            r = weft_counter_wait(c->jobs, &done);
        }
        if (r == WEFT_OK && (atomic_load(&ran) != 1u || atomic_load(&items) != 40u)) {
            r = WEFT_EINVAL;
        }
        if (r == WEFT_OK) {
            r = weft_jobs_unregister_thread(c->jobs);
        }
        if (r != WEFT_OK) {
            c->failed_at = i;
            c->result = r;
        }
    }
    return NULL;
}

Test(jobs, registering_and_unregistering_a_hundred_times_never_runs_out_of_slots) {
    weft_jobs_t *jobs = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 2}, &jobs), WEFT_OK);
    cycler_t one = {.jobs = jobs};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, register_cycles, &one), 0);
    pthread_join(t, NULL);
    cr_expect_eq(one.failed_at, 0, "cycle %d failed with %s", one.failed_at,
                 weft_result_name(one.result));
    /* Several threads at once: 300 registrations share the 64 slots. */
    cycler_t many[3] = {{.jobs = jobs}, {.jobs = jobs}, {.jobs = jobs}};
    pthread_t ts[3];
    for (int i = 0; i < 3; ++i) {
        cr_assert_eq(pthread_create(&ts[i], NULL, register_cycles, &many[i]), 0);
    }
    for (int i = 0; i < 3; ++i) {
        pthread_join(ts[i], NULL);
        cr_expect_eq(many[i].failed_at, 0, "thread %d: cycle %d failed with %s", i,
                     many[i].failed_at, weft_result_name(many[i].result));
    }
    weft_jobs_destroy(jobs);
}

typedef struct unreg_probe {
    weft_jobs_t *jobs;
    weft_result_t never;    /* unregister without registering */
    weft_result_t twice;    /* unregister after unregistering */
    weft_result_t submit;   /* a submit after unregistering */
    weft_result_t in_range; /* unregister from a range of its own parallel_for */
    weft_result_t after;    /* unregister once that loop has returned */
} unreg_probe_t;

static void unregister_in_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    unreg_probe_t *p = ctx;
    if (begin == 0 && worker == UINT32_MAX) {
        p->in_range = weft_jobs_unregister_thread(p->jobs);
    }
    (void)end;
}

static void *probe_unregister(void *arg) {
    unreg_probe_t *p = arg;
    p->never = weft_jobs_unregister_thread(p->jobs);
    if (weft_jobs_register_thread(p->jobs) == WEFT_OK &&
        weft_jobs_unregister_thread(p->jobs) == WEFT_OK) {
        p->twice = weft_jobs_unregister_thread(p->jobs);
        static atomic_uint never_run; /* the submit is refused: nothing counts */
        weft_job_desc_t d = {.fn = count_job, .arg = &never_run};
        p->submit = weft_job_submit(p->jobs, &d, 1, NULL);
    }
    p->in_range = WEFT_OK;
    if (weft_jobs_register_thread(p->jobs) == WEFT_OK) {
        /* one worker: every range runs in order on this thread */
        weft_parallel_for(p->jobs, 4, 1, unregister_in_range, p);
        p->after = weft_jobs_unregister_thread(p->jobs);
    }
    return NULL;
}

Test(jobs, unregistering_a_thread_that_is_not_registered_is_enoent) {
    weft_jobs_t *jobs = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 1}, &jobs), WEFT_OK);
    unreg_probe_t p = {.jobs = jobs, .never = 1, .twice = 1, .submit = 1, .after = 1};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, probe_unregister, &p), 0);
    pthread_join(t, NULL);
    cr_expect_eq(p.never, WEFT_ENOENT, "never registered: %s", weft_result_name(p.never));
    cr_expect_eq(p.twice, WEFT_ENOENT, "already unregistered: %s", weft_result_name(p.twice));
    cr_expect_eq(p.submit, WEFT_EINVAL, "submit after unregistering: %s",
                 weft_result_name(p.submit));
    cr_expect_eq(p.in_range, WEFT_ESTATE, "inside its own loop: %s", weft_result_name(p.in_range));
    cr_expect_eq(p.after, WEFT_OK, "after its loop: %s", weft_result_name(p.after));
    cr_expect_eq(weft_jobs_unregister_thread(jobs), WEFT_ESTATE, "worker 0 is not registered");
    cr_expect_eq(weft_jobs_unregister_thread(NULL), WEFT_EINVAL);
    weft_jobs_destroy(jobs);
}

/* ---- profiler hooks ---- */

typedef struct prof_counts {
    atomic_uint begin, end, sleep, wake;
} prof_counts_t;

static void on_begin(const char *name, uint32_t tag, uint32_t worker, void *user) {
    (void)worker;
    if (name && strcmp(name, "probe") == 0 && tag == 42u) {
        atomic_fetch_add(&((prof_counts_t *)user)->begin, 1u);
    }
}
static void on_end(const char *name, uint32_t tag, uint32_t worker, void *user) {
    (void)worker;
    if (name && strcmp(name, "probe") == 0 && tag == 42u) {
        atomic_fetch_add(&((prof_counts_t *)user)->end, 1u);
    }
}
static void on_sleep(uint32_t worker, void *user) {
    (void)worker;
    atomic_fetch_add(&((prof_counts_t *)user)->sleep, 1u);
}
static void on_wake(uint32_t worker, void *user) {
    (void)worker;
    atomic_fetch_add(&((prof_counts_t *)user)->wake, 1u);
}

static void nothing(void *arg, const weft_job_ctx_t *ctx) {
    (void)arg;
    (void)ctx;
}

/* Two workers whose profiler hooks count into *pc; an idle worker sleeps after 1 us. */
static weft_jobs_t *profiled_jobs(prof_counts_t *pc) {
    weft_jobs_t *jobs = NULL;
    weft_jobs_desc_t desc = {
        .worker_count = 2,
        .spin_us = 1,
        .profiler = {on_begin, on_end, on_sleep, on_wake, pc},
    };
    cr_assert_eq(weft_jobs_create(&desc, &jobs), WEFT_OK);
    return jobs;
}

Test(jobs, profiler_hooks_see_jobs_and_sleeps) {
    prof_counts_t pc = {0};
    weft_jobs_t *jobs = profiled_jobs(&pc);
    weft_job_desc_t d[10];
    for (int j = 0; j < 10; ++j) {
        d[j] = (weft_job_desc_t){.fn = nothing, .name = "probe", .tag = 42};
    }
    weft_counter_t c = {0};
    cr_assert_eq(weft_job_submit(jobs, d, 10, &c), WEFT_OK);
    cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    cr_expect_eq(atomic_load(&pc.begin), 10u);
    cr_expect_eq(atomic_load(&pc.end), 10u);
    /* The spawned worker runs out of work and goes to sleep (spin_us = 1). Wait for it
     * by polling the hook counter: this is the event under test, not a timing guess. */
    while (atomic_load(&pc.sleep) == 0) {
        sched_yield();
    }
    weft_jobs_destroy(jobs); /* wakes it */
    cr_expect_geq(atomic_load(&pc.wake), 1u);
}

/* Polls `counter` until it reaches `want` or 10 s pass; the events are the subject of the
 * test, the deadline only turns a missing one into a failure instead of a hang. */
static bool reaches(atomic_uint *counter, unsigned want) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load(counter) < want) {
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10) {
            return false;
        }
    }
    return true;
}

Test(jobs, wake_rouses_a_sleeping_worker_without_giving_it_work) {
    prof_counts_t pc = {0};
    weft_jobs_t *jobs = profiled_jobs(&pc);
    weft_jobs_wake(NULL); /* ignored */
    cr_assert(reaches(&pc.sleep, 1u), "the idle worker never went to sleep");
    cr_expect_eq(atomic_load(&pc.wake), 0u, "nothing woke it yet");
    weft_jobs_wake(jobs);
    cr_assert(reaches(&pc.wake, 1u), "weft_jobs_wake did not wake the sleeping worker");
    /* it found nothing, spun for its window and went back to sleep */
    cr_expect(reaches(&pc.sleep, 2u), "the woken worker did not go back to sleep");
    cr_expect_eq(atomic_load(&pc.begin), 0u, "no job ran");
    weft_jobs_destroy(jobs);
}

/* ---- allocator ---- */

typedef struct tally {
    atomic_long live_bytes;
    atomic_long allocs;
} tally_t;

static void *tally_alloc(size_t size, size_t align, void *user) {
    tally_t *t = user;
    atomic_fetch_add(&t->live_bytes, (long)size);
    atomic_fetch_add(&t->allocs, 1);
    return aligned_alloc(align, (size + align - 1) & ~(align - 1));
}
static void tally_free(void *p, size_t size, void *user) {
    atomic_fetch_sub(&((tally_t *)user)->live_bytes, (long)size);
    free(p);
}

Test(jobs, every_allocation_goes_through_the_hook_and_is_returned) {
    tally_t t = {0};
    for (int i = 0; i < 5; ++i) {
        weft_jobs_t *jobs = NULL;
        weft_jobs_desc_t desc = {.worker_count = 3, .allocator = {tally_alloc, tally_free, &t}};
        cr_assert_eq(weft_jobs_create(&desc, &jobs), WEFT_OK);
        atomic_uint ran = 0;
        weft_job_desc_t d[1000];
        for (int j = 0; j < 1000; ++j) {
            d[j] = (weft_job_desc_t){.fn = count_job, .arg = &ran};
        }
        weft_counter_t c = {0};
        cr_assert_eq(weft_job_submit(jobs, d, 1000, &c), WEFT_OK);
        cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
        weft_jobs_destroy(jobs);
        cr_assert_eq(atomic_load(&ran), 1000u);
    }
    cr_expect_gt(atomic_load(&t.allocs), 0);
    cr_expect_eq(atomic_load(&t.live_bytes), 0);
}

/* ---- shutdown ---- */

typedef struct shutdown_probe {
    weft_jobs_t *jobs;
    atomic_int release;      /* set by the external thread once it saw ESHUTDOWN */
    atomic_int saw_shutdown; /* the external thread got WEFT_ESHUTDOWN */
    atomic_int started;      /* the holding job is running */
} shutdown_probe_t;

/* Holds destroy in its draining phase until the external thread has seen ESHUTDOWN. */
static void hold_job(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    shutdown_probe_t *p = arg;
    atomic_store(&p->started, 1);
    while (!atomic_load(&p->release)) {
        sched_yield();
    }
}

static void *submit_until_shutdown(void *arg) {
    shutdown_probe_t *p = arg;
    weft_jobs_register_thread(p->jobs);
    for (;;) {
        weft_job_desc_t d = {.fn = nothing};
        weft_result_t r = weft_job_submit(p->jobs, &d, 1, NULL);
        if (r == WEFT_ESHUTDOWN) {
            atomic_store(&p->saw_shutdown, 1);
            break;
        }
        if (r != WEFT_OK) {
            break;
        }
        sched_yield();
    }
    atomic_store(&p->release, 1); /* after this we never touch p->jobs again */
    return NULL;
}

Test(jobs, submitting_after_destroy_began_fails_with_eshutdown) {
    shutdown_probe_t p = {0};
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 2}, &p.jobs), WEFT_OK);
    weft_job_desc_t hold = {.fn = hold_job, .arg = &p};
    cr_assert_eq(weft_job_submit(p.jobs, &hold, 1, NULL), WEFT_OK);
    pthread_t t;
    pthread_create(&t, NULL, submit_until_shutdown, &p);
    weft_jobs_destroy(p.jobs); /* drains: waits for hold_job, which waits for the thread */
    pthread_join(t, NULL);
    cr_expect_eq(atomic_load(&p.saw_shutdown), 1);
}

typedef struct spawner {
    atomic_uint ran;    /* jobs of the tree that ran */
    atomic_uint failed; /* child submissions that were refused */
} spawner_t;

static void spawn_tree(void *arg, const weft_job_ctx_t *ctx) {
    spawner_t *s = arg;
    unsigned n = atomic_fetch_add(&s->ran, 1u);
    if (n < 20000) {
        weft_job_desc_t d[2] = {{.fn = spawn_tree, .arg = s}, {.fn = spawn_tree, .arg = s}};
        /* Children submitted while destroy drains are still accepted and run. (Counted,
         * not asserted: assertions belong on the test's own thread.) */
        if (weft_job_submit(ctx->jobs, d, 2, NULL) != WEFT_OK) {
            atomic_fetch_add(&s->failed, 1u);
        }
    }
}

Test(jobs, destroy_while_busy_runs_jobs_submitted_by_jobs) {
    for (int i = 0; i < 5; ++i) {
        spawner_t s = {0};
        weft_jobs_t *jobs = NULL;
        cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 3}, &jobs), WEFT_OK);
        weft_job_desc_t d = {.fn = spawn_tree, .arg = &s};
        cr_assert_eq(weft_job_submit(jobs, &d, 1, NULL), WEFT_OK);
        weft_jobs_destroy(jobs);
        /* Every job that ran below 20000 spawned two: 1 + 2 * 20000 jobs in total. */
        cr_expect_eq(atomic_load(&s.ran), 1u + 2u * 20000u);
        cr_expect_eq(atomic_load(&s.failed), 0u);
    }
}

typedef struct ext_wait {
    weft_jobs_t *jobs;
    atomic_int slept;     /* the registered thread went to sleep inside its wait */
    atomic_int submitted; /* its jobs are submitted */
    atomic_uint ran;      /* its jobs that ran */
    int result;           /* what its wait returned */
} ext_wait_t;

static void note_external_sleep(uint32_t worker, void *user) {
    if (worker == UINT32_MAX) {
        atomic_store(&((ext_wait_t *)user)->slept, 1);
    }
}

/* Finishes only once the registered thread sleeps in its wait. */
static void finish_after_external_sleeps(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    ext_wait_t *e = arg;
    while (!atomic_load(&e->slept)) {
        sched_yield();
    }
    atomic_fetch_add(&e->ran, 1u);
}

static void *submit_and_wait(void *arg) {
    ext_wait_t *e = arg;
    weft_jobs_register_thread(e->jobs);
    weft_job_desc_t d[4];
    for (int i = 0; i < 4; ++i) {
        d[i] = (weft_job_desc_t){.fn = finish_after_external_sleeps, .arg = e};
    }
    weft_counter_t c = {0};
    e->result = (int)weft_job_submit(e->jobs, d, 4, &c);
    atomic_store(&e->submitted, 1);
    if (e->result == WEFT_OK) {
        e->result = (int)weft_counter_wait(e->jobs, &c);
    }
    return NULL;
}

Test(jobs, destroy_waits_for_a_registered_thread_blocked_in_a_wait) {
    ext_wait_t e = {0};
    weft_jobs_desc_t desc = {.worker_count = 2,
                             .spin_us = 1,
                             .profiler = {.worker_sleep = note_external_sleep, .user = &e}};
    cr_assert_eq(weft_jobs_create(&desc, &e.jobs), WEFT_OK);
    pthread_t t;
    pthread_create(&t, NULL, submit_and_wait, &e);
    while (!atomic_load(&e.submitted)) {
        sched_yield();
    }
    weft_jobs_destroy(e.jobs); /* the thread is (or soon will be) asleep inside its wait */
    pthread_join(t, NULL);
    cr_expect_eq(e.result, (int)WEFT_OK);
    cr_expect_eq(atomic_load(&e.ran), 4u);
}

/* Broken contracts are their documented error in every build. */
Test(jobs, bad_desc_returns_einval) {
    weft_jobs_t *jobs = NULL;
    cr_expect_eq(weft_jobs_create(&(weft_jobs_desc_t){._canary = 1}, &jobs), WEFT_EINVAL);
    cr_expect_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 100000}, &jobs), WEFT_EINVAL);
    cr_expect(jobs == NULL);
}
