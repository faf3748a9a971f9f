/* mc.h: a small stateless model checker for weft's lock-free protocols (tests only).
 *
 * DESIGN: a scenario is a function run as modelled thread 0; it starts more modelled threads
 * (mc_thread_start, or weft__thread_create inside jobs/), and every atomic operation, fence,
 * lock, condition-variable call, thread start/join and spin-wait pause of the code under test
 * is a scheduling point (the WEFT_MODEL_CHECK build of jobs/platform/atomic.h and
 * mc_platform.c route them here). Exactly one modelled thread runs at a time, so they are
 * fibers on the caller's OS thread (mc_fiber.h), each with its own copy of the job system's
 * thread-locals; the checker decides which runs, and the job system's memory comes from an
 * arena emptied before each execution, so an execution, down to its addresses, is a
 * function of its choices alone. mc_explore() re-runs the scenario from scratch for every
 * sequence of choices, depth first, and stops at the first failure:
 *  - scheduling choices: switching away from a thread that could go on costs one
 *    pre-emption (at most `preemptions` per execution, as in CHESS); switching when the
 *    running thread blocked, finished or paused in a spin is free;
 *  - weak loads: a relaxed or acquire load may read any of the last `history` stores to its
 *    location that happens-before (vector clocks, release sequences of RMWs, fences) and
 *    read-read coherence do not hide; each older read costs one of `stale_reads`. seq_cst
 *    loads and every read-modify-write read the latest store (the interleaving is the single
 *    total order), so the checker never invents an outcome the C11 model forbids.
 * A failure (mc_check, a data race on an mc_plain_* cell, an access to retired memory, a
 * deadlock, an execution over `max_steps`) prints the failing execution as a schedule: one
 * line per operation, "T<thread> <function> <file>:<line> <op> <location> = <value>".
 *
 * Plants: mc_options_t.weaken names one call site (function and operation, e.g.
 * "weft__deque_steal:load_seq_cst") whose memory order the checker weakens to relaxed, so a
 * test can show that the order there is needed without editing the code under test. Bugs
 * that are not an order (a missing re-check, a touch after the last touch) are marked in
 * jobs/ with WEFT__PLANT("name"), false in every build but this one; mc_options_t.plant
 * switches one on.
 *
 * Threads: mc_explore from one ordinary thread at a time (the modelled threads run on it);
 * everything else from modelled threads. */
#ifndef WEFT_TESTS_MC_H
#define WEFT_TESTS_MC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_MAX_THREADS 8

typedef struct mc_options {
    const char *name;        /* printed with the result */
    int preemptions;         /* pre-emption bound per execution */
    int stale_reads;         /* bound on loads that read an older store */
    int history;             /* stores kept per location for weak loads (1..8) */
    uint64_t max_executions; /* 0: no limit; reaching it makes the result non-exhaustive */
    uint64_t max_steps;      /* operations per execution before it counts as a livelock */
    const char *weaken;      /* "function:op" ('|' between several) made relaxed, or NULL */
    const char *plant;       /* a WEFT__PLANT("name") in jobs/ to switch on, or NULL */
    bool quiet;              /* do not print the failing schedule */
    /* Replay one execution: the choices a failure printed ("choices: 0,2,1"), followed
     * while each point still offers the same options, then defaults (0). A failing
     * schedule kept as a regression test. */
    const char *replay;
    /* Explore without sleep sets (every interleaving within the bounds, not one per class
     * of reorderings of commuting steps); replays never use them. */
    bool no_reduction;
} mc_options_t;

typedef struct mc_result {
    uint64_t executions; /* complete executions explored (including the failing one) */
    uint64_t max_depth;  /* most choice points in one execution */
    uint64_t redundant;  /* executions cut by sleep sets: no choice recorded after the cut */
    bool exhaustive;     /* every execution within the bounds was explored */
    bool failed;         /* an execution failed; `message` says how */
    int weakened;        /* operations the plant changed in one execution (at most) */
    char message[512];   /* the failure, or empty */
} mc_result_t;

typedef void (*mc_fn_t)(void *arg);

/* Explore every execution of `main(arg)` within the bounds of `o`. */
mc_result_t mc_explore(const mc_options_t *o, mc_fn_t main, void *arg);

/* From modelled threads: start `fn(arg)` as a new modelled thread; returns its id. */
int mc_thread_start(mc_fn_t fn, void *arg);
/* The same, without the happens-before edge from the start: the new thread knows nothing
 * the starting thread did (an unrelated thread that merely comes later). */
int mc_thread_start_unordered(mc_fn_t fn, void *arg);
/* Wait for modelled thread `id` to finish (happens-before edge from its end). */
void mc_thread_join(int id);
/* The calling modelled thread's id (0 for the scenario's main). */
int mc_thread_id(void);

/* Fail the execution when `cond` is false (printed with the schedule). */
#define mc_check(cond, ...) mc_check_impl((cond), #cond, __FILE__, __LINE__, __VA_ARGS__)
void mc_check_impl(bool cond, const char *expr, const char *file, int line, const char *fmt, ...);

/* Plain (non-atomic) memory the scenario wants race-checked: a write and another thread's
 * read or write that happens-before does not order are a data race. */
void mc_plain_write(const void *p, const char *name);
void mc_plain_read(const void *p, const char *name);

/* From now on, any atomic access to [p, p+size) by any thread fails the execution: the
 * object's owner has let it go (a counter a waiter frees once it sees zero). */
void mc_retire(const void *p, size_t size, const char *name);

/* Name a location for the printed schedule. */
void mc_name(const void *p, const char *name);

/* Let the other threads run for a while (a free switch to the next runnable one, as a spin's
 * pause is): a long job's body. Unlike a pause of the code under test, it makes no newer
 * store visible to the caller. */
void mc_pause(void);

/* A choice among n values (0..n-1), explored exhaustively; 0 is the default. */
int mc_choose(int n);

#endif /* WEFT_TESTS_MC_H */
