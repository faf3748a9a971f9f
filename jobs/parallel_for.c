/* parallel_for.c: weft_parallel_for — split [0, count) into grain-sized chunks and run
 * them on the caller and on whichever workers join in.
 *
 * DESIGN: no job per chunk. The caller describes the loop in a `pfor_t` on its own stack
 * and publishes ONE helper job; the chunks are handed out by an atomic chunk cursor
 * (`next`), so a participant claims chunk after chunk with one fetch_add each. A helper,
 * when it starts, publishes one more helper if chunks remain and the helper budget
 * (workers - 1) allows: helpers fan out one wake-up at a time, only as far as there is
 * work, instead of the caller waking every sleeper up front. The caller claims chunks
 * too, then waits on the helpers' counter — running jobs meanwhile, and typically taking
 * back its own unstolen helper, which finds nothing left and returns. So an empty or tiny
 * loop costs one push, a few fetch_adds and one pop, and never waits for a sleeping
 * worker to wake up.
 *
 * Chunk k is [k * grain, min((k + 1) * grain, count)), so boundaries depend only on count
 * and grain. grain 0 picks count / (16 * workers) (at least 1): enough chunks that the tail
 * imbalance stays small (a thirty-second of the loop at 2 workers), and
 * few enough that claiming costs nothing next to the body. Nested calls from inside jobs
 * work the same way: the waiting thread runs other jobs, so nothing can deadlock.
 *
 * Registered (non-worker) callers cannot take chunks — every range runs with a worker
 * index — so they publish the first helper and sleep until the helpers are done.
 *
 * Lock order: none taken here (submission and waiting take their own, see submit.c). */
#include "jobs_impl.h"

typedef struct pfor {
    weft_jobs_t *jobs;      /* the job system */
    weft_range_fn_t fn;     /* the body */
    void *ctx;              /* its context */
    uint64_t count;         /* items */
    uint64_t grain;         /* items per chunk (resolved, >= 1) */
    uint64_t nchunks;       /* ceil(count / grain) */
    uint32_t max_helpers;   /* helper jobs allowed in total */
    weft_atomic_u64 next;   /* next chunk to claim; may overshoot nchunks */
    weft_atomic_u32 helpers; /* helper jobs published so far */
    weft_counter_t done;    /* counts the helper jobs; the caller waits on it */
} pfor_t;

static void run_chunks(pfor_t *pf, uint32_t worker) {
    for (;;) {
        /* relaxed: the claim only has to be unique; the results reach the caller through
         * the helpers' counter (release) or are the caller's own */
        uint64_t k = weft_atomic_fetch_add_relaxed(&pf->next, 1u);
        if (k >= pf->nchunks) {
            return;
        }
        uint64_t begin = k * pf->grain;
        uint64_t end = begin + pf->grain < pf->count ? begin + pf->grain : pf->count;
        pf->fn(pf->ctx, begin, end, worker);
    }
}

static void helper_job(void *arg, const weft_job_ctx_t *jctx);

/* Publish one more helper if there is work it could take and the budget allows. */
static void spawn_helper(pfor_t *pf, weft__ctx_t *ctx) {
    uint64_t claimed = weft_atomic_load_relaxed(&pf->next);
    if (claimed + 1u >= pf->nchunks) {
        return; /* at most one chunk left: whoever is here will take it */
    }
    if (weft_atomic_load_relaxed(&pf->helpers) >= pf->max_helpers ||
        weft_atomic_fetch_add_relaxed(&pf->helpers, 1u) >= pf->max_helpers) {
        return;
    }
    weft_job_desc_t d = {.fn = helper_job, .arg = pf, .name = "parallel_for"};
    /* A failure (out of memory, shutdown) only means fewer helpers: the chunks that are
     * left are claimed by the threads already taking part. */
    (void)weft__submit_one(pf->jobs, ctx, &d, &pf->done);
}

static void helper_job(void *arg, const weft_job_ctx_t *jctx) {
    pfor_t *pf = arg;
    weft__ctx_t *ctx = &pf->jobs->ctx[jctx->worker];
    spawn_helper(pf, ctx);
    run_chunks(pf, jctx->worker);
}

/* Everything on the calling thread, in order (inline mode, one worker, one chunk). */
static void run_serial(weft_range_fn_t fn, void *ctx, uint64_t count, uint64_t grain,
                       uint32_t worker) {
    for (uint64_t begin = 0; begin < count; begin += grain) {
        uint64_t end = count - begin > grain ? begin + grain : count;
        fn(ctx, begin, end, worker);
    }
}

weft_result_t weft_parallel_for(weft_jobs_t *jobs, uint64_t count, uint64_t grain,
                                weft_range_fn_t fn, void *ctx) {
    WEFT__CONTRACT(jobs != NULL, NULL, WEFT_EINVAL, "weft_parallel_for: jobs is NULL");
    const weft_logger_t *log = &jobs->desc.logger;
    WEFT__CONTRACT(fn != NULL, log, WEFT_EINVAL, "weft_parallel_for: fn is NULL");
    weft__ctx_t *me = weft__ctx_current(jobs);
    WEFT__CONTRACT(me != NULL, log, WEFT_EINVAL,
                   "weft_parallel_for: the calling thread is neither a worker nor registered "
                   "(weft_jobs_register_thread)");
    uint32_t workers = jobs->worker_count;
    if (grain == 0) {
        uint64_t target = (uint64_t)workers * 16u;
        grain = count / target + (count % target != 0);
        grain = grain ? grain : 1u;
    }
    if (!me->is_worker) {
        weft__external_enter(jobs); /* destroy waits while we are inside */
    }
    weft_result_t r = weft__check_phase(jobs, me, "weft_parallel_for");
    uint64_t nchunks = count / grain + (count % grain != 0);
    if (r != WEFT_OK || count == 0) {
        goto out;
    }
    if (me->is_worker && (jobs->is_inline || workers == 1 || nchunks == 1)) {
        run_serial(fn, ctx, count, grain, me->index);
        goto out;
    }
    pfor_t pf = {
        .jobs = jobs, .fn = fn, .ctx = ctx, .count = count, .grain = grain, .nchunks = nchunks,
        .max_helpers = me->is_worker ? workers - 1u : workers,
    };
    if (pf.max_helpers > nchunks) {
        pf.max_helpers = (uint32_t)nchunks;
    }
    weft_atomic_init(&pf.next, 0);
    weft_atomic_init(&pf.helpers, 1u);
    weft_counter_init(&pf.done);
    weft_job_desc_t d = {.fn = helper_job, .arg = &pf, .name = "parallel_for"};
    r = weft__submit_one(jobs, me, &d, &pf.done);
    if (r != WEFT_OK && !me->is_worker) {
        goto out; /* nobody could run the chunks for us */
    }
    if (me->is_worker) {
        r = WEFT_OK; /* without a helper the caller simply runs every chunk itself */
        run_chunks(&pf, me->index);
    }
    weft__counter_wait_loop(jobs, me, &pf.done);
out:
    if (!me->is_worker) {
        weft__external_leave(jobs);
    }
    return r;
}
