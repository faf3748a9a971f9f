/* submit.c: turning job descs into runnable jobs — validation, the shutdown check, the
 * injection and main-thread queues, gates for jobs with dependencies, and inline mode.
 *
 * DESIGN: a submission first allocates every record it needs (jobs, and for
 * submit_after a gate plus one node per dependency) and reserves deque room, so it either
 * fails with nothing done or succeeds completely. Ready jobs go to the submitting worker's
 * own deques (one batch push per priority, so one seq_cst store per batch), or to the
 * injection queue when the submitter is a registered thread, or to the main queue when
 * pinned to worker 0. Jobs with dependencies are chained behind a gate record whose
 * `pending` count is 1 (held by the submitter while parking) plus one per dependency
 * still above zero; the gate is parked on each such counter (counter.c), and whoever
 * brings `pending` to zero — the submitter or the last counter's finisher — makes the
 * jobs ready. No thread ever blocks for a dependency.
 *
 * Inline mode: ready jobs go to the calling thread's FIFO; a top-level submit drains it
 * before returning, so jobs run in submission (readiness) order on the caller. A job
 * submitted from inside a running job waits in the FIFO until the current one returns,
 * or until something waits on it, which keeps the stack flat for long chains.
 *
 * Lock order: inject.lock and main.lock are leaves, never held together or with any other
 * lock; sleep.c's notify runs after they are released. */
#include "jobs_impl.h"

#include <string.h>

/* ---- locked queues (injection, main thread) -------------------------------- >>queue */

void weft__queue_init(weft__queue_t *q) {
    weft__mutex_init(&q->lock);
    for (int p = 0; p < WEFT_PRIORITY_COUNT; ++p) {
        q->lists[p] = (weft__list_t){NULL, NULL};
        weft_atomic_init(&q->count[p], 0);
    }
}

void weft__queue_fini(weft__queue_t *q) { weft__mutex_fini(&q->lock); }

bool weft__queue_is_empty(weft__queue_t *q) {
    for (int p = 0; p < WEFT_PRIORITY_COUNT; ++p) {
        /* seq_cst: a sleeper's check in the sleep handshake (sleep.c) */
        if (weft_atomic_load_seq_cst(&q->count[p]) != 0) {
            return false;
        }
    }
    return true;
}

weft__rec_t *weft__queue_pop(weft__queue_t *q, int priority) {
    if (!weft__queue_maybe_nonempty(q)) {
        return NULL;
    }
    /* -1: every list, most urgent first (the enum's zero is the default, not the top). */
    static const int order[WEFT_PRIORITY_COUNT] = {WEFT_PRIORITY_HIGH, WEFT_PRIORITY_NORMAL,
                                                   WEFT_PRIORITY_LOW};
    int n = priority < 0 ? WEFT_PRIORITY_COUNT : 1;
    for (int i = 0; i < n; ++i) {
        int p = priority < 0 ? order[i] : priority;
        /* relaxed peek: a miss here is caught by the seq_cst check before sleeping */
        if (weft_atomic_load_relaxed(&q->count[p]) == 0) {
            continue;
        }
        weft__mutex_lock(&q->lock); /* acquire q->lock: pairs with queue_push's unlock */
        weft__rec_t *r = weft__list_pop(&q->lists[p]);
        if (r) {
            weft_atomic_fetch_sub_relaxed(&q->count[p], 1u);
        }
        weft__mutex_unlock(&q->lock); /* release q->lock */
        if (r) {
            return r;
        }
    }
    return NULL;
}

/* Append a list of jobs; returns how many. The caller notifies sleepers. */
static uint32_t queue_push(weft__queue_t *q, weft__rec_t *first) {
    uint32_t n = 0;
    weft__mutex_lock(&q->lock); /* acquire q->lock: guards lists */
    while (first) {
        weft__rec_t *next = first->next;
        weft__list_push(&q->lists[first->priority], first);
        /* seq_cst: a publication for the sleep handshake (sleep.c) */
        weft_atomic_fetch_add_seq_cst(&q->count[first->priority], 1u);
        first = next;
        n += 1;
    }
    weft__mutex_unlock(&q->lock); /* release q->lock: pairs with queue_pop's lock */
    return n;
}

/* ---- making jobs ready -------------------------------------------------------- >>ready */

/* Push a list onto the worker's deque p in batches (room is reserved). Each record's
 * `next` is read before the batch holding it is published: once pushed, a thief may run
 * and free it at once. */
static void push_list(weft__ctx_t *ctx, int p, weft__rec_t *first) {
    void *batch[64];
    while (first) {
        uint32_t n = 0;
        while (first && n < 64) {
            batch[n++] = first;
            first = first->next;
        }
        weft__deque_push(&ctx->dq[p], batch, n);
    }
}

void weft__schedule_ready(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__rec_t *first) {
    if (jobs->is_inline) {
        while (first) {
            weft__rec_t *next = first->next;
            weft__list_push(&ctx->inline_queue, first);
            first = next;
        }
        return;
    }
    /* Fast path: one ordinary job from a worker. */
    if (!first->next && !first->main_thread && ctx->is_worker &&
        weft__deque_has_room(&ctx->dq[first->priority], 1u)) {
        void *one = first;
        weft__deque_push(&ctx->dq[first->priority], &one, 1u);
        weft__sleep_notify(jobs, 1u);
        return;
    }
    /* Split into one list per priority plus the main-thread list (nothing is published
     * yet, so the links may be rewritten freely). */
    weft__list_t lists[WEFT_PRIORITY_COUNT + 1] = {{0}};
    uint32_t counts[WEFT_PRIORITY_COUNT + 1] = {0};
    while (first) {
        weft__rec_t *next = first->next;
        int which = first->main_thread ? WEFT_PRIORITY_COUNT : first->priority;
        weft__list_push(&lists[which], first);
        counts[which] += 1;
        first = next;
    }
    if (lists[WEFT_PRIORITY_COUNT].head) {
        queue_push(&jobs->main, lists[WEFT_PRIORITY_COUNT].head);
        weft__sleep_notify(jobs, UINT32_MAX); /* worker 0 must be the one to wake */
    }
    /* A registered thread has no deques; a worker whose deque cannot grow (possible only
     * on the gate path: submit reserves up front) falls back to the injection queue,
     * which never allocates. Reserving never shrinks, so a partial success is harmless. */
    bool room = ctx->is_worker;
    for (int p = 0; room && p < WEFT_PRIORITY_COUNT; ++p) {
        room = counts[p] == 0 || weft__deque_reserve(&ctx->dq[p], counts[p]);
    }
    uint32_t pushed = 0;
    for (int p = 0; p < WEFT_PRIORITY_COUNT; ++p) {
        if (!lists[p].head) {
            continue;
        }
        if (room) {
            push_list(ctx, p, lists[p].head);
            pushed += counts[p];
        } else {
            pushed += queue_push(&jobs->inject, lists[p].head);
        }
    }
    weft__sleep_notify(jobs, pushed);
}

/* ---- inline mode ---------------------------------------------------------- >>inline */

void weft__inline_drain(weft_jobs_t *jobs, weft__ctx_t *ctx, const weft_counter_t *until) {
    bool was = ctx->inline_draining;
    ctx->inline_draining = true;
    weft__rec_t *job;
    while ((until == NULL || !weft_counter_is_done(until)) &&
           (job = weft__list_pop(&ctx->inline_queue)) != NULL) {
        weft__run_job(jobs, ctx, job);
    }
    ctx->inline_draining = was;
}

/* ---- submission -------------------------------------------------------------- >>submit */

weft_result_t weft__check_phase(weft_jobs_t *jobs, const weft__ctx_t *ctx, const char *what) {
    /* seq_cst for registered threads: pairs with destroy's seq_cst store (after our
     * seq_cst inflight increment) so destroy waits for us or we see the phase. */
    uint32_t phase = ctx->is_worker ? weft_atomic_load_relaxed(&jobs->phase)
                                    : weft_atomic_load_seq_cst(&jobs->phase);
    if (phase == WEFT__PHASE_RUNNING || (phase == WEFT__PHASE_DRAINING && ctx->frames)) {
        return WEFT_OK; /* while draining, running jobs may still submit their children */
    }
    return WEFT__FAIL(&jobs->desc.logger, WEFT_ESHUTDOWN,
                      "%s: the job system is shutting down (weft_jobs_destroy has begun)", what);
}

/* Free a list of unpublished records (a failed submission). */
static void free_list(weft__ctx_t *ctx, weft__rec_t *r) {
    while (r) {
        weft__rec_t *next = r->next;
        weft__rec_free(ctx, r);
        r = next;
    }
}

/* Allocate n records linked through `next`; NULL (and nothing allocated) on failure. */
static weft__rec_t *alloc_list(weft_jobs_t *jobs, weft__ctx_t *ctx, uint32_t n) {
    weft__rec_t *first = NULL;
    for (uint32_t i = 0; i < n; ++i) {
        weft__rec_t *r = weft__rec_alloc(jobs, ctx);
        if (!r) {
            free_list(ctx, first);
            return NULL;
        }
        r->next = first;
        first = r;
    }
    return first;
}

static void fill_job(weft__rec_t *r, const weft_job_desc_t *d, weft_counter_t *done) {
    r->kind = WEFT__REC_JOB;
    r->fn = d->fn;
    r->arg = d->arg;
    r->name = d->name ? d->name : "job";
    r->done = done;
    r->u.tag = d->tag;
    r->priority = (uint8_t)d->priority;
    r->main_thread = d->main_thread;
}

static void count_submitted(weft__ctx_t *ctx, uint32_t n) {
    /* release pairs with the acquire loads in destroy's all_done() */
    weft_atomic_store_release(&ctx->submitted, weft_atomic_load_relaxed(&ctx->submitted) + n);
}

/* Reserve deque room for the batch up front so scheduling cannot fail halfway. */
static bool reserve_for(weft__ctx_t *ctx, const weft_job_desc_t *descs, uint32_t n) {
    if (!ctx->is_worker) {
        return true;
    }
    uint32_t counts[WEFT_PRIORITY_COUNT] = {0};
    for (uint32_t i = 0; i < n; ++i) {
        if (!descs[i].main_thread) {
            counts[descs[i].priority] += 1;
        }
    }
    for (int p = 0; p < WEFT_PRIORITY_COUNT; ++p) {
        if (counts[p] && !weft__deque_reserve(&ctx->dq[p], counts[p])) {
            return false;
        }
    }
    return true;
}

/* Park the gate on every live dependency, then drop the submitter's reference. */
static void park_gate(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__rec_t *gate, weft__rec_t *nodes,
                      weft_counter_t *const *deps, uint32_t ndeps) {
    weft_atomic_store_relaxed(&gate->u.pending, 1u); /* the submitter's reference */
    for (uint32_t i = 0; i < ndeps && nodes; ++i) {
        weft__rec_t *node = nodes;
        nodes = node->next;
        node->kind = WEFT__REC_NODE;
        node->arg = gate;
        /* Count the reference before parking: the counter may release it at once. */
        weft_atomic_fetch_add_relaxed(&gate->u.pending, 1u);
        if (!weft__counter_park(deps[i], node)) {
            weft_atomic_fetch_sub_relaxed(&gate->u.pending, 1u); /* still >= 1: ours */
            weft__rec_free(ctx, node);
        }
    }
    free_list(ctx, nodes);
    weft__gate_release(jobs, ctx, gate);
}

/* The body of submit / submit_after once the arguments are known to be good. */
static weft_result_t submit_checked(weft_jobs_t *jobs, weft__ctx_t *ctx,
                                    const weft_job_desc_t *descs, uint32_t n,
                                    weft_counter_t *const *deps, uint32_t ndeps,
                                    weft_counter_t *done, const char *what) {
    weft_result_t r = weft__check_phase(jobs, ctx, what);
    if (r != WEFT_OK) {
        return r;
    }
    /* Dependencies already at zero need no gate; one node per dependency otherwise
     * (repeats included: parking twice on one counter is harmless). */
    bool gated = false;
    for (uint32_t i = 0; i < ndeps && !gated; ++i) {
        gated = !weft_counter_is_done(deps[i]);
    }
    weft__rec_t *first = alloc_list(jobs, ctx, n);
    weft__rec_t *gate = NULL, *nodes = NULL;
    if (first && gated) {
        gate = weft__rec_alloc(jobs, ctx);
        nodes = gate ? alloc_list(jobs, ctx, ndeps) : NULL;
    }
    if (!first || (gated && !nodes) || (!jobs->is_inline && !reserve_for(ctx, descs, n))) {
        free_list(ctx, first);
        free_list(ctx, nodes);
        if (gate) {
            weft__rec_free(ctx, gate);
        }
        return WEFT__FAIL(&jobs->desc.logger, WEFT_ENOMEM, "%s: out of memory for %u jobs", what,
                          n);
    }
    weft__rec_t *job = first;
    for (uint32_t i = 0; i < n; ++i, job = job->next) {
        fill_job(job, &descs[i], done);
    }
    if (done) {
        weft__counter_add(done, n);
    }
    count_submitted(ctx, n);
    if (gate) {
        gate->kind = WEFT__REC_GATE;
        gate->arg = first;
        park_gate(jobs, ctx, gate, nodes, deps, ndeps);
    } else {
        weft__schedule_ready(jobs, ctx, first);
    }
    if (jobs->is_inline && !ctx->inline_draining) {
        weft__inline_drain(jobs, ctx, NULL);
    }
    return WEFT_OK;
}

/* One job without dependencies from a worker or registered thread (not inline mode): the
 * common submit, without the batch machinery of submit_checked. */
static inline weft_result_t submit_single(weft_jobs_t *jobs, weft__ctx_t *ctx,
                                          const weft_job_desc_t *d, weft_counter_t *done,
                                          const char *what) {
    /* The phase check reports, so only call it when it may fail (registered threads need
     * its seq_cst load). */
    if (!ctx->is_worker || weft_atomic_load_relaxed(&jobs->phase) != WEFT__PHASE_RUNNING) {
        weft_result_t r = weft__check_phase(jobs, ctx, what);
        if (r != WEFT_OK) {
            return r;
        }
    }
    weft__rec_t *job = weft__rec_alloc(jobs, ctx);
    weft__deque_t *dq = ctx->is_worker && !d->main_thread ? &ctx->dq[d->priority] : NULL;
    if (!job || (dq && !weft__deque_has_room(dq, 1u) && !weft__deque_reserve(dq, 1u))) {
        if (job) {
            weft__rec_free(ctx, job);
        }
        return WEFT__FAIL(&jobs->desc.logger, WEFT_ENOMEM, "%s: out of memory for 1 job", what);
    }
    fill_job(job, d, done);
    if (done) {
        weft__counter_add(done, 1u);
    }
    count_submitted(ctx, 1u);
    if (dq) {
        void *one = job;
        weft__deque_push(dq, &one, 1u);
        weft__sleep_notify(jobs, 1u);
    } else {
        weft__schedule_ready(jobs, ctx, job); /* injection or main-thread queue */
    }
    return WEFT_OK;
}

/* Argument checks shared by submit and submit_after; also enters/leaves the
 * registered-thread in-flight count around the real work. */
static weft_result_t submit_api(weft_jobs_t *jobs, const weft_job_desc_t *descs, uint32_t n,
                                weft_counter_t *const *deps, uint32_t ndeps, weft_counter_t *done,
                                const char *what) {
    WEFT__CONTRACT(jobs != NULL, NULL, WEFT_EINVAL, "%s: jobs is NULL", what);
    const weft_logger_t *log = &jobs->desc.logger;
    WEFT__CONTRACT(n == 0 || descs != NULL, log, WEFT_EINVAL, "%s: descs is NULL", what);
    WEFT__CONTRACT(ndeps == 0 || deps != NULL, log, WEFT_EINVAL, "%s: deps is NULL", what);
    for (uint32_t i = 0; i < n; ++i) {
        WEFT__CONTRACT(descs[i].fn != NULL, log, WEFT_EINVAL, "%s: descs[%u].fn is NULL", what, i);
        WEFT__CONTRACT((unsigned)descs[i].priority < WEFT_PRIORITY_COUNT, log, WEFT_EINVAL,
                       "%s: descs[%u].priority %d is not a weft_priority_t", what, i,
                       (int)descs[i].priority);
    }
    for (uint32_t i = 0; i < ndeps; ++i) {
        WEFT__CONTRACT(deps[i] != NULL, log, WEFT_EINVAL, "%s: deps[%u] is NULL", what, i);
        if (n > 0 && deps[i] == done) {
            return WEFT__FAIL(log, WEFT_EDEADLK,
                              "%s: deps[%u] is the batch's own completion counter, which "
                              "cannot reach zero before the batch runs",
                              what, i);
        }
    }
    weft__ctx_t *ctx = weft__ctx_current(jobs);
    WEFT__CONTRACT(ctx != NULL, log, WEFT_EINVAL,
                   "%s: the calling thread is neither a worker nor registered "
                   "(weft_jobs_register_thread)",
                   what);
    if (n == 0) {
        return WEFT_OK;
    }
    if (ctx->is_worker) {
        if (n == 1 && ndeps == 0 && !jobs->is_inline) {
            return submit_single(jobs, ctx, descs, done, what);
        }
        return submit_checked(jobs, ctx, descs, n, deps, ndeps, done, what);
    }
    weft__external_enter(jobs);
    weft_result_t r = submit_checked(jobs, ctx, descs, n, deps, ndeps, done, what);
    weft__external_leave(jobs);
    return r;
}

weft_result_t weft_job_submit(weft_jobs_t *jobs, const weft_job_desc_t *descs, uint32_t n,
                              weft_counter_t *done) {
    /* Fast path for the most common call: one valid job from a worker. Anything else (or
     * anything wrong) takes the full path, which reports. */
    if (n == 1 && jobs && descs && descs->fn && (unsigned)descs->priority < WEFT_PRIORITY_COUNT &&
        !jobs->is_inline) {
        weft__ctx_t *ctx = weft__ctx_current(jobs);
        if (ctx && ctx->is_worker) {
            return submit_single(jobs, ctx, descs, done, "weft_job_submit");
        }
    }
    return submit_api(jobs, descs, n, NULL, 0, done, "weft_job_submit");
}

weft_result_t weft_job_submit_after(weft_jobs_t *jobs, const weft_job_desc_t *descs, uint32_t n,
                                    weft_counter_t *const *deps, uint32_t ndeps,
                                    weft_counter_t *done) {
    return submit_api(jobs, descs, n, deps, ndeps, done, "weft_job_submit_after");
}

weft_result_t weft__submit_internal(weft_jobs_t *jobs, weft__ctx_t *ctx, weft_job_fn_t fn,
                                    void *arg, uint32_t tag, const char *name) {
    weft_assert_internal(!jobs->is_inline);
    weft_job_desc_t d = {.fn = fn, .arg = arg, .name = name, .tag = tag};
    return submit_single(jobs, ctx, &d, NULL, "weft_parallel_for");
}
