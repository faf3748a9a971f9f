/* phase_cost.h: whether a phase runs on the job system or on the calling thread, decided from
 * what its systems measurably cost (private to the build).
 *
 * DESIGN
 * Handing a phase to the job system pays a dispatch cost (submits, wake-ups, steals, the
 * waits: microseconds on a VM) to split the phase's work over the workers. It pays off only
 * when the work saved exceeds it. Both sides are measured, never assumed:
 *  - work: each system keeps an estimate of its cost per driving row (a system without terms
 *    counts as one row), measured on sampled frames (every SAMPLE_EVERY-th frame, and any
 *    frame in which something is still unknown) by timing each chunk; the phase's work this
 *    frame is W = sum(rows x cost per row) over its systems, so it follows the row counts
 *    every frame, between samples too;
 *  - dispatch: per phase, D = wall time of the threaded phase - (its measured work /
 *    workers) - J x (workers - 1) / workers, from sampled frames that ran threaded. It
 *    includes whatever keeps the phase from splitting evenly (a chain of dependent systems,
 *    one long system): threads that cannot help are not worth waking. J, the time until the
 *    first other worker started a chunk, is left out: while the others join, the calling
 *    thread works, so a phase that waited J for them takes (W + (P - 1) J) / P, and J is a
 *    wake-up latency (workers asleep after the engine idled between frames) that the next
 *    frame's start-of-frame wake (weft_jobs_wake, frame.c) hides, not a cost of handing the
 *    phase out. Counted, it kept a paced game's phases on one thread: every sample followed
 *    an idle gap, so D stayed inflated and the workers were never handed work again. A
 *    sample in which no other worker ran a chunk is not discounted.
 * Rule: a phase runs on the calling thread when W x (P - 1) / P <= D (P = workers): the time
 * threads would save is no more than what handing the work out costs. Until both are known
 * the phase runs threaded (and is measured); its first threaded run only warms up (cold
 * caches, page faults, workers asleep) and does not count, and D is trusted from the second
 * sample on. D is the minimum of the last
 * WEFT__COST_DISPATCH_SAMPLES samples: a sample is inflated whenever the other workers
 * happen to be asleep, pre-empted or busy elsewhere, never deflated, so the minimum is what
 * handing the phase out costs when the workers are there; a single slow frame cannot pin a
 * big phase to one thread. A phase that keeps running inline is run threaded again every
 * ceil(D / (W x (P - 1) / P))-th time it is sampled, at most every PROBE_EVERY-th, so D
 * follows the machine, fastest where a wrong D would cost the most; but never so often that
 * the probes' waste (D - gain each) exceeds 1/PROBE_SHARE of the phase's inline work between
 * them (a phase far too small to share is probed rarely), and at least every PROBE_MAX-th. A system's cost per row takes
 * a lower sample at once and blends a higher one in with weight 1/4, for the same reason:
 * interference only ever slows a sample down (the first frame, cold, measured 10-20 times
 * the steady cost of small systems under ThreadSanitizer).
 * A sampled phase that runs on the calling thread is timed as a whole, two clock reads
 * (~30 ns each on a VM) instead of two per chunk, which would double the cost of a phase of
 * many one-row systems on that frame: every system's estimate is scaled by measured /
 * estimated work. The per-system split is measured again on the phase's threaded runs (its
 * probes), and row counts are followed every frame. With tracing on, chunks are timed anyway,
 * so such a phase is sampled chunk by chunk.
 * A ready phase whose prepare is deferred to its runners (ready.h) learns this frame's W only
 * as it runs: it is decided from W of its last run (one frame behind; never on a sampled
 * frame, and a frame that decides inline from it prepares in a pass and decides again).
 * A phase whose last run was decided inline, on a frame that samples and traces nothing, is
 * decided from its last W too: when the rule still says inline it runs fused (frame.c,
 * fuse_phase: each system prepared then run, one pass over the records), its W summed as it
 * goes for the next frame; one frame behind as above.
 * Either way the world after the frame is the same (apply order never depends on where a
 * system ran); only timing changes. Documented for users in weft/system.h
 * (weft_world_progress). Thread: main, except weft__cost_add_chunk (any worker). */
#ifndef WEFT_SRC_PHASE_COST_H
#define WEFT_SRC_PHASE_COST_H

#include <stdbool.h>
#include <stdint.h>

#include "jobs/platform/atomic.h"

/* Per system: its measured cost. Zero-initialised storage means "unknown". */
typedef struct weft__sys_cost {
    float ns_per_row;        /* running estimate; < 0 or 0 with `known` false: unknown */
    bool known;              /* ns_per_row holds a measurement */
    uint32_t rows;           /* driving rows this frame (a system without terms: 1) */
    weft_atomic_u64 sampled; /* ns of its chunks in this sampled frame; added by workers */
} weft__sys_cost_t;

/* Dispatch samples kept per phase; D is their minimum. */
#define WEFT__COST_DISPATCH_SAMPLES 4u

/* Per phase of the schedule. Zero-initialised storage means "unknown". */
typedef struct weft__phase_cost {
    float dispatch[WEFT__COST_DISPATCH_SAMPLES]; /* the latest D samples (ns), a ring */
    uint32_t nsamples;      /* D samples taken so far (the ring holds the latest) */
    uint32_t inline_runs;   /* sampled frames run inline since the last threaded one */
    uint32_t threaded_runs; /* sampled threaded runs so far (the first is not a sample) */
    bool fused_last;        /* the phase's last run took the fused path (frame.c) */
    bool threaded_last;     /* the last decision handed the phase out (frame.c prepares
                               the ready list in its prepare pass when it expects that) */
    bool work_known;        /* work_last holds a W with every system's cost known */
    double work_last;       /* W of the phase's last run (ns): the decision of a deferred
                               prepare (ready.h), which learns this frame's W only as it runs */
} weft__phase_cost_t;

/* True when frame number `frame` samples every phase. */
bool weft__cost_sample_frame(uint64_t frame);

/* Reset a system's sample and record its rows for this frame (prepare step). */
void weft__cost_begin_system(weft__sys_cost_t *c, uint32_t rows);

/* Add one chunk's measured time (any worker, while the phase runs). */
static inline void weft__cost_add_chunk(weft__sys_cost_t *c, uint64_t ns) {
    /* relaxed: the phase's counter waits order these adds before the main thread's read */
    weft_atomic_fetch_add_relaxed(&c->sampled, ns);
}

/* Add a system's estimated work this frame (rows x cost per row) to *work; clears
 * *all_known when the system has rows but no measured cost yet. */
void weft__cost_estimate(const weft__sys_cost_t *c, double *work, bool *all_known);

/* Decide a phase from its estimated work: true to run it on the calling thread (and keeps
 * the answer in ph->threaded_last for the next frame's prepare). *sample
 * receives whether this frame must measure the phase: when something is still unknown, when
 * probing an inline phase, and on every sampled frame (`sample_frame`). */
bool weft__cost_run_inline(weft__phase_cost_t *ph, double work, bool all_known, uint32_t workers,
                           bool sample_frame, bool *sample);

/* The phase's dispatch cost D (ns): the minimum of its kept samples, 0 while fewer than are
 * trusted (unknown). */
double weft__cost_dispatch(const weft__phase_cost_t *ph);

/* After a sampled phase that ran on the calling thread, timed as a whole: move the system's
 * estimate to `factor` times itself (measured / estimated phase work) by the same rule as a
 * sample (lower at once, higher blended in). No-op for an unknown system or one without
 * rows this frame. */
void weft__cost_scale_system(weft__sys_cost_t *c, double factor);

/* After a sampled phase: fold the system's sample into its estimate; returns the sample (ns). */
double weft__cost_fold_system(weft__sys_cost_t *c);

/* Note that a worker other than the calling thread started a chunk at `begin` (any worker,
 * sampled phases only): *joined keeps the earliest. */
static inline void weft__cost_note_join(weft_atomic_u64 *joined, uint64_t begin) {
    uint64_t seen = weft_atomic_load_relaxed(joined);
    while (begin < seen && !weft_atomic_cas_weak_acq_rel(joined, &seen, begin)) {
    }
}

/* After a sampled phase that ran threaded: fold D = wall - work / workers - join_ns x
 * (workers - 1) / workers into the phase's estimate; join_ns is how long after the phase
 * started the first other worker began a chunk (UINT64_MAX: none did, nothing discounted). */
void weft__cost_fold_phase(weft__phase_cost_t *ph, double work_ns, uint64_t wall_ns,
                           uint64_t join_ns, uint32_t workers);

#endif /* WEFT_SRC_PHASE_COST_H */
