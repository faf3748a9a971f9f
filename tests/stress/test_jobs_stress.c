/* test_jobs_stress.c: long multi-threaded loops over the job system — a million tiny jobs,
 * random dependency graphs checked for exactly-once execution and order, 8 and 16 workers
 * on a small machine, registered threads hammering submit/wait, back-to-back parallel-fors
 * from several threads at once, busy create/destroy. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "weft/jobs.h"

TestSuite(jobs_stress, .timeout = 300);

static atomic_uint spare_count; /* target of jobs whose count nobody checks */

static void count_job(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    atomic_fetch_add_explicit((atomic_uint *)arg, 1u, memory_order_relaxed);
}

Test(jobs_stress, one_million_tiny_jobs_all_run) {
    weft_jobs_t *jobs = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 2}, &jobs), WEFT_OK);
    static weft_job_desc_t d[1000];
    atomic_uint ran = 0;
    for (int i = 0; i < 1000; ++i) {
        d[i] = (weft_job_desc_t){.fn = count_job, .arg = &ran};
    }
    weft_counter_t c = {0};
    /* Failures are counted and asserted once: ctest runs Criterion with --full-stats,
     * which ships every passing assertion to the runner. */
    int failed = 0;
    for (int batch = 0; batch < 1000; ++batch) {
        failed += weft_job_submit(jobs, d, 1000, &c) != WEFT_OK;
        if (batch % 50 == 49) {
            failed += weft_counter_wait(jobs, &c) != WEFT_OK;
        }
    }
    cr_assert_eq(failed, 0);
    cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    cr_expect_eq(atomic_load(&ran), 1000000u);
    weft_jobs_destroy(jobs);
}

/* ---- random graphs ---- */

enum { NODES = 10000, MAX_DEPS = 4 };

typedef struct graph {
    weft_counter_t done[NODES]; /* node i's completion counter */
    int deps[NODES][MAX_DEPS];  /* earlier nodes node i depends on */
    int ndeps[NODES];
    atomic_uint runs[NODES]; /* times node i ran */
    atomic_uint early;       /* nodes that ran before a dependency finished */
} graph_t;

typedef struct node_arg {
    graph_t *g;
    int i;
} node_arg_t;

static node_arg_t node_args[NODES];

static void graph_node(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    node_arg_t *a = arg;
    graph_t *g = a->g;
    for (int k = 0; k < g->ndeps[a->i]; ++k) {
        if (atomic_load_explicit(&g->runs[g->deps[a->i][k]], memory_order_relaxed) != 1u) {
            atomic_fetch_add(&g->early, 1u);
        }
    }
    atomic_fetch_add_explicit(&g->runs[a->i], 1u, memory_order_relaxed);
}

static void run_graph(uint32_t workers, unsigned seed) {
    static graph_t g;
    printf("random graph: %u workers, seed %u\n", workers, seed);
    fflush(stdout);
    srand(seed);
    atomic_store(&g.early, 0u);
    for (int i = 0; i < NODES; ++i) {
        weft_counter_init(&g.done[i]);
        atomic_store(&g.runs[i], 0u);
        g.ndeps[i] = i == 0 ? 0 : rand() % (MAX_DEPS + 1);
        for (int k = 0; k < g.ndeps[i]; ++k) {
            /* Mostly recent nodes (long chains), sometimes any earlier node. */
            int back = rand() % 4 ? 1 + rand() % 16 : 1 + rand() % i;
            g.deps[i][k] = i - back < 0 ? 0 : i - back;
        }
        node_args[i] = (node_arg_t){&g, i};
    }
    weft_jobs_t *jobs = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = workers}, &jobs), WEFT_OK);
    weft_counter_t all = {0};
    int failed = 0;
    for (int i = 0; i < NODES; ++i) {
        weft_counter_t *deps[MAX_DEPS];
        for (int k = 0; k < g.ndeps[i]; ++k) {
            deps[k] = &g.done[g.deps[i][k]];
        }
        weft_job_desc_t d = {
            .fn = graph_node, .arg = &node_args[i], .priority = (weft_priority_t)(rand() % 3)};
        failed +=
            weft_job_submit_after(jobs, &d, 1, deps, (uint32_t)g.ndeps[i], &g.done[i]) != WEFT_OK;
    }
    cr_assert_eq(failed, 0, "submissions failed (seed %u)", seed);
    /* Wait for every node through a final job gated on all of them, in slices. */
    for (int i = 0; i < NODES; i += 1000) {
        weft_counter_t *deps[1000];
        for (int k = 0; k < 1000; ++k) {
            deps[k] = &g.done[i + k];
        }
        weft_job_desc_t d = {.fn = count_job, .arg = &spare_count};
        cr_assert_eq(weft_job_submit_after(jobs, &d, 1, deps, 1000, &all), WEFT_OK);
    }
    cr_assert_eq(weft_counter_wait(jobs, &all), WEFT_OK);
    int first_bad = -1;
    for (int i = 0; i < NODES && first_bad < 0; ++i) {
        bool ok = atomic_load(&g.runs[i]) == 1u && weft_counter_is_done(&g.done[i]);
        first_bad = ok ? -1 : i;
    }
    cr_assert_eq(first_bad, -1, "node %d ran %u times (seed %u)", first_bad,
                 first_bad < 0 ? 1u : atomic_load(&g.runs[first_bad]), seed);
    cr_expect_eq(atomic_load(&g.early), 0u, "nodes ran before a dependency (seed %u)", seed);
    weft_jobs_destroy(jobs);
}

static unsigned test_seed(void) {
    const char *s = getenv("WEFT_TEST_SEED");
    return s ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL);
}

Test(jobs_stress, random_graph_of_10000_jobs_runs_each_once_in_order_2_workers) {
    run_graph(2, test_seed());
}
Test(jobs_stress, random_graph_of_10000_jobs_runs_each_once_in_order_8_workers) {
    run_graph(8, test_seed() + 1u);
}
Test(jobs_stress, random_graph_of_10000_jobs_runs_each_once_in_order_16_workers) {
    run_graph(16, test_seed() + 2u);
}

/* ---- oversubscription: 8 and 16 workers on 2 cores ---- */

typedef struct sum_ctx {
    weft_jobs_t *jobs;
    atomic_ullong sum; /* of all indices visited */
    atomic_uint bad;   /* worker indices out of range */
    uint32_t workers;
} sum_ctx_t;

static void sum_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    sum_ctx_t *s = ctx;
    unsigned long long acc = 0;
    for (uint64_t i = begin; i < end; ++i) {
        acc += i;
    }
    if (worker >= s->workers) {
        atomic_fetch_add(&s->bad, 1u);
    }
    atomic_fetch_add(&s->sum, acc);
}

static void nested_sum(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    sum_ctx_t *s = ctx;
    for (uint64_t i = begin; i < end; ++i) {
        if (weft_parallel_for(s->jobs, 2000, 0, sum_range, s) != WEFT_OK) {
            atomic_fetch_add(&s->bad, 1u);
        }
    }
}

static void many_workers(uint32_t workers) {
    sum_ctx_t s = {.workers = workers};
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = workers}, &s.jobs), WEFT_OK);
    for (int round = 0; round < 8; ++round) {
        atomic_store(&s.sum, 0ull);
        cr_assert_eq(weft_parallel_for(s.jobs, 100000, 0, sum_range, &s), WEFT_OK);
        cr_assert_eq(atomic_load(&s.sum), 99999ull * 100000ull / 2ull);
        atomic_store(&s.sum, 0ull);
        cr_assert_eq(weft_parallel_for(s.jobs, 32, 1, nested_sum, &s), WEFT_OK);
        cr_assert_eq(atomic_load(&s.sum), 32ull * (1999ull * 2000ull / 2ull));
    }
    cr_expect_eq(atomic_load(&s.bad), 0u);
    weft_jobs_destroy(s.jobs);
}

Test(jobs_stress, eight_workers_on_a_small_machine) { many_workers(8); }
Test(jobs_stress, sixteen_workers_on_a_small_machine) { many_workers(16); }

/* ---- registered threads ---- */

static void *hammer(void *arg) {
    weft_jobs_t *jobs = arg;
    if (weft_jobs_register_thread(jobs) != WEFT_OK) {
        return (void *)1;
    }
    atomic_uint ran = 0;
    weft_job_desc_t d[10];
    for (int i = 0; i < 10; ++i) {
        d[i] =
            (weft_job_desc_t){.fn = count_job, .arg = &ran, .priority = (weft_priority_t)(i % 3)};
    }
    for (int round = 0; round < 800; ++round) {
        weft_counter_t c = {0};
        if (weft_job_submit(jobs, d, 10, &c) != WEFT_OK || weft_counter_wait(jobs, &c) != WEFT_OK) {
            return (void *)2;
        }
    }
    return atomic_load(&ran) == 8000u ? NULL : (void *)3;
}

Test(jobs_stress, registered_threads_submit_and_wait_concurrently) {
    weft_jobs_t *jobs = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 3}, &jobs), WEFT_OK);
    pthread_t t[4];
    for (int i = 0; i < 4; ++i) {
        pthread_create(&t[i], NULL, hammer, jobs);
    }
    for (int i = 0; i < 4; ++i) {
        void *r = (void *)9;
        pthread_join(t[i], &r);
        cr_expect_eq((intptr_t)r, 0, "thread %d", i);
    }
    weft_jobs_destroy(jobs);
}

/* ---- back-to-back parallel-fors ---- */

typedef struct pf_loop {
    atomic_uint items;  /* items covered */
    atomic_bool closed; /* its weft_parallel_for returned */
    atomic_uint late;   /* ranges run after that */
} pf_loop_t;

static void pf_range(void *ctx, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    pf_loop_t *l = ctx;
    if (atomic_load(&l->closed)) {
        atomic_fetch_add(&l->late, 1u);
    }
    atomic_fetch_add(&l->items, (unsigned)(end - begin));
}

enum { PF_LOOPS = 400, PF_COUNT = 40 };

/* Runs PF_LOOPS small loops one after another; returns how many went wrong. */
static unsigned pf_run_loops(weft_jobs_t *jobs, pf_loop_t *loops) {
    unsigned bad = 0;
    for (int i = 0; i < PF_LOOPS; ++i) {
        weft_result_t r =
            weft_parallel_for(jobs, PF_COUNT, (uint64_t)(1 + i % 4), pf_range, &loops[i]);
        atomic_store(&loops[i].closed, true);
        bad += r != WEFT_OK || atomic_load(&loops[i].items) != PF_COUNT;
    }
    return bad;
}

typedef struct pf_actor {
    weft_jobs_t *jobs;
    pf_loop_t loops[PF_LOOPS];
    atomic_uint bad;
} pf_actor_t;

static void pf_job(void *arg, const weft_job_ctx_t *ctx) {
    pf_actor_t *a = arg;
    atomic_fetch_add(&a->bad, pf_run_loops(ctx->jobs, a->loops));
}

static void *pf_thread(void *arg) {
    pf_actor_t *a = arg;
    if (weft_jobs_register_thread(a->jobs) != WEFT_OK) {
        atomic_fetch_add(&a->bad, 1u);
        return NULL;
    }
    atomic_fetch_add(&a->bad, pf_run_loops(a->jobs, a->loops));
    return NULL;
}

Test(jobs_stress, back_to_back_parallel_fors_from_jobs_and_registered_threads) {
    /* Loops from the main thread, from jobs on other workers and from registered threads,
     * all at once: late helpers of finished loops meet new loops in the same slots. */
    weft_jobs_t *jobs = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 3}, &jobs), WEFT_OK);
    enum { ACTORS = 5 }; /* 2 jobs, 2 registered threads, the main thread */
    pf_actor_t *a = calloc(ACTORS, sizeof *a);
    for (int i = 0; i < ACTORS; ++i) {
        a[i].jobs = jobs;
    }
    weft_job_desc_t d[2] = {{.fn = pf_job, .arg = &a[0]}, {.fn = pf_job, .arg = &a[1]}};
    weft_counter_t c = {0};
    cr_assert_eq(weft_job_submit(jobs, d, 2, &c), WEFT_OK);
    pthread_t t[2];
    pthread_create(&t[0], NULL, pf_thread, &a[2]);
    pthread_create(&t[1], NULL, pf_thread, &a[3]);
    atomic_fetch_add(&a[4].bad, pf_run_loops(jobs, a[4].loops));
    cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    weft_jobs_destroy(jobs); /* runs any straggling helper before returning */
    unsigned bad = 0, late = 0;
    for (int i = 0; i < ACTORS; ++i) {
        bad += atomic_load(&a[i].bad);
        for (int k = 0; k < PF_LOOPS; ++k) {
            late += atomic_load(&a[i].loops[k].late);
            bad += atomic_load(&a[i].loops[k].items) != PF_COUNT;
        }
    }
    free(a);
    cr_expect_eq(bad, 0u, "%u loops failed or covered their items other than once", bad);
    cr_expect_eq(late, 0u, "%u ranges ran after their loop returned", late);
}

/* ---- busy create/destroy ---- */

static void respawn(void *arg, const weft_job_ctx_t *ctx) {
    atomic_uint *ran = arg;
    if (atomic_fetch_add(ran, 1u) < 3000u) {
        weft_job_desc_t d = {.fn = respawn, .arg = arg};
        weft_job_submit(ctx->jobs, &d, 1, NULL);
    }
}

Test(jobs_stress, create_and_destroy_repeatedly_while_busy) {
    for (int i = 0; i < 30; ++i) {
        weft_jobs_t *jobs = NULL;
        uint32_t workers = 1u + (uint32_t)(i % 6);
        cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = workers,
                                                          .spin_us = (uint32_t)(i % 3) * 20u},
                                      &jobs),
                     WEFT_OK);
        atomic_uint ran = 0;
        weft_job_desc_t d[4];
        for (int k = 0; k < 4; ++k) {
            d[k] = (weft_job_desc_t){.fn = respawn, .arg = &ran};
        }
        cr_assert_eq(weft_job_submit(jobs, d, 4, NULL), WEFT_OK);
        weft_jobs_destroy(jobs);
        /* Each of 4 chains stops once the shared count passes 3000: 3000 + 4 jobs ran. */
        cr_assert_eq(atomic_load(&ran), 3004u);
    }
}
