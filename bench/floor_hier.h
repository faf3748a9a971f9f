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

#endif /* WEFT_BENCH_FLOOR_HIER_H */
