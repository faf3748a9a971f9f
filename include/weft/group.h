/* weft/group.h: groups — sets of component pools kept aligned for joins.
 *
 * A group over components {A, B, ...} keeps rows [0, n) of every member pool holding the same
 * entities in the same order: exactly the entities that have every member. Adding the last
 * missing member to an entity, or removing a member from one inside the group, swaps rows in
 * each member pool (O(members) per change). Iterating the group is a walk over plain parallel
 * arrays with no lookups. Groups last for the world's lifetime.
 *
 * Nested groups: groups whose member sets nest ({P,V} c {P,V,M} c {P,V,M,T}) share their pools
 * as a chain; each iterates dense columns, because the rows of the larger set are a prefix of
 * the smaller set's rows in every pool they share. An entity change costs O(members) swaps per
 * group of the chain it enters or leaves. Groups that share a component without one containing
 * the other cannot both be aligned and are refused (WEFT_ECONFLICT, naming both).
 * Queries use a group automatically when all of its members are among their AND terms (the
 * cheapest such group or pool drives, weft/query.h).
 *
 * Thread: create is main-only; the readers may run from jobs while no structural change runs. */
#ifndef WEFT_GROUP_H
#define WEFT_GROUP_H

#include "weft/component.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_group {
    uint32_t id; /* 1-based; 0 is invalid */
} weft_group_t;

#define WEFT_GROUP_MAX_COMPONENTS 8

typedef struct weft_group_desc {
    weft_component_t components[WEFT_GROUP_MAX_COMPONENTS]; /* the members: 2 or more,
                                                               distinct; the list ends at the
                                                               first zero (weft/query.h) */
    uint32_t _canary;                                       /* must stay 0 */
} weft_group_desc_t;

/* Create a group; entities that already have every member are aligned at once (O(rows of the
 * smallest member)). Creating a group with the same member set again returns the same id.
 * Errors: WEFT_EINVAL (bad desc, unknown or repeated ids), WEFT_ECONFLICT (the set shares a
 * component with a group and neither contains the other, or it would nest with two groups
 * that do not nest with each other; the message names both groups), WEFT_ECAPACITY (63 groups
 * exist); nothing changes on error (creation allocates nothing). Thread: main. */
WEFT_API weft_result_t weft_group_create(weft_world_t *world, const weft_group_desc_t *desc,
                                         weft_group_t *out);

/* The outermost group (fewest members) `c`'s pool belongs to, or {0}; the groups nested in it
 * may have the pool too. Thread: main (or jobs). */
WEFT_API weft_group_t weft_group_of(const weft_world_t *world, weft_component_t c);

/* Aligned rows n: entities having every member. 0 for an invalid group. Thread: main (or jobs). */
WEFT_API uint32_t weft_group_rows(const weft_world_t *world, weft_group_t g);

/* Entity indices of rows [0, n), shared by all members (weft_entity_from_index() gives the
 * handle). Valid until the next structural change of a member. Thread: main (or jobs). */
WEFT_API const uint32_t *weft_group_entities(const weft_world_t *world, weft_group_t g);

/* Member c's data column: rows [0, n) line up with weft_group_entities(). NULL when c is not a
 * member. In debug builds a system needs write access (read access for the const version).
 * Valid until the next structural change of a member. Thread: main (or jobs). */
WEFT_API void *weft_group_column_mut(weft_world_t *world, weft_group_t g, weft_component_t c);
WEFT_API const void *weft_group_column(const weft_world_t *world, weft_group_t g,
                                       weft_component_t c);

/* ---- automatic grouping ------------------------------------------------ >>auto_groups */

/* Automatic grouping (off by default). When on, weft makes nested group chains itself from
 * the AND terms of the registered systems: for each set of components some systems iterate,
 * weighted by the rows those systems visit per frame (estimated when planning as the number
 * of such systems x (1 + the smallest count among the set's pools)), it takes the heaviest
 * chain of nested sets ({P,V} c {P,V,M}), then the heaviest among the sets sharing no
 * component with it, and so on (a pool serves one chain), up to the world's 63 groups.
 * Those groups drive queries like user groups do, so a frame of systems over {P,V} and
 * {P,V,M} iterates dense columns with no group code. Re-planned (from the counts of that
 * moment) when a system registers or unregisters, when the setting is turned on (calling it
 * with true again re-plans), and before the next frame after the automatic groups were
 * dropped. Only the order of rows inside pools differs from the setting being off: what
 * systems compute per entity is the same, but row order, and so weft_world_hash, may
 * differ. A re-plan moves rows (O(rows of the pools involved)).
 * A set left out of the chains because it shares a pool with one ({P,H} beside {P,V}) is a
 * packed family when it holds no chosen group and has a pool in no chain: weft keeps its
 * rows outside the group prefixes in one order by re-packing them before a frame when the
 * rows its systems probed instead of reading columns (estimated from the rows added, moved
 * and removed since the last re-pack) have cost about what a re-pack does, and not under
 * churn that would undo a re-pack within a frame; its systems then iterate columns too.
 * A re-pack moves rows (O(rows of the family)) and, like a re-plan, only changes row order.
 * Rules with the user's own calls: the user's groups win: weft_group_create sees only user
 * groups (its errors and ids are as with the setting off) and drops the automatic groups,
 * which are re-planned around it before the next frame; sets sharing a pool with a user group
 * are not grouped. A pool the user orders (weft_component_sort, _move_row, remove_ordered)
 * is the user's from then on: the call drops the automatic groups instead of failing, and
 * automatic grouping leaves that pool alone. weft_group_of() reports automatic groups too;
 * their ids come after every user group's and are valid until the next re-plan.
 * Multi-instance and module-owned components, and sets of more than 8 components, are never
 * grouped; the first 64 distinct sets are weighed. Errors: WEFT_EINVAL (NULL world),
 * WEFT_ESTATE (called during weft_world_progress); allocates nothing. Thread: main. */
WEFT_API weft_result_t weft_world_set_auto_groups(weft_world_t *world, bool on);

/* The automatic grouping setting. Thread: main (or jobs). */
WEFT_API bool weft_world_auto_groups(const weft_world_t *world);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_GROUP_H */
