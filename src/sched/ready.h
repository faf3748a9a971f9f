/* ready.h: the ready-list run of a graph phase (private to the build).
 *
 * DESIGN
 * A graph phase (systems ordered by edges, none pinned to the main thread) runs from a ready
 * list instead of one job per system: a slot array of units (a system's chunk, or the one
 * unit of a system with nothing to do) that become ready when their system's predecessors in
 * the phase have finished. Participants (the calling thread, and "drain" jobs it or another
 * participant submits) claim runs of published slots with one CAS on the head, a share of
 * what is there (half of 1/P of it, at least one, and at most ceil(n / P) units in a row of
 * a system of n units: weft__ready_take), and run each unit. Finishing a system's
 * last unit releases its successors: a successor whose only predecessor in the phase it was
 * needs no atomic; one of the newly ready units is kept and run next on the same thread
 * (a chain runs on one thread, touching no shared line), the others are published. So a
 * unit costs its body plus, per claimed run, one CAS; per released system, one push; per
 * ready set handed out, one job submit (of one or more drain jobs).
 * Handing out is decided per ready set from measured costs: a participant that publishes
 * n units of estimated work W (rows x measured ns per row of each system, phase_cost.h;
 * unknown costs count as large) submits k drain jobs at once, the largest k with
 * k x D < W x (P - 1) / P (splitting over the P workers saves at most W x (P - 1) / P,
 * and each job is charged the phase's whole measured dispatch cost D; 0 while unknown),
 * at most n (a job more would find nothing) and at most the P - active free places
 * (participants: queued or running drain jobs, and the main thread while it drains, not
 * while it waits: there it runs the drain job it steals). The k places are reserved with
 * one CAS and given back if the submit fails. At 2 workers k is 0 or 1: one job when
 * W x (P - 1) / P > D. The roots at the phase's start follow the same rule. A wide set
 * released late in the phase so gets every free worker its work repays, not one more.
 * Liveness: every publisher claims again after publishing, and a participant leaves only
 * when it finds no published slot at the head, so each published unit is claimed by a
 * participant that has not left; the calling thread then waits for the drain jobs' counter
 * (running jobs meanwhile, or sleeping) and claims again until nothing is left. Nothing is
 * allocated per frame and nothing fails: a drain job that cannot be submitted leaves its
 * work to the participants there are.
 * Setting up costs no pass of its own over the phase's system records (750 of them are more
 * than L2 holds, and the other workers idle until the roots are out) when the phase's last
 * decision was to hand it out (phase_cost.h): prepare_phase then notes each system as it
 * prepares it (weft__ready_note: its counts for the run, and whether it is a root with its
 * units and estimated work), so the run writes the roots' slots from that list and hands
 * them out at once. A phase expected to run inline is not noted (its frames pay nothing
 * for it); if it is handed out after all, weft__ready_reserve notes it in a pass of its own.
 * Deferred prepare (weft__ready_defer): a phase of one-chunk systems without change filters
 * (prep_anywhere) has one unit per system whatever its rows, and its prepare cannot fail, so
 * when it was handed out last time with its costs known and this frame samples, decides and
 * traces nothing (frame.c), no pass runs at all: the main thread takes the ticks in run order
 * (system k of the phase gets tick0 + 2k, as the pass would give it), publishes the roots
 * from the phase's root list (built with the graph) and each participant prepares a system
 * right before running it. The other workers start at once, and a system's per-frame lines
 * are written on the core that runs it, not on the main thread's and then missed on.
 * Thread: weft__ready_begin, _note, _defer, _reserve and _run on the main thread; the rest of
 * the run on any worker. */
#ifndef WEFT_SRC_READY_H
#define WEFT_SRC_READY_H

#include "weft/jobs.h"

#include "jobs/platform/atomic.h"

struct weft_sched;
struct weft__system;
struct weft__phase_cost;

typedef struct weft__ready {
    weft_counter_t drains; /* counts the drain jobs of this run */
    weft_atomic_u32 head;  /* next slot to claim (its own line: claimers) */
    char pad0[60];
    weft_atomic_u32 tail; /* slots reserved by publishers (its own line: publishers) */
    char pad1[60];
    weft_atomic_u32 active;  /* participants: queued or running drain jobs, and the main
                                thread while it drains */
    weft_atomic_u32 ran;     /* units run, added by each participant as it leaves */
    weft_atomic_u64 *slots;  /* [cap] 0: not yet published; else (run position + 1) << 32 |
                                chunk; written once per run */
    uint32_t cap;            /* capacity of slots (main thread) */
    uint64_t *roots;         /* [nroots] noted roots: run position << 32 | units (main) */
    uint32_t nroots;         /* roots noted for the phase being prepared */
    uint32_t noted_first;    /* first run position of the noted phase (UINT32_MAX: none) */
    uint32_t roots_cap;      /* capacity of roots */
    uint32_t units;          /* units noted for the phase being prepared */
    double root_work;        /* the noted roots' estimated work (ns; phase_cost.h) */
    uint32_t workers;        /* P */
    double handout_ns;       /* D of the running phase (0: not known yet) */
    bool deferred;           /* the noted phase's systems are prepared by their runners */
    uint32_t first;          /* deferred: the phase's first run position */
    uint32_t tick0;          /* deferred: change tick of run position `first` (stride 2) */
    weft_atomic_u64 work_ns; /* deferred: W prepared by the drain jobs, added as they leave */
    weft_atomic_u32 unknown; /* deferred: a system prepared with its cost unknown */
    weft_jobs_t *jobs;       /* the job system */
    struct weft_sched *s;    /* the scheduler */
    weft_job_desc_t drain;   /* the drain job's desc */
} weft__ready_t;

/* Called by prepare_phase before it prepares the graph phase at run positions [first, end):
 * when `want`, start noting it (grows the root list, never shrinks) and return true; else,
 * or when out of memory, forget any phase noted before and return false (its run, if any,
 * then notes it in weft__ready_reserve). Thread: main. */
bool weft__ready_begin(struct weft_sched *s, uint32_t first, uint32_t end, bool want);

/* Note the system at run position `pos`, just prepared (its chunks and cost known): sets
 * its counts for the run and, when it has no predecessor in the phase, adds it to the
 * roots. Only between a weft__ready_begin that returned true and the phase's run, once per
 * position. Thread: main. */
void weft__ready_note(struct weft_sched *s, uint32_t pos, struct weft__system *sys);

/* Instead of prepare_phase's pass: note the graph phase at run positions [first, end),
 * whose systems are all prep_anywhere (system.h), as deferred: each is prepared by the
 * participant about to run it, with change tick tick0 + 2 x (position - first), after its
 * predecessors in the phase finished, so no pass over the records runs on the main thread
 * and the other workers start at once. Its units are one per system (no system splits);
 * the roots come from the phase's root list, their work estimated from `work` (the phase's
 * last W) pro rata. False when out of memory (nothing noted). Thread: main. */
bool weft__ready_defer(struct weft_sched *s, uint32_t first, uint32_t end, uint32_t tick0,
                       double work);

/* Before running the prepared graph phase at run positions [first, end): note it if its
 * prepare did not, then make room for its units' slots (grows, never shrinks). False when
 * out of memory (nothing changed that matters; the phase then runs as one job per system).
 * Thread: main. */
bool weft__ready_reserve(struct weft_sched *s, uint32_t first, uint32_t end);

/* Run the prepared (or deferred) and noted graph phase at run positions [first, end) from
 * the ready list; returns when every unit has run. `pc`: the phase's measured costs (its D;
 * a deferred run stores the W it met in work_last). Errors: those of weft_counter_wait (the
 * job system is unusable; reported; a deferred run then leaves work_known false, so the next
 * frame prepares the phase in a pass). Thread: main. */
weft_result_t weft__ready_run(struct weft_sched *s, uint32_t first, uint32_t end,
                              struct weft__phase_cost *pc);

/* How many published slots one claim takes from slot `h` when `t` are reserved (claim()):
 * half of a 1/P share, max(1, (t - h) / 2P), stopping at the first slot not yet published
 * (0 when that is slot h), and taking at most ceil(n / P) units in a row of one system with
 * n units (`units(ctx, run position)`, called only when a second unit of a system follows
 * the first): a claim is run in order on one thread, so a run of one system's units past
 * its 1/P share would serialise a system whose chunks exist to be spread, whatever the
 * other published units cost (the 16-worker simulation of the demo's frame had one worker
 * run 10 of carrier_steering's 13 chunks of ~230 us in one claim, the hierarchy chain's
 * link). At 2 workers a single released system is never capped (the share is a quarter of
 * it). Thread: any participant. */
uint32_t weft__ready_take(const weft_atomic_u64 *slots, uint32_t h, uint32_t t, uint32_t workers,
                          uint32_t (*units)(const void *ctx, uint32_t pos), const void *ctx);

/* Free the slots (scheduler teardown). Thread: main. */
void weft__ready_fini(struct weft_sched *s);

#endif /* WEFT_SRC_READY_H */
