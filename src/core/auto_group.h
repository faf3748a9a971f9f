/* auto_group.h: automatic grouping — nested group chains derived from the registered systems'
 * include terms (private to the build; the setting is in weft/group.h).
 *
 * DESIGN
 * The scheduler hands the planner one component set per registered system (its AND terms)
 * and the planner chooses, pool by pool, the nested chains of automatic groups to make:
 * - Candidates: the distinct sets of 2 .. WEFT_GROUP_MAX_COMPONENTS components whose pools are
 *   one-row-per-entity, not module-owned, not in a user group (the user's groups win) and not
 *   ordered by the user (sort, move_row, remove_ordered: the user's order is kept). The first
 *   WEFT__AUTO_CANDIDATES distinct sets count; later ones are not grouped.
 * - Weight of a candidate: the rows its systems iterate per frame, estimated from counts at
 *   planning time as (systems with exactly that set) x (1 + the smallest count among its
 *   pools): a system over S visits at most that many rows, which is the bound the query
 *   planner drives from; the 1 makes systems registered before any entity exists count by
 *   their number.
 * - A chain is a sequence of candidates each a strict subset of the next; its weight is the
 *   sum of its members'. The heaviest chain is taken (ties: the one ending at the candidate
 *   with fewer components, then the smaller ids), every candidate sharing a component with
 *   it is dropped (a pool serves one chain), and the next heaviest is taken from what is
 *   left, until none is left or the world's 63 groups are used.
 * Why a pool serves one chain: two chains sharing a pool X ({P,V} and {P,H} on P) would need X
 * ordered in segments, one per family, each aligned row by row with its family's other pools.
 * A pool has no spare rows, so when the pools are tight (every V and H entity in its family,
 * every P entity in one of the two) X is exactly [first segment][second segment], and an add
 * that grows the first family must shift the whole second segment by one row of X while the
 * rows of its other pools (H) stay where they are: Omega(rows of the second family) moves for
 * one add. Moving only the boundary row (first to last) keeps the segment contiguous but
 * breaks its alignment with H. Single aligned runs for both families need spare rows in X
 * (reserved rows between segments, which every pool reader would have to skip) or per-family
 * storage of X; aligning a family in several runs instead needs periodic O(rows) re-packing.
 * A cheaper step than segments, measured but not built (a throwaway driver over the internal
 * API, the bench's auto_groups world, 1M entities): leave the second family's pool X as it is
 * and only keep X's rows past its chain's prefix in the order of the family's driving pool F
 * ({P,H}: P's rows past the {P,V} prefix in H's row order). No invariant is needed: those rows
 * belong to no group, so any order is valid, and the query then finds the {P,H} windows in
 * step and hands out columns (query.c, cached_batch). A re-pack walks F's rows once, swapping
 * each entity's X row to the next tail row. Callgrind: the frame 24.2M -> 15.2M instructions
 * (19.4 -> 12.2 per row visited), a re-pack 83.7M from entity order (167 per row moved) and
 * 18.0M when already packed (36 per F row). Wall clock (load 6-7, so spread): the frame's
 * ratio to the raw loops 2.1-2.9 -> 1.10-1.14 after a re-pack; a re-pack 51-56 ms from entity
 * order, 2.8-7.3 ms when nearly packed. But churn undoes it: 1% of F's entities removed and
 * re-added left 277k of the 500k {P,H} rows in column batches (each removal moves F's last
 * row into the hole and breaks that window). So a product version needs a re-pack rule from
 * costs (rent or buy: estimate the rows each frame probes instead of reading columns from the
 * layout writes of X and F since the last re-pack, and re-pack once the probing lost since then
 * exceeds a re-pack's cost), F ordered too (entities of F whose X row is in the prefix placed
 * last), and the re-pack run between frames (it moves rows, like the group hooks).
 * Applying compares the result with the automatic groups that exist and, when it differs,
 * drops them and creates the new ones outermost first (O(rows of the pools involved)).
 * Planning reads counts only when it runs: when a system registers or unregisters, when the
 * setting is turned on (again), and before the first frame after the automatic groups were
 * dropped (a user group created, a user-ordered pool, a snapshot of an older plan restored).
 * Iteration order inside the pools changes with the plan; what systems compute per entity
 * does not. */
#ifndef WEFT_SRC_AUTO_GROUP_H
#define WEFT_SRC_AUTO_GROUP_H

#include "world.h"

#define WEFT__AUTO_CANDIDATES 64 /* distinct component sets a plan weighs */

typedef struct weft__auto_set {
    uint32_t ids[WEFT_GROUP_MAX_COMPONENTS]; /* sorted ascending */
    uint32_t count;                          /* components */
    uint32_t systems;                        /* systems whose AND terms are exactly this set */
} weft__auto_set_t;

/* The systems' sets gathered for one plan (zero it to start; lives on the caller's stack). */
typedef struct weft__auto_plan {
    uint32_t count;
    weft__auto_set_t sets[WEFT__AUTO_CANDIDATES];
} weft__auto_plan_t;

/* Count one system whose AND terms are ids[0 .. count) (any order). Sets that cannot be a
 * group (see DESIGN) are ignored. Thread: main. */
void weft__auto_plan_add(const weft_world_t *world, weft__auto_plan_t *plan, const uint32_t *ids,
                         uint32_t count);

/* Choose the chains for `plan` and make the world's automatic groups those (nothing moves when
 * they already are); clears world->auto_stale. Allocates nothing, cannot fail. With the
 * setting off it only drops the automatic groups. Thread: main, no frame running. */
void weft__auto_plan_apply(weft_world_t *world, const weft__auto_plan_t *plan);

#endif /* WEFT_SRC_AUTO_GROUP_H */
