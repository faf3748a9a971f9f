/* snapshot.c: whole-world snapshots in memory (weft/snapshot.h).
 *
 * DESIGN
 * A snapshot is one block holding, back to back: the entity table slots [0, slot_count), the
 * free list, and for every registered component its entity column and data rows (data at
 * 64-byte offsets so the copies run on aligned memory), plus a small header of counts. The
 * block is reused across captures and grows only when the world has, so a rollback loop
 * that captures every frame stops allocating after warm-up. Capture and restore are bulk
 * copies of the same dense arrays a plain memcpy would move.
 *
 * Restore is all-or-nothing: it first makes sure every destination has room (pool arrays,
 * free-list capacity, committed table pages) — growing capacity is invisible to
 * weft_world_hash() — and only then copies. Sparse indexes are not copied: a pool whose
 * entity column is unchanged since the capture (the common rollback case: only values
 * moved) needs no index work at all, otherwise the index entries of the current rows are
 * cleared and those of the captured rows set. Their sparse pages exist, because pages are
 * never freed. Signature ids in the captured slots stay valid because interned signatures
 * are never freed either.
 *
 * Modules whose data lives outside the pools (the hierarchy) take part through their module
 * callbacks (weft/module.h): a capture appends each part's bytes to the block
 * under the module's name; a restore has every module prepare its part (fallible, world
 * untouched) before the commit, and commits them after the pools. Nothing here knows what
 * a module stores. */
#include "weft/snapshot.h"

#include <string.h>

#include "src/core/access.h"
#include "src/core/change.h"
#include "src/core/entity.h"
#include "src/core/group.h"
#include "src/core/world.h"

#define ALIGN_DATA 64u /* alignment of each array inside the block */

/* One module part as captured. */
typedef struct snap_module {
    char name[WEFT_MODULE_NAME_MAX + 1]; /* the module's name */
    size_t off;                          /* offset of its bytes in the block */
    size_t size;                         /* bytes */
} snap_module_t;

typedef struct snap_pool {
    uint32_t count;   /* captured rows */
    size_t dense_off; /* offset of the entity column in the block */
    size_t data_off;  /* offset of the data rows in the block */
} snap_pool_t;

struct weft_snapshot {
    weft_world_t *world;                    /* owner of the allocator; the only world accepted */
    unsigned char *block;                   /* captured arrays, owned */
    size_t block_cap;                       /* bytes allocated */
    size_t block_used;                      /* bytes of captured state */
    bool valid;                             /* something was captured */
    uint32_t slot_count;                    /* table high-water mark */
    uint32_t free_count;                    /* free-list entries (slots follow at offset 0) */
    uint32_t live;                          /* live entities */
    uint32_t component_count;               /* components registered at capture */
    uint32_t group_count;                   /* groups at capture */
    uint32_t user_groups;                   /* the user's groups at capture */
    uint64_t group_epoch;                   /* world->group_epoch at capture */
    uint32_t group_n[WEFT__MAX_GROUPS];     /* aligned rows of each group */
    uint32_t module_count;                  /* module parts captured */
    snap_module_t modules[WEFT_MODULE_MAX]; /* in the world's module order */
    snap_pool_t *pools;                     /* [pools_cap] by component id */
    uint32_t pools_cap;                     /* entries allocated in pools */
};

static size_t align_up(size_t n) { return (n + ALIGN_DATA - 1u) & ~(size_t)(ALIGN_DATA - 1u); }

weft_result_t weft_snapshot_create(weft_world_t *world, weft_snapshot_t **out) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_snapshot_create: world is NULL");
    WEFT__CONTRACT(out != NULL, world->log, WEFT_EINVAL, "weft_snapshot_create: out is NULL");
    *out = NULL;
    weft_snapshot_t *s = weft__alloc(world, sizeof *s, _Alignof(weft_snapshot_t));
    if (!s) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_snapshot_create: out of memory");
    }
    memset(s, 0, sizeof *s);
    s->world = world;
    *out = s;
    return WEFT_OK;
}

void weft_snapshot_destroy(weft_snapshot_t *snap) {
    if (!snap) {
        return;
    }
    weft_world_t *world = snap->world;
    weft__free(world, snap->block, snap->block_cap);
    weft__free(world, snap->pools, (size_t)snap->pools_cap * sizeof *snap->pools);
    weft__free(world, snap, sizeof *snap);
}

size_t weft_snapshot_size(const weft_snapshot_t *snap) {
    return snap && snap->valid ? snap->block_used : 0;
}

/* ---- capture ------------------------------------------------------------ >>capture */

/* Lay out the block for the world as it is now; returns its size. Two passes: `pools` NULL
 * sizes everything and lays out the module parts in mods; `mods` NULL fills pools only. */
static size_t plan_capture(const weft_world_t *world, snap_pool_t *pools, uint32_t slots,
                           snap_module_t *mods, uint32_t *mod_count) {
    size_t off = align_up((size_t)slots * 4u) + align_up((size_t)world->free_count * 4u);
    for (uint32_t c = 1; c <= world->component_count; ++c) {
        const weft__pool_t *p = &world->components[c]->pool;
        if (pools != NULL) {
            pools[c].count = p->count;
            pools[c].dense_off = off;
            pools[c].data_off = off + align_up((size_t)p->count * 4u);
        }
        off += align_up((size_t)p->count * 4u);
        off += align_up((size_t)p->count * p->size);
        if (world->components[c]->resource) { /* a resource's value follows its empty pool */
            off += align_up(p->size);
        }
    }
    if (mods == NULL) {
        return off;
    }
    *mod_count = 0;
    for (uint32_t m = 0; m < world->module_part_count; ++m) {
        const weft__module_t *mod = &world->modules[m];
        if (mod->desc.snap_size != NULL) {
            const size_t size = mod->desc.snap_size(world, mod->desc.user);
            snap_module_t *part = &mods[(*mod_count)++];
            memcpy(part->name, mod->name, sizeof part->name);
            part->off = off;
            part->size = size;
            off += align_up(size);
        }
    }
    return off;
}

weft_result_t weft_snapshot_capture(weft_world_t *world, weft_snapshot_t *snap) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_snapshot_capture: world is NULL");
    WEFT__CONTRACT(snap != NULL, world->log, WEFT_EINVAL, "weft_snapshot_capture: snap is NULL");
    WEFT__CONTRACT(snap->world == world, world->log, WEFT_EINVAL,
                   "weft_snapshot_capture: the snapshot belongs to another world");
    WEFT__MAIN_CALL(world);
    uint32_t slots = weft_atomic_load_relaxed(&world->slot_count);
    snap_module_t mods[WEFT_MODULE_MAX];
    uint32_t mod_count;
    size_t need = plan_capture(world, NULL, slots, mods, &mod_count);
    /* Both allocations before any change, so a failed capture keeps the previous one. */
    uint32_t npools = world->component_count + 1u;
    snap_pool_t *pools = NULL;
    unsigned char *b = NULL;
    if (npools > snap->pools_cap) {
        pools = weft__alloc(world, (size_t)npools * sizeof *pools, _Alignof(snap_pool_t));
    }
    if (need > snap->block_cap) {
        b = weft__alloc(world, need, ALIGN_DATA);
    }
    if ((npools > snap->pools_cap && !pools) || (need > snap->block_cap && !b)) {
        weft__free(world, pools, (size_t)npools * sizeof *pools);
        weft__free(world, b, need);
        return WEFT__FAIL(world->log, WEFT_ENOMEM,
                          "weft_snapshot_capture: cannot allocate %zu bytes", need);
    }
    if (pools) {
        weft__free(world, snap->pools, (size_t)snap->pools_cap * sizeof *pools);
        snap->pools = pools;
        snap->pools_cap = npools;
    }
    if (b) {
        weft__free(world, snap->block, snap->block_cap);
        snap->block = b;
        snap->block_cap = need;
    }
    pools = snap->pools;
    (void)plan_capture(world, pools, slots, NULL, NULL);
    /* Slots are atomics written only by this (main) thread: relaxed loads are exact. */
    uint32_t *dst = (uint32_t *)(void *)snap->block;
    for (uint32_t i = 0; i < slots; ++i) {
        dst[i] = weft__entity_slot_raw(world, i);
    }
    if (world->free_count) {
        memcpy(snap->block + align_up((size_t)slots * 4u), world->free_list,
               (size_t)world->free_count * 4u);
    }
    for (uint32_t c = 1; c <= world->component_count; ++c) {
        const weft__pool_t *p = &world->components[c]->pool;
        if (world->components[c]->resource) {
            memcpy(snap->block + pools[c].data_off, world->components[c]->resource, p->size);
        }
        if (p->count == 0) {
            continue;
        }
        memcpy(snap->block + pools[c].dense_off, p->dense, (size_t)p->count * 4u);
        if (p->size) {
            memcpy(snap->block + pools[c].data_off, p->data, (size_t)p->count * p->size);
        }
    }
    for (uint32_t m = 0, k = 0; m < world->module_part_count; ++m) {
        const weft__module_t *mod = &world->modules[m];
        if (mod->desc.snap_size != NULL) {
            mod->desc.snap_capture(world, mod->desc.user, snap->block + mods[k].off, mods[k].size);
            k++;
        }
    }
    memcpy(snap->modules, mods, sizeof(snap_module_t) * mod_count);
    snap->module_count = mod_count;
    snap->slot_count = slots;
    snap->free_count = world->free_count;
    snap->live = world->live;
    snap->component_count = world->component_count;
    snap->group_count = world->group_count;
    snap->user_groups = world->user_groups;
    snap->group_epoch = world->group_epoch;
    for (uint32_t g = 1; g <= world->group_count; ++g) {
        snap->group_n[g] = world->groups[g].n;
    }
    snap->block_used = need;
    snap->valid = true;
    return WEFT_OK;
}

/* ---- restore ------------------------------------------------------------ >>restore */

/* Every allocation the restore needs, before anything changes. */
static weft_result_t restore_reserve(weft_world_t *world, const weft_snapshot_t *s,
                                     uint32_t **new_free) {
    *new_free = NULL;
    uint32_t slots = weft_atomic_load_relaxed(&world->slot_count);
    if (s->slot_count > slots) {
        weft_result_t r = weft_entity_reserve(world, world->free_count + (s->slot_count - slots));
        if (r != WEFT_OK) {
            return r;
        }
    }
    for (uint32_t c = 1; c <= s->component_count; ++c) {
        weft__pool_t *p = &world->components[c]->pool;
        weft_result_t r = weft__pool_reserve(world, p, s->pools[c].count);
        if (r != WEFT_OK) {
            return r;
        }
    }
    if (s->free_count > world->free_cap) {
        *new_free = weft__alloc(world, (size_t)s->free_count * 4u, _Alignof(uint32_t));
        if (!*new_free) {
            return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_snapshot_restore: out of memory");
        }
    }
    return WEFT_OK;
}

/* Put one pool back: entity column and index only when they changed, then the data. */
static void restore_pool(weft__pool_t *p, const unsigned char *block, const snap_pool_t *sp) {
    const uint32_t *dense = (const uint32_t *)(const void *)(block + sp->dense_off);
    bool same = p->count == sp->count &&
                (sp->count == 0 || memcmp(p->dense, dense, (size_t)sp->count * 4u) == 0);
    if (!same) {
        for (uint32_t r = 0; r < p->count; ++r) {
            weft__pool_sparse_set(p, p->dense[r], WEFT__ROW_NONE);
        }
        if (sp->count) {
            memcpy(p->dense, dense, (size_t)sp->count * 4u);
        }
        for (uint32_t r = 0; r < sp->count; ++r) {
            weft__pool_sparse_set(p, dense[r], r);
        }
        p->count = sp->count;
        weft__pool_check_order(p, 0);
    }
    if (p->size && sp->count) {
        memcpy(p->data, block + sp->data_off, (size_t)sp->count * p->size);
    }
}

/* Empty a pool registered after the capture. */
static void clear_pool(weft__pool_t *p) {
    for (uint32_t r = 0; r < p->count; ++r) {
        weft__pool_sparse_set(p, p->dense[r], WEFT__ROW_NONE);
    }
    p->count = 0;
    p->ascending = true;
}

/* The captured part of the module called `name` (NULL when the capture held none). */
static const snap_module_t *captured_part(const weft_snapshot_t *s, const char *name) {
    for (uint32_t k = 0; k < s->module_count; ++k) {
        if (strcmp(s->modules[k].name, name) == 0) {
            return &s->modules[k];
        }
    }
    return NULL;
}

/* Drop the staged restores of the first n modules of the world. */
static void abort_modules(weft_world_t *world, void **staged, uint32_t n) {
    for (uint32_t m = 0; m < n; ++m) {
        const weft__module_t *mod = &world->modules[m];
        if (mod->desc.snap_abort != NULL) {
            mod->desc.snap_abort(world, mod->desc.user, staged[m]);
        }
    }
}

/* The fallible half of every module's restore: each prepares its part (an empty one when the
 * capture held none); a captured part whose module this world lacks is an error. */
static weft_result_t prepare_modules(weft_world_t *world, const weft_snapshot_t *s, void **staged) {
    for (uint32_t k = 0; k < s->module_count; ++k) {
        bool found = false;
        for (uint32_t m = 0; m < world->module_part_count && !found; ++m) {
            found = strcmp(world->modules[m].name, s->modules[k].name) == 0 &&
                    world->modules[m].desc.snap_prepare != NULL;
        }
        if (!found) {
            return WEFT__FAIL(world->log, WEFT_ESTATE,
                              "weft_snapshot_restore: the snapshot holds data of module %s, "
                              "which this world does not have",
                              s->modules[k].name);
        }
    }
    for (uint32_t m = 0; m < world->module_part_count; ++m) {
        staged[m] = NULL;
        const weft__module_t *mod = &world->modules[m];
        if (mod->desc.snap_prepare == NULL) {
            continue;
        }
        const snap_module_t *part = captured_part(s, mod->name);
        weft_result_t r =
            mod->desc.snap_prepare(world, mod->desc.user, part ? s->block + part->off : NULL,
                                   part ? part->size : 0, &staged[m]);
        if (r != WEFT_OK) {
            abort_modules(world, staged, m);
            return r;
        }
    }
    return WEFT_OK;
}

weft_result_t weft_snapshot_restore(weft_world_t *world, const weft_snapshot_t *snap) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_snapshot_restore: world is NULL");
    WEFT__CONTRACT(snap != NULL, world->log, WEFT_EINVAL, "weft_snapshot_restore: snap is NULL");
    WEFT__CONTRACT(snap->world == world, world->log, WEFT_EINVAL,
                   "weft_snapshot_restore: the snapshot belongs to another world");
    WEFT__MAIN_CALL(world);
    if (!snap->valid) {
        return WEFT__FAIL(world->log, WEFT_ESTATE, "weft_snapshot_restore: nothing captured");
    }
    if (snap->user_groups != world->user_groups) {
        return WEFT__FAIL(world->log, WEFT_ESTATE,
                          "weft_snapshot_restore: %u groups now, %u at capture", world->user_groups,
                          snap->user_groups);
    }
    uint32_t *new_free;
    weft_result_t r = restore_reserve(world, snap, &new_free);
    if (r != WEFT_OK) {
        return r;
    }
    void *staged[WEFT_MODULE_MAX];
    r = prepare_modules(world, snap, staged);
    if (r != WEFT_OK) {
        weft__free(world, new_free, (size_t)snap->free_count * 4u);
        return r;
    }

    /* ---- commit: nothing below can fail ---- */
    const uint32_t *slots = (const uint32_t *)(const void *)snap->block;
    for (uint32_t i = 0; i < snap->slot_count; ++i) {
        weft_atomic_store_relaxed(&world->slots[i], slots[i]);
    }
    /* pairs with the acquire in weft__entity_slot(): restored slots are visible */
    weft_atomic_store_release(&world->slot_count, snap->slot_count);
    if (new_free) {
        weft__free(world, world->free_list, (size_t)world->free_cap * 4u);
        world->free_list = new_free;
        world->free_cap = snap->free_count;
    }
    if (snap->free_count) {
        memcpy(world->free_list, snap->block + align_up((size_t)snap->slot_count * 4u),
               (size_t)snap->free_count * 4u);
    }
    world->free_count = snap->free_count;
    world->live = snap->live;
    for (uint32_t c = 1; c <= world->component_count; ++c) {
        if (c <= snap->component_count) {
            restore_pool(&world->components[c]->pool, snap->block, &snap->pools[c]);
            /* every restored row counts as added now (weft/query.h, change filters) */
            weft__change_stamp_added(&world->components[c]->pool, 0, snap->pools[c].count,
                                     world->change_tick);
            if (world->components[c]->resource) {
                memcpy(world->components[c]->resource, snap->block + snap->pools[c].data_off,
                       world->components[c]->pool.size);
            }
        } else {
            clear_pool(&world->components[c]->pool);
        }
    }
    /* Automatic groups planned since the capture would not fit the captured rows: drop them
     * (the scheduler re-plans before the next frame); the user's groups are the same ones. */
    if (snap->group_epoch != world->group_epoch) {
        weft__group_drop_auto(world);
    }
    for (uint32_t g = 1; g <= world->group_count; ++g) {
        world->groups[g].n = snap->group_n[g];
    }
    for (uint32_t m = 0; m < world->module_part_count; ++m) {
        const weft__module_t *mod = &world->modules[m];
        if (mod->desc.snap_commit != NULL) {
            const snap_module_t *part = captured_part(snap, mod->name);
            mod->desc.snap_commit(world, mod->desc.user, part ? snap->block + part->off : NULL,
                                  part ? part->size : 0, staged[m]);
        }
    }
    return WEFT_OK;
}
