/* schedule.h: the system dependency graph — pure graph code over access sets, independent of
 * the world (private to the build).
 *
 * DESIGN
 * Input: one weft__sched_sys_t per system in registration order (sorted read and write
 * component ids, phase, resolved before/after constraints). Output: a weft__graph_t.
 * - The run order is phases ascending; inside a phase, a topological order of the explicit
 *   before/after constraints with ties broken by registration index. Without constraints it
 *   is plain registration order, so "edges run from the earlier-registered system" holds.
 * - Every pair in the same phase whose access conflicts (one writes a component the other
 *   reads or writes), and every constrained pair, gets an edge from the earlier to the later
 *   system of the run order. The edge remembers the component that forced it (the smallest
 *   conflicting id) or WEFT__EDGE_CONSTRAINT.
 * - Redundant edges are removed (transitive reduction over reachability bitsets).
 * - Phases are barriers: the graph records where each phase starts in the run order; the
 *   executor puts the phase's command-buffer apply between them.
 * How: no pair is tested. Per component, the accesses in run order give candidate edges (a
 * reader after the last writer, a writer after the last writer and the readers since), whose
 * transitive closure is that of all conflicting pairs, so their reduction is the same graph.
 * The reduction runs per weakly connected piece of the candidate graph, with m^2 bits of
 * reachability for a piece of m systems. Building is O(n log n + k + c) for n systems, k
 * access entries and c constraints, plus the pieces' bitsets, and happens only when the
 * system list changes. */
#ifndef WEFT_SRC_SCHEDULE_H
#define WEFT_SRC_SCHEDULE_H

#include "weft/base.h"

#define WEFT__EDGE_CONSTRAINT UINT32_MAX /* edge label: forced by before/after */

/* The access of one system as the graph sees it. All arrays are owned by the caller. */
typedef struct weft__sched_sys {
    const char *name;       /* for error messages */
    uint32_t phase;         /* phases run in ascending order */
    const uint32_t *reads;  /* sorted, unique component ids read only */
    uint32_t nreads;        /* length of reads */
    const uint32_t *writes; /* sorted, unique component ids written (and read) */
    uint32_t nwrites;       /* length of writes */
    const uint32_t *after;  /* registration indices this system must run after */
    uint32_t nafter;        /* length of after */
} weft__sched_sys_t;

/* The built graph. All arrays come from one allocation owned by the graph. */
typedef struct weft__graph {
    uint32_t n;            /* systems */
    uint32_t *order;       /* [n] run position -> system index */
    uint32_t *pos;         /* [n] system index -> run position */
    uint32_t *pred_first;  /* [n + 1] CSR offsets into preds, by system index */
    uint32_t *preds;       /* reduced predecessor system indices */
    uint32_t *pred_label;  /* component id (or WEFT__EDGE_CONSTRAINT) per preds entry */
    uint32_t *succ_count;  /* [n] reduced successors per system (0: a sink of its phase) */
    uint32_t nphases;      /* distinct non-empty phases */
    uint32_t *phase_first; /* [nphases + 1] run positions where each phase starts */
    uint32_t nedges;       /* reduced edges */
    void *block;           /* the single allocation */
    size_t block_size;     /* its size, for the allocator's free */
} weft__graph_t;

/* Build the graph for systems[0..n). Errors: WEFT_ECYCLE (the message names the systems
 * of one cycle; registration prevents this), WEFT_ENOMEM; both reported through `log` (the
 * world's logger; NULL only where no world exists). On failure `out` is untouched.
 * Thread: any (pure). */
weft_result_t weft__graph_build(const weft__sched_sys_t *systems, uint32_t n,
                                const weft_allocator_t *alloc, const weft_logger_t *log,
                                weft__graph_t *out);

/* Free a graph built by weft__graph_build (zeroes it). NULL block is ignored. */
void weft__graph_free(weft__graph_t *g, const weft_allocator_t *alloc);

/* The first component id written by one and read or written by the other, or UINT32_MAX when
 * their access does not conflict. */
uint32_t weft__sched_conflict(const weft__sched_sys_t *a, const weft__sched_sys_t *b);

/* Check the before/after constraints and phases of systems[0..n) for a cycle. On a cycle
 * returns WEFT_ECYCLE with weft_last_error() naming the systems in order; `log` may be NULL.
 * Scratch memory comes from `alloc`. Errors: WEFT_ECYCLE, WEFT_ENOMEM. */
weft_result_t weft__sched_check_cycles(const weft__sched_sys_t *systems, uint32_t n,
                                       const weft_allocator_t *alloc, const weft_logger_t *log);

/* Allocation helpers used by every scheduler file: the allocator hook or the default pair
 * (alloc.h), 64-byte aligned; a size of 0 is taken as 1 by both, so callers pass sizes as
 * computed. */
void *weft__sched_alloc(const weft_allocator_t *alloc, size_t size);
void weft__sched_free(const weft_allocator_t *alloc, void *p, size_t size);

/* A block from weft__sched_alloc of `size` bytes is about to be filled: back the whole pages
 * inside it in one call (weft__vmem_populate) rather than one page fault each, which on a
 * virtual machine costs more than the page's zeroing. A hint: contents unchanged, cannot
 * fail; a range under two whole pages is left to fault in. Thread: any. */
void weft__sched_populate(void *p, size_t size);

/* Make a scratch array *p of *cap entries of `elem` bytes hold at least n (doubling from 64;
 * the old contents are not kept). False when out of memory (then nothing changed). */
bool weft__sched_scratch(const weft_allocator_t *alloc, void **p, uint32_t *cap, uint32_t n,
                         size_t elem);

#endif /* WEFT_SRC_SCHEDULE_H */
