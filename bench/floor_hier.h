/* bench/floor_hier.h: the hierarchy floor — the least work that computes a forest's world
 * matrices, against which weft's hierarchy pass is read (hierarchy/hier_<shape>_vs_floor).
 *
 * Nodes sit in one flat array sorted parents first, each with the index of its parent
 * (UINT32_MAX for a root) and its local matrix already composed, inverse bind included:
 *     world[i] = local[i]                        (root)
 *     world[i] = world[parent[i]] * local[i]     (one 4x4 multiply)
 * It lives in its own translation unit, compiled with the flags and floating-point settings
 * of weft's math (-ffp-contract=off, as src/hier/math.c), and multiplies with the same sum order
 * as weft_mat4_mul, so its matrices equal weft's bit for bit. */
#ifndef WEFT_BENCH_FLOOR_HIER_H
#define WEFT_BENCH_FLOOR_HIER_H

#include <stdint.h>

#include "weft/math.h"

/* One pass over n nodes in array order (parents before children). */
void wb_floor_hier_update(const uint32_t *parent, const weft_mat4_t *local, weft_mat4_t *world,
                          uint32_t n);

/* The level order of the arrays above: when every row's depth is at least the previous
 * row's (rows grouped by depth, as the flat and balanced shapes are in creation order),
 * writes the first row of each depth d to level_start[d], n to level_start[levels], and
 * returns levels; returns 0 when the rows are not so grouped or on OOM. level_start holds
 * n + 1 entries. */
uint32_t wb_floor_hier_levels(const uint32_t *parent, uint32_t n, uint32_t *level_start);

#ifdef WB_HAVE_OPENMP
/* The level-parallel floor: wb_floor_hier_update's pass, one level after another, each level's
 * rows split into `threads` equal consecutive parts run by one OpenMP team (one fork per
 * pass), with a barrier between levels: the least a runtime must do to run this pass in
 * parallel, so its speedup over its own 1-thread run is the machine's ceiling for weft's
 * level-parallel pass. Same bits as wb_floor_hier_update. Call from one thread at a time. */
void wb_floor_hier_update_levels(const uint32_t *parent, const weft_mat4_t *local,
                                 weft_mat4_t *world, const uint32_t *level_start, uint32_t levels,
                                 int threads);
#endif

/* The floor of an update after a few local transforms changed: recompute only the nodes
 * list[0, k) (ascending, so parents come first: the changed nodes and their descendants,
 * listed beforehand). A node with changed[i] set first composes local[i] from new_local[i]
 * (weft_mat4_compose: weft's formula and bits), then each multiplies as above. The nodes'
 * lines are prefetched in two stages, as weft's sparse pass fetches its rows: scattered
 * nodes miss the cache on every array, so without it the loop measures memory latency.
 * Why this is the floor: it does only the arithmetic every correct update must do (compose
 * the changed locals, one multiply per affected node), on the full pass's own arrays, with
 * no finding (the list is given). The one layout that would touch fewer lines per node, a
 * record holding a node's local and world matrices side by side, was tried as a standalone
 * loop on this VM and measured no faster within the noise (medians of 31 reps: 0.143 /
 * 0.172 of a full pass separate, 0.143 / 0.158 interleaved, load 3.5); weft cannot use it
 * without giving queries a stride, since its world rows are handed out as a dense array. */
void wb_floor_hier_update_list(const uint32_t *parent, weft_mat4_t *local, weft_mat4_t *world,
                               const uint32_t *list, uint32_t k, const uint8_t *changed,
                               const weft_transform_t *new_local);

/* The best layout found for that update on this VM (no target; context for
 * hierarchy/hier_dirty1_vs_full): nodes in depth-first pre-order, so that a changed subtree is
 * one run of rows and a leaf's parent lies a few rows back, with each node's world matrix and
 * local matrix side by side in one 128-byte record (two adjacent lines, 64-byte aligned).
 * Same arithmetic and bits as the two functions above, same two-stage prefetch. Measured
 * against other layouts of the same tree and changes (breadth-first arrays as above,
 * depth-first arrays, runs walked from a per-node subtree end, records holding the local
 * transform too, no cached local matrix, 2 MB pages) in a throwaway driver on this VM, it gave
 * the lowest update whose full pass is no slower: medians 0.22-0.29 of its own full pass over
 * four runs against 0.30-0.35 for the breadth-first arrays (load 3.5-5, 21-31 reps each);
 * the layouts with the local transform in the record or without a cached local matrix read
 * lower only because their full pass is 1.5-2.5 times slower. weft hands its world rows to
 * queries as a dense array, so it cannot store them in such a record without giving queries
 * a stride. */
typedef struct wb_floor_rec {
    weft_mat4_t world; /* written by the passes */
    weft_mat4_t local; /* inverse bind * compose(local), as `local` above */
} wb_floor_rec_t;

/* wb_floor_hier_update over records (parent indices in the records' order). */
void wb_floor_hier_update_rec(const uint32_t *parent, wb_floor_rec_t *rec, uint32_t n);

/* wb_floor_hier_update_list over records. */
void wb_floor_hier_update_rec_list(const uint32_t *parent, wb_floor_rec_t *rec,
                                   const uint32_t *list, uint32_t k, const uint8_t *changed,
                                   const weft_transform_t *new_local);

#endif /* WEFT_BENCH_FLOOR_HIER_H */
