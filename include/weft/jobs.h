/* weft/jobs.h: the job system. Work-stealing workers, completion counters, job graphs,
 * parallel-for. Knows nothing of the ECS and is usable alone (target weft::jobs).
 *
 * Vocabulary: a "worker" is any thread that runs jobs. worker_count counts the thread that
 * created the job system (worker 0, the "main thread") plus the worker_count - 1 threads the
 * job system spawns. Worker indices are 0 .. worker_count - 1. */
#ifndef WEFT_JOBS_H
#define WEFT_JOBS_H

#include "weft/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_jobs weft_jobs_t; /* opaque */

/* ---- configuration ---------------------------------------------------- >>jobs_desc */

typedef enum weft_execution {
    WEFT_EXECUTION_THREADED = 0, /* default: worker threads + the calling thread */
    WEFT_EXECUTION_INLINE = 1,   /* no threads: every job runs on the creating thread in
                                    the order it became ready (submission order; a job with
                                    dependencies when its last one finishes). A top-level
                                    submit runs its jobs before returning; jobs submitted by
                                    a running job run after it returns, or when it waits on
                                    them. Priorities are ignored. */
} weft_execution_t;

typedef enum weft_priority {
    WEFT_PRIORITY_NORMAL = 0, /* default */
    WEFT_PRIORITY_HIGH = 1,   /* taken before any normal job that is ready */
    WEFT_PRIORITY_LOW = 2,    /* taken only when nothing else is ready */
    WEFT_PRIORITY_COUNT = 3
} weft_priority_t;

/* Profiler hooks: called on the worker concerned; must be cheap and thread-safe.
 * worker_sleep/worker_wake also fire for a thread blocked in a wait (a registered thread
 * reports worker UINT32_MAX). */
typedef struct weft_profiler {
    void (*job_begin)(const char *name, uint32_t tag, uint32_t worker, void *user); /* NULL: none */
    void (*job_end)(const char *name, uint32_t tag, uint32_t worker, void *user);   /* NULL: none */
    void (*worker_sleep)(uint32_t worker, void *user);                              /* NULL: none */
    void (*worker_wake)(uint32_t worker, void *user);                               /* NULL: none */
    void *user; /* passed back unchanged */
} weft_profiler_t;

/* An engine's own thread pool, lent to weft instead of weft starting threads of its own.
 * weft keeps its deques, counters and parallel-for; where it would wake an idle worker it
 * calls `submit` with a short task instead. The task claims one of weft's worker slots
 * (so weft_jobs_worker_index, scratch and stats work as usual), runs weft jobs while there are
 * any (spinning up to desc.spin_us for more), and returns the thread to the engine.
 * Contract of `submit(task, arg, user)`: run task(arg) exactly once, soon, on one of the
 * engine's threads; never synchronously inside submit, and never block on weft. weft calls
 * it from its workers and registered threads, concurrently. Each task holds one of the
 * `thread_count` worker slots from its submit until it gives the slot back, its last act
 * before it returns, so at most `thread_count` tasks are queued and not yet started; a task
 * that gave its slot back may still be returning when the slot's next task is submitted, so
 * the engine can see up to `thread_count` queued tasks beside its running ones (plan queue
 * room for `thread_count` per job system). The lent threads must not be registered threads of the
 * same job system. weft_jobs_destroy waits until every task it submitted has run, so the
 * engine's pool must keep running tasks until destroy returns (a task may then still be
 * returning to the pool; it no longer touches the job system). */
typedef struct weft_executor {
    uint32_t thread_count; /* threads lent; the job system gets thread_count + 1 workers (the
                              creating thread is worker 0). 0: no executor */
    void (*submit)(void (*task)(void *arg), void *arg, void *user); /* required with threads */
    void *user;                                                     /* passed back unchanged */
} weft_executor_t;

typedef struct weft_jobs_desc {
    uint32_t worker_count;      /* 0: hardware threads; counts the creating thread; max 256;
                                   may exceed the cores (workers then yield while spinning) */
    weft_execution_t execution; /* 0: threaded */
    uint32_t queue_capacity;    /* 0: 4096 jobs per worker deque (grows on demand) */
    size_t scratch_size;        /* 0: 64 KiB of per-worker scratch (weft_jobs_scratch) */
    uint32_t spin_us; /* 0: 50 µs of spinning with backoff before an idle worker sleeps */
    weft_allocator_t allocator; /* 0: malloc/free */
    weft_logger_t logger;       /* 0: errors to stderr in debug builds; .level: verbosity */
    weft_profiler_t profiler;   /* 0: no hooks */
    weft_executor_t executor;   /* 0: weft starts worker_count - 1 threads of its own */
    uint32_t _canary;           /* must stay 0 */
} weft_jobs_desc_t;

/* The desc with every default filled in (worker_count resolved to a number, etc.). */
WEFT_API weft_jobs_desc_t weft_jobs_desc_resolved(const weft_jobs_desc_t *desc);

/* Create a job system; `desc` may be NULL for all defaults. The calling thread becomes
 * worker 0 and is the only thread that runs main-thread jobs.
 * Errors: WEFT_EINVAL (bad desc; with an executor: no submit, no threads, inline execution,
 * or a worker_count other than 0 or thread_count + 1), WEFT_ENOMEM, WEFT_ETHREAD (nothing is
 * left behind). Thread: any; the caller owns the result. */
WEFT_API weft_result_t weft_jobs_create(const weft_jobs_desc_t *desc, weft_jobs_t **out);

/* Finish every submitted job, stop and join the workers, free everything. The creating
 * thread runs jobs meanwhile. Once destroy has begun, submissions from outside a running
 * job (e.g. registered threads) fail with WEFT_ESHUTDOWN, while running jobs may still
 * submit children, which also run. Jobs parked behind counters that can never reach zero
 * (a dependency cycle) would make destroy wait forever. Any call after destroy returned is
 * a contract violation. NULL is ignored. Thread: the creating thread, outside any job. */
WEFT_API void weft_jobs_destroy(weft_jobs_t *jobs);

/* Threads that run jobs, the creating thread included (1 in inline mode). */
WEFT_API uint32_t weft_jobs_worker_count(const weft_jobs_t *jobs);

/* Index of the calling thread (0 .. count-1), or UINT32_MAX for a thread that is neither a
 * worker nor registered. Thread: any. */
WEFT_API uint32_t weft_jobs_worker_index(const weft_jobs_t *jobs);

/* Per-worker scratch memory: `size` bytes (desc.scratch_size) owned by the job system,
 * private to the worker, valid until destroy. Contents are not preserved between jobs.
 * Registered threads have none: worker UINT32_MAX (what a registered caller's own
 * parallel-for ranges see) gives NULL and *size 0.
 * Thread: only the worker `worker` itself. */
WEFT_API void *weft_jobs_scratch(weft_jobs_t *jobs, uint32_t worker, size_t *size);

/* Let an external thread (not created by weft) submit and wait. It gets no worker index
 * (weft_jobs_worker_index returns UINT32_MAX) and never runs jobs itself: every job runs
 * on a worker, with a worker index below weft_jobs_worker_count, so its waits sleep until
 * the workers finish (spinning briefly first). The one exception is its own
 * weft_parallel_for, whose ranges it runs too (see there). Its submissions go through a
 * shared injection queue. Calling it again, or from a worker, is a no-op returning WEFT_OK.
 * The registration lasts until weft_jobs_unregister_thread or the job system's destroy;
 * registrations with destroyed job systems do not count against the thread's limit.
 * Errors: WEFT_ECAPACITY (64 registered threads per job system, or the thread is already
 * registered with or created 8 live job systems), WEFT_ESTATE (inline mode has no other
 * threads). Thread: the thread itself; it must stop calling before weft_jobs_destroy
 * returns. */
WEFT_API weft_result_t weft_jobs_register_thread(weft_jobs_t *jobs);

/* End the calling thread's registration: its slot (of the 64) is free for another thread
 * and the job system no longer counts against the thread's limit of 8. Jobs it submitted
 * still run; it must not wait on them through this job system any more (register again
 * first). Allowed while destroy drains.
 * Errors: WEFT_EINVAL (NULL jobs), WEFT_ENOENT (the thread is not registered with `jobs`),
 * WEFT_ESTATE (the thread is one of its workers, or the call comes from a range of the
 * thread's own weft_parallel_for). Nothing changes on error.
 * Thread: the registered thread itself, before weft_jobs_destroy returns. */
WEFT_API weft_result_t weft_jobs_unregister_thread(weft_jobs_t *jobs);

/* Wake every sleeping worker now, so that it spins for its spin window (desc.spin_us) and
 * starts at once on work published meanwhile: a hint for a caller about to publish a burst of
 * work after an idle period (a frame after the engine's other work), which moves the workers'
 * wake-up latency off the critical path. No work is published; a worker that finds none goes
 * back to sleep after its spin window, so a call costs up to spin_us of CPU per sleeping
 * worker. One relaxed load when no worker sleeps. Workers lent by an executor are not woken
 * (their thread belongs to the engine until work arrives). NULL is ignored.
 * Thread: any worker or registered thread. */
WEFT_API void weft_jobs_wake(weft_jobs_t *jobs);

/* Mark the start of a frame, for an engine that runs frames at a steady rate with other work
 * (or nothing) in between: with `wake`, wakes the sleeping workers now (weft_jobs_wake) and
 * lets them wake on their own just before the next frame is due, so a frame after idling does
 * not wait for its workers' wake-up latency (tens of µs on a VM). weft_world_progress calls
 * it, with `wake` when the previous frame handed work to the workers; call it yourself only
 * for frames that publish jobs directly, once per frame, at its start.
 * Rule (all from measured times): the period is the median of the latest 8 gaps between
 * calls (none until 4 are known), the jitter their interquartile range, the lateness how
 * long after its deadline a timed wake-up of a worker has run (an estimate workers keep). The
 * next frame is expected one period after this call; each worker wakes `lateness + jitter`
 * before it and spins, at most until `jitter` after it plus desc.spin_us, for the frame's work,
 * then sleeps until notified. The spinning of all workers together is capped at 1/25 of the
 * period (4% of one core), and a worker wakes ahead at most once per call: when calls stop, the
 * workers go fully to sleep after one more window. Without `wake` nothing is predicted, so
 * frames that run on the calling thread cost no spinning. Work published early or late is
 * never delayed (workers still wake for it as usual); a wrong prediction costs only the spin.
 * Inline job systems, executor mode and single-worker systems ignore it; NULL is ignored.
 * Thread: the job system's worker 0 (its creating thread); from any other thread it does
 * nothing. */
WEFT_API void weft_jobs_frame_begin(weft_jobs_t *jobs, bool wake);

/* What one worker has run since the job system was created. Monotonic; each worker writes
 * only its own tallies, so reading them costs the workers nothing. Benchmarks read them
 * before and after a measurement to show which workers took part. */
typedef struct weft_worker_stats {
    uint64_t jobs;   /* jobs run (weft_job_submit*); parallel-for's internal helper jobs are
                        not counted: their ranges are */
    uint64_t ranges; /* parallel-for ranges (calls of the range fn) run */
    uint64_t items;  /* work items of a caller's own work list (weft_jobs_count_items) */
} weft_worker_stats_t;

/* Fill *out with worker `worker`'s tallies. Each field is read atomically; the pair is
 * exact when no job is running. Errors: WEFT_EINVAL (NULL jobs or out, worker >=
 * weft_jobs_worker_count). Thread: any. */
WEFT_API weft_result_t weft_jobs_worker_stats(const weft_jobs_t *jobs, uint32_t worker,
                                              weft_worker_stats_t *out);

/* Count `n` work items the calling thread ran from a work list of its caller's own (the ECS
 * runs a phase's systems from a ready list inside a few jobs: one item per system chunk) in
 * its tallies (weft_worker_stats.items), so that participation shows per item, not per job.
 * `worker` must be the calling thread's index (weft_jobs_worker_index, weft_job_ctx_t.worker);
 * any other value (UINT32_MAX: a registered thread) and NULL jobs are ignored.
 * Thread: that worker. */
WEFT_API void weft_jobs_count_items(weft_jobs_t *jobs, uint32_t worker, uint64_t n);

/* Take part in the latest weft_parallel_for any thread opened (the loop board), as an idle
 * worker would: claim and run its chunks until none is left to claim; returns true when it
 * ran some, false at once when that loop has no chunk left or this worker already looked at
 * it (one relaxed load). For a caller that runs a work list of its own inside a job (the
 * ECS's ready list) and asks between two items, so that a loop nested in another item is not
 * left to its caller while the workers are busy with the list. `worker` must be the calling
 * worker's index (weft_job_ctx_t.worker); any other value (UINT32_MAX: a registered thread)
 * and NULL jobs do nothing. Thread: that worker; never blocks. */
WEFT_API bool weft_jobs_help_loop(weft_jobs_t *jobs, uint32_t worker);

/* ---- counters -------------------------------------------------------- >>counter */

/* A completion counter: caller-owned storage that must stay put and outlive every job that
 * references it. Zero-initialised storage is a valid counter at zero. Submitting n jobs
 * with `done = c` adds n; each finished job subtracts 1; jobs submitted "after" c start
 * when it reaches zero. Reusable once it is zero and no submit references it. */
typedef struct weft_counter {
    WEFT_ALIGNAS(64) unsigned char storage[64]; /* opaque; see jobs/counter.c */
} weft_counter_t;

/* Reset to zero. Contract: no job or waiter references it. */
WEFT_API void weft_counter_init(weft_counter_t *c);

/* True when the counter is at zero (acquire: the work of finished jobs is visible). */
WEFT_API bool weft_counter_is_done(const weft_counter_t *c);

/* Wait until `c` reaches zero, running other ready jobs meanwhile (never blocks a worker
 * while work is available; spins for desc.spin_us, then sleeps until work or zero).
 * Inside a job, wait only on counters of jobs that job submitted.
 * A registered thread runs no jobs: its wait returns only once workers have run them. With
 * one worker that is the creating thread alone, which runs jobs only inside
 * weft_counter_wait, weft_parallel_for or weft_jobs_destroy; if it is blocked elsewhere
 * (for instance joining the registered thread), the wait never returns and this is not
 * detected. Use two or more workers when the creating thread may be busy.
 * Errors: WEFT_EDEADLK when `c` counts a job running on this thread (the caller itself, or
 * a job it is nested in), or in inline mode when nothing left can bring `c` to zero.
 * Thread: any worker or registered thread (see weft_jobs_register_thread). */
WEFT_API weft_result_t weft_counter_wait(weft_jobs_t *jobs, weft_counter_t *c);

/* ---- jobs ---------------------------------------------------------------- >>job */

typedef struct weft_job_ctx {
    weft_jobs_t *jobs; /* the job system running the job */
    uint32_t worker;   /* index of the worker running it */
    uint32_t tag;      /* the desc's tag */
} weft_job_ctx_t;

typedef void (*weft_job_fn_t)(void *arg, const weft_job_ctx_t *ctx);

typedef struct weft_job_desc {
    weft_job_fn_t fn;         /* required */
    void *arg;                /* passed to fn; owned by the caller */
    const char *name;         /* NULL: "job"; static storage; given to the profiler */
    uint32_t tag;             /* free for the caller (e.g. system id << 16 | chunk) */
    weft_priority_t priority; /* 0: normal */
    bool main_thread;         /* run only on worker 0 (the creating thread) */
} weft_job_desc_t;

/* Submit `n` jobs; `done` (may be NULL) counts them down. The descs are copied; no
 * allocation happens in the steady state (jobs come from per-thread slabs). A worker's jobs
 * go to its own deque (others steal them); a main_thread job runs only when worker 0 waits
 * (weft_counter_wait, weft_parallel_for) or destroys.
 * Errors: WEFT_EINVAL (NULL fn, bad priority, unregistered thread: asserts in debug),
 * WEFT_ESHUTDOWN, WEFT_ENOMEM (nothing was submitted).
 * Thread: any worker or registered thread, including from inside a job. */
WEFT_API weft_result_t weft_job_submit(weft_jobs_t *jobs, const weft_job_desc_t *descs, uint32_t n,
                                       weft_counter_t *done);

/* Like weft_job_submit, but the jobs become ready only when every counter in deps[0..ndeps)
 * has reached zero. No thread blocks: the last dependency to finish makes them ready. This
 * is how a whole job graph is submitted at once. deps may repeat and may already be zero.
 * Errors: as weft_job_submit, plus WEFT_EDEADLK when `done` is among deps. */
WEFT_API weft_result_t weft_job_submit_after(weft_jobs_t *jobs, const weft_job_desc_t *descs,
                                             uint32_t n, weft_counter_t *const *deps,
                                             uint32_t ndeps, weft_counter_t *done);

/* ---- parallel-for ------------------------------------------------------ >>parallel_for */

typedef void (*weft_range_fn_t)(void *ctx, uint64_t begin, uint64_t end, uint32_t worker);

/* Split [0, count) into ranges of `grain` items (0: ceil(count / (16 * workers))) and run
 * fn once per range: range k is [k * grain, min((k + 1) * grain, count)), so boundaries
 * depend only on count and grain when grain != 0. The caller takes part and returns when
 * all ranges are done. Ranges run concurrently in no particular order, except with one
 * worker or inline mode: in order, on the caller. Nested calls from inside a job work and
 * cannot deadlock; a call nested more than 4 deep on one thread runs its ranges in order
 * on that thread. Allocates nothing per call.
 * A registered caller runs ranges of its own loop as well, so the call never waits for a
 * worker that cannot come (every worker busy, or one worker that is not running jobs); fn
 * then gets worker UINT32_MAX (as weft_jobs_worker_index), which has no scratch, and those
 * ranges are in no worker's stats. Index per-worker state only when worker != UINT32_MAX.
 * Errors: WEFT_EINVAL, WEFT_ESHUTDOWN; never WEFT_ENOMEM (a caller that cannot publish a
 * helper runs every range itself). Thread: any worker or registered thread. */
WEFT_API weft_result_t weft_parallel_for(weft_jobs_t *jobs, uint64_t count, uint64_t grain,
                                         weft_range_fn_t fn, void *ctx);

/* A trace of parallel-for ranges (weft's frame trace sets one, weft/trace.h). loop_begin runs
 * on a loop's caller before any of its ranges and returns a tag for the loop (0: do not trace
 * it); range runs on the thread that ran range `index` of a traced loop, after it, with its
 * begin and end in CLOCK_MONOTONIC nanoseconds and the worker as fn saw it. Both must be
 * cheap and thread-safe. Untraced (no loop_begin), a loop reads no clock. */
typedef struct weft_range_trace {
    uint64_t (*loop_begin)(void *user, uint32_t worker);
    void (*range)(void *user, uint64_t tag, uint64_t index, uint32_t worker, uint64_t begin_ns,
                  uint64_t end_ns);
    void *user; /* passed back unchanged */
} weft_range_trace_t;

/* Set the range trace (NULL or no loop_begin: none). Errors: WEFT_EINVAL (jobs is NULL).
 * Thread: any, while no weft_parallel_for of `jobs` runs (loops started afterwards see it). */
WEFT_API weft_result_t weft_jobs_set_range_trace(weft_jobs_t *jobs,
                                                 const weft_range_trace_t *trace);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_JOBS_H */
