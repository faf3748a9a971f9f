/* tools/sim/sim.h: the schedule simulator — replays one recorded frame of weft's scheduler on
 * P simulated workers, so the frame time at core counts this machine does not have can be
 * estimated from what a real frame measured.
 *
 * A recorded frame (wt_sim_frame_t) is what weft's trace and schedule introspection give:
 * the systems in run order with their phase, their chunks' measured durations and their
 * predecessors in the reduced graph; each phase's command apply; and how each phase ran
 * (a job graph, one flat parallel-for, or inline on the calling thread). The simulator runs
 * it with the runtime's policy (docs/architecture.md, section 2):
 *  - phases run one after the other, each ended by its apply on the main thread (worker 0);
 *  - an inline phase runs its chunks in run order on worker 0;
 *  - a flat phase is one parallel-for over its chunks in run order: every participant claims
 *    the next chunk (claim_ns each); worker 0 starts at once, the others after the latency
 *    of noticing work (notice_ns while they still spin, wake_ns once asleep);
 *  - a ready phase (edges between its systems, none pinned to the main thread) runs from a
 *    ready list of units (a system's chunks; one empty unit for a system that ran none):
 *    worker 0 publishes the roots' units and runs as a participant; a participant claims a
 *    run of published units (claim_ns), half of a 1/P share of what is published, at least
 *    one, at most ceil(n / P) units in a row of one system of n units, and runs them in
 *    order; finishing a system's last unit releases its successors:
 *    the first one released runs next on the same worker (its chunk 0; a chain stays on one
 *    worker), the rest of their units are published. Whoever publishes n units of work W
 *    (the roots at the start) hands out k drain jobs at once, the largest k with
 *    k x handout_ns < W x (P - 1) / P, at most n and at most P - active (participants:
 *    drain jobs queued or running, worker 0 while it claims); an idle worker told of one
 *    (one still spinning first) takes it after notice_ns or wake_ns, plus job_ns + steal_ns
 *    (it is taken from another worker's deque), and joins; a participant that finds nothing
 *    published leaves. Worker 0, once it finds nothing, waits for the drain jobs (running
 *    any that no worker has taken yet, at job_ns), notices the last one ending (notice_ns),
 *    then claims again; the phase ends when it finds nothing after every drain job ended;
 *  - a job-graph phase (one holding a main_thread system, or one the caller marks so)
 *    submits every system at once; a system's chunks become ready when its
 *    last predecessor finishes and go onto the deque of the worker that finished it; a
 *    worker pops its own deque newest first, else steals the oldest job of the lowest-indexed
 *    non-empty deque (steal_ns), else goes idle; an idle worker starts on newly published work
 *    after notice_ns or wake_ns as above. Every job costs job_ns on top of its duration. A
 *    system that ran no chunk still costs one empty job (it orders its successors);
 *  - with one worker everything runs in run order on worker 0 with no job overhead (the
 *    runtime's fused path).
 *  - a chunk that runs nested parallel-fors (wt_sim_loop_t) takes its measured time less the
 *    loops' spans, run first, then each loop in turn, run as weft_parallel_for runs it: the
 *    chunk's worker is the caller and takes the top max(1, n / 2P) pieces at once; every
 *    simulated worker idle when the loop starts joins after notice_ns or wake_ns and its
 *    first claim (claim_ns) takes ceil(left / P) pieces from the top of what is left (the
 *    runtime's offer or board share), every later claim max(1, left / 2P); the loop ends
 *    when its last piece does (notice_ns more when that is not on the caller). Outside a
 *    ready phase a worker that falls idle during the loop does not join it (the runtime's
 *    board would let it: so an overestimate there), and a flat phase's chunks run their
 *    loops on their own worker. Joiners are busy until their last piece ends. In a ready
 *    phase the loops run as events: a worker that finds no unit published (before it
 *    would leave or sleep) or is told of a drain job someone else took looks at the open
 *    loops first, as a runtime worker looks at the offers and the board before the deques,
 *    and joins the first with pieces left after notice_ns (its first claim a whole share);
 *    so does a participant before each claim of units (the runtime's drain asks
 *    weft_jobs_help_loop there), which claims again once the loop has nothing left to claim
 *    (the runtime's board holds the latest loop only: with two loops open at once, an
 *    overestimate); the caller waits only for participants that claimed something;
 *  - a placed apply (placed_ns > 0) at P >= 2 runs, as in the runtime, L = min(P, 64) lanes:
 *    the walk (walk_ns) on worker 0 while job lanes 0..L-2 go to workers 1..L-1 (latency,
 *    job_ns + steal_ns: taken from worker 0's deque; no sooner than lane_delay_ns after the
 *    walk started, as recorded: a lane no worker took ran on worker 0 after the walk); the replay is split as the runtime's
 *    split_lanes does, evenly but for the main thread's lane, which gets (R - (L-1) x lead)
 *    / L of the replay R (at least 0), where lead (what a job lane replays while the walk
 *    runs) is solved from the recorded split (lead = walk_ns if none was recorded); a job
 *    lane ends no earlier than the walk (it follows it); worker 0 replays its lane after
 *    the walk, then waits for the lanes (notice_ns when one ends last). Pools are whole
 *    in a lane, so an even split is the best case. The rest of apply_ns stays serial.
 * frame_ns is added once per frame for the work outside jobs and applies (planning, the
 * frame's bookkeeping). Ties are broken by worker index, so a run is deterministic.
 *
 * The model knows nothing of memory bandwidth or shared caches: durations are what the
 * recorded frame measured, so a frame recorded at 2 workers carries that machine's
 * contention at 2 and none beyond. Results are estimates, and every output that shows them
 * says "simulated".
 *
 * Pure C, libc only; no weft dependency (sim_record.h builds frames from a weft world).
 * Thread: any; runs share nothing. */
#ifndef WEFT_TOOLS_SIM_H
#define WEFT_TOOLS_SIM_H

#include <stdbool.h>
#include <stdint.h>

typedef enum wt_sim_mode {
    WT_SIM_GRAPH = 0,  /* one job per chunk, released by predecessors' completion */
    WT_SIM_FLAT = 1,   /* one parallel-for over all chunks (no edge inside the phase) */
    WT_SIM_INLINE = 2, /* run on worker 0 in run order (the measured-cost rule said so) */
    WT_SIM_READY = 3,  /* a ready list of chunks, claimed in runs (edges, none pinned) */
} wt_sim_mode_t;

/* A parallel-for a chunk started from inside its job (weft_parallel_for nested in a system). */
typedef struct wt_sim_loop {
    uint32_t chunk;         /* the chunk of its system that ran it */
    uint32_t npieces;       /* its pieces (the loop's chunks), in index order */
    const double *piece_ns; /* [npieces] measured duration of each piece, ns */
    double span_ns;         /* its wall time inside that chunk's measured duration */
} wt_sim_loop_t;

typedef struct wt_sim_system {
    uint32_t phase;             /* index into wt_sim_frame_t.phases */
    uint32_t nchunks;           /* chunks it ran (0: none; one empty job on the threaded path) */
    const double *chunk_ns;     /* [nchunks] measured duration of each chunk, ns */
    const uint32_t *pred;       /* [npred] systems it waits for: earlier in run order, same phase */
    uint32_t npred;             /* entries in pred */
    const wt_sim_loop_t *loops; /* [nloops] its nested loops, by chunk, then in run order */
    uint32_t nloops;
} wt_sim_system_t;

typedef struct wt_sim_phase {
    uint32_t first, end; /* its systems: indices [first, end) of wt_sim_frame_t.systems */
    double apply_ns;     /* the command apply at its end, on worker 0 (all of it) */
    wt_sim_mode_t mode;  /* how it runs with 2 or more workers */
    /* A placed apply (0, 0, 0: none): the part of apply_ns from its walk's start until its
     * last lane ended, the serial walk's time, and the lanes' replay time (their sum, waits
     * for the walk left out) */
    double placed_ns, walk_ns, replay_ns;
    uint32_t lanes;       /* the placed apply's lanes as recorded (the main thread's included) */
    double main_lane_ns;  /* of replay_ns, what the main thread replayed after the walk */
    double lane_delay_ns; /* when the job lanes started after the walk did (recorded mean) */
} wt_sim_phase_t;

/* Machine costs (ns), measured on the recording machine (sim_calibrate.h). */
typedef struct wt_sim_costs {
    double job_ns;     /* per job through the job system: submit, pop, counter */
    double steal_ns;   /* extra for a job taken from another worker's deque */
    double notice_ns;  /* a spinning idle worker starting on work another thread published */
    double wake_ns;    /* a sleeping worker starting on it */
    double spin_ns;    /* how long an idle worker spins before it sleeps */
    double claim_ns;   /* one parallel-for claim, or one ready-list claim */
    double handout_ns; /* a ready phase's dispatch cost D: n units of work W published get
                          the largest k <= n drain jobs with k x D < W x (P - 1) / P (the
                          runtime measures D per phase; the calibration takes job + steal +
                          notice) */
    double frame_ns;   /* per frame, outside jobs and applies */
} wt_sim_costs_t;

typedef struct wt_sim_frame {
    const wt_sim_system_t *systems; /* [nsystems] in run order, phases ascending */
    uint32_t nsystems;
    const wt_sim_phase_t *phases; /* [nphases] in run order */
    uint32_t nphases;
    wt_sim_costs_t costs;
    /* true: every apply replays as its measured apply_ns on worker 0, its placed fields
     * ignored (wt_sim_run and wt_sim_bound); false: a placed apply runs as lanes (above) */
    bool apply_measured;
} wt_sim_frame_t;

typedef struct wt_sim_result {
    double frame_ns;    /* the simulated frame */
    double work_ns;     /* sum of chunk durations (what any worker count must do) */
    double apply_ns;    /* sum of applies (serial) */
    double overhead_ns; /* job, claim, steal and latency costs paid by busy workers */
    uint32_t jobs;      /* jobs (or flat-loop chunks) run */
    uint32_t steals;    /* jobs taken from another worker's deque */
} wt_sim_result_t;

#define WT_SIM_MAX_WORKERS 256u

/* Simulate `frame` on `workers` (1..WT_SIM_MAX_WORKERS) workers. Returns 0 and fills *out,
 * or -1 when the frame is malformed (a predecessor that is not earlier in the same phase, a
 * phase range out of order, a negative duration) or memory runs out. */
int wt_sim_run(const wt_sim_frame_t *frame, uint32_t workers, wt_sim_result_t *out);

/* What no worker count can beat, with no overhead at all: the serial part (every apply and
 * frame_ns) and, per phase, the longest path through its systems where a system takes its
 * longest chunk (all its chunks at once; an inline phase takes its whole work). */
typedef struct wt_sim_bound {
    double serial_ns; /* applies + frame_ns */
    double path_ns;   /* sum over phases of each phase's longest path */
} wt_sim_bound_t;

/* Fill *out for `frame`. Returns 0, or -1 when the frame is malformed (as wt_sim_run) or
 * memory runs out. */
int wt_sim_bound(const wt_sim_frame_t *frame, wt_sim_bound_t *out);

#endif /* WEFT_TOOLS_SIM_H */
