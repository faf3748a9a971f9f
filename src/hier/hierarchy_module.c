/* hierarchy_module.c: the hierarchy's module part (hierarchy_module.h) — its data in the
 * world hash and in snapshots.
 *
 * DESIGN
 * Hash: weft__hstore_hash, nodes in entity index order, so row layout never shows.
 * Snapshot: a capture is every node in update order (parents first): entity, parent entity,
 * local transform, inverse bind, world matrix. A restore builds a complete replacement store
 * before touching anything (nodes added with identity transforms, so attaching never meets a
 * singular parent, parents first, so no subtree moves); the commit swaps it in, writes the
 * captured values (weft__hstore_set_data marks every node changed, so the next update
 * recomputes them from the restored inputs) and frees the old store. */
#include "hierarchy_module.h"

#include <string.h>

#include "hierarchy_store.h"
#include "jobs/platform/report.h"
#include "weft/hierarchy.h"

/* One node as captured. */
typedef struct snap_node {
    weft_entity_t e;          /* the node */
    weft_entity_t parent;     /* its parent, 0 for roots */
    weft_transform_t local;   /* local transform */
    weft_mat4_t inverse_bind; /* link's inverse bind */
    weft_mat4_t world;        /* world matrix as of the last update */
} snap_node_t;

static weft__hstore_t *store_of(const weft_world_t *world) {
    return world->hier != NULL ? weft__hier_store(world->hier) : NULL;
}

static uint64_t hier_hash(const weft_world_t *world, uint64_t h) {
    const weft__hstore_t *s = store_of(world);
    return s != NULL ? weft__hstore_hash(s, h, weft__hash_mix) : h;
}

static size_t snap_size(const weft_world_t *world) {
    const weft__hstore_t *s = store_of(world);
    return s != NULL ? (size_t)s->live * sizeof(snap_node_t) : 0;
}

static void snap_capture(const weft_world_t *world, void *dst, size_t size) {
    const weft__hstore_t *s = store_of(world);
    snap_node_t *nodes = dst;
    const weft__hrows_t *w = &s->rows;
    uint32_t n = 0;
    for (uint32_t r = 0; r < s->count && (size_t)n * sizeof(snap_node_t) < size; r++) {
        if (w->ent[r] == 0) {
            continue; /* a hole */
        }
        nodes[n++] = (snap_node_t){.e = w->ent[r],
                                   .parent = w->link[r].parent,
                                   .local = w->local[r],
                                   .inverse_bind = w->link[r].inverse_bind,
                                   .world = w->world[r]};
    }
}

static void free_staged(weft_world_t *world, weft__hstore_t *fresh) {
    weft__hstore_fini(fresh);
    weft__free(world, fresh, sizeof(*fresh));
}

static weft_result_t snap_prepare(weft_world_t *world, const void *src, size_t size,
                                  void **staged) {
    *staged = NULL;
    weft__hstore_t *live = store_of(world);
    weft__hstore_t *fresh = weft__alloc(world, sizeof(*fresh), _Alignof(weft__hstore_t));
    if (fresh == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_snapshot_restore: out of memory");
    }
    weft__hstore_init(fresh, &live->alloc, world->log); /* failures reach the world */
    const snap_node_t *nodes = src;
    const size_t n = size / sizeof(snap_node_t);
    const weft_transform_t identity = weft_transform_identity();
    weft_result_t r = WEFT_OK;
    for (size_t i = 0; r == WEFT_OK && i < n; ++i) {
        r = weft__hstore_add(fresh, nodes[i].e, &identity);
    }
    for (size_t i = 0; r == WEFT_OK && i < n; ++i) {
        if (nodes[i].parent != 0) {
            r = weft__hstore_attach(fresh, nodes[i].e, nodes[i].parent, world->log);
        }
    }
    if (r != WEFT_OK) {
        free_staged(world, fresh);
        return r == WEFT_ENOMEM
                   ? r
                   : WEFT__FAIL(world->log, r, "weft_snapshot_restore: hierarchy rebuild failed");
    }
    *staged = fresh;
    return WEFT_OK;
}

static void snap_commit(weft_world_t *world, const void *src, size_t size, void *staged) {
    weft__hstore_t *store = store_of(world);
    weft__hstore_t *fresh = staged;
    weft__hstore_t old = *store;
    *store = *fresh;
    *fresh = old; /* freed below with the staging struct */
    const snap_node_t *nodes = src;
    for (size_t i = 0; i < size / sizeof(snap_node_t); ++i) {
        weft__hstore_set_data(store, weft__hstore_row(store, nodes[i].e), &nodes[i].local,
                              &nodes[i].inverse_bind, &nodes[i].world);
    }
    free_staged(world, fresh);
}

static void snap_abort(weft_world_t *world, void *staged) {
    if (staged != NULL) {
        free_staged(world, staged);
    }
}

const weft__module_t weft__hier_module = {
    .name = "weft.hierarchy",
    .hash = hier_hash,
    .snap_size = snap_size,
    .snap_capture = snap_capture,
    .snap_prepare = snap_prepare,
    .snap_commit = snap_commit,
    .snap_abort = snap_abort,
};
