/* query.h: query planning for the scheduler (private to the build).
 *
 * DESIGN
 * weft_query_iter() plans from the data on every call. The scheduler plans each system's
 * query once per phase, while no structural change can happen (those wait for the phase-end
 * apply), and reuses the plan for the row count, the chunk count and every chunk's iterator;
 * the result is the same iterator weft_query_iter() would give. */
#ifndef WEFT_SRC_QUERY_H
#define WEFT_SRC_QUERY_H

#include "weft/query.h"

struct weft__pool;

typedef struct weft__query_plan {
    const struct weft__pool *drive; /* pool whose dense array drives; NULL: a module's row
                                       view drives (query_view.h) */
    uint32_t rows;                  /* driving rows */
    uint16_t group;                 /* driving group id (< WEFT__MAX_GROUPS), 0: a pool drives;
                                       when drive is NULL, 1 + the term whose view drives */
    uint16_t merge;                 /* 1: the includes are merge-joined (merge_join.h); the
                                       two halves keep a plan in a system's hot cache line */
} weft__query_plan_t;

/* Plan `q` from the current data; returns plan->rows. The plan stays valid until the next
 * structural change of the world (entity/component add/remove, group create, pool growth).
 * Thread: any, while the main thread makes no structural change. */
uint32_t weft__query_plan(const weft_query_t *q, weft__query_plan_t *plan);

/* Start a system run of `q` at `tick` (main thread, when the scheduler prepares the system):
 * from now on its iterators' change window is the rows newer than the previous run (every row
 * at the first run) and write terms stamp `tick`; this run becomes the previous one for the
 * next. Only for a system's own query (then standalone iteration of it uses the same
 * window). */
void weft__query_begin_run(weft_query_t *q, uint32_t tick);

/* Clamp the previous-run ticks of the world's queries to no older than `floor` (change.c). */
void weft__query_clamp_since(struct weft_world *world, uint32_t floor);

/* True when some query with a change filter on `pool` has a window older than `tick` (a
 * row written at `tick` is newer than its previous run), so a write at `tick` must keep its
 * tick (change.c). Queries with no previous run pass every row and need no tick. Thread:
 * main. Cost: one pass over the world's queries. */
bool weft__query_window_before(struct weft_world *world, const struct weft__pool *pool,
                               uint32_t tick);

/* weft_query_iter() with a plan made by weft__query_plan() (q non-NULL, plan still valid). */
/* A batch's presence bits and its driving-range terms from driving row `start`: columns when
 * the batch is gapless, else the driving rows kept in block_drive; every other term's column
 * and base cleared for the plan to set (query.c's probe plan, merge_join.c). */
void weft__query_drive_terms(weft_iter_t *it, uint32_t start, bool gapless, uint32_t *base);

void weft__query_iter_planned(const weft_query_t *q, const weft__query_plan_t *plan,
                              uint32_t chunk_rows, uint32_t chunk, weft_iter_t *it);

/* Bytes (a multiple of 64, its alignment) of the storage weft__query_create_at fills. */
size_t weft__query_bytes(void);

/* weft_query_create into caller storage (weft__query_bytes() bytes, 64-aligned, owned by the
 * caller): the scheduler keeps its systems' queries beside their records. Same checks and
 * errors; on failure nothing is linked. End it with weft__query_fini, never
 * weft_query_destroy. Thread: main. */
weft_result_t weft__query_create_at(struct weft_world *world, const weft_query_desc_t *desc,
                                    void *storage, weft_query_t **out);

/* Unlink a query made by weft__query_create_at and free its join cache; its storage stays
 * the caller's (weft_query_destroy is this plus freeing a weft_query_create query). */
void weft__query_fini(weft_query_t *q);

/* The world `q` was created on (q non-NULL). Thread: any. */
struct weft_world *weft__query_world(const weft_query_t *q);

#endif /* WEFT_SRC_QUERY_H */
