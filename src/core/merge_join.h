/* merge_join.h: the merge-join plan of a query over entity-ordered pools (private to the
 * build; query.c plans and hooks it in).
 *
 * DESIGN
 * When every include pool of a plain query (no change filter, no OPTIONAL/OR term, no
 * multi-instance term, no group driving, no forced drive) keeps its rows ascending by entity
 * index (weft__pool_t.ascending), the matches are the intersection of sorted lists. The
 * iterator still walks the same driving range (the chosen driving pool's rows, chunked the
 * same way) and hands out entries in driving-row order; only the way it finds the other
 * pools' rows differs: one cursor per include pool, advanced by galloping (exponential then
 * binary search) to the next entity at or past the candidate, and the driving pool gallops
 * too when another pool is ahead (a leapfrog join). Matches are cut into batches of the
 * usual two forms (query.h): a run of at least 16 entries whose rows step by one in every
 * pool gets columns; other matches go into resolved blocks of up to WEFT__ITER_BLOCK entries
 * with each include's rows, so system bodies see no difference. Excludes are probed per match
 * through their sparse index.
 *
 * Cost (weft__merge_join_cost): in the query planner's unit (one driving-row visit). The
 * entities any match can have lie in [lo, hi], lo the largest first entity and hi the
 * smallest last entity of the pools (binary searches give each pool's rows in it). How much
 * galloping the join needs depends on how the pools interleave, which counts cannot tell, so
 * the estimate runs the join itself over 4 evenly spaced windows of 128 driving rows in
 * range (all of them when there are at most 512), counting gallop probes and candidates, and
 * scales by the driving rows crossed: cost = (1.25 * probes + 3.5 * candidates) scaled.
 * The two weights are measured (merge_join.c). The planner takes the merge-join when this is
 * below the probe plan's cost of the same driving pool, rows * (1 + 2 * probed terms); it
 * keeps the answer per query until a pool of the join changes layout (weft__merge_join_key),
 * so the sample runs once per layout, not per chunk. A stale or colliding key can only pick
 * the slower plan, never change the entries. */
#ifndef WEFT_SRC_MERGE_JOIN_H
#define WEFT_SRC_MERGE_JOIN_H

#include "pool.h"

/* Estimated cost of a merge-join of pools[0, n) (n >= 2, every one ascending). O(n log rows).
 * Thread: any, while the main thread makes no structural change. */
uint64_t weft__merge_join_cost(const weft__pool_t *const *pools, uint32_t n);

/* A hash of the pools' layout counts, row counts and ids: changes whenever a row of one of
 * them is added, moved or removed. Thread: any (as above). */
uint64_t weft__merge_join_key(const weft__pool_t *const *pools, uint32_t n);

/* Start merge-join iteration on an iterator whose includes checks were placed by the planned
 * setup (query.c, pools ascending). */
void weft__merge_join_begin(weft_iter_t *it);

/* The next batch of a merge-join iterator (weft_iter_next's contract; base as query.c's
 * next_batch: per term the pool row of the batch's first entry when the term is a column,
 * else WEFT__ROW_NONE; may be NULL). Returns false at the chunk's end. */
bool weft__merge_join_next(weft_iter_t *it, uint32_t *base);

#endif /* WEFT_SRC_MERGE_JOIN_H */
