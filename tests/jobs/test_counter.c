/* test_counter.c: completion counters — zero state, waiting that runs other jobs, the
 * EDEADLK check, visibility of finished jobs' writes, nested waits, inline deadlocks. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdatomic.h>

#include "weft/jobs.h"

static weft_jobs_t *jobs;

static void setup(void) {
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 2}, &jobs), WEFT_OK);
}
static void teardown(void) { weft_jobs_destroy(jobs); }

TestSuite(counter, .init = setup, .fini = teardown, .timeout = 60);

static void count_job(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    atomic_fetch_add((atomic_uint *)arg, 1u);
}

Test(counter, zeroed_storage_is_a_done_counter) {
    weft_counter_t c = {0};
    cr_expect(weft_counter_is_done(&c));
    cr_expect_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    weft_counter_init(&c);
    cr_expect(weft_counter_is_done(&c));
}

Test(counter, counter_is_not_done_while_its_job_is_pending) {
    weft_jobs_t *one = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 1}, &one), WEFT_OK);
    atomic_uint ran = 0;
    weft_counter_t c = {0};
    weft_job_desc_t d = {.fn = count_job, .arg = &ran};
    cr_assert_eq(weft_job_submit(one, &d, 1, &c), WEFT_OK);
    /* One worker (us) and we have not waited: the job cannot have run. */
    cr_expect_not(weft_counter_is_done(&c));
    cr_expect_eq(atomic_load(&ran), 0u);
    cr_assert_eq(weft_counter_wait(one, &c), WEFT_OK);
    cr_expect(weft_counter_is_done(&c));
    cr_expect_eq(atomic_load(&ran), 1u);
    weft_jobs_destroy(one);
}

Test(counter, a_counter_is_reusable_after_reaching_zero) {
    atomic_uint ran = 0;
    weft_counter_t c = {0};
    weft_job_desc_t d = {.fn = count_job, .arg = &ran};
    for (int i = 0; i < 200; ++i) {
        cr_assert_eq(weft_job_submit(jobs, &d, 1, &c), WEFT_OK);
        cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
        cr_assert_eq(atomic_load(&ran), (unsigned)i + 1u);
    }
}

typedef struct payload {
    int values[256]; /* written by jobs with plain stores */
} payload_t;

typedef struct payload_arg {
    payload_t *p;
    int i;
} payload_arg_t;

static void write_value(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    payload_arg_t *a = arg;
    a->p->values[a->i] = a->i * 3 + 1;
}

Test(counter, writes_of_finished_jobs_are_visible_after_wait) {
    for (int round = 0; round < 50; ++round) {
        payload_t p = {{0}};
        payload_arg_t args[256];
        weft_job_desc_t d[256];
        for (int i = 0; i < 256; ++i) {
            args[i] = (payload_arg_t){&p, i};
            d[i] = (weft_job_desc_t){.fn = write_value, .arg = &args[i]};
        }
        weft_counter_t c = {0};
        cr_assert_eq(weft_job_submit(jobs, d, 256, &c), WEFT_OK);
        cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
        int bad = 0;
        for (int i = 0; i < 256; ++i) {
            bad += p.values[i] != i * 3 + 1; /* plain reads: TSan checks the edge */
        }
        cr_assert_eq(bad, 0);
    }
}

/* ---- EDEADLK ---- */

typedef struct self_wait {
    weft_counter_t c;  /* the job's own completion counter */
    atomic_int result; /* what weft_counter_wait returned inside the job */
} self_wait_t;

static void wait_on_self(void *arg, const weft_job_ctx_t *ctx) {
    self_wait_t *s = arg;
    atomic_store(&s->result, (int)weft_counter_wait(ctx->jobs, &s->c));
}

Test(counter, waiting_on_the_running_jobs_own_counter_is_edeadlk) {
    self_wait_t s = {.result = 1};
    weft_counter_init(&s.c);
    weft_job_desc_t d = {.fn = wait_on_self, .arg = &s};
    cr_assert_eq(weft_job_submit(jobs, &d, 1, &s.c), WEFT_OK);
    cr_assert_eq(weft_counter_wait(jobs, &s.c), WEFT_OK);
    cr_expect_eq(atomic_load(&s.result), (int)WEFT_EDEADLK);
}

/* ---- waits inside jobs ---- */

typedef struct fanout {
    atomic_uint leaves; /* leaf jobs run */
    atomic_uint bad;    /* parents that resumed before their children finished */
} fanout_t;

static void leaf(void *arg, const weft_job_ctx_t *ctx) {
    (void)ctx;
    atomic_fetch_add(&((fanout_t *)arg)->leaves, 1u);
}

static void parent(void *arg, const weft_job_ctx_t *ctx) {
    fanout_t *f = arg;
    weft_counter_t children = {0};
    weft_job_desc_t d[16];
    for (int i = 0; i < 16; ++i) {
        d[i] = (weft_job_desc_t){.fn = leaf, .arg = f};
    }
    if (weft_job_submit(ctx->jobs, d, 16, &children) != WEFT_OK ||
        weft_counter_wait(ctx->jobs, &children) != WEFT_OK || !weft_counter_is_done(&children)) {
        atomic_fetch_add(&f->bad, 1u);
    }
}

Test(counter, jobs_may_wait_on_their_children_without_deadlock) {
    fanout_t f = {0};
    weft_job_desc_t d[64];
    for (int i = 0; i < 64; ++i) {
        d[i] = (weft_job_desc_t){.fn = parent, .arg = &f};
    }
    weft_counter_t c = {0};
    cr_assert_eq(weft_job_submit(jobs, d, 64, &c), WEFT_OK);
    cr_assert_eq(weft_counter_wait(jobs, &c), WEFT_OK);
    cr_expect_eq(atomic_load(&f.bad), 0u);
    cr_expect_eq(atomic_load(&f.leaves), 64u * 16u);
}

Test(counter, wait_runs_other_jobs_on_a_single_worker) {
    weft_jobs_t *one = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 1}, &one), WEFT_OK);
    fanout_t f = {0};
    weft_job_desc_t d[8];
    for (int i = 0; i < 8; ++i) {
        d[i] = (weft_job_desc_t){.fn = parent, .arg = &f};
    }
    weft_counter_t c = {0};
    cr_assert_eq(weft_job_submit(one, d, 8, &c), WEFT_OK);
    cr_assert_eq(weft_counter_wait(one, &c), WEFT_OK);
    cr_expect_eq(atomic_load(&f.bad), 0u);
    cr_expect_eq(atomic_load(&f.leaves), 8u * 16u);
    weft_jobs_destroy(one);
}

/* ---- inline mode ---- */

typedef struct inline_trap {
    weft_counter_t own;   /* the outer job's counter */
    weft_counter_t inner; /* counts a job gated behind `own` */
    atomic_int result;    /* what the wait on `inner` returned */
    atomic_uint ran;      /* the gated job ran */
} inline_trap_t;

static void trap_job(void *arg, const weft_job_ctx_t *ctx) {
    inline_trap_t *t = arg;
    weft_counter_t *dep = &t->own;
    weft_job_desc_t d = {.fn = count_job, .arg = &t->ran};
    weft_job_submit_after(ctx->jobs, &d, 1, &dep, 1, &t->inner);
    /* `inner` waits for `own`, which counts us: it cannot finish while we wait. */
    atomic_store(&t->result, (int)weft_counter_wait(ctx->jobs, &t->inner));
}

Test(counter, inline_wait_that_can_never_finish_is_edeadlk) {
    weft_jobs_t *in = NULL;
    cr_assert_eq(weft_jobs_create(&(weft_jobs_desc_t){.execution = WEFT_EXECUTION_INLINE}, &in),
                 WEFT_OK);
    inline_trap_t t = {.result = 1};
    weft_job_desc_t d = {.fn = trap_job, .arg = &t};
    cr_assert_eq(weft_job_submit(in, &d, 1, &t.own), WEFT_OK);
    cr_expect_eq(atomic_load(&t.result), (int)WEFT_EDEADLK);
    /* Once the outer job returned, the gated job ran. */
    cr_expect(weft_counter_is_done(&t.inner));
    cr_expect_eq(atomic_load(&t.ran), 1u);
    weft_jobs_destroy(in);
}

Test(counter, wait_on_null_counter_is_einval) {
    cr_expect_eq(weft_counter_wait(jobs, NULL), WEFT_EINVAL);
}
