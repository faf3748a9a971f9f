/* weft/module.h: modules — data that lives beside the component pools and takes part in the
 * world's world-wide operations with the same standing as the pools.
 *
 * A module is what the hierarchy (weft/hierarchy.h) is: a store of its own (an ordered tree,
 * a spatial index, a navigation graph) that the world hashes, snapshots, archives, counts and
 * shuts down with everything else. A module registers once per world with
 * weft_module_register; from then on
 *   - weft_world_hash and weft_world_hash_parts fold in its `hash` (parts: one per module);
 *   - weft_snapshot_capture/_restore carry its `snap_*` bytes (restore: all or nothing);
 *   - weft_archive_save writes its `archive_*` bytes as a section of its own under its name
 *     and version, and weft_archive_load hands them back to the module of that name;
 *   - weft_world_stats' heap_bytes counts what it allocates through weft_world_alloc;
 *   - weft_world_destroy calls its `shutdown` (newest module first) while the world is intact.
 * Every callback may be NULL: no part in that operation. The world knows nothing of what a
 * module stores; the built-in hierarchy uses exactly this interface.
 *
 * Threads: every callback runs on the world's main thread, outside frames, from inside the
 * public call that triggers it; a callback must not call structural world functions (entity
 * create/destroy, component add/remove) or register modules. */
#ifndef WEFT_MODULE_H
#define WEFT_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "weft/base.h"
#include "weft/component.h"
#include "weft/entity.h"
#include "weft/world.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_MODULE_NAME_MAX 63u /* longest module name, bytes */
#define WEFT_MODULE_MAX 8u       /* modules per world */

/* What a module's archive_mark/archive_size/archive_save see of the save in progress. */
typedef struct weft_module_save weft_module_save_t;
/* What a module's archive_prepare/archive_commit see of the load in progress. */
typedef struct weft_module_load weft_module_load_t;

typedef struct weft_module_desc {
    const char *name;         /* unique per world, 1..WEFT_MODULE_NAME_MAX bytes, copied; it names
                         the module's hash part, snapshot part and archive section */
    uint32_t archive_version; /* version of the module's archive bytes (0: 1); passed back to
                                 archive_prepare so a module can read its older layouts */
    void *user;               /* passed to every callback */

    /* Shutdown: free everything the module holds (weft_world_destroy). */
    void (*shutdown)(weft_world_t *world, void *user);

    /* Hash: fold the module's observable data into h with weft_hash_mix and return the
     * result, in an order that depends only on that data (never on layout or history). */
    uint64_t (*hash)(const weft_world_t *world, void *user, uint64_t h);

    /* Snapshot capture: the bytes a capture needs now, then writing them into dst (64-byte
     * aligned, exactly snap_size bytes). */
    size_t (*snap_size)(const weft_world_t *world, void *user);
    void (*snap_capture)(const weft_world_t *world, void *user, void *dst, size_t size);
    /* Snapshot restore, in two halves. prepare is the fallible half: src/size are the
     * captured bytes (NULL, 0 when the capture held no part of this module: restore it
     * empty); everything the commit needs goes into *staged, or it fails (reported, e.g.
     * WEFT_ENOMEM) with the module unchanged. commit is the infallible half, run after the
     * pools and entity table were restored. abort drops a prepared restore that will not be
     * committed (another module failed). */
    weft_result_t (*snap_prepare)(weft_world_t *world, void *user, const void *src, size_t size,
                                  void **staged);
    void (*snap_commit)(weft_world_t *world, void *user, const void *src, size_t size,
                        void *staged);
    void (*snap_abort)(weft_world_t *world, void *user, void *staged);

    /* Archive save. mark (partial saves with with_descendants only) may add entities the
     * module ties to saved ones (weft_module_save_include). size returns the exact byte
     * count save will then write with weft_module_save_put (0: no section) and sets *items
     * (what the bytes hold, e.g. nodes: the section's count, reported by weft_archive_inspect
     * for the hierarchy); entities inside
     * the bytes should be written as archive-local ids (weft_module_save_local), which the
     * loader maps back. */
    weft_result_t (*archive_mark)(weft_world_t *world, void *user, weft_module_save_t *ctx);
    uint64_t (*archive_size)(weft_world_t *world, void *user, const weft_module_save_t *ctx,
                             uint64_t *items);
    weft_result_t (*archive_save)(weft_world_t *world, void *user, weft_module_save_t *ctx);
    /* Archive load, in two halves like the snapshot restore. prepare validates the bytes
     * (src/size as saved with `version`; NULL, 0 when the archive holds no section of this
     * module) and makes every allocation the commit needs, before any entity of the archive
     * exists (their handles are known: weft_module_load_entity); bad bytes are
     * WEFT_ECORRUPT. commit runs after every entity and component row was loaded; abort
     * drops a prepared load that will not be committed. */
    weft_result_t (*archive_prepare)(weft_world_t *world, void *user, const weft_module_load_t *ctx,
                                     const void *src, size_t size, uint32_t version, void **staged);
    void (*archive_commit)(weft_world_t *world, void *user, const weft_module_load_t *ctx,
                           void *staged);
    void (*archive_abort)(weft_world_t *world, void *user, void *staged);
    uint32_t _canary; /* leave 0 */
} weft_module_desc_t;

/* Register a module (desc copied, name included). Errors (reported, nothing registered):
 * WEFT_EINVAL (NULL world/desc, bad name, _canary set), WEFT_EEXIST (a module of that name
 * is registered), WEFT_ECAPACITY (WEFT_MODULE_MAX reached). Thread: main, outside frames. */
WEFT_API weft_result_t weft_module_register(weft_world_t *world, const weft_module_desc_t *desc);

/* The user pointer of the module called `name`, or NULL when none is registered. */
WEFT_API void *weft_module_find(const weft_world_t *world, const char *name);

/* Fold n bytes at p into the hash state h: the mixing weft_world_hash uses. Pure. */
WEFT_API uint64_t weft_hash_mix(uint64_t h, const void *p, size_t n);

/* Allocate and free through the world's allocator hook, counted in heap_bytes. Alignment: a
 * power of two. NULL on failure (nothing reported). free takes the size allocated; NULL is
 * ignored. Thread: main (the count is not atomic). */
WEFT_API void *weft_world_alloc(weft_world_t *world, size_t size, size_t align);
WEFT_API void weft_world_free(weft_world_t *world, void *p, size_t size);

/* ---- module-owned components ---------------------------------------------------------- */

/* A component whose per-entity data a module keeps in its own store (the hierarchy's local
 * transforms, world matrices and parent links) rather than in the component's pool, which
 * stays empty. The module decides what the per-entity calls mean:
 *   - weft_component_get and weft_component_has read through `get` (has: get != NULL);
 *   - weft_component_get_mut and weft_component_set go through `get_mut` and `set` (NULL:
 *     refused, as below); the module marks its own changes;
 *   - everything that would add or remove a row in the pool (weft_component_add, _remove,
 *     _remove_ordered, the bulk calls, weft_entity_create_with, weft_cmd_add/_set/_remove)
 *     is refused with WEFT_ESTATE and a message ending in `refuse`, which names the module
 *     call to use; nothing changes;
 *   - with a row view (`view`), queries name it as a term and the row readers see the view's
 *     rows (holes included: weft_component_entity_at gives 0 and _row NULL for a hole).
 * The access checks and declarations are those of any component: a system that calls
 * get_mut on an owned component declares a write of it, so the scheduler orders it
 * against the module's own systems from their declarations. */
/* A module's row view of an owned component, for query terms (weft/query.h): the module's
 * store seen as rows [0, count), each row an entity (0: a hole, skipped) and the component's
 * data at data + row * size (size: the component's), with an entity index -> row table for
 * entities reached from other terms. The view is valid until the module's next structural
 * change (which happens only outside frames); data it points at is never copied. */
typedef struct weft_module_view {
    uint32_t count;                /* rows */
    bool holes;                    /* some row below count may be a hole (0): only then does
                                      the query test each row's entity */
    const weft_entity_t *entities; /* row -> entity handle, 0 for a hole */
    void *data;                    /* row -> the component's data */
    const uint32_t *const *map;    /* entity index -> row: map[idx >> map_shift] is a page
                                      (NULL: no entity of the page) of 1 << map_shift rows,
                                      UINT32_MAX for an entity without the component */
    uint32_t map_pages;            /* entries in map */
    uint32_t map_shift;            /* log2 of a page's entries */
    uint8_t *marks;                /* (components with get_mut) row -> a byte the query ORs
                                      mark_bits into for every row a write term hands out,
                                      as get_mut marks it; NULL: writes need no mark */
    uint8_t mark_bits;             /* see marks */
} weft_module_view_t;

typedef struct weft_module_component_desc {
    void *user; /* passed to every callback */
    /* e's data (e is live, checked by the caller), or NULL when e has none. Thread: as
     * weft_component_get (main, or a system that declared access). */
    const void *(*get)(const weft_world_t *world, void *user, weft_entity_t e);
    /* e's data, writable, counted as a change by the module; NULL when e has none or the
     * module refuses writes (then it reports why: weft_last_error). Thread: as
     * weft_component_get_mut. NULL callback: every get_mut is refused (WEFT_ESTATE). */
    void *(*get_mut)(weft_world_t *world, void *user, weft_entity_t e);
    /* Write *value (the component's size) as e's data. Errors: the module's, reported; on an
     * error nothing changes. NULL callback: every set is refused (WEFT_ESTATE). Thread:
     * as weft_component_set. */
    weft_result_t (*set)(weft_world_t *world, void *user, weft_entity_t e, const void *value);
    /* The component's rows as they stand, into *out (every field set). NULL: no row view;
     * then query terms on the component are refused (WEFT_EINVAL) and weft_component_rows
     * reports 0. With a view, queries may name the component as an AND term without a
     * change filter (read; write only when get_mut is set), and weft_component_rows,
     * _entity_at, _row and _row_mut read the view's rows. Thread: any, while the module
     * makes no structural change (it is called when a query is planned). */
    void (*view)(const weft_world_t *world, void *user, weft_module_view_t *out);
    const char *refuse; /* required, static storage: the end of every refusal message, e.g.
                           "use weft_hier_add" */
    uint32_t _canary;   /* leave 0 */
} weft_module_component_desc_t;

/* Hand component `c`'s per-entity data to a module (desc copied; `refuse` must outlive the
 * world). From then on the calls above behave as described for c, until the world is
 * destroyed. Errors (nothing changes): WEFT_EINVAL (NULL world/desc, unknown component, a
 * resource, a multi-instance component, NULL get or refuse, _canary set), WEFT_ESTATE (c
 * already has rows, belongs to a group, or is owned). Thread: main, outside frames. */
WEFT_API weft_result_t weft_module_own_component(weft_world_t *world, weft_component_t c,
                                                 const weft_module_component_desc_t *desc);

/* ---- archive save context ------------------------------------------------------------- */

/* The archive-local id + 1 of e when e is saved, 0 when it is not (or not alive). */
WEFT_API uint32_t weft_module_save_local(const weft_module_save_t *ctx, weft_entity_t e);
/* (archive_mark only) Save e too. Errors: WEFT_ESTALE (e not alive). */
WEFT_API weft_result_t weft_module_save_include(weft_module_save_t *ctx, weft_entity_t e);
/* (archive_save only) Append n bytes to the module's section. */
WEFT_API void weft_module_save_put(weft_module_save_t *ctx, const void *p, size_t n);

/* ---- archive load context ------------------------------------------------------------- */

/* Entities in the archive (local ids 0 .. count-1). */
WEFT_API uint64_t weft_module_load_count(const weft_module_load_t *ctx);
/* The handle archive-local entity `local` gets in this world (0: out of range). */
WEFT_API weft_entity_t weft_module_load_entity(const weft_module_load_t *ctx, uint64_t local);
/* The component section called `name`: true when the archive holds one that this load
 * writes into the world; *rows its rows and *locals their archive-local ids (rows
 * little-endian u32, possibly unaligned: read them with memcpy). */
WEFT_API bool weft_module_load_component(const weft_module_load_t *ctx, const char *name,
                                         uint64_t *rows, const void **locals);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_MODULE_H */
