/* counter.c: completion counters — counting jobs down, parking gated batches on them,
 * and waiting for zero while running other jobs.
 *
 * DESIGN: the caller-owned 64 bytes hold one 64-bit atomic word and a waiter-list head:
 *   bits 0..60  count     jobs not yet finished
 *   bit  61     SLEEPERS  a waiter may be asleep in the eventcount (sleep.c)
 *   bit  62     WAITERS   the waiter list is non-empty
 *   bit  63     LOCKED    someone is editing the waiter list (a tiny spinlock)
 * The counter is "done" exactly when the whole word is zero. That rule is what makes it
 * safe for a waiter to free the counter's storage the moment it sees done: whoever
 * finishes the last job touches the counter for the last time with the very operation
 * that makes the word zero.
 *  - Fast path: fetch_sub(1); if that leaves count > 0, or leaves the word at exactly 0,
 *    we are done and never look at the counter again.
 *  - Slow path: count reached 0 but WAITERS or SLEEPERS is set, so the word is not zero
 *    and nobody considers the counter done yet. The finisher takes LOCKED, detaches the
 *    list, and clears LOCKED|WAITERS|SLEEPERS with one release fetch_and — its last touch.
 *    Then it releases the detached gates and, if SLEEPERS was set, wakes the sleepers.
 *  - Parking sets LOCKED|WAITERS in one CAS that also checks count > 0, links the node,
 *    and clears LOCKED. A count of zero means "already done": nothing is parked.
 *  - A sleeping waiter sets SLEEPERS with a CAS that also checks count > 0, after reading
 *    the eventcount ticket, so the finisher's wake-up cannot be missed.
 *
 * Deadlock check: every running job leaves a frame on its thread (worker.c); waiting on a
 * counter named by one of those frames can never finish, so it fails with WEFT_EDEADLK.
 *
 * Lock order: a counter's LOCKED bit is a leaf — nothing else is taken while it is held
 * (the gates it detaches are released after it is dropped). */
#include "jobs_impl.h"

#define C_COUNT ((UINT64_C(1) << 61) - 1u)
#define C_SLEEPERS (UINT64_C(1) << 61)
#define C_WAITERS (UINT64_C(1) << 62)
#define C_LOCKED (UINT64_C(1) << 63)

typedef weft__count_t counter_impl_t; /* jobs_impl.h: also a parallel-for slot's `left` */

_Static_assert(sizeof(counter_impl_t) <= sizeof(weft_counter_t), "counter storage too small");
_Static_assert(_Alignof(counter_impl_t) <= _Alignof(weft_counter_t), "counter misaligned");

static counter_impl_t *impl(const weft_counter_t *c) { return weft__count_of(c); }

void weft_counter_init(weft_counter_t *c) {
    WEFT__NONNULL(c, );
    counter_impl_t *ci = impl(c);
    weft_atomic_init(&ci->word, 0);
    weft_atomic_init(&ci->waiters, NULL);
}

bool weft__count_is_done(const counter_impl_t *ci) {
    /* acquire pairs with the release RMWs in weft__counter_finish_n(): the finished jobs'
     * writes are visible to whoever sees zero */
    return weft_atomic_load_acquire(&ci->word) == 0;
}

bool weft_counter_is_done(const weft_counter_t *c) {
    WEFT__NONNULL(c, false);
    return weft__count_is_done(impl(c));
}

void weft__counter_set(counter_impl_t *ci, uint64_t n) {
    weft_assert_internal(weft_atomic_load_relaxed(&ci->word) == 0);
    weft_assert_internal(n <= C_COUNT);
    /* relaxed, as in weft__counter_add; a store, not an RMW: nobody else touches it now */
    weft_atomic_store_relaxed(&ci->word, n);
}

void weft__counter_add(weft_counter_t *c, uint64_t n) {
    /* relaxed: the jobs that will subtract are published afterwards by a release push, so
     * every subtraction is ordered after this addition */
    uint64_t old = weft_atomic_fetch_add_relaxed(&impl(c)->word, n);
    weft_assert_internal((old & C_COUNT) + n <= C_COUNT);
    (void)old;
}

bool weft__counter_park(weft_counter_t *c, weft__rec_t *node) {
    counter_impl_t *ci = impl(c);
    /* acquire: when we see count 0 we read the finished jobs' writes (the gate's jobs may
     * then run on this thread and must see them) */
    uint64_t w = weft_atomic_load_acquire(&ci->word);
    for (;;) {
        if ((w & C_COUNT) == 0) {
            return false;
        }
        if (w & C_LOCKED) {
            weft_cpu_relax();
            w = weft_atomic_load_acquire(&ci->word);
            continue;
        }
        /* acq_rel: acquire pairs with the previous holder's release of LOCKED */
        if (weft_atomic_cas_weak_acq_rel(&ci->word, &w, w | C_LOCKED | C_WAITERS)) {
            break;
        }
    }
    node->next = weft_atomic_load_relaxed(&ci->waiters);
    weft_atomic_store_relaxed(&ci->waiters, node);
    /* release pairs with the finisher's acquire when it takes LOCKED: the link is visible */
    weft_atomic_fetch_and_release(&ci->word, ~C_LOCKED);
    return true;
}

void weft__gate_release(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__rec_t *gate) {
    /* acq_rel: the last releaser sees every earlier releaser's view (their finished
     * dependencies) before making the jobs ready */
    if (weft_atomic_fetch_sub_acq_rel(&gate->u.pending, 1u) != 1u) {
        return;
    }
    weft__rec_t *first = gate->arg;
    weft__rec_free(ctx, gate);
    weft__schedule_ready(jobs, ctx, first);
}

/* The last job finished while WAITERS or SLEEPERS was set: the word is non-zero (flags), so
 * no waiter has let go of c yet. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline)) /* keeps the fast path in weft__counter_finish_n free of spills */
#endif
static void
finish_slow(weft_jobs_t *jobs, weft__ctx_t *ctx, counter_impl_t *ci, uint64_t old) {
    uint64_t w = weft_atomic_load_relaxed(&ci->word);
    for (;;) {
        if (w & C_LOCKED) {
            weft_cpu_relax(); /* a parker is linking a node; it takes a few instructions */
            w = weft_atomic_load_relaxed(&ci->word);
            continue;
        }
        /* acq_rel: acquire pairs with the parker's release of LOCKED (its link) */
        if (weft_atomic_cas_weak_acq_rel(&ci->word, &w, w | C_LOCKED)) {
            break;
        }
    }
    weft__rec_t *list = weft_atomic_load_relaxed(&ci->waiters);
    weft_atomic_store_relaxed(&ci->waiters, NULL);
    /* release pairs with the acquire in weft_counter_is_done(); our last touch of c */
    uint64_t before =
        weft_atomic_fetch_and_release(&ci->word, ~(C_LOCKED | C_WAITERS | C_SLEEPERS));
    if (WEFT__PLANT("counter_touch_after_release")) {
        (void)weft_atomic_load_relaxed(&ci->waiters); /* the interleaving checker's plant */
    }
    while (list) {
        weft__rec_t *next = list->next;
        weft__rec_t *gate = list->arg;
        weft__rec_free(ctx, list);
        weft__gate_release(jobs, ctx, gate);
        list = next;
    }
    if ((old | before) & C_SLEEPERS) {
        weft__sleep_notify(jobs, UINT32_MAX); /* the waiter may be any sleeping thread */
    }
}

bool weft__counter_finish_n(weft_jobs_t *jobs, weft__ctx_t *ctx, counter_impl_t *ci, uint64_t n) {
    /* acq_rel: release publishes this job's writes to whoever sees zero; acquire lets the
     * last finisher pass all earlier jobs' writes on to the gates it releases */
    weft_assert_internal(n > 0);
    uint64_t old = weft_atomic_fetch_sub_acq_rel(&ci->word, n);
    weft_assert_internal((old & C_COUNT) >= n);
    if ((old & C_COUNT) != n) {
        return false; /* not the last: c is never touched again */
    }
    if ((old & (C_WAITERS | C_SLEEPERS)) != 0) {
        finish_slow(jobs, ctx, ci, old);
    }
    return true;
}

/* ---- waiting ------------------------------------------------------------------ >>wait */

/* Sleep-check for a waiter: done, or (for workers) runnable work. On the final check,
 * mark the counter so its finisher wakes us (only while count > 0). */
static bool wait_ready(weft_jobs_t *jobs, weft__ctx_t *ctx, const void *arg, bool final) {
    counter_impl_t *ci = (counter_impl_t *)(uintptr_t)arg;
    if (weft__count_is_done(ci) || weft__has_work(jobs, ctx)) {
        return true;
    }
    if (!final) {
        return false;
    }
    /* seq_cst: part of the sleep handshake; the finisher's fetch_sub reads this flag */
    uint64_t w = weft_atomic_load_seq_cst(&ci->word);
    for (;;) {
        if ((w & C_COUNT) == 0) {
            return true;
        }
        if (w & C_SLEEPERS) {
            return false;
        }
        if (weft_atomic_cas_weak_seq_cst(&ci->word, &w, w | C_SLEEPERS)) {
            return false;
        }
    }
}

void weft__counter_wait_loop(weft_jobs_t *jobs, weft__ctx_t *ctx, counter_impl_t *c) {
    while (!weft__count_is_done(c)) {
        if (ctx->is_worker) {
            if (weft__help_once(jobs, ctx)) {
                continue;
            }
        }
        ctx->spin_backoff = 1; /* a waiter wants to see its counter's zero at once */
        weft__sleep_idle(jobs, ctx, wait_ready, c);
    }
}

weft_result_t weft_counter_wait(weft_jobs_t *jobs, weft_counter_t *c) {
    WEFT__CONTRACT(jobs != NULL, NULL, WEFT_EINVAL, "weft_counter_wait: jobs is NULL");
    const weft_logger_t *log = &jobs->desc.logger;
    WEFT__CONTRACT(c != NULL, log, WEFT_EINVAL, "weft_counter_wait: c is NULL");
    weft__ctx_t *ctx = weft__ctx_current(jobs);
    WEFT__CONTRACT(ctx != NULL, log, WEFT_EINVAL,
                   "weft_counter_wait: the calling thread is neither a worker nor registered "
                   "(weft_jobs_register_thread)");
    if (weft_counter_is_done(c)) {
        return WEFT_OK;
    }
    for (const weft__frame_t *f = ctx->frames; f; f = f->prev) {
        if (f->done == c) {
            return WEFT__FAIL(log, WEFT_EDEADLK,
                              "weft_counter_wait: the counter counts a job that is running on "
                              "this thread (%s), so it cannot reach zero while we wait",
                              f == ctx->frames ? "the calling job itself" : "a job below us");
        }
    }
    if (jobs->is_inline) {
        weft__inline_drain(jobs, ctx, c);
        if (weft_counter_is_done(c)) {
            return WEFT_OK;
        }
        return WEFT__FAIL(log, WEFT_EDEADLK,
                          "weft_counter_wait: inline mode has nothing left to run, but the "
                          "counter is not zero (its jobs wait on counters that never finish)");
    }
    if (ctx->is_worker) {
        weft__counter_wait_loop(jobs, ctx, impl(c));
        return WEFT_OK;
    }
    /* Registered thread: destroy must not free the instance while we are inside. */
    weft__external_enter(jobs);
    weft_result_t r = WEFT_OK;
    if (weft_atomic_load_seq_cst(&jobs->phase) == WEFT__PHASE_STOPPED) {
        r = WEFT__FAIL(log, WEFT_ESHUTDOWN, "weft_counter_wait: the job system was destroyed");
    } else {
        weft__counter_wait_loop(jobs, ctx, impl(c));
    }
    weft__external_leave(jobs);
    return r;
}
