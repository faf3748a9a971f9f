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
