/* executor.c: workers 1.. running on threads an engine lends (weft_executor_t).
 *
 * DESIGN
 * With an executor, weft starts no threads. Workers 1 .. worker_count - 1 keep their contexts
 * (deques, record slabs, scratch, tallies), but a context is driven by a "drain" task that the
 * engine runs on one of its threads: the task binds the thread to the context, runs the
 * worker loop while there is work (spinning desc.spin_us for more, like a worker about to
 * sleep), then gives the context up and returns the thread to the engine.
 *
 * A context is claimed (`lent` = 1: a drain task is submitted or running and owns it) or
 * parked (`lent` = 0: no task). A parked context counts as a sleeper in jobs->sleep.sleepers,
 * so publishers keep the one-load fast path of sleep.c: they see sleepers != 0 and call
 * weft__sleep_wake, which claims up to n parked contexts (CAS 0 -> 1, then sleepers -= 1)
 * and submits a drain for each. At most one drain owns a context, so at most thread_count
 * tasks are queued and not yet started; a drain that parked may still be returning (its last
 * instructions touch nothing of the job system) when its context's next drain is submitted.
 *
 * Parking, without a lost wake-up (the eventcount handshake of sleep.c, every access
 * seq_cst): the drain does  [sleepers += 1] -> [lent = 0] -> [check every queue];  the
 * publisher does  [publish] -> [load sleepers] -> [CAS lent 0 -> 1].  If the publisher's load
 * missed the increment, the drain's check comes after the publication and sees the work; it
 * then reclaims its own context (CAS 0 -> 1) and goes on, or finds it claimed by someone else
 * who will submit a drain. If the load saw the increment, the publisher's CAS either comes
 * after `lent = 0` and claims the context, or comes before it and fails, in which case the
 * publication precedes the drain's check, which sees it. After `lent = 0` the parking drain
 * never touches the context again (a new drain may own it): its check reads the queues and a
 * copy of its board word only.
 *
 * Shutdown: destroy first drains (phase DRAINING): it runs what it can and sleeps until every
 * job's `finished` tally is in. A drain whose job finished last may store its tally after
 * destroy's last look, so on going from busy to idle it kicks destroy awake
 * (weft__worker_went_idle), exactly as a spawned worker does; without that kick destroy
 * slept for good once in about 1,500 runs of tests/jobs/test_executor.c under TSan.
 * Then destroy stores the STOPPED phase and waits until `drains` (tasks submitted and
 * not returned) is zero. A drain's decrement is its last access to the job system. Claims
 * happen only for ordinary work, and destroy reaches STOPPED only after every job finished,
 * so no claim can follow. */
#include "jobs_impl.h"

#include <stdlib.h>

void weft__executor_init(weft_jobs_t *jobs) {
    for (uint32_t i = 1; i < jobs->worker_count; ++i) {
        weft_atomic_init(&jobs->ctx[i].lent, 0);
    }
    /* Before any other thread can see the job system: plain initialisation. */
    weft_atomic_init(&jobs->sleep.sleepers, jobs->worker_count - 1u);
}

/* Give the context up; true when this drain may return (its context is parked, or someone
 * else claimed it and submitted a drain), false when it reclaimed the context for new work
 * (sleep.c's handshake from the drain's side; see the file comment). */
static bool park(weft_jobs_t *jobs, weft__ctx_t *ctx) {
    uint32_t index = ctx->index;
    uint64_t board_seen = ctx->board_seen;
    weft__unbind_thread(jobs);
    /* seq_cst: the sleeper's side of the handshake, in this order */
    weft_atomic_fetch_add_seq_cst(&jobs->sleep.sleepers, 1u);
    weft_atomic_store_seq_cst(&ctx->lent, 0u);
    if (!weft__worker_has_work(jobs, index, board_seen)) {
        return true;
    }
    uint32_t parked = 0;
    /* seq_cst: as a publisher's claim (weft__executor_wake) */
    if (!weft_atomic_cas_strong_seq_cst(&ctx->lent, &parked, 1u)) {
        return true; /* claimed by a publisher, whose drain will run the work */
    }
    weft_atomic_fetch_sub_relaxed(&jobs->sleep.sleepers, 1u);
    if (!weft__bind_thread(jobs, ctx)) {
        abort(); /* the binding this thread just gave up is free again */
    }
    return false;
}

static void drain(void *arg) {
    weft__ctx_t *ctx = arg;
    weft_jobs_t *jobs = ctx->jobs;
    /* acquire pairs with destroy's seq_cst store: nothing is left to run */
    if (weft_atomic_load_acquire(&jobs->phase) != WEFT__PHASE_STOPPED) {
        if (!weft__bind_thread(jobs, ctx)) {
            abort(); /* the executor contract: a lent thread is not bound to 8 job systems */
        }
        ctx->spin_backoff = 1;
        bool ran = false;
        for (;;) {
            if (weft_atomic_load_acquire(&jobs->phase) == WEFT__PHASE_STOPPED) {
                weft__unbind_thread(jobs);
                break;
            }
            if (weft__help_once(jobs, ctx)) {
                ran = true;
                continue;
            }
            /* Busy -> idle, as a spawned worker: a destroy draining may sleep until it sees
             * our `finished` tally, and nothing else would wake it. */
            if (ran && !WEFT__PLANT("drain_skips_idle_kick")) {
                weft__worker_went_idle(jobs, ctx);
            }
            ran = false;
            if (weft__sleep_spin(jobs, ctx, weft__worker_ready, NULL)) {
                continue;
            }
            if (park(jobs, ctx)) {
                break;
            }
        }
    }
    /* release pairs with the acquire load in weft__executor_join: everything this drain did
     * happens before destroy frees the job system. The last access to `jobs`. */
    weft_atomic_fetch_sub_release(&jobs->drains, 1u);
}

uint32_t weft__executor_wake(weft_jobs_t *jobs, uint32_t n) {
    uint32_t claimed = 0;
    for (uint32_t i = 1; i < jobs->worker_count && claimed < n; ++i) {
        weft__ctx_t *ctx = &jobs->ctx[i];
        uint32_t parked = 0;
        if (weft_atomic_load_relaxed(&ctx->lent) != 0u ||
            !weft_atomic_cas_strong_seq_cst(&ctx->lent, &parked, 1u)) {
            continue;
        }
        weft_atomic_fetch_sub_relaxed(&jobs->sleep.sleepers, 1u);
        weft_atomic_fetch_add_relaxed(&jobs->drains, 1u);
        jobs->desc.executor.submit(drain, ctx, jobs->desc.executor.user);
        claimed += 1;
    }
    return claimed;
}

void weft__executor_join(weft_jobs_t *jobs) {
    /* acquire pairs with each drain's release decrement. A drain cannot wake us after its
     * last access, so this polls; drains see STOPPED within one spin poll. */
    while (weft_atomic_load_acquire(&jobs->drains) != 0u) {
        weft__thread_yield();
    }
}
