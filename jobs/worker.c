/* worker.c: creating and destroying a job system, the worker threads' loop, finding and
 * running jobs, and which thread is which (thread-local bindings, registration).
 *
 * DESIGN: each thread that may use a job system is bound to one context of it through a
 * small thread-local table (`bindings`), keyed by the instance's address and its unique
 * id, so a stale binding left by a destroyed instance never matches a new one at the same
 * address. The last lookup is cached; the common case costs two compares. Workers and the
 * creating thread drop their bindings when the instance goes; a registered thread's binding
 * outlives it unless the thread unregisters, so when a thread's table is full, bindings
 * whose id is no longer on the live-instance list (`live_head`: every instance from create
 * to the end of destroy) are dead and are reused. Registered threads take one of
 * WEFT__MAX_REGISTERED context slots, tracked by the `reg_used` bitmap; unregistering
 * frees the slot for the next thread, which inherits the context as it was left (its
 * record freelist, its tallies, its loop slots' generations, so late helpers of the
 * previous owner's loops still see a stale generation).
 *
 * A worker looks for work in this order: another worker's open parallel-for offer, a
 * parallel-for on the loop board that it has not looked at yet (parallel_for.c), (worker 0 only) the main-thread queue, then for each
 * priority from high to low: its own deque (LIFO), the injection queue, and the other
 * workers' deques (steal, FIFO), starting from a random victim. Finding nothing, it spins
 * and then sleeps (sleep.c).
 *
 * Shutdown (destroy, on the creating thread): phase DRAINING makes submissions from
 * outside any job fail with WEFT_ESHUTDOWN, while jobs may still submit children. Worker 0
 * runs jobs until every context's `finished` tally matches its `submitted` tally and no
 * registered thread is inside an API call; then phase STOPPED, wake everyone, join, free.
 * The tallies are read finished-first: a job is counted as submitted before it can be
 * counted as finished, so equal sums mean nothing was in flight.
 *
 * Lock order: this file takes sleep.lock only through sleep.c, and the process-wide
 * live_lock (create, destroy, and a registration that finds its binding table full);
 * no lock is nested. */
#include "jobs_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- thread-local bindings ---------------------------------------------- >>binding */

#define BINDINGS 8

typedef struct binding {
    const weft_jobs_t *jobs; /* instance address, or NULL for a free slot */
    uint64_t id;             /* instance id (addresses are reused, ids are not) */
    weft__ctx_t *ctx;        /* this thread's context in that instance */
} binding_t;

/* initial-exec: the library is compiled as PIC, and the default TLS model would cost a
 * __tls_get_addr call on every submit. The bindings are small, so the static TLS block
 * has room for them even when the library is loaded as a shared object. */
#if defined(__GNUC__) || defined(__clang__)
#define WEFT__TLS_FAST __attribute__((tls_model("initial-exec")))
#else
#define WEFT__TLS_FAST
#endif

static _Thread_local binding_t bindings[BINDINGS] WEFT__TLS_FAST;
static _Thread_local binding_t last_binding WEFT__TLS_FAST;
static weft_atomic_u64 next_id = 1;

weft__ctx_t *weft__ctx_current(const weft_jobs_t *jobs) {
    if (last_binding.jobs == jobs && last_binding.id == jobs->id) {
        return last_binding.ctx;
    }
    for (int i = 0; i < BINDINGS; ++i) {
        if (bindings[i].jobs == jobs && bindings[i].id == jobs->id) {
            last_binding = bindings[i];
            return bindings[i].ctx;
        }
    }
    return NULL;
}

/* ---- live instances ------------------------------------------------------ >>live */

/* Every instance between create and the end of destroy, so that a thread can tell a
 * binding of a destroyed instance from a live one by its id alone, without touching the
 * (freed, perhaps reused) instance. Only consulted when a thread's binding table is full. */
static weft_mutex_t live_lock = WEFT__MUTEX_INIT;
static weft_jobs_t *live_head; /* guarded by live_lock */

static void live_add(weft_jobs_t *jobs) {
    weft__mutex_lock(&live_lock);
    jobs->live_prev = NULL;
    jobs->live_next = live_head;
    if (live_head) {
        live_head->live_prev = jobs;
    }
    live_head = jobs;
    weft__mutex_unlock(&live_lock);
}

static void live_remove(weft_jobs_t *jobs) {
    weft__mutex_lock(&live_lock);
    if (jobs->live_prev) {
        jobs->live_prev->live_next = jobs->live_next;
    } else {
        live_head = jobs->live_next;
    }
    if (jobs->live_next) {
        jobs->live_next->live_prev = jobs->live_prev;
    }
    weft__mutex_unlock(&live_lock);
}

/* Caller holds live_lock. */
static bool live_has_id(uint64_t id) {
    for (const weft_jobs_t *j = live_head; j; j = j->live_next) {
        if (j->id == id) {
            return true;
        }
    }
    return false;
}

/* Index of a free binding, after dropping the bindings of destroyed instances if the
 * table is full; -1 when every binding names a live instance. */
static int free_binding(void) {
    for (int i = 0; i < BINDINGS; ++i) {
        if (bindings[i].jobs == NULL) {
            return i;
        }
    }
    int found = -1;
    weft__mutex_lock(&live_lock);
    for (int i = 0; i < BINDINGS; ++i) {
        if (!live_has_id(bindings[i].id)) {
            if (last_binding.id == bindings[i].id) {
                last_binding = (binding_t){0};
            }
            bindings[i] = (binding_t){0};
            found = found < 0 ? i : found;
        }
    }
    weft__mutex_unlock(&live_lock);
    return found;
}

bool weft__bind_thread(weft_jobs_t *jobs, weft__ctx_t *ctx) {
    int i = free_binding();
    if (i < 0) {
        return false;
    }
    bindings[i] = (binding_t){jobs, jobs->id, ctx};
    last_binding = bindings[i];
    return true;
}

void weft__unbind_thread(const weft_jobs_t *jobs) {
    for (int i = 0; i < BINDINGS; ++i) {
        if (bindings[i].jobs == jobs && bindings[i].id == jobs->id) {
            bindings[i] = (binding_t){0};
        }
    }
    if (last_binding.jobs == jobs) {
        last_binding = (binding_t){0};
    }
}

/* ---- finding and running jobs ----------------------------------------------- >>run */

static uint64_t next_random(weft__ctx_t *ctx) {
    uint64_t x = ctx->rng; /* xorshift64 */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    ctx->rng = x;
    return x;
}

/* One priority level: own deque (LIFO), injection queue, then the others' deques (steal). */
static inline weft__rec_t *find_at(weft_jobs_t *jobs, weft__ctx_t *ctx, int p, bool inject) {
    weft__rec_t *job;
    weft__deque_t *own = &ctx->dq[p];
    if (!weft__deque_owner_empty(own) && (job = weft__deque_take(own)) != NULL) {
        return job;
    }
    if (inject && (job = weft__queue_pop(&jobs->inject, p)) != NULL) {
        return job;
    }
    uint32_t n = jobs->worker_count;
    if (n > 1) {
        uint32_t start = (uint32_t)(next_random(ctx) % n);
        for (uint32_t k = 0; k < n; ++k) {
            uint32_t v = (start + k) % n;
            if (v != ctx->index && (job = weft__deque_steal(&jobs->ctx[v].dq[p])) != NULL) {
                return job;
            }
        }
    }
    return NULL;
}

weft__rec_t *weft__find_job(weft_jobs_t *jobs, weft__ctx_t *ctx) {
    weft__rec_t *job;
    if (ctx->index == 0 && weft__queue_maybe_nonempty(&jobs->main) &&
        (job = weft__queue_pop(&jobs->main, -1)) != NULL) {
        return job;
    }
    bool inject = weft__queue_maybe_nonempty(&jobs->inject);
    /* Most urgent first (the enum is ordered so that zero is the default, not by urgency). */
    if ((job = find_at(jobs, ctx, WEFT_PRIORITY_HIGH, inject)) != NULL ||
        (job = find_at(jobs, ctx, WEFT_PRIORITY_NORMAL, inject)) != NULL) {
        return job;
    }
    return find_at(jobs, ctx, WEFT_PRIORITY_LOW, inject);
}

void weft__run_job(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__rec_t *job) {
    weft__frame_t frame = {job->done, ctx->frames};
    ctx->frames = &frame;
    const weft_profiler_t *prof = &jobs->desc.profiler;
    const char *name = job->name;
    uint32_t tag = job->u.tag;
    if (prof->job_begin) {
        prof->job_begin(name, tag, ctx->index, prof->user);
    }
    weft_job_ctx_t jctx = {jobs, ctx->index, tag};
    if (job->fn != weft__pfor_helper) {
        weft__tally(&ctx->jobs_run, 1u);
    }
    job->fn(job->arg, &jctx);
    if (prof->job_end) {
        prof->job_end(name, tag, ctx->index, prof->user);
    }
    ctx->frames = frame.prev;
    /* The counter first: it is what a waiter spins on, so it goes before the record's free
     * (a remote free is a CAS on its owner's line). The `finished` tally comes last, so
     * destroy (which waits for the tallies to match) cannot free the slabs under us. */
    weft_counter_t *done = job->done;
    if (done) {
        (void)weft__counter_finish_n(jobs, ctx, weft__count_of(done), 1u);
    }
    weft__discard_job(ctx, job);
}

bool weft__help_once(weft_jobs_t *jobs, weft__ctx_t *ctx) {
    if ((weft__offer_open(jobs, ctx) && weft__pfor_take_offer(jobs, ctx)) ||
        (weft__board_changed(jobs, ctx) && weft__pfor_join_board(jobs, ctx))) {
        return true;
    }
    weft__rec_t *job = weft__find_job(jobs, ctx);
    if (job) {
        weft__run_job(jobs, ctx, job);
        return true;
    }
    return false;
}

void weft__discard_job(weft__ctx_t *ctx, weft__rec_t *job) {
    weft__rec_free(ctx, job);
    /* release pairs with the acquire loads in all_done(): our submissions are counted and
     * the record is back on a freelist */
    weft_atomic_store_release(&ctx->finished, weft_atomic_load_relaxed(&ctx->finished) + 1u);
}

/* ---- worker threads --------------------------------------------------------- >>worker */

void weft__worker_went_idle(weft_jobs_t *jobs, weft__ctx_t *ctx) {
    /* While destroy drains, worker 0 may be asleep waiting for our `finished` tally. A
     * Dekker pair with destroy: it stores the phase and then reads the tallies (all_done),
     * we stored the tally and now read the phase, all seq_cst (the RMW puts our tally in the
     * total order), so either it sees our tally or we see DRAINING and kick it. A phase read
     * that is only acquire lets both sides miss each other (the interleaving checker found
     * that schedule, tests/interleavings/test_destroy.c). */
    weft_atomic_fetch_add_seq_cst(&ctx->finished, 0u);
    if (weft_atomic_load_seq_cst(&jobs->phase) == WEFT__PHASE_DRAINING) {
        weft__sleep_kick(jobs);
    }
}

bool weft__worker_ready(weft_jobs_t *jobs, weft__ctx_t *ctx, const void *arg, bool final) {
    (void)arg;
    (void) final;
    /* An open offer first: it is what a spinning worker waits for most often, and taking it
     * is worth a transfer on the loop's critical path (parallel_for.c). seq_cst: part of the
     * sleep handshake (sleep.c); destroy stores the phase seq_cst */
    return weft__offer_open(jobs, ctx) ||
           weft_atomic_load_seq_cst(&jobs->phase) == WEFT__PHASE_STOPPED ||
           weft__has_work(jobs, ctx);
}

static void worker_main(void *arg) {
    weft__ctx_t *ctx = arg;
    weft_jobs_t *jobs = ctx->jobs;
    if (!weft__bind_thread(jobs, ctx)) {
        abort(); /* a fresh thread has all its bindings free */
    }
    bool ran = false; /* ran a job since going idle last */
    for (;;) {
        /* acquire pairs with destroy's seq_cst store: nothing is left to run */
        uint32_t phase = weft_atomic_load_acquire(&jobs->phase);
        if (phase == WEFT__PHASE_STOPPED) {
            break;
        }
        if ((weft__offer_open(jobs, ctx) && weft__pfor_take_offer(jobs, ctx)) ||
            (weft__board_changed(jobs, ctx) && weft__pfor_join_board(jobs, ctx))) {
            ctx->spin_backoff = 1;
            ran = true;
            continue;
        }
        weft__rec_t *job = weft__find_job(jobs, ctx);
        if (job) {
            weft__run_job(jobs, ctx, job);
            /* Useful work makes the next idle spin poll eagerly again (sleep.c, spin()). */
            if (!ctx->idle_job) {
                ctx->spin_backoff = 1;
            }
            ctx->idle_job = false;
            ran = true;
            continue;
        }
        if (ran) {
            weft__worker_went_idle(jobs, ctx);
        }
        ran = false;
        weft__sleep_idle(jobs, ctx, weft__worker_ready, NULL);
    }
    weft__unbind_thread(jobs);
}

/* ---- create / destroy --------------------------------------------------------- >>life */

weft_jobs_desc_t weft_jobs_desc_resolved(const weft_jobs_desc_t *desc) {
    weft_jobs_desc_t d = desc ? *desc : (weft_jobs_desc_t){0};
    if (d.execution == WEFT_EXECUTION_INLINE) {
        d.worker_count = 1;
    } else if (d.executor.thread_count != 0 && d.worker_count == 0) {
        d.worker_count = d.executor.thread_count + 1u;
    } else if (d.worker_count == 0) {
        d.worker_count = weft__thread_hardware_count();
        if (d.worker_count > WEFT__MAX_WORKERS) {
            d.worker_count = WEFT__MAX_WORKERS;
        }
    }
    d.queue_capacity = d.queue_capacity ? d.queue_capacity : 4096u;
    d.scratch_size = d.scratch_size ? d.scratch_size : (size_t)64 * 1024;
    d.spin_us = d.spin_us ? d.spin_us : 50u;
    if (!d.allocator.alloc && !d.allocator.free) {
        d.allocator.alloc = weft__default_alloc; /* jobs/platform/alloc.h */
        d.allocator.free = weft__default_free;
    }
    return d;
}

static weft_result_t check_desc(const weft_jobs_desc_t *d) {
    const weft_logger_t *log = d ? &d->logger : NULL;
    if (!d) {
        return WEFT_OK;
    }
    WEFT__CONTRACT(d->_canary == 0, log, WEFT_EINVAL,
                   "weft_jobs_create: desc._canary is %u (must stay 0: is the desc initialised?)",
                   d->_canary);
    WEFT__CONTRACT(d->worker_count <= WEFT__MAX_WORKERS, log, WEFT_EINVAL,
                   "weft_jobs_create: worker_count %u exceeds the maximum of %u", d->worker_count,
                   WEFT__MAX_WORKERS);
    WEFT__CONTRACT(d->execution == WEFT_EXECUTION_THREADED || d->execution == WEFT_EXECUTION_INLINE,
                   log, WEFT_EINVAL, "weft_jobs_create: unknown execution mode %d",
                   (int)d->execution);
    WEFT__CONTRACT(!d->allocator.alloc == !d->allocator.free, log, WEFT_EINVAL,
                   "weft_jobs_create: allocator.alloc and allocator.free must be set together");
    WEFT__CONTRACT(d->queue_capacity <= (1u << 30), log, WEFT_EINVAL,
                   "weft_jobs_create: queue_capacity %u is larger than 2^30", d->queue_capacity);
    const weft_executor_t *x = &d->executor;
    WEFT__CONTRACT((x->thread_count == 0) == (x->submit == NULL), log, WEFT_EINVAL,
                   "weft_jobs_create: executor.thread_count %u with%s a submit function "
                   "(set both or neither)",
                   x->thread_count, x->submit ? "" : "out");
    if (x->thread_count != 0) {
        WEFT__CONTRACT(d->execution == WEFT_EXECUTION_THREADED, log, WEFT_EINVAL,
                       "weft_jobs_create: an executor needs threaded execution");
        WEFT__CONTRACT(x->thread_count < WEFT__MAX_WORKERS, log, WEFT_EINVAL,
                       "weft_jobs_create: executor.thread_count %u exceeds %u", x->thread_count,
                       WEFT__MAX_WORKERS - 1u);
        WEFT__CONTRACT(d->worker_count == 0 || d->worker_count == x->thread_count + 1u, log,
                       WEFT_EINVAL,
                       "weft_jobs_create: worker_count %u, but the executor lends %u threads "
                       "(leave it 0, or make it thread_count + 1)",
                       d->worker_count, x->thread_count);
    }
    return WEFT_OK;
}

/* Initialise context i; false on allocation failure (partial state is freed by free_all). */
static bool ctx_init(weft_jobs_t *jobs, uint32_t i) {
    weft__ctx_t *ctx = &jobs->ctx[i];
    memset(ctx, 0, sizeof *ctx);
    ctx->jobs = jobs;
    ctx->is_worker = i < jobs->worker_count;
    ctx->index = ctx->is_worker ? i : UINT32_MAX;
    ctx->rng = 0x9E3779B97F4A7C15u * (i + 1u) | 1u;
    ctx->spin_backoff = 1;
    weft_atomic_init(&ctx->free_remote, NULL);
    weft_atomic_init(&ctx->submitted, 0);
    weft_atomic_init(&ctx->finished, 0);
    weft_atomic_init(&ctx->jobs_run, 0);
    weft_atomic_init(&ctx->ranges_run, 0);
    weft_atomic_init(&ctx->items_run, 0);
    weft_atomic_init(&ctx->lent, 0);
    for (int p = 0; p < WEFT_PRIORITY_COUNT; ++p) {
        weft_atomic_init(&ctx->dq[p].buf, NULL);
    }
    for (uint32_t k = 0; k < WEFT__PFOR_SLOTS; ++k) {
        weft__pfor_t *pf = &ctx->pfor[k];
        weft_atomic_init(&pf->cursor, 0);
        weft_atomic_init(&pf->helpers, 0);
        weft_atomic_init(&pf->left.word, 0);
        weft_atomic_init(&pf->left.waiters, NULL);
    }
    weft_atomic_init(&ctx->offer.word, 0);
    if (!ctx->is_worker) {
        return true;
    }
    for (int p = 0; p < WEFT_PRIORITY_COUNT; ++p) {
        if (!weft__deque_init(&ctx->dq[p], jobs->desc.queue_capacity, &jobs->alloc)) {
            return false;
        }
    }
    ctx->scratch = jobs->alloc.alloc(jobs->desc.scratch_size, WEFT_CACHE_LINE, jobs->alloc.user);
    return ctx->scratch != NULL;
}

static uint32_t ctx_total(const weft_jobs_t *jobs) {
    return jobs->worker_count + (jobs->is_inline ? 0u : WEFT__MAX_REGISTERED);
}

/* Free everything create() built; safe on a partially built instance (zeroed parts). */
static void free_all(weft_jobs_t *jobs, uint32_t ctx_ready) {
    weft_allocator_t a = jobs->alloc;
    if (jobs->ctx) {
        for (uint32_t i = 0; i < ctx_ready; ++i) {
            weft__ctx_t *ctx = &jobs->ctx[i];
            weft__rec_fini_ctx(jobs, ctx);
            for (int p = 0; p < WEFT_PRIORITY_COUNT; ++p) {
                if (weft_atomic_load_relaxed(&ctx->dq[p].buf)) {
                    weft__deque_fini(&ctx->dq[p]);
                }
            }
            if (ctx->scratch) {
                a.free(ctx->scratch, jobs->desc.scratch_size, a.user);
            }
        }
        a.free(jobs->ctx, sizeof(weft__ctx_t) * ctx_total(jobs), a.user);
    }
    weft__queue_fini(&jobs->inject);
    weft__queue_fini(&jobs->main);
    weft__sleep_fini(&jobs->sleep);
    a.free(jobs, sizeof *jobs, a.user);
}

/* Tell the spawned workers [1, spawned) to exit and join them. */
static void stop_and_join(weft_jobs_t *jobs, uint32_t spawned) {
    /* seq_cst: a publication for the sleep handshake (sleep.c) */
    weft_atomic_store_seq_cst(&jobs->phase, (uint32_t)WEFT__PHASE_STOPPED);
    weft__sleep_notify(jobs, UINT32_MAX);
    if (jobs->lent) {
        weft__executor_join(jobs);
        return;
    }
    for (uint32_t i = 1; i < spawned; ++i) {
        weft__thread_join(&jobs->ctx[i].thread);
    }
}

weft_result_t weft_jobs_create(const weft_jobs_desc_t *desc, weft_jobs_t **out) {
    WEFT__CONTRACT(out != NULL, desc ? &desc->logger : NULL, WEFT_EINVAL,
                   "weft_jobs_create: out is NULL");
    *out = NULL;
    weft_result_t r = check_desc(desc);
    if (r != WEFT_OK) {
        return r;
    }
    weft_jobs_desc_t d = weft_jobs_desc_resolved(desc);
    weft_jobs_t *jobs = d.allocator.alloc(sizeof *jobs, WEFT_CACHE_LINE, d.allocator.user);
    if (!jobs) {
        return WEFT__FAIL(&d.logger, WEFT_ENOMEM, "weft_jobs_create: out of memory");
    }
    memset(jobs, 0, sizeof *jobs);
    jobs->desc = d;
    jobs->alloc = d.allocator;
    jobs->id = weft_atomic_fetch_add_relaxed(&next_id, 1u);
    jobs->worker_count = d.worker_count;
    jobs->is_inline = d.execution == WEFT_EXECUTION_INLINE;
    jobs->oversubscribed = d.worker_count > weft__thread_hardware_count();
    weft__queue_init(&jobs->inject);
    weft__queue_init(&jobs->main);
    weft__sleep_init(&jobs->sleep);
    weft__pace_init(&jobs->pace);
    weft_atomic_init(&jobs->board, 0);
    weft_atomic_init(&jobs->phase, (uint32_t)WEFT__PHASE_RUNNING);
    weft_atomic_init(&jobs->external_inflight, 0);
    weft_atomic_init(&jobs->reg_used, 0);
    weft_atomic_init(&jobs->registered, 0);
    weft_atomic_init(&jobs->drains, 0);
    jobs->lent = d.executor.thread_count != 0;

    uint32_t total = ctx_total(jobs), ready = 0;
    jobs->ctx = d.allocator.alloc(sizeof(weft__ctx_t) * total, WEFT_CACHE_LINE, d.allocator.user);
    if (!jobs->ctx) {
        goto fail_free_all;
    }
    for (; ready < total; ++ready) {
        if (!ctx_init(jobs, ready)) {
            ready += 1; /* the failed context holds partial allocations: free them too */
            goto fail_free_all;
        }
    }
    if (!weft__bind_thread(jobs, &jobs->ctx[0])) {
        free_all(jobs, ready);
        return WEFT__FAIL(&d.logger, WEFT_ECAPACITY,
                          "weft_jobs_create: this thread is already bound to %d job systems",
                          BINDINGS);
    }
    /* With an executor, workers 1.. start parked: no thread until there is work. */
    for (uint32_t i = 1; !jobs->lent && i < jobs->worker_count; ++i) {
        char name[32]; /* "weft-worker-255" fits Linux's 15-character limit */
        snprintf(name, sizeof name, "weft-worker-%u", i);
        if (!weft__thread_create(&jobs->ctx[i].thread, worker_main, &jobs->ctx[i], name)) {
            stop_and_join(jobs, i);
            weft__unbind_thread(jobs);
            free_all(jobs, ready);
            return WEFT__FAIL(&d.logger, WEFT_ETHREAD,
                              "weft_jobs_create: could not start worker thread %u of %u", i,
                              d.worker_count - 1);
        }
    }
    if (jobs->lent) {
        weft__executor_init(jobs);
    }
    live_add(jobs);
    *out = jobs;
    return WEFT_OK;

fail_free_all:
    free_all(jobs, ready);
    return WEFT__FAIL(&d.logger, WEFT_ENOMEM, "weft_jobs_create: out of memory");
}

void weft__external_enter(weft_jobs_t *jobs) {
    /* seq_cst: pairs with destroy's seq_cst phase store and all_done()'s seq_cst load;
     * either destroy waits for us, or our phase check (weft__check_phase) sees it */
    weft_atomic_fetch_add_seq_cst(&jobs->external_inflight, 1u);
}

void weft__external_leave(weft_jobs_t *jobs) {
    /* release pairs with the seq_cst loads in destroy: our pushes and tallies are visible
     * to it once it sees the decrement. This is our last touch of `jobs`: destroy may free
     * it right after, so we cannot wake destroy; it polls instead (see weft_jobs_destroy). */
    weft_atomic_fetch_sub_release(&jobs->external_inflight, 1u);
}

/* True when every submitted job has finished and no registered thread is inside a call. */
static bool all_done(weft_jobs_t *jobs) {
    /* seq_cst: pairs with the registered thread's seq_cst increment before its phase check */
    if (weft_atomic_load_seq_cst(&jobs->external_inflight) != 0 &&
        !WEFT__PLANT("destroy_ignores_callers")) {
        return false;
    }
    uint32_t n = jobs->worker_count + weft_atomic_load_acquire(&jobs->registered);
    n = n < ctx_total(jobs) ? n : ctx_total(jobs);
    uint64_t finished = 0, submitted = 0;
    for (uint32_t i = 0; i < n; ++i) {
        /* pairs with the release store in weft__run_job(); seq_cst for the busy -> idle
         * handshake in worker_main(), whose seq_cst RMW of the tally this may read */
        finished += weft_atomic_load_seq_cst(&jobs->ctx[i].finished);
    }
    for (uint32_t i = 0; i < n; ++i) {
        /* pairs with the release store in submit.c: the job's submission is counted */
        submitted += weft_atomic_load_acquire(&jobs->ctx[i].submitted);
    }
    weft_assert_internal(finished <= submitted);
    return finished == submitted;
}

static bool drain_ready(weft_jobs_t *jobs, weft__ctx_t *ctx, const void *arg, bool final) {
    (void)arg;
    (void) final;
    return weft__has_work(jobs, ctx) || all_done(jobs);
}

void weft_jobs_destroy(weft_jobs_t *jobs) {
    if (!jobs) {
        return;
    }
    weft__ctx_t *ctx = weft__ctx_current(jobs);
    WEFT_ASSERT(ctx == &jobs->ctx[0], "weft_jobs_destroy: call it from the creating thread");
    if (ctx != &jobs->ctx[0]) {
        return;
    }
    WEFT_ASSERT(ctx->frames == NULL, "weft_jobs_destroy: called from inside a job");
    /* seq_cst: pairs with the registered threads' seq_cst load after their inflight RMW */
    weft_atomic_store_seq_cst(&jobs->phase, (uint32_t)WEFT__PHASE_DRAINING);
    if (jobs->is_inline) {
        weft__inline_drain(jobs, ctx, NULL);
    } else {
        for (;;) {
            if (weft__help_once(jobs, ctx)) {
                continue;
            }
            if (all_done(jobs)) {
                break;
            }
            if (weft_atomic_load_seq_cst(&jobs->external_inflight) != 0 &&
                !WEFT__PLANT("destroy_ignores_callers")) {
                /* A registered thread is inside a call; it cannot wake us when it leaves
                 * (see weft__external_leave), so poll politely. Rare and short. */
                weft__thread_yield();
                continue;
            }
            weft__sleep_idle(jobs, ctx, drain_ready, NULL);
        }
    }
    stop_and_join(jobs, jobs->worker_count);
    /* Registered threads that came in after the drain only look at the phase and leave. */
    while (weft_atomic_load_seq_cst(&jobs->external_inflight) != 0 &&
           !WEFT__PLANT("destroy_ignores_callers")) {
        weft__thread_yield();
    }
    weft__unbind_thread(jobs);
    live_remove(jobs); /* from here on, bindings that name it are dead (free_binding) */
    free_all(jobs, ctx_total(jobs));
}

/* ---- queries ----------------------------------------------------------------- >>query */

uint32_t weft_jobs_worker_count(const weft_jobs_t *jobs) {
    WEFT__NONNULL(jobs, 0);
    return jobs->worker_count;
}

uint32_t weft_jobs_worker_index(const weft_jobs_t *jobs) {
    WEFT__NONNULL(jobs, UINT32_MAX);
    weft__ctx_t *ctx = weft__ctx_current(jobs);
    return ctx ? ctx->index : UINT32_MAX;
}

weft_result_t weft_jobs_worker_stats(const weft_jobs_t *jobs, uint32_t worker,
                                     weft_worker_stats_t *out) {
    /* Returned in every build: a bad index here is a caller's slip, not a broken invariant. */
    if (jobs == NULL || out == NULL) {
        return WEFT__FAIL(NULL, WEFT_EINVAL, "weft_jobs_worker_stats: jobs or out is NULL");
    }
    if (worker >= jobs->worker_count) {
        return WEFT__FAIL(&jobs->desc.logger, WEFT_EINVAL,
                          "weft_jobs_worker_stats: worker %u out of range (%u workers)", worker,
                          jobs->worker_count);
    }
    const weft__ctx_t *ctx = &jobs->ctx[worker];
    /* relaxed: monotonic tallies, each written by its worker only; no data hangs on them */
    out->jobs = weft_atomic_load_relaxed(&ctx->jobs_run);
    out->ranges = weft_atomic_load_relaxed(&ctx->ranges_run);
    out->items = weft_atomic_load_relaxed(&ctx->items_run);
    return WEFT_OK;
}

void weft_jobs_count_items(weft_jobs_t *jobs, uint32_t worker, uint64_t n) {
    if (jobs != NULL && worker < jobs->worker_count) {
        weft__tally(&jobs->ctx[worker].items_run, n); /* the caller is that worker */
    }
}

void *weft_jobs_scratch(weft_jobs_t *jobs, uint32_t worker, size_t *size) {
    if (size) {
        *size = 0;
    }
    WEFT__NONNULL(jobs, NULL);
    /* UINT32_MAX is what a registered thread's ranges see: documented, no scratch */
    if (worker >= jobs->worker_count) {
        if (worker != UINT32_MAX) {
            (void)WEFT__FAIL(&jobs->desc.logger, WEFT_EINVAL,
                             "weft_jobs_scratch: no worker %u (the job system has %u)", worker,
                             jobs->worker_count);
        }
        return NULL;
    }
    if (size) {
        *size = jobs->desc.scratch_size;
    }
    return jobs->ctx[worker].scratch;
}

/* Take a free registered-thread slot; -1 when all are taken. */
static int claim_reg_slot(weft_jobs_t *jobs) {
    /* acquire pairs with the release fetch_and in weft_jobs_unregister_thread: the previous
     * owner's writes to the slot's context happen before our use of it */
    uint64_t used = weft_atomic_load_acquire(&jobs->reg_used);
    int slot;
    do {
        slot = -1;
        for (uint32_t k = 0; k < WEFT__MAX_REGISTERED && slot < 0; ++k) {
            if (((used >> k) & 1u) == 0) {
                slot = (int)k;
            }
        }
        if (slot < 0) {
            return -1;
        }
        /* acq_rel: acquire as above (a failed CAS reloads `used` with acquire too) */
    } while (!weft_atomic_cas_weak_acq_rel(&jobs->reg_used, &used, used | UINT64_C(1) << slot));
    /* Raise the high-water mark that destroy's all_done() sums tallies up to. acq_rel as
     * the fetch_add it replaces: our tallies only move after this, inside calls that
     * all_done() waits for (external_inflight), so it sees the mark with them. */
    uint32_t high = weft_atomic_load_relaxed(&jobs->registered);
    while (high < (uint32_t)slot + 1u &&
           !weft_atomic_cas_weak_acq_rel(&jobs->registered, &high, (uint32_t)slot + 1u)) {
    }
    return slot;
}

weft_result_t weft_jobs_register_thread(weft_jobs_t *jobs) {
    WEFT__CONTRACT(jobs != NULL, NULL, WEFT_EINVAL, "weft_jobs_register_thread: jobs is NULL");
    const weft_logger_t *log = &jobs->desc.logger;
    if (weft__ctx_current(jobs)) {
        return WEFT_OK; /* already a worker or registered */
    }
    if (jobs->is_inline) {
        return WEFT__FAIL(log, WEFT_ESTATE,
                          "weft_jobs_register_thread: an inline job system runs everything on "
                          "its creating thread");
    }
    if (free_binding() < 0) {
        return WEFT__FAIL(log, WEFT_ECAPACITY,
                          "weft_jobs_register_thread: this thread is already bound to %d live "
                          "job systems (weft_jobs_unregister_thread frees one)",
                          BINDINGS);
    }
    int slot = claim_reg_slot(jobs);
    if (slot < 0) {
        return WEFT__FAIL(log, WEFT_ECAPACITY,
                          "weft_jobs_register_thread: all %u registered-thread slots are taken "
                          "(weft_jobs_unregister_thread frees one)",
                          WEFT__MAX_REGISTERED);
    }
    /* Cannot fail: free_binding() found room above and only this thread binds itself. */
    bool bound = weft__bind_thread(jobs, &jobs->ctx[jobs->worker_count + (uint32_t)slot]);
    weft_assert_internal(bound);
    (void)bound;
    return WEFT_OK;
}

weft_result_t weft_jobs_unregister_thread(weft_jobs_t *jobs) {
    WEFT__CONTRACT(jobs != NULL, NULL, WEFT_EINVAL, "weft_jobs_unregister_thread: jobs is NULL");
    const weft_logger_t *log = &jobs->desc.logger;
    weft__ctx_t *ctx = weft__ctx_current(jobs);
    if (!ctx) {
        return WEFT__FAIL(log, WEFT_ENOENT,
                          "weft_jobs_unregister_thread: the calling thread is not registered "
                          "with this job system");
    }
    if (ctx->is_worker) {
        return WEFT__FAIL(log, WEFT_ESTATE,
                          "weft_jobs_unregister_thread: the calling thread is worker %u, not a "
                          "registered thread; workers stay bound until weft_jobs_destroy",
                          ctx->index);
    }
    if (ctx->pfor_calls != 0) {
        return WEFT__FAIL(log, WEFT_ESTATE,
                          "weft_jobs_unregister_thread: called from a range of the thread's own "
                          "weft_parallel_for, which is still running");
    }
    weft__external_enter(jobs); /* destroy waits while we are inside */
    weft__unbind_thread(jobs);
    uint32_t slot = (uint32_t)(ctx - jobs->ctx) - jobs->worker_count;
    /* release pairs with the acquire in claim_reg_slot(): our writes to the context (its
     * freelist, loop slots, tallies) happen before the next owner's */
    weft_atomic_fetch_and_release(&jobs->reg_used, ~(UINT64_C(1) << slot));
    weft__external_leave(jobs);
    return WEFT_OK;
}
