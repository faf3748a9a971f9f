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
 * The hierarchy keeps its nodes in its own ordered store, outside the pools (only the node
 * tag is a pool). A capture records every node in update order — entity, parent, local
 * transform, inverse bind, world matrix — through the public readers. A restore builds a
 * complete replacement store before touching anything (nodes added with identity
 * transforms, so attaching never meets a singular parent, parents first, so no subtree
 * moves), swaps it in at commit time and then writes the recorded values through the
 * public accessors; the old store is freed last. The store is reached through
 * weft__hier_store() (hierarchy_store.h), the hierarchy module's private accessor. */
#include "weft/snapshot.h"

#include <string.h>

#include "src/core/access.h"
#include "src/core/change.h"
#include "src/core/entity.h"
#include "src/core/world.h"
#include "src/hier/hierarchy_store.h"
#include "weft/hierarchy.h"

#define ALIGN_DATA 64u /* alignment of each array inside the block */

/* One hierarchy node as captured. */
typedef struct snap_node {
    weft_entity_t e;          /* the node */
    weft_entity_t parent;     /* its parent, 0 for roots */
    weft_transform_t local;   /* local transform */
    weft_mat4_t inverse_bind; /* link's inverse bind */
    weft_mat4_t world;        /* world matrix as of the last update */
} snap_node_t;

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
    uint32_t group_n[WEFT__MAX_GROUPS];     /* aligned rows of each group */
    uint32_t node_count;                    /* hierarchy nodes captured */
    size_t nodes_off;                       /* offset of the snap_node_t array in the block */
    snap_pool_t pools[WEFT_MAX_COMPONENTS]; /* by component id */
};

static size_t align_up(size_t n) { return (n + ALIGN_DATA - 1u) & ~(size_t)(ALIGN_DATA - 1u); }

static uint32_t hier_nodes(const weft_world_t *world) {
    return world->hier != NULL ? weft_hier_count(world) : 0;
}

/* The hierarchy store, through the hierarchy module's accessor (world->hier is set). */
static weft__hstore_t *store_of(weft_world_t *world) { return weft__hier_store(world->hier); }

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
    weft__free(world, snap, sizeof *snap);
}

size_t weft_snapshot_size(const weft_snapshot_t *snap) {
    return snap && snap->valid ? snap->block_used : 0;
}

/* ---- capture ------------------------------------------------------------ >>capture */

/* Lay out the block for the world as it is now; returns its size. */
static size_t plan_capture(const weft_world_t *world, snap_pool_t *pools, uint32_t slots,
                           size_t *nodes_off) {
    size_t off = align_up((size_t)slots * 4u) + align_up((size_t)world->free_count * 4u);
    for (uint32_t c = 1; c <= world->component_count; ++c) {
        const weft__pool_t *p = &world->components[c]->pool;
        pools[c].count = p->count;
        pools[c].dense_off = off;
        off += align_up((size_t)p->count * 4u);
        pools[c].data_off = off;
        off += align_up((size_t)p->count * p->size);
        if (world->components[c]->resource) { /* a resource's value follows its empty pool */
            off += align_up(p->size);
        }
    }
    *nodes_off = off;
    off += align_up((size_t)hier_nodes(world) * sizeof(snap_node_t));
    return off;
}

/* Record every hierarchy node in update order. The entity column is filled first (the
 * order reader wants a plain array), then expanded in place from the back. */
static void capture_nodes(weft_world_t *world, snap_node_t *nodes) {
    uint32_t n = hier_nodes(world);
    if (n == 0) {
        return;
    }
    weft_entity_t *order = (weft_entity_t *)(void *)nodes;
    weft_hier_order(world, order, n);
    for (uint32_t i = n; i-- > 0;) {
        weft_entity_t e = order[i]; /* read before nodes[i] (which overlaps it) is written */
        snap_node_t *sn = &nodes[i];
        sn->e = e;
        sn->parent = weft_hier_parent(world, e);
        sn->local = *weft_hier_local(world, e);
        sn->inverse_bind = weft_hier_link(world, e)->inverse_bind;
        sn->world = *weft_hier_world(world, e);
    }
}

weft_result_t weft_snapshot_capture(weft_world_t *world, weft_snapshot_t *snap) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_snapshot_capture: world is NULL");
    WEFT__CONTRACT(snap != NULL, world->log, WEFT_EINVAL, "weft_snapshot_capture: snap is NULL");
    WEFT__CONTRACT(snap->world == world, world->log, WEFT_EINVAL,
                   "weft_snapshot_capture: the snapshot belongs to another world");
    WEFT__MAIN_CALL(world);
    uint32_t slots = weft_atomic_load_relaxed(&world->slot_count);
    snap_pool_t pools[WEFT_MAX_COMPONENTS];
    size_t nodes_off;
    size_t need = plan_capture(world, pools, slots, &nodes_off);
    if (need > snap->block_cap) {
        unsigned char *b = weft__alloc(world, need, ALIGN_DATA);
        if (!b) {
            return WEFT__FAIL(world->log, WEFT_ENOMEM,
                              "weft_snapshot_capture: cannot allocate %zu bytes", need);
        }
        weft__free(world, snap->block, snap->block_cap);
        snap->block = b;
        snap->block_cap = need;
    }
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
    capture_nodes(world, (snap_node_t *)(void *)(snap->block + nodes_off));
    snap->node_count = hier_nodes(world);
    snap->nodes_off = nodes_off;
    memcpy(snap->pools, pools, sizeof(snap_pool_t) * (world->component_count + 1u));
    snap->slot_count = slots;
    snap->free_count = world->free_count;
    snap->live = world->live;
    snap->component_count = world->component_count;
    snap->group_count = world->group_count;
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
}

/* The fallible half of the hierarchy restore: a complete replacement store, built aside. */
static weft_result_t build_store(weft_world_t *world, const weft_snapshot_t *s,
                                 weft__hstore_t *fresh) {
    const snap_node_t *nodes = (const snap_node_t *)(const void *)(s->block + s->nodes_off);
    weft__hstore_init(fresh, &store_of(world)->alloc, world->log); /* failures reach the world */
    const weft_transform_t identity = weft_transform_identity();
    weft_result_t r = WEFT_OK;
    for (uint32_t i = 0; r == WEFT_OK && i < s->node_count; ++i) {
        r = weft__hstore_add(fresh, nodes[i].e, &identity);
    }
    for (uint32_t i = 0; r == WEFT_OK && i < s->node_count; ++i) {
        if (nodes[i].parent != 0) {
            r = weft__hstore_attach(fresh, nodes[i].e, nodes[i].parent, world->log);
        }
    }
    if (r != WEFT_OK) {
        weft__hstore_fini(fresh);
        return r == WEFT_ENOMEM
                   ? r
                   : WEFT__FAIL(world->log, r, "weft_snapshot_restore: hierarchy rebuild failed");
    }
    return WEFT_OK;
}

/* The infallible half: swap the stores, write the captured values, free the old store. */
static void install_store(weft_world_t *world, const weft_snapshot_t *s, weft__hstore_t *fresh) {
    weft__hstore_t *store = store_of(world);
    weft__hstore_t old = *store;
    *store = *fresh;
    const snap_node_t *nodes = (const snap_node_t *)(const void *)(s->block + s->nodes_off);
    for (uint32_t i = 0; i < s->node_count; ++i) {
        weft_entity_t e = nodes[i].e;
        *weft_hier_local(world, e) = nodes[i].local;
        weft_parent_link_t *link = (weft_parent_link_t *)(void *)weft_hier_link(world, e);
        link->inverse_bind = nodes[i].inverse_bind;
        *(weft_mat4_t *)(void *)weft_hier_world(world, e) = nodes[i].world;
    }
    weft__hstore_fini(&old);
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
    if (snap->group_count != world->group_count) {
        return WEFT__FAIL(world->log, WEFT_ESTATE,
                          "weft_snapshot_restore: %u groups now, %u at capture", world->group_count,
                          snap->group_count);
    }
    if (snap->node_count > 0 && world->hier == NULL) {
        return WEFT__FAIL(world->log, WEFT_ESTATE, "weft_snapshot_restore: no hierarchy state");
    }
    uint32_t *new_free;
    weft_result_t r = restore_reserve(world, snap, &new_free);
    if (r != WEFT_OK) {
        return r;
    }
    weft__hstore_t fresh;
    bool swap_store = world->hier != NULL;
    if (swap_store) {
        r = build_store(world, snap, &fresh);
        if (r != WEFT_OK) {
            weft__free(world, new_free, (size_t)snap->free_count * 4u);
            return r;
        }
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
    for (uint32_t g = 1; g <= world->group_count; ++g) {
        world->groups[g].n = snap->group_n[g];
    }
    if (swap_store) {
        install_store(world, snap, &fresh);
    }
    return WEFT_OK;
}
