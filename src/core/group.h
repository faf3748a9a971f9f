/* group.h: group alignment hooks called by the pool mutators (private to the build).
 *
 * A group owns its member pools' row prefix [0, n). The component mutators call these after
 * pushing a row into a member pool and before removing one, which keeps the prefix exactly
 * "the entities that have every member", in O(members) row swaps per change. */
#ifndef WEFT_SRC_GROUP_H
#define WEFT_SRC_GROUP_H

#include "world.h"

/* Entity index idx was just pushed into a member pool of group g: if it now has every
 * member, swap it into the prefix of each member pool. Returns the row it then holds in every
 * member pool, or WEFT__ROW_NONE when it lacks a member (no row moved), which saves callers
 * a sparse lookup. */
uint32_t weft__group_on_add(weft_world_t *world, uint32_t g, uint32_t idx);

/* Entity index idx is about to leave a member pool of group g: if it is in the prefix, swap
 * it out (to row n - 1, then n shrinks) in each member pool. Returns that row, or
 * WEFT__ROW_NONE when it was not in the prefix (no row moved). */
uint32_t weft__group_on_remove(weft_world_t *world, uint32_t g, uint32_t idx);

/* True when the group's invariant holds (debug and tests: O(n * members)). */
bool weft__group_check(const weft_world_t *world, uint32_t g);

#endif /* WEFT_SRC_GROUP_H */
