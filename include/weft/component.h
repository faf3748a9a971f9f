/* weft/component.h: components — run-time registered types stored in one pool per type.
 *
 * A pool holds a dense array of entity indices, a dense data array (size/align from the
 * registration) and a paged sparse index (entity index -> row). add/has/get/remove are O(1);
 * remove swaps the last row in; remove_ordered and move_row keep the relative order of the
 * other rows (the hierarchy's ordered pools). Rows are renumbered by structural changes, so a
 * row number or data pointer is valid only until the next structural change of that pool.
 *
 * Reading through a null or stale handle is legal (get returns NULL, has false); mutating
 * through one returns WEFT_ESTALE. Unknown component ids are errors (WEFT_EINVAL).
 *
 * Thread: registration and every structural call (add, set, remove, move, sort, reserve) are
 * main-thread only; debug builds return WEFT_ESTATE when one is made from another thread,
 * from inside a system or from inside a hook (weft/world.h). get, get_mut, has and the row
 * readers may run concurrently from jobs while no structural change runs; in debug builds they
 * check the running system's declared access and, having no error code to return, abort on
 * an undeclared one, naming the system and the component. */
#ifndef WEFT_COMPONENT_H
#define WEFT_COMPONENT_H

#include "weft/entity.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A component id: 1 .. WEFT_MAX_COMPONENTS - 1 in registration order; {0} is invalid. */
typedef struct weft_component {
    uint32_t id;
} weft_component_t;

/* Ids are < WEFT_MAX_COMPONENTS (id 0 is invalid): 65,536 component types (resources
 * included) per world. The world's per-type tables grow with the registrations, so a world
 * with few types pays for few. */
#define WEFT_MAX_COMPONENTS 65537u
#define WEFT_COMPONENT_MAX_ENTITY_FIELDS 8 /* entity-handle fields per component */
#define WEFT_COMPONENT_MAX_ALIGN 4096      /* largest accepted alignment */
#define WEFT_COMPONENT_NAME_MAX 63         /* bytes of a component name (longer: EINVAL) */

/* Registration flags. */
#define WEFT_COMPONENT_MULTI 1u /* several instances per entity (see "multi-instance" below) */

/* A hook: `ptr` is the component's data (for tags, a non-NULL pointer to nothing).
 * on_add fires after the zero-initialised row exists; on_set after weft_component_set copied
 * the value in; on_remove before the row goes away (also on entity destroy). Hooks run on the
 * thread making the change (main, or the command-buffer apply). A hook may read and write
 * component data but must not make structural changes (debug builds assert). */
typedef void (*weft_component_hook_t)(weft_world_t *world, weft_entity_t e, weft_component_t c,
                                      void *ptr, void *user);

typedef struct weft_component_desc {
    const char *name;                /* required, 1..WEFT_COMPONENT_NAME_MAX bytes; copied */
    size_t size;                     /* 0: a tag (no data; get returns a non-NULL dummy) */
    size_t align;                    /* 0: the largest power of two dividing size, max 16 */
    uint32_t flags;                  /* 0: one instance per entity; WEFT_COMPONENT_MULTI */
    weft_component_hook_t on_add;    /* NULL: none */
    weft_component_hook_t on_remove; /* NULL: none */
    weft_component_hook_t on_set;    /* NULL: none */
    void *hook_user;                 /* passed to the hooks unchanged */
    uint32_t entity_field_count;     /* 0: no fields hold weft_entity_t handles */
    uint32_t entity_fields[WEFT_COMPONENT_MAX_ENTITY_FIELDS]; /* byte offsets of weft_entity_t
                                       fields (archives and command buffers remap
                                       them); each + 8 <= size */
    uint32_t version; /* 0: schema version 1 (archives compare it) */
    uint32_t _canary; /* must stay 0 */
} weft_component_desc_t;

/* Register a component, or find it again: the same name with the same size and align returns
 * the existing id (hooks and fields of the first registration stay). A different size or
 * alignment for a known name is WEFT_ECONFLICT. Other errors: WEFT_EINVAL (bad desc),
 * WEFT_ECAPACITY (WEFT_MAX_COMPONENTS - 1 = 65,536 types registered, or, for a
 * WEFT_COMPONENT_MULTI one, 255 multi-instance types), WEFT_ENOMEM. Thread: main. */
WEFT_API weft_result_t weft_component_register(weft_world_t *world,
                                               const weft_component_desc_t *desc,
                                               weft_component_t *out);

/* The id registered under `name`, or {0}. Thread: main (or jobs). */
WEFT_API weft_component_t weft_component_lookup(const weft_world_t *world, const char *name);

/* Number of registered components; valid ids are 1 .. this number. Thread: main (or jobs). */
WEFT_API uint32_t weft_component_type_count(const weft_world_t *world);

/* Copy the registration of `c` into *out (name points into world storage, valid for the
 * world's life; align and version resolved). Errors: WEFT_EINVAL (unknown id).
 * Thread: main (or jobs). */
WEFT_API weft_result_t weft_component_describe(const weft_world_t *world, weft_component_t c,
                                               weft_component_desc_t *out);

/* ---- per-entity access --------------------------------------------------- >>component */

/* A module-owned component (weft/module.h, e.g. the hierarchy's `local`) keeps its data in
 * its module: get/has/get_mut/set below go through the module, and every call that would
 * add or remove one of its rows returns WEFT_ESTATE (nothing changes). */

/* Add `c` to `e`, zero-initialised; on_add fires. *ptr (if ptr is non-NULL) receives the data
 * pointer, valid until the next structural change of the pool. Errors: WEFT_ESTALE, WEFT_EINVAL
 * (unknown c), WEFT_EEXIST (already there; nothing changes;
 * logged at WEFT_LOG_DEBUG only, as an expected outcome), WEFT_ENOMEM, WEFT_ECAPACITY
 * (too many distinct component sets); on error the world is unchanged. Thread: main. */
WEFT_API weft_result_t weft_component_add(weft_world_t *world, weft_entity_t e, weft_component_t c,
                                          void **ptr);

/* Copy `value` (size bytes of the registration; ignored for tags) into `e`'s `c`, adding it
 * first if absent (then on_add fires before the copy); on_set fires after. Errors as
 * weft_component_add, except that an existing component is replaced, plus WEFT_EINVAL when
 * a declared entity field holds a command-buffer placeholder (weft/command.h). Thread: main. */
WEFT_API weft_result_t weft_component_set(weft_world_t *world, weft_entity_t e, weft_component_t c,
                                          const void *value);

/* `e`'s data for `c`, read-only; NULL when `e` is null/stale or lacks `c` (or c is unknown).
 * Never allocates, never mutates. Thread: main, or jobs (a system must declare read or write
 * access to c; checked in debug builds). */
WEFT_API const void *weft_component_get(const weft_world_t *world, weft_entity_t e,
                                        weft_component_t c);

/* As weft_component_get, writable; fires no hook. A system must declare write access. */
WEFT_API void *weft_component_get_mut(weft_world_t *world, weft_entity_t e, weft_component_t c);

/* True when `e` is alive and has `c`. Thread: as weft_component_get. */
WEFT_API bool weft_component_has(const weft_world_t *world, weft_entity_t e, weft_component_t c);

/* Remove `c` from `e` (on_remove fires first); the pool's last row takes its place.
 * Errors: WEFT_ESTALE, WEFT_EINVAL, WEFT_ENOENT (absent; logged at
 * WEFT_LOG_DEBUG only), WEFT_ENOMEM (rare: a new component
 * set had to be interned). Thread: main. */
WEFT_API weft_result_t weft_component_remove(weft_world_t *world, weft_entity_t e,
                                             weft_component_t c);

/* As weft_component_remove, but the rows after it shift down one, keeping their order
 * (O(rows after)). Errors additionally: WEFT_ESTATE when c's pool belongs to a group.
 * Thread: main. */
WEFT_API weft_result_t weft_component_remove_ordered(weft_world_t *world, weft_entity_t e,
                                                     weft_component_t c);

/* ---- bulk calls ------------------------------------------------------------ >>bulk */

/* The bulk calls do in one call what a loop of single-entity calls does, and leave the world
 * those calls would leave, row for row (weft_world_hash is identical): "the equivalent single
 * calls" below. They check every argument and reserve all memory (entity slots, each pool's
 * rows, sparse pages, component-set transitions) before the first change, so on any error the
 * world is exactly as it was and nothing of the batch happened (all or nothing). Then rows are
 * written in runs, and hooks fire once everything of the batch is in place: a hook sees every
 * entity of the batch with its new rows (it may read them; the rules for hooks are unchanged).
 * Multi-instance components are refused by create/add/set (WEFT_EINVAL: use
 * weft_component_add_instance). In the arrays, a null or stale handle is WEFT_ESTALE and the
 * same entity twice is WEFT_EINVAL; the message names the array position. Thread: main,
 * outside frames (as the single calls: a call from a system, a hook or another thread is
 * WEFT_ESTATE in debug builds). */

/* Create n entities, each with the `count` distinct components components[0..count), into
 * out[0..n) (caller-owned, n handles; zeroed on failure). values may be NULL (every component
 * zero-initialised); otherwise values[j] is NULL (component j zero-initialised) or points at n
 * packed values of component j's registered size, value i for out[i] (ignored for tags). The
 * caller keeps ownership of components, values and out; nothing is retained.
 * Equivalent single calls: weft_entity_create_n(world, n, out), then for each i in order and
 * each j in order weft_component_set(out[i], components[j], value i of values[j]), or
 * weft_component_add when values[j] is NULL. Rows of the batch are contiguous in every pool (in
 * a group's prefix when all of the group's members are among the components).
 * Hooks, per component j in the given order: on_add for out[0..n) in order (the row is zeroed
 * at that time), then component j receives its values, then on_set for out[0..n) in order (only
 * when values[j] is given). A component without on_add holds its value from the start.
 * Errors: WEFT_EINVAL (out, or components with count > 0, is NULL; an unknown, repeated or
 * multi-instance component; a value whose declared entity field holds a command placeholder),
 * WEFT_ECAPACITY (entity_limit, pool size, or too many distinct component sets), WEFT_ENOMEM;
 * on error the world is unchanged. n == 0 creates nothing. */
WEFT_API weft_result_t weft_entity_create_with(weft_world_t *world, uint32_t n,
                                               const weft_component_t *components, uint32_t count,
                                               const void *const *values, weft_entity_t *out);

/* Add `c`, zero-initialised, to every entity of es[0..n). Equivalent single calls:
 * weft_component_add(es[i], c) for i in order. Hooks: on_add for es[0..n) in order, after
 * every row is in place. Errors: WEFT_EINVAL (es NULL with n > 0, unknown or multi-instance c,
 * an entity twice), WEFT_ESTALE (a null or stale handle), WEFT_EEXIST (an entity already has
 * c: unlike the single call, the whole batch is refused), WEFT_ECAPACITY, WEFT_ENOMEM; on
 * error the world is unchanged. */
WEFT_API weft_result_t weft_component_add_n(weft_world_t *world, const weft_entity_t *es,
                                            uint32_t n, weft_component_t c);

/* Copy value i of `values` (n packed values of c's size; may be NULL for a tag) into es[i]'s
 * c, adding c first where absent. Equivalent single calls: weft_component_set(es[i], c, value i)
 * for i in order. Hooks: on_add for the entities that lacked c, in array order, after every
 * row is in place (rows zeroed); then every value is copied; then on_set for es[0..n) in
 * order. Errors: as weft_component_add_n, without WEFT_EEXIST (present components are
 * overwritten), plus WEFT_EINVAL for values NULL on a sized component or a value whose
 * declared entity field holds a command placeholder. */
WEFT_API weft_result_t weft_component_set_n(weft_world_t *world, const weft_entity_t *es,
                                            uint32_t n, weft_component_t c, const void *values);

/* Remove `c` from every entity of es[0..n) (every instance, for a multi-instance c).
 * Equivalent single calls: weft_component_remove(es[i], c) for i in order (each removal
 * moves the pool's last row into the hole). Hooks: on_remove for es[0..n) in order, all before
 * the first row goes. Errors: WEFT_EINVAL (es NULL with n > 0, unknown c, an entity twice),
 * WEFT_ESTALE, WEFT_ENOENT (an entity lacks c: the whole batch is refused), WEFT_ENOMEM (rare:
 * a component set had to be interned); on error the world is unchanged. */
WEFT_API weft_result_t weft_component_remove_n(weft_world_t *world, const weft_entity_t *es,
                                               uint32_t n, weft_component_t c);

/* ---- pool rows ------------------------------------------------------------- >>pool_rows */

/* Rows in c's pool (0 for unknown ids). Thread: main (or jobs). */
WEFT_API uint32_t weft_component_rows(const weft_world_t *world, weft_component_t c);

/* The entity at `row` of c's pool; WEFT_ENTITY_NULL when row >= count. Thread: main (or jobs). */
WEFT_API weft_entity_t weft_component_entity_at(const weft_world_t *world, weft_component_t c,
                                                uint32_t row);

/* Data at `row` of c's pool, NULL when row >= count. Thread: as get / get_mut. */
WEFT_API const void *weft_component_row(const weft_world_t *world, weft_component_t c,
                                        uint32_t row);
WEFT_API void *weft_component_row_mut(weft_world_t *world, weft_component_t c, uint32_t row);

/* Move the row at `from` to index `to`, shifting the rows between by one so the others keep
 * their relative order; the sparse index follows. Errors: WEFT_EINVAL (row out of range),
 * WEFT_ESTATE (pool in a group). Thread: main. */
WEFT_API weft_result_t weft_component_move_row(weft_world_t *world, weft_component_t c,
                                               uint32_t from, uint32_t to);

/* Comparator for sort: negative when (ea, a) goes first. */
typedef int (*weft_component_cmp_t)(weft_entity_t ea, const void *a, weft_entity_t eb,
                                    const void *b, void *user);

/* Sort c's pool with `cmp` (stable: equal rows keep their order). Errors: WEFT_EINVAL,
 * WEFT_ESTATE (pool in a group), WEFT_ENOMEM (order unchanged). Thread: main. */
WEFT_API weft_result_t weft_component_sort(weft_world_t *world, weft_component_t c,
                                           weft_component_cmp_t cmp, void *user);

/* Make room for n rows in total without reallocating (also commits sparse pages lazily as
 * usual). Errors: WEFT_EINVAL, WEFT_ENOMEM. Thread: main. */
WEFT_API weft_result_t weft_component_reserve(weft_world_t *world, weft_component_t c, uint32_t n);

/* ---- multi-instance components ------------------------------------------- >>multi */

/* A component registered with WEFT_COMPONENT_MULTI can have several instances on one entity
 * (several particle emitters on one explosion). Each instance has its own row (so row access
 * and queries see every instance) and a stable handle that survives row moves. On such a
 * component: weft_component_add adds one more instance; get/get_mut/set address the entity's
 * most recently added instance; has is true while it has at least one; remove and entity
 * destroy remove every instance (on_remove fires per instance). Ordered row operations
 * (remove_ordered, move_row, sort) return WEFT_ESTATE; groups refuse multi-instance members; in
 * a query a multi-instance include term must be the only one and drives the iteration (each
 * instance is one entry; weft_iter_entity repeats the owner). */

/* An instance handle: 0 is invalid; a removed instance's handle goes stale. */
typedef struct weft_instance {
    uint64_t id; /* slot | generation << 32 | multi-instance type (1..255) << 56 */
} weft_instance_t;

/* Add one more instance of multi-instance component c to e, zero-initialised (on_add fires).
 * *out (may be NULL) receives its handle, *ptr (may be NULL) its data. Errors: WEFT_ESTALE,
 * WEFT_EINVAL (unknown c, or c is not multi-instance), WEFT_ENOMEM, WEFT_ECAPACITY; on error
 * nothing changes. Thread: main. */
WEFT_API weft_result_t weft_component_add_instance(weft_world_t *world, weft_entity_t e,
                                                   weft_component_t c, weft_instance_t *out,
                                                   void **ptr);

/* The instance's data, NULL when the handle is null or stale. Thread: as weft_component_get
 * (and weft_component_get_mut for the writable version). */
WEFT_API const void *weft_instance_get(const weft_world_t *world, weft_instance_t inst);
WEFT_API void *weft_instance_get_mut(weft_world_t *world, weft_instance_t inst);

/* The entity owning the instance, or WEFT_ENTITY_NULL for a null/stale handle. */
WEFT_API weft_entity_t weft_instance_entity(const weft_world_t *world, weft_instance_t inst);

/* Remove one instance (on_remove fires first); the pool's last row takes its place.
 * Errors: WEFT_ESTALE (null or stale handle), WEFT_ENOMEM (rare: a component set had to be
 * interned). Thread: main. */
WEFT_API weft_result_t weft_instance_remove(weft_world_t *world, weft_instance_t inst);

/* Number of instances of c on e (0 for stale e or unknown c; 0 or 1 for ordinary components).
 * For multi-instance c, writes up to `cap` handles to out (may be NULL), most recent first.
 * Thread: main (or jobs). */
WEFT_API uint32_t weft_component_instances(const weft_world_t *world, weft_entity_t e,
                                           weft_component_t c, weft_instance_t *out, uint32_t cap);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_COMPONENT_H */
