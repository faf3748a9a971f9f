/* group.h: group alignment hooks called by the pool mutators (private to the build).
 *
 * A group owns its member pools' row prefix [0, n). The component mutators call these after
 * pushing a row into a member pool and before removing one, which keeps the prefix exactly
 * "the entities that have every member", in O(members) row swaps per change and group of
 * the pool's chain (nested groups, group.c). */
#ifndef WEFT_SRC_GROUP_H
#define WEFT_SRC_GROUP_H

#include "world.h"

/* Entity index idx was just pushed into a member pool of group g (that pool's `group`): it
 * enters every group of g's chain it now qualifies for, from the outermost in. Returns its row
 * in g's member pools when it is then in g's prefix, or WEFT__ROW_NONE when it lacks a member
 * (no row of g's pools moved), which saves callers a sparse lookup. */
uint32_t weft__group_on_add(weft_world_t *world, uint32_t g, uint32_t idx);

/* Entity index idx is about to leave a member pool whose `group` is g: if it is in g's
 * prefix, it leaves the groups inside g it is in and then g, from the innermost out (each step
 * swaps it to the end of that group's prefix). Returns its row in g's member pools then, or
 * WEFT__ROW_NONE when it was not in g's prefix (no row moved). */
uint32_t weft__group_on_remove(weft_world_t *world, uint32_t g, uint32_t idx);

/* True when pool is one of group g's members. */
bool weft__group_has(const weft_world_t *world, uint32_t g, const weft__pool_t *pool);

/* Create an automatic group over ids (sorted, distinct, eligible: auto_group.c checks) after
 * the existing groups, nesting with the chain it shares pools with. Returns its id, or 0 when
 * it does not fit (63 groups, or it does not nest): the planner never asks for those.
 * Allocates nothing. Thread: main. */
uint32_t weft__group_make_auto(weft_world_t *world, const uint32_t *ids, uint32_t count);

/* Drop every automatic group (ids after world->user_groups): their pools become ungrouped,
 * rows stay where they are (any order is a valid ungrouped pool), join caches on those pools
 * re-key; marks them for re-planning when the setting is on. Thread: main, no frame running. */
void weft__group_drop_auto(weft_world_t *world);

/* True when a user group holds the pool (ordered operations refuse it; automatic groups do not
 * count: see weft__group_yield_pool). */
bool weft__group_user_owned(const weft_world_t *world, const weft__pool_t *pool);

/* An ordered operation (sort, move_row, remove_ordered) that passed its checks is about to
 * order comp's pool (not user-owned): the pool becomes the user's to order, automatic
 * grouping leaves it alone from now on, and if an automatic group held it the automatic
 * groups are dropped (no row moves; re-planned before the next frame around it).
 * Thread: main. */
void weft__group_yield_pool(weft_world_t *world, weft__component_t *comp);

/* True when every id of a (count_a ids, sorted ascending) is in b (sorted ascending). */
bool weft__ids_subset(const uint32_t *a, uint32_t count_a, const uint32_t *b, uint32_t count_b);

/* True when the group's invariant holds (debug and tests: O(n * members)). */
bool weft__group_check(const weft_world_t *world, uint32_t g);

#endif /* WEFT_SRC_GROUP_H */
