/* weft/query.h: queries — include/exclude component sets iterated in fixed chunks.
 *
 * A query is a description (include terms with read or write access, an oper and a change
 * filter; exclude components) bound to a world. Iteration chooses a "driving" row range among
 * the AND terms by cost: each candidate, the aligned rows [0, n) of a group whose members are
 * all AND terms or all the rows of an AND term's pool, costs rows * (1 + 2 * probes), where
 * probes counts the AND terms it does not cover (each is a sparse-index probe per driving
 * row, measured at about two row visits); the cheapest drives (ties: a group before a pool,
 * then the larger group, then the earlier term). The smallest pool is always a candidate, so
 * the plan never costs more than driving from it; a group covering every term wins whenever
 * it exists (its rows are at most any member's). desc.drive forces a term's pool. The choice
 * depends only on the data, so every caller that starts an iteration while no structural
 * change runs gets the same driving range.
 *
 * Merge-join: when a pool drives, the query has no change filter, OPTIONAL/OR or
 * multi-instance term, and every include pool keeps its rows in ascending entity order (a
 * weft_component_sort by entity index, or adds in ascending entity order, make it so; any
 * add out of order, swap-remove of a row other than the last two, move_row or group
 * reordering ends it), the iterator can walk the pools together like sorted lists, one
 * cursor each, skipping ahead by galloping (exponential then binary search) instead of
 * probing every driving entity. Same driving range, chunks, entries and order; only the
 * batch cut may differ. The planner takes it when its estimated cost (src/core/merge_join.h:
 * the pools' rows inside the entity range they share, and the galloping between them) is
 * below the probe plan's; desc.join forces either.
 *
 * Chunks: chunk k covers driving rows [k * chunk_rows, (k + 1) * chunk_rows), so boundaries
 * depend only on chunk_rows and the data, never on worker counts. Inside a chunk the iterator
 * hands out batches of matching entities in driving-row order, each of one of two forms:
 *  - a run of consecutive driving rows whose every AND term runs contiguously (a group's
 *    rows, pools filled in the same order, a pool driving alone): every AND term's column
 *    is set;
 *  - a resolved block (joins nothing lines up for): up to 128 driving rows whose entities
 *    the iterator looked up in the other terms' pools in one pass, keeping each term's row
 *    per entry; the rejected rows are left out. Terms whose rows
 *    still run contiguously over the block get a column, the others NULL.
 * Join cache: a query without change filters and OPTIONAL/OR terms keeps the rows it looked
 * up, per window of 128 driving rows, until a pool of the join adds, moves or removes a row
 * (any entity's), so the next frames of a static join read them instead of looking them up
 * again. Memory: 4 bytes per driving row and looked-up include term (plus 24 bytes and 4 per
 * include per window), allocated at the first iteration that needs a resolved block, counted in
 * heap_bytes, freed with the query; without memory the iterator looks the rows up as before.
 * The entries and their order do not depend on it (batch boundaries may).
 * Either way weft_iter_get works for every term the batch has, without a sparse lookup for
 * AND terms of a block. A query with change filters or OPTIONAL/OR terms hands out runs of
 * consecutive driving rows that pass them; there the terms outside the driving range are
 * looked up per entry by weft_iter_get. Exception: when one change filter on a driving-range
 * term alone decides, scattered matches come as resolved blocks of up to 128 rows (every
 * column NULL) and only a fully changed run of 16 aligned rows or more comes as a run.
 *
 * The one loop a system body writes, for every batch form:
 *     while (weft_iter_next(it))
 *         for (uint32_t i = 0; i < it->rows; i++) {
 *             T *a = weft_iter_get(it, 0, i);  // one per term
 *             ...
 *         }
 * (it->columns[t], when set, is the same data as a plain array, for code that wants to
 * hand a batch to a vectorised routine.) User code never handles raw pool rows.
 *
 * Module-owned components with a row view (weft/module.h; the hierarchy's local, world and
 * link) are terms like any other: their rows may drive (holes skipped) or be looked up, every
 * batch of such a query is a resolved block, and the data is the module's, read in place.
 *
 * Thread: create/destroy are main-only. weft_query_iter/weft_iter_next may run concurrently
 * from any number of jobs (each with its own weft_iter_t) while no structural change runs;
 * they never mutate the query or the world (one exception, invisible to callers: the first
 * iteration with a change filter after main-thread writes sets the written rows' dirty bits,
 * under a claim that other iterators wait on). In debug builds, weft_query_iter checks every term
 * against the access declared by the system running on the calling thread. */
#ifndef WEFT_QUERY_H
#define WEFT_QUERY_H

#include <string.h>

#include "weft/component.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_query weft_query_t; /* opaque; owned by its creator */

#define WEFT_QUERY_MAX_TERMS 16   /* include terms per query */
#define WEFT_QUERY_MAX_EXCLUDES 8 /* exclude components per query */

#include "weft/inline_internal.h" /* iterator state, for the inlined weft_iter_get() */
WEFT_STATIC_ASSERT(WEFT_QUERY_MAX_TERMS == WEFT__ITER_MAX_TERMS &&
                       WEFT_QUERY_MAX_EXCLUDES == WEFT__ITER_MAX_EXCLUDES,
                   "weft/inline_internal.h sizes the iterator for these limits");

typedef enum weft_access {
    WEFT_ACCESS_READ = 0,  /* default: the term's data is only read */
    WEFT_ACCESS_WRITE = 1, /* the term's data is written (implies read) */
    WEFT_ACCESS_COUNT = 2
} weft_access_t;

/* Change filters: a term with a filter matches only rows whose component was added (or, for
 * CHANGED, added or written) after the query's previous run. A system's query runs once per
 * frame it is not skipped; its first run sees every row as added and changed. A standalone
 * query's "previous run" is its last weft_query_mark_seen (none yet: every row passes).
 * What counts as a write of a row, at the tick of the running system (or, outside systems and
 * in command applies, of the world): weft_component_set/set_n and the adds of every kind
 * (add, create_with, add_n, command applies, archive loads, snapshot restores: adds are
 * writes), and every pointer handed out for writing whether or not it is written through:
 * weft_component_get_mut, weft_component_row_mut, and each row a WEFT_ACCESS_WRITE term's
 * batch hands out (declaring write access on a term marks every row the system iterates).
 * Writes from jobs a system starts itself (a nested weft_parallel_for) carry the world's tick
 * of that phase, so the system itself and those after it in the phase see them again at
 * their next run. Row moves keep ticks. When a main-thread write outside systems and a
 * later stamp of an older run's tick meet on one row, the newer tick counts. A query with a filter switches
 * tracking on for that component for the world's life (8 bytes and 1 bit per row, 1 bit
 * and 16 bytes per 32 rows and 8 bytes per 16 rows; without it the write paths pay one test). Main-thread writes outside
 * systems cost a bit per row (set by the next filtered iteration); the first such write at a newer world tick closes the bits'
 * epoch inside weft_component_set/set_n, copying them into row ticks only while a query
 * filtering on the component has not run past them; a changed filter whose window holds
 * only such writes costs about the changed rows, not the pool size.
 * Order: batches come in driving-row order, with one exception. A query whose only filter is
 * CHANGED on a term of the driving range, iterated as one chunk over the whole component
 * (chunk_rows 0, or a chunk holding every row), whose window holds only the main thread's
 * writes outside systems of one epoch (the writes since the world's tick last moved, opened
 * by the first of them), with no row of that component added, removed or moved since that
 * epoch opened and no more rows written than a 32nd of its capacity, yields its rows in the order of their
 * first write in that epoch (each once; weft_iter_t.entities in that order too). Any other
 * iteration, and every chunk of a split one, yields row order. Both orders depend only on
 * the calls made, so they are the same at every worker count and on replay. Two jobs writing one
 * row at once (a data race on the row itself) leave either one's tick.
 * Multi-instance components take no filter. Rows not written for more than 2^30 ticks (a
 * system run takes 2) count as changed for a query that has not run for that long. */
typedef enum weft_change_filter {
    WEFT_CHANGE_NONE = 0,    /* default: every row */
    WEFT_CHANGE_ADDED = 1,   /* rows whose component was added since the previous run */
    WEFT_CHANGE_CHANGED = 2, /* rows added or written since the previous run */
    WEFT_CHANGE_COUNT = 3
} weft_change_filter_t;

/* How a term takes part in matching. A query needs at least one AND term (the driving range
 * is chosen among them). OPTIONAL and OR terms never drive: each batch holds rows that agree
 * on which of them they have (weft_iter_t.present), and their data is reached through
 * weft_iter_get (their column is NULL). Their access counts like any term's, for the schedule
 * and for the access checks. */
typedef enum weft_term_oper {
    WEFT_TERM_AND = 0,      /* default: matched rows have the component */
    WEFT_TERM_OPTIONAL = 1, /* matched rows may lack it */
    WEFT_TERM_OR = 2,       /* consecutive OR terms form one group (at least two terms):
                               matched rows have at least one of them; separate two groups by
                               another term */
    WEFT_TERM_OPER_COUNT = 3
} weft_term_oper_t;

/* How the include terms outside the driving range are found (weft_query_desc_t.join). */
typedef enum weft_query_join {
    WEFT_JOIN_AUTO = 0,  /* default: the planner chooses from costs (below) */
    WEFT_JOIN_PROBE = 1, /* look each driving entity up in the other pools' sparse indices */
    WEFT_JOIN_MERGE = 2, /* merge-join whenever the query allows it (below), else as AUTO */
    WEFT_JOIN_COUNT = 3
} weft_query_join_t;

typedef struct weft_query_term {
    weft_component_t component;  /* required */
    weft_access_t access;        /* 0: read */
    weft_change_filter_t filter; /* 0: none; only on AND terms; terms with filters must all pass */
    weft_term_oper_t oper;       /* 0: AND */
} weft_query_term_t;

/* Lists in descs (here, in weft_system_desc_t and weft_group_desc_t) are fixed arrays that
 * end at their first zero entry (or at the array's end); entries after that zero must stay
 * zero. */
typedef struct weft_query_desc {
    weft_query_term_t terms[WEFT_QUERY_MAX_TERMS];     /* required, at least one; distinct
                                                          components; ends at the first zero */
    weft_component_t exclude[WEFT_QUERY_MAX_EXCLUDES]; /* {0}: none; owners are skipped */
    uint32_t drive;         /* 0: the planner chooses the driving set; t + 1: AND term t's
                               pool drives (all of its rows, the other terms probed unless
                               join is WEFT_JOIN_MERGE) */
    weft_query_join_t join; /* 0 (AUTO): the planner chooses between probing and merge-join */
    uint32_t _canary;       /* must stay 0 */
} weft_query_desc_t;

/* Create a query over `world`. The desc is copied. Errors: WEFT_EINVAL (bad desc, unknown or
 * repeated components, a component both included and excluded, a bad filter or a filter on a
 * multi-instance component or on a term that is not AND, a bad oper, no AND term, an OR
 * group of one term, a multi-instance term that is not AND, a join outside
 * weft_query_join_t; for module-owned components (weft/module.h): one without a row view,
 * written when its module takes no writes, excluded, or beside a change filter, an
 * OPTIONAL/OR term or a multi-instance term), WEFT_ENOMEM (also when a filter's change
 * tracking cannot start).
 * Thread: main. The caller owns *out (weft_query_destroy, or the world frees it at destroy). */
WEFT_API weft_result_t weft_query_create(weft_world_t *world, const weft_query_desc_t *desc,
                                         weft_query_t **out);

/* End the current "previous run" of a standalone query's change filters: from now on they
 * match rows added or written after this call. (A system's query is advanced by the scheduler;
 * calling this on it moves its window too.) NULL is ignored. Thread: main, outside frames. */
WEFT_API void weft_query_mark_seen(weft_query_t *query);

/* Free a query. NULL is ignored. Thread: main. */
WEFT_API void weft_query_destroy(weft_query_t *query);

/* The query's desc as created. Thread: any. */
WEFT_API const weft_query_desc_t *weft_query_desc(const weft_query_t *query);

/* Number of driving rows (an upper bound on matches; the input to chunking). Thread: jobs. */
WEFT_API uint32_t weft_query_rows(const weft_query_t *query);

/* Chunks of chunk_rows driving rows (0 when there are no rows). chunk_rows 0 means one chunk
 * holding everything. Thread: jobs. */
WEFT_API uint32_t weft_query_chunk_count(const weft_query_t *query, uint32_t chunk_rows);

/* Number of entities matching the query (walks every row). Thread: jobs. */
WEFT_API uint32_t weft_query_entity_count(const weft_query_t *query);

/* Destroy every entity `query` matches, as weft_entity_destroy_n over the matching handles
 * collected in iteration order (chunk 0 of one chunk) would: each entity's on_remove hooks
 * fire (its components in id order), then it goes, entity after entity; an owner a
 * multi-instance term repeats is destroyed once. *destroyed (may be NULL) receives the number
 * destroyed (0 on failure). The query stays valid. Errors: WEFT_EINVAL (NULL query),
 * WEFT_ENOMEM (the match list or the free list could not grow: nothing is destroyed).
 * Thread: main, outside frames (WEFT_ESTATE in debug builds otherwise, as entity destroy). */
WEFT_API weft_result_t weft_query_destroy_all(weft_query_t *query, uint32_t *destroyed);

/* ---- iteration ------------------------------------------------------------- >>iter */

/* An iterator over one chunk. Caller-owned storage (e.g. on the job's stack). `_private` is
 * not part of the API (weft/inline_internal.h). */
typedef struct weft_iter {
    uint32_t rows;                       /* rows (entities) in the current batch */
    const uint32_t *entities;            /* entity indices of the batch (rows) */
    void *columns[WEFT_QUERY_MAX_TERMS]; /* term t: contiguous data of the batch, or NULL
                                            (then weft_iter_get) */
    uint32_t term_count;                 /* include terms */
    uint32_t present; /* bit t: every row of the batch has term t (always for AND terms) */
    weft__iter_private_t _private; /* iterator state; not API */
} weft_iter_t;

/* Start iterating chunk `chunk` of `chunk_rows` rows (0: one chunk with everything). A chunk
 * index past the end gives an iterator with no batches. Errors: WEFT_EINVAL (NULL query/it);
 * in debug builds WEFT_EACCESS when called from a system that did not declare a term's access.
 * Thread: jobs (any number concurrently, each with its own iterator). */
WEFT_API weft_result_t weft_query_iter(const weft_query_t *query, uint32_t chunk_rows,
                                       uint32_t chunk, weft_iter_t *it);

/* Advance to the next batch of the chunk; false when the chunk is exhausted (count is then 0).
 * Batches are in driving-row order, except a CHANGED filter's first-write order
 * (weft_change_filter_t). */
WEFT_API bool weft_iter_next(weft_iter_t *it);

/* The handle of batch entry i. */
WEFT_API weft_entity_t weft_iter_entity(const weft_iter_t *it, uint32_t i);

/* True when the batch's rows have term t (OPTIONAL and OR terms; AND terms always). */
static inline bool weft_iter_has(const weft_iter_t *it, uint32_t t) {
    return (it->present >> t) & 1u;
}

/* Term t's data for batch entry i (never NULL; for tags a dummy non-NULL pointer); only for
 * terms the batch has (weft_iter_has). Write through it only for WEFT_ACCESS_WRITE terms.
 * Cost: a column offset, or one read of the block's row for the term, or (runs of a query
 * with change filters or OPTIONAL/OR terms, outside the driving range) a sparse lookup. */
static inline void *weft_iter_get(const weft_iter_t *it, uint32_t t, uint32_t i) {
    const weft__iter_term_t *term = &it->_private.terms[t];
    /* Rows first (when a batch keeps rows for a term they agree with its column): the
     * test's load is then the same on every row, so a body's row loop keeps it out of the
     * loop; with the column test first, gcc -O2 reloaded rows and data on every row
     * (callgrind: 10% fewer instructions in the join3 body of bench/bench_query.c). */
    if (term->rows) {
        return term->data + (size_t)term->rows[i] * term->size;
    }
    if (it->columns[t]) {
        return (unsigned char *)it->columns[t] + (size_t)i * term->size;
    }
    uint32_t idx = it->entities[i];
    uint32_t row = weft__sparse_get(term->sparse[idx >> WEFT__SPARSE_SHIFT],
                                    idx & WEFT__SPARSE_MASK, term->sparse_wide);
    return term->data + (size_t)row * term->size;
}

#ifdef __cplusplus
}
#endif
#endif /* WEFT_QUERY_H */
