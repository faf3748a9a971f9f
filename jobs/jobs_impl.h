/* jobs_impl.h: the job system's private structures and cross-file functions (not installed).
 *
 * DESIGN: a weft_jobs_t owns an array of thread contexts (`weft__ctx_t`): one per worker
 * (index 0 is the creating thread, 1.. are spawned threads) followed by slots for
 * registered external threads. A context holds what a thread needs without touching shared
 * state: its deques (one per priority), its record freelist, its frame stack for EDEADLK
 * detection, and its submitted/finished tallies that destroy() sums to know when all
 * work is done. Jobs, gates and gate nodes are all 64-byte "records" from per-context
 * slabs (record.c), so submitting never calls the allocator in the steady state.
 *
 * Files: platform/thread.c (pthreads), deque.c (Chase-Lev), record.c (record slabs), sleep.c
 * (spin-then-sleep and wake-ups), worker.c (create/destroy, worker loop, finding and
 * running jobs), submit.c (submission, queues, gates, inline mode), counter.c (counters
 * and wait), parallel_for.c.
 *
 * Lock order (whole job system): no thread ever holds two of these at once —
 * jobs->inject.lock, jobs->main.lock, jobs->sleep.lock, a counter's LOCKED bit, and the
 * process-wide live-instance lock (worker.c). */
#ifndef WEFT_JOBS_IMPL_H
#define WEFT_JOBS_IMPL_H

#include "deque.h"
#include "jobs/platform/alloc.h"
#include "jobs/platform/atomic.h"
#include "jobs/platform/report.h"
#include "jobs/platform/thread.h"
#include "weft/jobs.h"

#define WEFT__MAX_WORKERS 256u
#define WEFT__MAX_REGISTERED 64u
#define WEFT__SLAB_RECORDS 256u

/* ---- records: jobs, gates, gate nodes ------------------------------------- >>record */

typedef struct weft__ctx weft__ctx_t;
typedef struct weft__rec weft__rec_t;

typedef enum weft__rec_kind {
    WEFT__REC_JOB = 1,  /* a job to run */
    WEFT__REC_GATE = 2, /* holds a batch of jobs until its dependencies reach zero */
    WEFT__REC_NODE = 3, /* links a gate into one counter's waiter list */
} weft__rec_kind_t;

/* One 64-byte record. Fields not named for a kind are unused by it. */
struct weft__rec {
    weft__rec_t *next;    /* intrusive list: freelist, queues, gate's jobs, waiters */
    weft__ctx_t *owner;   /* context whose freelist it returns to */
    weft_job_fn_t fn;     /* job: the body */
    void *arg;            /* job: its argument; node: the gate (weft__rec_t *) */
    const char *name;     /* job: profiler name */
    weft_counter_t *done; /* job: completion counter or NULL */
    union {
        weft_atomic_u32 pending; /* gate: dependencies not yet at zero, +1 while parking */
        uint32_t tag;            /* job: the desc's tag */
    } u;
    uint8_t kind;        /* weft__rec_kind_t */
    uint8_t priority;    /* job: weft_priority_t */
    uint8_t main_thread; /* job: run only on worker 0 */
    uint8_t pad_[1];
};
/* One cache line per record: adjacent jobs run by different workers do not false-share. */
_Static_assert(sizeof(weft__rec_t) <= WEFT_CACHE_LINE, "a record must fit a cache line");

/* A FIFO of records linked through `next`. Guarded by whoever owns it. */
typedef struct weft__list {
    weft__rec_t *head; /* first record or NULL */
    weft__rec_t *tail; /* last record; meaningless when head is NULL */
} weft__list_t;

/* ---- per-thread context ------------------------------------------------------ >>ctx */

/* Marks a job running on this thread; linked through `prev` while it runs (and while it
 * waits), so weft_counter_wait can see whether it would wait on its own completion. */
typedef struct weft__frame {
    const weft_counter_t *done; /* completion counter of the running job */
    struct weft__frame *prev;   /* the job below it on this thread, or NULL */
} weft__frame_t;

/* ---- parallel-for slots ------------------------------------------------------ >>pfor */

/* Nesting levels of weft_parallel_for per thread that get a slot; deeper loops run on the
 * calling worker alone (parallel_for.c). */
#define WEFT__PFOR_SLOTS 4u

/* A completion count: the atomic word and waiter list behind a weft_counter_t (counter.c
 * explains the word's bits). A counter's storage holds one; a parallel-for slot holds one on
 * its claim line, so counting a batch off and claiming the next touch one cache line. */
typedef struct weft__count {
    weft_atomic_u64 word;    /* count and flags */
    weft_atomic_ptr waiters; /* list of node records; guarded by the word's LOCKED bit */
} weft__count_t;

/* The count inside a counter's storage. */
static inline weft__count_t *weft__count_of(const weft_counter_t *c) {
    return (weft__count_t *)(void *)(uintptr_t)(const void *)c->storage;
}

/* One loop in flight, owned by the thread whose context holds it (parallel_for.c explains
 * the protocol). The slot outlives every loop, so a helper job that starts after its loop
 * has finished can still look at it, see a newer generation (or nothing left), and leave:
 * the caller never waits for helpers that had nothing to do.
 *
 * Everything a claimant touches is on the first cache line: the claim cursor, the count of
 * units not yet run, the helper budget and the loop's description. A joiner gets it with its
 * first claim and needs no other line of the loop; a participant counts a batch off and
 * claims the next one on the line it already holds. */
typedef struct weft__pfor {
    _Alignas(WEFT_CACHE_LINE) weft_atomic_u64 cursor; /* gen << 32 | units not yet claimed */
    weft__count_t left;                               /* claim units not yet run */
    /* Written by the owner before the cursor is published, read by a claimant only after a
     * successful claim (which keeps the loop from finishing, so they cannot change). */
    weft_range_fn_t fn;      /* the body */
    void *ctx;               /* its context */
    uint64_t count;          /* items */
    uint64_t grain;          /* items per chunk */
    weft_atomic_u32 helpers; /* helper jobs the loop may still publish (its budget) */
    uint32_t unit_shift;     /* a claim unit is 1 << unit_shift chunks (0 unless > 2^32 - 1) */
    _Alignas(WEFT_CACHE_LINE) uint32_t gen; /* owner only: generation of the latest loop */
    uint64_t trace_tag; /* the loop's range-trace tag (0: untraced); written as the fields */
} weft__pfor_t;
_Static_assert(offsetof(weft__pfor_t, unit_shift) + sizeof(uint32_t) <= WEFT_CACHE_LINE,
               "a claimant must find everything it touches on the slot's first line");

/* The offer line of a worker (parallel_for.c explains the protocol): its outermost loop in
 * flight hands the first share of the loop to whichever idle worker takes it first. Idle
 * workers poll the word; one CAS on it, on the line they have just read, takes the share,
 * and everything the taker needs is on the same line, so noticing the loop and claiming its
 * first share cost one transfer. Only the owner writes the fields, before its release store
 * of an open word, and only a taker whose CAS succeeded reads them. */
#define WEFT__OFFER_OPEN 1u   /* word: gen << 32 | state; the share is up for grabs */
#define WEFT__OFFER_TAKEN 2u  /* a worker took it and runs it */
#define WEFT__OFFER_CLOSED 3u /* its owner took it back (nobody came within its first batch) */
typedef struct weft__offer {
    _Alignas(WEFT_CACHE_LINE) weft_atomic_u64 word; /* gen << 32 | state (0: never offered) */
    weft_range_fn_t fn;                             /* the loop's body */
    void *ctx;                                      /* its context */
    uint64_t count;                                 /* items */
    uint64_t grain;                                 /* items per chunk */
    uint32_t first, n;                              /* the share: claim units [first, first + n) */
    uint32_t unit_shift;                            /* as the slot's */
    uint32_t budget; /* helper jobs the taker may publish (0: none, so it skips the slot) */
} weft__offer_t;
_Static_assert(sizeof(weft__offer_t) == WEFT_CACHE_LINE, "an offer is one cache line");

struct weft__ctx {
    _Alignas(WEFT_CACHE_LINE) weft__deque_t dq[WEFT_PRIORITY_COUNT]; /* workers only */
    _Alignas(WEFT_CACHE_LINE) weft_jobs_t *jobs;                     /* the job system */
    uint32_t index;            /* worker index, or UINT32_MAX for a registered thread */
    bool is_worker;            /* has deques and runs jobs */
    weft__rec_t *free_local;   /* record freelist; this thread only */
    weft__rec_t *slabs;        /* slabs this context allocated (first record of each) */
    weft__frame_t *frames;     /* jobs running on this thread, innermost first */
    void *scratch;             /* desc.scratch_size bytes; workers only */
    uint64_t rng;              /* xorshift state for victim selection */
    weft__list_t inline_queue; /* inline mode: ready jobs in order; this thread only */
    bool inline_draining;      /* inline mode: inside drain_inline() */
    weft_thread_t thread;      /* spawned workers only */
    uint32_t pfor_depth;       /* parallel-for slots in use on this thread */
    uint32_t pfor_calls;       /* registered threads: weft_parallel_for calls in progress */
    uint32_t spin_backoff;     /* pauses between polls when it next spins (sleep.c) */
    bool idle_job;             /* the last top-level job found nothing to do (parallel_for.c) */
    uint64_t board_seen;       /* the last loop board word this worker looked at */
    uint64_t paced_for;        /* the predicted frame start it last woke ahead for (sleep.c) */
    /* Executor mode, workers 1..: 0 parked (no drain task; counted in sleep.sleepers), 1
     * claimed (a drain task is submitted or running and owns this context). executor.c */
    weft_atomic_u32 lent;
    /* The tallies sit apart from free_remote, which other threads CAS on every remote free:
     * sharing a line would make each submit pay for a cache miss. */
    _Alignas(WEFT_CACHE_LINE) weft_atomic_u64 submitted; /* jobs it submitted; written by it only */
    weft_atomic_u64 finished;   /* jobs this thread finished; written by it only */
    weft_atomic_u64 jobs_run;   /* user jobs it ran (weft_jobs_worker_stats); by it only */
    weft_atomic_u64 ranges_run; /* parallel-for ranges it ran; written by it only */
    weft_atomic_u64 items_run;  /* weft_jobs_count_items; written by it only */
    _Alignas(WEFT_CACHE_LINE) weft_atomic_ptr free_remote; /* records freed by others */
    weft__pfor_t pfor[WEFT__PFOR_SLOTS]; /* parallel-for loops started by this thread */
    weft__offer_t offer;                 /* workers: the share its outermost loop offers */
};

/* ---- shared queues and sleep -------------------------------------------- >>queues */

/* A locked FIFO per priority with a count for cheap emptiness tests. */
typedef struct weft__queue {
    weft_mutex_t lock;                          /* guards lists */
    weft__list_t lists[WEFT_PRIORITY_COUNT];    /* guarded by lock */
    weft_atomic_u32 count[WEFT_PRIORITY_COUNT]; /* jobs per list; written under lock */
} weft__queue_t;

/* Eventcount: sleepers read `epoch`, re-check for work, then sleep while it is unchanged. */
typedef struct weft__sleep {
    _Alignas(WEFT_CACHE_LINE) weft_atomic_u32 sleepers; /* threads between prepare and wake */
    weft_atomic_u32 external; /* how many of them are registered threads (cannot run jobs) */
    weft_atomic_u32 epoch;    /* bumped by every notify */
    weft_mutex_t lock;        /* guards the cond wait on epoch */
    weft_cond_t cond;         /* sleepers wait here */
} weft__sleep_t;

/* Frame gaps kept to predict the next frame start (sleep.c, weft_jobs_frame_begin). */
#define WEFT__PACE_GAPS 8u

/* Wake-ahead for paced frames (sleep.c). The caller of weft_jobs_frame_begin writes it; workers
 * read it when they go to sleep. A hint: none of it takes part in the sleep handshake. */
typedef struct weft__pace {
    _Alignas(WEFT_CACHE_LINE) weft_atomic_u64 next_ns; /* predicted next frame start; 0: none */
    weft_atomic_u64 lead_ns;                           /* workers wake this long before next_ns */
    weft_atomic_u64 window_ns;     /* and then spin at most this long for the frame's work */
    weft_atomic_u64 late_ns;       /* how late a timed wake-up runs (estimate, workers update it) */
    uint64_t last_ns;              /* caller only: the previous frame start (0: none) */
    uint64_t gap[WEFT__PACE_GAPS]; /* caller only: the latest frame-start gaps, a ring */
    uint32_t ngaps;                /* caller only: gaps recorded so far */
} weft__pace_t;

enum weft__phase {
    WEFT__PHASE_RUNNING = 0,  /* normal operation */
    WEFT__PHASE_DRAINING = 1, /* destroy began: outside submissions get WEFT_ESHUTDOWN */
    WEFT__PHASE_STOPPED = 2,  /* workers are told to exit */
};

struct weft_jobs {
    weft_jobs_desc_t desc;          /* resolved desc; immutable after create */
    weft_allocator_t alloc;         /* resolved allocator (never NULL functions) */
    uint64_t id;                    /* unique per instance: binds TLS to this instance */
    uint32_t worker_count;          /* contexts [0, worker_count) are workers */
    bool is_inline;                 /* WEFT_EXECUTION_INLINE */
    weft__ctx_t *ctx;               /* worker_count + WEFT__MAX_REGISTERED contexts */
    weft_range_trace_t range_trace; /* set while no loop runs (weft_jobs_set_range_trace) */
    weft__queue_t inject;           /* jobs submitted by registered threads */
    weft__queue_t main;             /* jobs pinned to worker 0 */
    weft__sleep_t sleep;            /* idle workers and blocked waiters */
    weft__pace_t pace;              /* paced frames: when workers wake ahead (sleep.c) */
    bool oversubscribed;            /* more workers than hardware threads: spinners yield */
    /* The loop board: the latest parallel-for any thread started, as gen << 32 | slot + 1
     * (0: none yet). Idle spinning workers watch this one line and join the loop directly
     * (parallel_for.c); on a line of its own so watching it costs its writer nothing else. */
    _Alignas(WEFT_CACHE_LINE) weft_atomic_u64 board;
    _Alignas(WEFT_CACHE_LINE) weft_atomic_u32 phase; /* enum weft__phase */
    weft_atomic_u32 external_inflight;               /* registered threads inside an API call */
    /* Registered-thread slots: bit k set while context worker_count + k belongs to a
     * registered thread (worker.c). A slot freed by weft_jobs_unregister_thread is reused. */
    weft_atomic_u64 reg_used;
    weft_atomic_u32 registered; /* high-water mark: slots [0, registered) were ever used */
    /* The live-instance list (worker.c): guarded by its lock, not by this instance. */
    weft_jobs_t *live_prev, *live_next;
    bool lent;              /* desc.executor runs workers 1.. (executor.c); no threads spawned */
    weft_atomic_u32 drains; /* executor drain tasks submitted and not yet returned */
};
_Static_assert(WEFT__MAX_REGISTERED <= 64u, "reg_used has one bit per registered slot");

/* ---- cross-file functions ---------------------------------------------- >>internal */

/* worker.c */
weft__ctx_t *weft__ctx_current(const weft_jobs_t *jobs); /* NULL: unknown thread */
/* Bind the calling thread to `ctx` (false: it already uses the maximum of live job
 * systems) and undo that. */
bool weft__bind_thread(weft_jobs_t *jobs, weft__ctx_t *ctx);
void weft__unbind_thread(const weft_jobs_t *jobs);
/* The idle test of a worker (phase stopped, or work it could take), for weft__sleep_idle. */
bool weft__worker_ready(weft_jobs_t *jobs, weft__ctx_t *ctx, const void *arg, bool final);
/* A worker's busy -> idle transition (it ran something since it was last idle): wakes a
 * destroy that may be asleep waiting for this worker's `finished` tally. Every worker loop
 * calls it on that transition only (spawned workers and executor drains alike), so idle
 * workers woken by each other's kicks do not ping-pong. Thread: the worker bound to ctx. */
void weft__worker_went_idle(weft_jobs_t *jobs, weft__ctx_t *ctx);

/* executor.c: executor mode. Claim up to n parked lent workers and submit a drain task for
 * each (called by weft__sleep_wake for new ordinary work); the number claimed. */
uint32_t weft__executor_wake(weft_jobs_t *jobs, uint32_t n);
/* Put every lent worker in the parked state (create). */
void weft__executor_init(weft_jobs_t *jobs);
/* After the phase became STOPPED: wait until every drain task has returned (destroy). */
void weft__executor_join(weft_jobs_t *jobs);
weft__rec_t *weft__find_job(weft_jobs_t *jobs, weft__ctx_t *ctx);
void weft__run_job(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__rec_t *job);
/* A waiting worker's one step of help: join the loop on the board if it is new to it, else
 * run one job; false when there was nothing to do. */
bool weft__help_once(weft_jobs_t *jobs, weft__ctx_t *ctx);
/* Drop a job without running it (it has no counter; it was counted as submitted). */
void weft__discard_job(weft__ctx_t *ctx, weft__rec_t *job);

/* record.c */
weft__rec_t *weft__rec_alloc_slow(weft_jobs_t *jobs, weft__ctx_t *ctx); /* NULL: out of memory */
void weft__rec_free(weft__ctx_t *ctx, weft__rec_t *r);
void weft__rec_fini_ctx(weft_jobs_t *jobs, weft__ctx_t *ctx);

/* submit.c */
void weft__queue_init(weft__queue_t *q);
void weft__queue_fini(weft__queue_t *q);
weft__rec_t *weft__queue_pop(weft__queue_t *q, int priority);
bool weft__queue_is_empty(weft__queue_t *q); /* seq_cst loads (see sleep.c) */
/* parallel_for.c: the helper job a loop publishes (not counted as a user job). */
void weft__pfor_helper(void *arg, const weft_job_ctx_t *jctx);
/* parallel_for.c: join the loop on the board if it is new to this worker; true if the
 * worker ran part of it. Workers only. */
bool weft__pfor_join_board(weft_jobs_t *jobs, weft__ctx_t *ctx);
/* parallel_for.c: take an open offer of another worker and run its share (then go on with
 * the loop as any participant); true if it ran part of a loop. Workers only. */
bool weft__pfor_take_offer(weft_jobs_t *jobs, weft__ctx_t *ctx);
/* True when another worker's offer is open (relaxed peeks, one load per worker; not part of
 * the sleep handshake: an offer nobody takes goes back to its owner). */
static inline bool weft__offer_open(weft_jobs_t *jobs, const weft__ctx_t *ctx) {
    for (uint32_t w = 0; w < jobs->worker_count; ++w) {
        if (w != ctx->index &&
            (uint32_t)weft_atomic_load_relaxed(&jobs->ctx[w].offer.word) == WEFT__OFFER_OPEN) {
            return true;
        }
    }
    return false;
}
/* True when the board shows a loop this worker has not looked at (relaxed peek). */
static inline bool weft__board_changed(weft_jobs_t *jobs, const weft__ctx_t *ctx) {
    return weft_atomic_load_relaxed(&jobs->board) != ctx->board_seen;
}

/* Add n to a tally only its owning thread writes (weft_jobs_worker_stats): a plain load and
 * store, no read-modify-write, since no other thread writes it; readers load it relaxed. */
static inline void weft__tally(weft_atomic_u64 *t, uint64_t n) {
    weft_atomic_store_relaxed(t, weft_atomic_load_relaxed(t) + n);
}

/* Submission from inside the job system (parallel-for helpers): one normal-priority job
 * without a counter, no argument checks. Not for inline mode. */
weft_result_t weft__submit_internal(weft_jobs_t *jobs, weft__ctx_t *ctx, weft_job_fn_t fn,
                                    void *arg, uint32_t tag, const char *name);
/* WEFT_ESHUTDOWN check shared by submit and parallel-for (reports the failure). */
weft_result_t weft__check_phase(weft_jobs_t *jobs, const weft__ctx_t *ctx, const char *what);
/* Make a list of ready jobs runnable from `ctx` (deque, injection or main queue). */
void weft__schedule_ready(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__rec_t *first);
/* Inline mode: run queued jobs in order until the queue is empty (or `until` is done). */
void weft__inline_drain(weft_jobs_t *jobs, weft__ctx_t *ctx, const weft_counter_t *until);

/* counter.c */
void weft__counter_add(weft_counter_t *c, uint64_t n);
/* Set a count that is at zero and referenced by no job, waiter or gate to `n`. */
void weft__counter_set(weft__count_t *c, uint64_t n);
/* True when the count is at zero (acquire: the counted work's writes are visible). */
bool weft__count_is_done(const weft__count_t *c);
/* Wait without the argument checks: runs jobs (workers) or sleeps (registered threads). */
void weft__counter_wait_loop(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__count_t *c);
/* `n` jobs counted by `c` finished; releases parked gates and wakes sleeping waiters if they
 * were the last. True when they were: the count is zero and the caller must not touch `c`
 * again (a waiter may already have reused it). */
bool weft__counter_finish_n(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__count_t *c, uint64_t n);
/* Park `gate` on `c`; false if `c` is already at zero (nothing was parked). */
bool weft__counter_park(weft_counter_t *c, weft__rec_t *node);
/* Drop one of the gate's pending references; schedules its jobs when it was the last. */
void weft__gate_release(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__rec_t *gate);

/* sleep.c */
void weft__sleep_init(weft__sleep_t *s);
void weft__sleep_fini(weft__sleep_t *s);
void weft__pace_init(weft__pace_t *p);
/* The slow half of weft__sleep_notify (below): `sleeping` threads were seen asleep. */
void weft__sleep_wake(weft_jobs_t *jobs, uint32_t n, uint32_t sleeping);
/* Idle worker / waiter: spin with backoff for desc.spin_us, then sleep until notified.
 * `ready(jobs, ctx, arg, final)` is polled while spinning (final = false) and checked
 * once more after registering as a sleeper (final = true); true returns at once. */
typedef bool (*weft__ready_fn)(weft_jobs_t *jobs, weft__ctx_t *ctx, const void *arg, bool final);
void weft__sleep_idle(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__ready_fn ready, const void *arg);
/* Wake every sleeper unconditionally after a plain (non-seq_cst) publication: the epoch
 * bump is a seq_cst RMW, so a sleeper either reads the new epoch (and with it everything
 * published before the kick) or is seen in `sleepers` and woken. Used while destroy drains,
 * where worker 0 sleeps until the finished/submitted tallies match. */
void weft__sleep_kick(weft_jobs_t *jobs);
/* Registered threads entering/leaving an API call (destroy waits for them). */
void weft__external_enter(weft_jobs_t *jobs);
void weft__external_leave(weft_jobs_t *jobs);
/* True when some queue a thread like `ctx` can take from looks non-empty. */
bool weft__has_work(weft_jobs_t *jobs, const weft__ctx_t *ctx);
/* weft__has_work for worker `index` that last saw loop board word `board_seen`, without
 * reading its context (executor.c checks after giving its context up). */
bool weft__worker_has_work(weft_jobs_t *jobs, uint32_t index, uint64_t board_seen);
/* The spin half of weft__sleep_idle: true when `ready` said so within desc.spin_us. */
bool weft__sleep_spin(weft_jobs_t *jobs, weft__ctx_t *ctx, weft__ready_fn ready, const void *arg);

/* Relaxed peek for the hot path: false means "looked empty just now". A miss is caught by
 * the seq_cst re-check before a thread sleeps (sleep.c). */
static inline bool weft__queue_maybe_nonempty(weft__queue_t *q) {
    return (weft_atomic_load_relaxed(&q->count[0]) | weft_atomic_load_relaxed(&q->count[1]) |
            weft_atomic_load_relaxed(&q->count[2])) != 0;
}

/* New work or a state change: wake up to `n` sleepers (UINT32_MAX: all). Inlined: one load
 * on every submission when nobody sleeps. */
static inline void weft__sleep_notify(weft_jobs_t *jobs, uint32_t n) {
    /* seq_cst: the second half of the publisher's side of the handshake (sleep.c). */
    uint32_t sleeping = weft_atomic_load_seq_cst(&jobs->sleep.sleepers);
    if (sleeping != 0 && n != 0) {
        weft__sleep_wake(jobs, n, sleeping);
    }
}

/* Record allocation, inlined: a pop from the thread's private freelist in the common case. */
static inline weft__rec_t *weft__rec_alloc(weft_jobs_t *jobs, weft__ctx_t *ctx) {
    weft__rec_t *r = ctx->free_local;
    if (!r) {
        return weft__rec_alloc_slow(jobs, ctx);
    }
    ctx->free_local = r->next;
    r->next = NULL;
    return r;
}

static inline void weft__list_push(weft__list_t *l, weft__rec_t *r) {
    r->next = NULL;
    if (l->head) {
        l->tail->next = r;
    } else {
        l->head = r;
    }
    l->tail = r;
}

static inline weft__rec_t *weft__list_pop(weft__list_t *l) {
    weft__rec_t *r = l->head;
    if (r) {
        l->head = r->next;
        r->next = NULL;
    }
    return r;
}

#endif /* WEFT_JOBS_IMPL_H */
