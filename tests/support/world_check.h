/* world_check.h: whole-world invariant checks and a digest of everything observable, through
 * the public API only (so every suite may use them, and they hold the library to its headers).
 *
 * Thread: main, between frames. */
#ifndef WEFT_TESTS_WORLD_CHECK_H
#define WEFT_TESTS_WORLD_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft.h"
#include "weft/hierarchy.h"

/* Check every invariant visible through the API; on the first violation write a message into
 * err (cap bytes) and return false.
 * - pools: every row's entity is alive, has the component, get() is the row's data;
 *   entity_count equals the live slots found by weft_entity_from_index();
 * - groups: rows [0, n) of every member hold the same entities (weft_group_entities), which
 *   have every member; no entity beyond row n of the first member has all members;
 * - hierarchy (when its components are registered): weft_hier_order lists hier_count live
 *   nodes, each parent before its children, every parent is a node, the node tag pool holds
 *   exactly the nodes. */
bool wt_world_check(weft_world_t *world, char *err, size_t cap);

/* A 64-bit digest of the observable state: weft_world_hash() plus what it does not cover
 * (hierarchy order, local transforms, parent links and world matrices, group sizes, the
 * system count). Two worlds with equal digests answer every read the same way. */
uint64_t wt_world_digest(weft_world_t *world);

#endif /* WEFT_TESTS_WORLD_CHECK_H */
