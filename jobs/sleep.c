/* sleep.c: how idle threads wait for work without burning a core, and how they are woken.
 *
 * DESIGN: an eventcount (as in Folly/Dmitry Vyukov's design) over one mutex and condition
 * variable. An idle thread first spins for desc.spin_us, polling with exponential backoff
 * (1, 2, 4 ... 64 pause instructions, then 64 between polls; with more workers than
 * hardware threads, sched_yield instead, so oversubscribed workers let the busy ones run;
 * see spin() for why the backoff carries over between idle periods). Then it
 * registers as a sleeper (`sleepers` += 1), reads `epoch`, checks once more for work, and
 * sleeps on the condition variable while `epoch` is unchanged.
 * A thread that publishes work reads `sleepers`; only if it is non-zero does it bump the
 * epoch and signal. So the common case — everyone busy — costs one load per submission.
 *
 * No lost wake-up (a Dekker handshake; every access involved is seq_cst, which TSan
 * models): the publisher does  [publish: seq_cst store/RMW] → [load sleepers];  the
 * sleeper does  [sleepers += 1] → [load epoch] → [seq_cst loads of every queue].  In the
 * single total order of seq_cst operations either the publisher's load sees the sleeper
 * (and bumps the epoch, which the sleeper re-reads under the mutex before waiting), or
 * the sleeper's increment comes later, so its queue checks see the published work.
 * Publications are: deque push (bottom store), injection/main queue push (count RMW),
 * phase changes (store), and a counter's zero transition (its SLEEPERS flag, counter.c).
 *
 * Paced frames (weft_jobs_frame_begin, below): a spawned worker may sleep with a deadline, a
 * measured lead before the predicted next frame. Its time-out leaves the wait loop as a
 * spurious wake-up does (deregistered, back to spin, register, re-check), so the argument
 * above is unchanged; what it predicts only decides when a worker spins, never whether work
 * is seen.
 *
 * notify(n) signals n times (or broadcasts): a parallel-for helper wakes one sleeper, not
 * all of them; main-thread jobs, counter zero transitions and shutdown broadcast, because
 * they must reach one particular thread.
 *
 * Lock order: sleep.lock is a leaf; it is never held while taking another lock. */
#include "jobs_impl.h"
#include <string.h>

void weft__sleep_init(weft__sleep_t *s) {
    weft_atomic_init(&s->sleepers, 0);
    weft_atomic_init(&s->external, 0);
    weft_atomic_init(&s->epoch, 0);
    weft__mutex_init(&s->lock);
    weft__cond_init(&s->cond);
}

void weft__sleep_fini(weft__sleep_t *s) {
    weft__cond_fini(&s->cond);
    weft__mutex_fini(&s->lock);
}

void weft__sleep_wake(weft_jobs_t *jobs, uint32_t n, uint32_t sleeping) {
    weft__sleep_t *s = &jobs->sleep;
    /* Executor mode: parked lent workers are counted in `sleepers` but wait on nothing;
     * new ordinary work (n < UINT32_MAX) starts drain tasks for them. Broadcasts are for
     * one particular thread (worker 0, a waiter, shutdown), which no drain can be. */
    if (jobs->lent && n != UINT32_MAX) {
        (void)weft__executor_wake(jobs, n);
    }
    /* seq_cst: a sleeper that registered after the caller's load of `sleepers`
     * (weft__sleep_notify, jobs_impl.h) reads the new epoch. */
    weft_atomic_fetch_add_seq_cst(&s->epoch, 1u);
    weft__mutex_lock(&s->lock); /* acquire sleep.lock: a sleeper is either before its
                                   epoch check or inside cond_wait, never in between */
    /* A registered thread cannot run the new job, so a signal spent on it would be lost:
     * broadcast whenever one sleeps (its increment is visible: it precedes its seq_cst
     * increment of `sleepers`, which the caller's seq_cst load read). */
    if (n >= sleeping || weft_atomic_load_relaxed(&s->external) != 0) {
        weft__cond_broadcast(&s->cond);
    } else {
        for (uint32_t i = 0; i < n; ++i) {
            weft__cond_signal(&s->cond);
        }
    }
    weft__mutex_unlock(&s->lock); /* release sleep.lock */
}

void weft__sleep_kick(weft_jobs_t *jobs) {
    weft__sleep_t *s = &jobs->sleep;
    /* seq_cst RMW: see the declaration; it orders our earlier plain publication before
     * the sleepers load below, which a fence-free release store could not */
    weft_atomic_fetch_add_seq_cst(&s->epoch, 1u);
    if (weft_atomic_load_seq_cst(&s->sleepers) == 0) {
        return;
    }
    weft__mutex_lock(&s->lock); /* acquire sleep.lock: pairs with the sleeper's lock */
    weft__cond_broadcast(&s->cond);
    weft__mutex_unlock(&s->lock); /* release sleep.lock */
}

/* A hint, so no handshake: a worker that registers as a sleeper after the load below only
 * misses the early wake-up, never work (work still notifies). */
void weft_jobs_wake(weft_jobs_t *jobs) {
    if (!jobs || jobs->lent) {
        return;
    }
    uint32_t sleeping = weft_atomic_load_relaxed(&jobs->sleep.sleepers);
    if (sleeping != 0) {
        weft__sleep_wake(jobs, UINT32_MAX, sleeping); /* broadcast: every sleeper */
    }
}

bool weft__worker_has_work(weft_jobs_t *jobs, uint32_t index, uint64_t board_seen) {
    if (weft_atomic_load_relaxed(&jobs->board) != board_seen) {
        return true; /* a loop to join (parallel_for.c); not part of the handshake */
    }
    for (uint32_t w = 0; w < jobs->worker_count; ++w) {
        for (int p = 0; p < WEFT_PRIORITY_COUNT; ++p) {
            if (!weft__deque_is_empty(&jobs->ctx[w].dq[p])) {
                return true;
            }
        }
    }
    if (index == 0 && !weft__queue_is_empty(&jobs->main)) {
        return true;
    }
    return !weft__queue_is_empty(&jobs->inject);
}

bool weft__has_work(weft_jobs_t *jobs, const weft__ctx_t *ctx) {
    if (ctx->is_worker) {
        return weft__worker_has_work(jobs, ctx->index, ctx->board_seen);
    }
    return false; /* registered threads do not run jobs; they wait for their counter */
}

/* Most pause instructions between two polls (about 1 µs where a pause costs 13 ns). */
#define SPIN_MAX_PAUSES 64u

/* After useful work, a worker polls after every pause for this long before the backoff
 * starts to grow. Work tends to follow work: the next parallel-for or ready job of a frame
 * usually comes within a few µs, and each doubling step of the backoff adds its length to
 * the time the worker takes to notice it. Measured on a 2-vCPU VM whose cores exchange a
 * cache line in ~0.35 µs each way: with the backoff growing at once, a worker noticed a
 * fork-join's helper 1.1-1.4 µs after it was published; polling every pause, 0.25-0.3 µs.
 * (Pauses are costly there: KVM may trap pause loops.) The window bounds the extra polling
 * traffic to a few µs per idle period. */
#define SPIN_EAGER_NS 4000u

/* Spin phase: poll `ready` with exponential backoff until spin_us has passed.
 * The backoff is kept in the context across idle periods and starts over (1 pause) only
 * after the worker did useful work (worker_main), slept, or waits for a counter. A worker that
 * keeps stealing parallel-for helpers which find nothing left — back-to-back tiny loops
 * the caller finishes alone — therefore stays at the slow end, instead of racing the
 * caller for every helper it publishes: each such steal costs the caller several cache
 * misses on its deque and loop slot, more than the whole loop. */
static bool spin_for(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__ready_fn ready, const void *arg,
                     uint64_t budget) {
    uint64_t start = weft__time_ns();
    uint32_t backoff = ctx->spin_backoff;
    /* eager polling only right after useful work (backoff reset to 1), never while
     * oversubscribed, where spinners must let the busy threads run */
    bool eager = backoff == 1u && !jobs->oversubscribed;
    for (;;) {
        if (ready(jobs, ctx, arg, false)) {
            ctx->spin_backoff = backoff;
            return true;
        }
        if (backoff <= SPIN_MAX_PAUSES) {
            for (uint32_t i = 0; i < backoff; ++i) {
                weft_cpu_relax();
            }
            /* Oversubscribed, it grows past the cap, and from then on the spinner yields. */
            if (!eager && (backoff < SPIN_MAX_PAUSES || jobs->oversubscribed)) {
                backoff *= 2;
            }
        } else {
            weft__thread_yield(); /* more workers than cores: let the busy ones run */
        }
        uint64_t spent = weft__time_ns() - start;
        eager = eager && spent < SPIN_EAGER_NS;
        if (spent >= budget) {
            ctx->spin_backoff = backoff;
            return false;
        }
    }
}

bool weft__sleep_spin(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__ready_fn ready, const void *arg) {
    return spin_for(jobs, ctx, ready, arg, (uint64_t)jobs->desc.spin_us * 1000u);
}

/* ---- wake-ahead for paced frames ------------------------------------------------ >>pace */

void weft__pace_init(weft__pace_t *p) {
    weft_atomic_init(&p->next_ns, 0);
    weft_atomic_init(&p->lead_ns, 0);
    weft_atomic_init(&p->window_ns, 0);
    weft_atomic_init(&p->late_ns, 0);
    p->last_ns = 0;
    p->ngaps = 0;
}

/* Gaps needed before a period is trusted: half the ring, so the median is of real frames. */
#define PACE_MIN_GAPS (WEFT__PACE_GAPS / 2u)

/* The wake-ahead windows of all workers together take at most 1/PACE_BUDGET of the period:
 * at most 4% of one core, whatever the worker count. */
#define PACE_BUDGET 25u

static void sort_u64(uint64_t *a, uint32_t n) {
    for (uint32_t i = 1; i < n; ++i) {
        uint64_t v = a[i];
        uint32_t j = i;
        for (; j > 0 && a[j - 1] > v; --j) {
            a[j] = a[j - 1];
        }
        a[j] = v;
    }
}

void weft_jobs_frame_begin(weft_jobs_t *jobs, bool wake) {
    if (!jobs || jobs->is_inline || jobs->lent || jobs->worker_count < 2) {
        return;
    }
    const weft__ctx_t *ctx = weft__ctx_current(jobs);
    if (!ctx || ctx->index != 0) {
        return; /* only worker 0 writes the gaps */
    }
    weft__pace_t *p = &jobs->pace;
    uint64_t now = weft__time_ns();
    if (p->last_ns != 0 && now > p->last_ns) {
        p->gap[p->ngaps % WEFT__PACE_GAPS] = now - p->last_ns;
        p->ngaps++;
    }
    p->last_ns = now;
    uint64_t next = 0;
    if (wake && p->ngaps >= PACE_MIN_GAPS) {
        uint32_t n = p->ngaps < WEFT__PACE_GAPS ? p->ngaps : WEFT__PACE_GAPS;
        uint64_t g[WEFT__PACE_GAPS];
        memcpy(g, p->gap, n * sizeof g[0]);
        sort_u64(g, n);
        uint64_t period = g[n / 2], jitter = g[(3u * n) / 4u] - g[n / 4u];
        uint64_t late = weft_atomic_load_relaxed(&p->late_ns);
        uint64_t spin = (uint64_t)jobs->desc.spin_us * 1000u;
        /* Wake `late + jitter` early; spin until `jitter` after the predicted start, plus a
         * spin window for the frame's own start before it publishes work. */
        uint64_t lead = late + jitter, window = late + 2u * jitter + spin;
        uint64_t cap = period / PACE_BUDGET / (jobs->worker_count - 1u);
        if (window > cap) {
            window = cap;
            lead = lead < cap - cap / 4u ? lead : cap - cap / 4u;
        }
        weft_atomic_store_relaxed(&p->lead_ns, lead);
        weft_atomic_store_relaxed(&p->window_ns, window);
        next = now + period;
    }
    weft_atomic_store_relaxed(&p->next_ns, next);
    if (wake) {
        weft_jobs_wake(jobs);
    }
}

/* A worker about to sleep: stretch its spin into the wake-ahead window when it is in one
 * (*spin_ns), or give it a deadline to wake up at (*until_ns), once per predicted frame. */
static void pace_plan(weft_jobs_t *jobs, weft__ctx_t *ctx, uint64_t *spin_ns, uint64_t *until_ns) {
    weft__pace_t *p = &jobs->pace;
    uint64_t next = weft_atomic_load_relaxed(&p->next_ns);
    if (next == 0 || next == ctx->paced_for) {
        return;
    }
    uint64_t lead = weft_atomic_load_relaxed(&p->lead_ns);
    uint64_t window = weft_atomic_load_relaxed(&p->window_ns);
    uint64_t start = next > lead ? next - lead : 0, end = start + window, now = weft__time_ns();
    if (now < start) {
        *until_ns = start;
        return;
    }
    ctx->paced_for = next; /* in the window now, or past it: no second wake for this frame */
    if (now < end && end - now > *spin_ns) {
        *spin_ns = end - now;
    }
}

/* A timed wake-up ran `late` ns after its deadline: a fast-rising, slowly falling estimate,
 * since waking too late costs the frame and too early only a little spinning. */
static void pace_late(weft_jobs_t *jobs, uint64_t late) {
    weft__pace_t *p = &jobs->pace;
    uint64_t est = weft_atomic_load_relaxed(&p->late_ns);
    est = late > est ? (est + late) / 2u : est - est / 8u + late / 8u;
    weft_atomic_store_relaxed(&p->late_ns, est);
}

void weft__sleep_idle(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__ready_fn ready, const void *arg) {
    uint64_t spin_ns = (uint64_t)jobs->desc.spin_us * 1000u, until = 0;
    /* Only spawned workers wake ahead: worker 0 is the thread that starts the frames. */
    if (ctx->is_worker && ctx->index != 0 && !jobs->lent) {
        pace_plan(jobs, ctx, &spin_ns, &until);
    }
    if (spin_for(jobs, ctx, ready, arg, spin_ns)) {
        return;
    }
    weft__sleep_t *s = &jobs->sleep;
    if (!ctx->is_worker) {
        weft_atomic_fetch_add_relaxed(&s->external, 1u);
    }
    /* seq_cst: the sleeper's side of the handshake (file top). */
    weft_atomic_fetch_add_seq_cst(&s->sleepers, 1u);
    uint32_t ticket = weft_atomic_load_seq_cst(&s->epoch);
    if (!WEFT__PLANT("sleep_skips_recheck") && ready(jobs, ctx, arg, true)) {
        weft_atomic_fetch_sub_relaxed(&s->sleepers, 1u);
        if (!ctx->is_worker) {
            weft_atomic_fetch_sub_relaxed(&s->external, 1u);
        }
        return;
    }
    const weft_profiler_t *prof = &jobs->desc.profiler;
    if (prof->worker_sleep) {
        prof->worker_sleep(ctx->index, prof->user);
    }
    bool timed_out = false;
    weft__mutex_lock(&s->lock); /* acquire sleep.lock: pairs with notify's lock */
    while (weft_atomic_load_relaxed(&s->epoch) == ticket) {
        /* relaxed is enough: notify bumps the epoch before taking the lock we hold */
        if (until == 0) {
            weft__cond_wait(&s->cond, &s->lock);
        } else if (!weft__cond_timedwait(&s->cond, &s->lock, until)) {
            /* Woken by the clock for a predicted frame: leaving is a spurious wake-up for
             * the handshake (the caller looks for work and comes back to sleep). Planted:
             * waiting on for a fresh epoch instead, without the re-check, loses the work
             * published since this sleeper registered (tests/interleavings/test_sleep.c). */
            if (WEFT__PLANT("pace_timeout_rearms")) {
                ticket = weft_atomic_load_relaxed(&s->epoch);
                until = 0;
                continue;
            }
            timed_out = true;
            break;
        }
    }
    weft__mutex_unlock(&s->lock); /* release sleep.lock */
    if (timed_out) {
        uint64_t now = weft__time_ns();
        pace_late(jobs, now > until ? now - until : 0);
    }
    ctx->spin_backoff = 1; /* woken for new work: poll eagerly again */
    weft_atomic_fetch_sub_relaxed(&s->sleepers, 1u);
    if (!ctx->is_worker) {
        weft_atomic_fetch_sub_relaxed(&s->external, 1u);
    }
    if (prof->worker_wake) {
        prof->worker_wake(ctx->index, prof->user);
    }
}
