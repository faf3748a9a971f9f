/* world.h: the private world struct and the allocation helpers every ECS file uses
 * (private to the build).
 *
 * DESIGN
 * The world is the root of all ECS state and is reached only through this struct:
 * - the entity table (entity.h): 4-byte atomic slots in address space reserved once, so it
 *   never moves; slot = generation (low 16 bits) | signature id (high 16 bits);
 * - the free list: a LIFO stack of slot indices (heap, grows only on destroy);
 * - one component record per registered id (component.h), each holding its pool (pool.h);
 * - interned signatures (signature.c): the distinct component sets of live entities, with a
 *   transition cache (signature, component, add/remove) -> signature;
 * - groups (group.h) and the list of live queries (query.c);
 * - extension slots owned by other modules (scheduler, hierarchy) and their finalisers.
 * The world's own heap memory goes through weft__alloc/weft__free, which call the desc's
 * allocator hook and keep heap_bytes exact for it; modules with data outside the pools
 * (the hierarchy, a user's index) register through weft/module.h and take part in the hash,
 * snapshots, archives and shutdown through their desc's callbacks. The scheduler, command
 * arenas, trace and the job system the world creates allocate through `counted`, so
 * weft_world_stats' heap_bytes covers every allocation made through the world's hook. Thread model: see weft/world.h; nothing here is locked, the only
 * concurrently read fields are the entity table and its high-water mark (atomics). */
#ifndef WEFT_SRC_WORLD_H
#define WEFT_SRC_WORLD_H

#include <stddef.h>

#include "access.h"
#include "jobs/platform/atomic.h"
#include "jobs/platform/report.h"
#include "pool.h"
#include "weft/group.h"
#include "weft/module.h"
#include "weft/query.h"
#include "weft/world.h"

#define WEFT__WORLD_MAX_MODULES 8 /* module finalisers the world can hold */
#define WEFT__MAX_GROUPS 64       /* groups per world (a pool is in one chain of them) */
#define WEFT__SIG_DEAD 0xFFFFu    /* signature field of a free slot */
#define WEFT__SIG_MAX 0xFFFEu     /* largest usable signature id */

struct weft_sched; /* owned by the scheduler module (src/sched/) */

/* One registered module (weft/module.h): its desc, with the name copied in (desc.name is
 * NULL: use `name`, which survives the array moving). */
typedef struct weft__module {
    weft_module_desc_t desc;
    char name[WEFT_MODULE_NAME_MAX + 1];
} weft__module_t;

/* Registration record of one component, with its pool. Allocated once per id; never moves. */
typedef struct weft__component {
    weft__pool_t pool;                      /* the storage */
    char name[WEFT_COMPONENT_NAME_MAX + 1]; /* NUL-terminated copy of desc.name */
    uint32_t flags;                         /* desc.flags */
    uint32_t version;                       /* resolved schema version (>= 1) */
    weft_component_hook_t on_add;           /* desc.on_add */
    weft_component_hook_t on_remove;        /* desc.on_remove */
    weft_component_hook_t on_set;           /* desc.on_set */
    /* What fires: on_add/on_remove/on_set are desc's hooks, or the observer dispatch of the
     * scheduler module (src/sched/observer.c), which calls desc's hook (kept here) first. */
    weft_component_hook_t desc_hook[3];                       /* desc.on_add, on_remove, on_set */
    void *hook_user;                                          /* desc.hook_user */
    uint32_t entity_field_count;                              /* desc.entity_field_count */
    uint32_t entity_fields[WEFT_COMPONENT_MAX_ENTITY_FIELDS]; /* desc.entity_fields */
    unsigned char *resource; /* a resource's value (resource.c; pool.size bytes, pool.align
                                aligned, its pool stays empty); NULL for a component */
    /* A module-owned component (weft/module.h): the module's callbacks; owned.refuse is NULL
     * for every other component. Its pool stays empty. */
    weft_module_component_desc_t owned;
    /* The user ordered this pool (sort, move_row, remove_ordered): automatic grouping leaves
     * it alone from then on (auto_group.h), so the user's order is never undone. */
    bool user_ordered;
} weft__component_t;

/* One interned component set: ids sorted ascending in world->sig_ids[first .. first+count). */
typedef struct weft__sig {
    uint32_t first; /* offset into sig_ids */
    uint32_t count; /* components in the set */
    uint64_t hash;  /* hash of the sorted id list */
} weft__sig_t;

/* A group: rows [0, n) of every member pool hold the same entities. Groups whose member sets
 * nest form a chain (group.c): `outer` has a strict subset of the members, `inner` a strict
 * superset, and the inner group's rows are a prefix of the outer one's. */
typedef struct weft__group {
    uint32_t members[WEFT_GROUP_MAX_COMPONENTS]; /* component ids, sorted ascending */
    uint32_t count;                              /* members */
    uint32_t n;                                  /* aligned rows */
    uint32_t outer;                              /* next group out in the chain, 0: none */
    uint32_t inner;                              /* next group in, 0: none */
} weft__group_t;

#define WEFT__AUTO_FAMILIES 16 /* packed families an automatic plan keeps (auto_group.h) */

/* A packed family of the automatic plan (auto_group.h, PACKED FAMILIES): a set of components
 * some systems iterate whose rows outside every group prefix are kept in one order by
 * re-packs, with the rent-or-buy account that decides when to re-pack. */
typedef struct weft__auto_family {
    uint32_t ids[WEFT_GROUP_MAX_COMPONENTS]; /* component ids, sorted ascending */
    uint32_t count;                          /* components */
    uint32_t systems;                        /* systems whose AND terms are exactly this set */
    uint64_t layout;  /* the pools' summed layout counts after the last re-pack (0: never) */
    uint64_t seen;    /* the summed layout counts at the previous frame (0: none yet) */
    uint64_t lost;    /* estimated cost of probing instead of columns since then (auto_group.c) */
    uint32_t repacks; /* re-packs so far (tests read it) */
    uint32_t drive;   /* the driving pool's component id at the last re-pack */
    uint32_t packed;  /* rows that re-pack put in step (valid while `layout` is the sum) */
} weft__auto_family_t;

struct weft_world {
    /* ---- configuration and hooks ---- */
    weft_world_desc_t desc;   /* resolved desc */
    weft_allocator_t alloc;   /* resolved allocator (never NULL functions) */
    const weft_logger_t *log; /* &desc.logger */
    size_t heap_bytes;        /* bytes currently allocated through alloc (weft__alloc) */
    /* The allocator the world's other owners use (scheduler, command arenas, trace, the job
     * system it creates): forwards to alloc and counts into hook_bytes, atomically, because
     * command arenas grow on workers. heap_bytes in the stats is the sum of both. */
    weft_allocator_t counted;
    weft_atomic_size hook_bytes;
    weft_jobs_t *jobs; /* desc.jobs, or created on first weft_world_jobs() */
    bool jobs_owned;   /* true: created here, destroyed with the world */

    /* ---- entity table (entity.c) ---- */
    weft_atomic_u32 *slots;     /* reserved [entity_limit] slots; committed prefix only */
    size_t slots_reserved;      /* bytes of address space reserved */
    size_t slots_committed;     /* bytes committed (a multiple of the page size) */
    size_t slots_populated;     /* bytes below which weft__entity_reserve_n populated pages */
    weft_atomic_u32 slot_count; /* high-water: slots [0, slot_count) were handed out
                                    (slot 0 counts, never alive); release on publish */
    uint32_t *free_list;        /* LIFO stack of free slot indices */
    uint32_t free_count;        /* entries in free_list */
    uint32_t free_cap;          /* capacity of free_list */
    uint32_t live;              /* live entities */

    /* ---- components and signatures (component.c, signature.c) ---- */
    weft__component_t **components; /* [component_cap] by id; [0] unused */
    uint32_t component_count;       /* registered; ids 1 .. component_count */
    uint32_t component_cap;         /* entries allocated in components */
    uint32_t *name_table;     /* open addressing: name hash -> component id (0: empty); entries
                              whose id is past component_count or whose name differs are
                              skipped, so dropping the last registrations needs no removal */
    uint32_t name_table_cap;  /* power of two, or 0 */
    uint32_t name_table_used; /* entries written since the last rebuild */
    uint32_t multi_ids[256];  /* multi-instance type k (1..255) -> its component id
                                 (instance handles carry k, weft/component.h) */
    uint32_t multi_count;     /* multi-instance types registered */
    weft__sig_t *sigs;        /* interned sets by signature id; [0] is the empty set */
    uint32_t sig_count;       /* interned sets */
    uint32_t sig_cap;         /* capacity of sigs */
    uint32_t *sig_ids;        /* component ids of all sets, back to back */
    uint32_t sig_ids_len;     /* used entries of sig_ids */
    uint32_t sig_ids_cap;     /* capacity of sig_ids (entries) */
    uint32_t *sig_table;      /* open addressing: set hash -> signature id + 1 (0: empty) */
    uint32_t sig_table_cap;   /* power of two */
    uint64_t *edges;          /* open addressing transition cache: key << 16 | target;
                               key = sig << 18 | component << 1 | remove (signature.h); 0: empty */
    uint32_t edge_count;      /* entries in edges */
    uint32_t edge_cap;        /* power of two */

    /* ---- groups and queries (group.c, query.c) ---- */
    weft__group_t groups[WEFT__MAX_GROUPS]; /* [0] unused; ids 1 .. group_count */
    uint32_t group_count;                   /* groups alive: the user's, then the automatic */
    uint32_t user_groups;                   /* ids 1 .. user_groups are the user's; the ids after
                                               them are automatic groups (auto_group.h) */
    uint64_t group_epoch;                   /* bumped by every group creation and every drop
                                               of the automatic groups (snapshots compare it) */
    bool auto_groups;                       /* the automatic grouping setting (weft/group.h) */
    bool auto_stale;                        /* the automatic groups were dropped: re-plan them
                                               before the next frame */
    uint32_t auto_family_count;             /* packed families of the automatic plan */
    weft__auto_family_t auto_families[WEFT__AUTO_FAMILIES];
    struct weft_query *queries; /* live queries (doubly linked), freed at destroy */

    /* ---- change ticks (change.h) ---- */
    uint32_t change_tick;  /* the tick of writes outside systems; systems take fresh ones */
    uint32_t tick_clamped; /* change_tick at the last clamp of old ticks */

    /* ---- misc ---- */
    uint32_t hook_depth;     /* > 0 while a hook runs (structural calls are then bugs) */
    bool in_systems;         /* set by the scheduler while a phase's systems run (not during its
                        apply; written by the main thread only outside those runs, so
                        systems read it race-free), for modules that refuse direct calls
                        from systems in every build (the hierarchy) */
    const void *main_thread; /* weft__thread_token() of the creating thread */
    max_align_t tag_dummy;   /* data "column" of tag pools: non-NULL, zero bytes used */

    /* ---- extension slots of other modules ---- */
    struct weft_sched *sched; /* scheduler state; owned and freed by its module_fini */
    /* The hierarchy's state (src/hier/): the user pointer of its module, kept here so that
     * its calls and its per-entity destroy hook reach it without a lookup by name. Set when
     * the module is registered, cleared when it is dropped or shut down; NULL otherwise. */
    struct weft_hier *hier;
    void (*module_fini[WEFT__WORLD_MAX_MODULES])(weft_world_t *world); /* run in reverse */
    /* Called at the end of every component registration (NULL: none): how the observer
     * module reaches components registered after an observer of every component. */
    void (*on_component_registered)(weft_world_t *world, weft__component_t *comp);
    uint32_t module_count;                   /* registered finalisers */
    weft__module_t modules[WEFT_MODULE_MAX]; /* weft/module.h; hashed after the pools */
    uint32_t module_part_count;              /* entries in modules */
};

/* ---- allocation ---------------------------------------------------------- >>alloc */

/* Allocate through the world's hook; NULL on failure (nothing reported: callers report). */
void *weft__alloc(weft_world_t *world, size_t size, size_t align);
/* Free memory from weft__alloc with the size it was allocated with. NULL is ignored. */
void weft__free(weft_world_t *world, void *p, size_t size);
/* A block of `size` bytes at p is about to be filled: back the whole pages inside it in one
 * call (weft__vmem_populate) rather than one page fault each, which on a virtual machine
 * costs more than the page's zeroing. A hint: contents unchanged, cannot fail; a range under
 * two whole pages is left to fault in (the call costs about what one fault does). Thread: any. */
void weft__populate(void *p, size_t size);

/* Register a module finaliser, run by weft_world_destroy in reverse registration order before
 * any pool is freed (the world is still fully usable inside it).
 * Errors: WEFT_ECAPACITY (WEFT__WORLD_MAX_MODULES reached). Thread: main. */
weft_result_t weft__world_add_module_fini(weft_world_t *world, void (*fn)(weft_world_t *world));

/* weft_module_register without the caller checks (for built-in modules, which may be set
 * up from inside a hook). Errors: WEFT_EINVAL (name), WEFT_EEXIST, WEFT_ECAPACITY. */
weft_result_t weft__world_add_module(weft_world_t *world, const weft_module_desc_t *desc);

/* Take back the module registered under `name` without calling its shutdown (undoing a
 * registration whose caller failed afterwards). */
void weft__world_drop_module(weft_world_t *world, const char *name);

/* The refusal of a call that would add or remove a row of a module-owned component
 * (weft/module.h): WEFT_ESTATE, reported with fn, the component's name and the module's
 * `refuse` text. */
weft_result_t weft__owned_refuse(const weft_world_t *world, const weft__component_t *comp,
                                 const char *fn);

/* The registered module called `name`, or NULL. */
weft__module_t *weft__world_module(const weft_world_t *world, const char *name);

/* Drop entity index idx's row from comp's pool (group alignment first, then the pool; no
 * hooks, no signature change). ordered: keep the order of the other rows. (component.c) */
void weft__component_remove_index(weft_world_t *world, weft__component_t *comp, uint32_t idx,
                                  bool ordered);

/* Fire c's on_remove for idx (every instance of a multi-instance component). (component.c) */
void weft__component_fire_remove(weft_world_t *world, weft__component_t *comp, uint32_t idx,
                                 weft_entity_t e);

/* Free every query still alive (world destroy). (query.c) */
void weft__query_free_all(weft_world_t *world);

/* The length of a list in a desc (weft/query.h): entries of `stride` bytes, each starting with
 * a weft_component_t, ending at the first zero id or after `max`. An entry set after that zero
 * is WEFT_EINVAL in every build (reported as "<fn>: <what>[i] is set after ..."). (query.c) */
weft_result_t weft__desc_list_len(const weft_world_t *world, const void *list, size_t stride,
                                  uint32_t max, const char *fn, const char *what, uint32_t *n);

/* Free the per-type tables (components[], the name table); world destroy, after the
 * records. (component.c) */
void weft__component_tables_fini(weft_world_t *world);

/* The component record for id `c`, or NULL when unknown. */
/* Any registration record, component or resource (weft/resource.h), or NULL. */
static inline weft__component_t *weft__component_any(const weft_world_t *world, uint32_t c) {
    return (c != 0 && c <= world->component_count) ? world->components[c] : NULL;
}

/* The record of a component that entities can carry, or NULL (unknown id, or a resource:
 * every per-entity call treats a resource id as no component). */
static inline weft__component_t *weft__component(const weft_world_t *world, uint32_t c) {
    weft__component_t *comp = weft__component_any(world, c);
    return comp && !comp->resource ? comp : NULL;
}

/* The start of every main-thread-only public call (weft/world.h's thread model): a NULL world
 * is WEFT_EINVAL in every build; debug builds also return WEFT_ESTATE for a call from another
 * thread, from inside one of the world's systems or from inside a hook
 * (weft__structural_check). */
#if WEFT_DEBUG >= 1
#define WEFT__MAIN_CALL_AS(world, fn)                                        \
    do {                                                                     \
        if ((world) == NULL) {                                               \
            return weft__null_arg((fn), "world", __FILE__, __LINE__);        \
        }                                                                    \
        weft_result_t weft__main_r_ = weft__structural_check((world), (fn)); \
        if (weft__main_r_ != WEFT_OK) {                                      \
            return weft__main_r_;                                            \
        }                                                                    \
    } while (0)
#else
#define WEFT__MAIN_CALL_AS(world, fn)                                 \
    do {                                                              \
        if ((world) == NULL) {                                        \
            return weft__null_arg((fn), "world", __FILE__, __LINE__); \
        }                                                             \
    } while (0)
#endif
#define WEFT__MAIN_CALL(world) WEFT__MAIN_CALL_AS(world, __func__)

#endif /* WEFT_SRC_WORLD_H */
