/* hierarchy_module.c: the hierarchy's module callbacks (hierarchy_module.h) — its data in the
 * world hash, in snapshots and in archives.
 *
 * DESIGN
 * Hash: weft__hstore_hash, nodes in entity index order, so row layout never shows.
 * Snapshot: a capture is every node in update order (parents first): entity, parent entity,
 * local transform, inverse bind, world matrix. A restore builds a complete replacement store
 * before touching anything (nodes added with identity transforms, so attaching never meets a
 * singular parent, parents first, so no subtree moves); the commit swaps it in, writes the
 * captured values (weft__hstore_set_data marks every node changed, so the next update
 * recomputes them from the restored inputs) and frees the old store.
 * Archive: one record of ARC_RECORD bytes per saved node in update order (parents first):
 * u32 archive-local id, u32 parent record + 1 (0: a root, or a parent outside the archive),
 * local transform (40), the link's inverse bind (64), world matrix (64), floats as stored
 * (version 1; also what a format-2 HIER section holds). A partial save with descendants
 * adds every descendant of a saved node. The load inserts the nodes into the live store while
 * staging (no entity exists yet, the store is not observable until the commit), parents first,
 * so every attach finds its parent at an earlier row: O(1), no subtree moves; a failure
 * removes them again, children first. The commit writes the archived link and world values,
 * so a loaded hierarchy computes bit-identical world matrices. */
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

static weft__hstore_t *store_of(void *user) { return weft__hier_store(user); }

static uint64_t hier_hash(const weft_world_t *world, void *user, uint64_t h) {
    (void)world;
    return weft__hstore_hash(store_of(user), h, weft_hash_mix);
}

static size_t snap_size(const weft_world_t *world, void *user) {
    (void)world;
    return (size_t)store_of(user)->live * sizeof(snap_node_t);
}

static void snap_capture(const weft_world_t *world, void *user, void *dst, size_t size) {
    (void)world;
    const weft__hstore_t *s = store_of(user);
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

static weft_result_t snap_prepare(weft_world_t *world, void *user, const void *src, size_t size,
                                  void **staged) {
    *staged = NULL;
    weft__hstore_t *live = store_of(user);
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

static void snap_commit(weft_world_t *world, void *user, const void *src, size_t size,
                        void *staged) {
    weft__hstore_t *store = store_of(user);
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

static void snap_abort(weft_world_t *world, void *user, void *staged) {
    (void)user;
    if (staged != NULL) {
        free_staged(world, staged);
    }
}

/* ---- archive save -------------------------------------------------------- >>arc_save */

#define ARC_RECORD 176u /* 8 + transform 40 + inverse bind 64 + world 64 */
_Static_assert(sizeof(weft_transform_t) == 40, "archive record: transform is 40 bytes");
_Static_assert(sizeof(weft_mat4_t) == 64, "archive record: mat4 is 64 bytes");

/* Rows are in update order: a parent's row precedes its children's, so one pass marks whole
 * subtrees. */
static weft_result_t arc_mark(weft_world_t *world, void *user, weft_module_save_t *ctx) {
    (void)world;
    const weft__hstore_t *s = store_of(user);
    for (uint32_t r = 0; r < s->count; ++r) {
        const weft_entity_t p = s->rows.link[r].parent;
        if (s->rows.ent[r] != 0 && p != 0 && weft_module_save_local(ctx, p) != 0 &&
            weft_module_save_local(ctx, s->rows.ent[r]) == 0) {
            weft_result_t res = weft_module_save_include(ctx, s->rows.ent[r]);
            if (res != WEFT_OK) {
                return res;
            }
        }
    }
    return WEFT_OK;
}

static uint64_t arc_size(weft_world_t *world, void *user, const weft_module_save_t *ctx,
                         uint64_t *items) {
    (void)world;
    const weft__hstore_t *s = store_of(user);
    uint64_t n = 0;
    for (uint32_t r = 0; r < s->count; ++r) {
        n += s->rows.ent[r] != 0 && weft_module_save_local(ctx, s->rows.ent[r]) != 0;
    }
    *items = n;
    return n * ARC_RECORD;
}

static weft_result_t arc_save(weft_world_t *world, void *user, weft_module_save_t *ctx) {
    const weft__hstore_t *s = store_of(user);
    /* record + 1 of each row's node (0: not saved), so a child finds its parent's record */
    uint32_t *rec = weft__alloc(world, (size_t)s->count * sizeof(uint32_t) + 1u, 4);
    if (rec == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_archive_save: out of memory");
    }
    memset(rec, 0, (size_t)s->count * sizeof(uint32_t));
    uint32_t k = 0;
    for (uint32_t r = 0; r < s->count; ++r) {
        const weft_entity_t e = s->rows.ent[r];
        const uint32_t local = e != 0 ? weft_module_save_local(ctx, e) : 0;
        if (local == 0) {
            continue;
        }
        const weft_entity_t p = s->rows.link[r].parent;
        const uint32_t prow = p != 0 ? weft__hstore_row(s, p) : WEFT__HROW_NONE;
        unsigned char b[ARC_RECORD];
        const uint32_t head[2] = {local - 1u, prow != WEFT__HROW_NONE ? rec[prow] : 0u};
        memcpy(b, head, 8);
        memcpy(b + 8, &s->rows.local[r], 40);
        memcpy(b + 48, &s->rows.link[r].inverse_bind, 64);
        memcpy(b + 112, &s->rows.world[r], 64);
        weft_module_save_put(ctx, b, sizeof b);
        rec[r] = ++k;
    }
    weft__free(world, rec, (size_t)s->count * sizeof(uint32_t) + 1u);
    return WEFT_OK;
}

/* ---- archive load -------------------------------------------------------- >>arc_load */

/* A prepared load: the records (in the archive's bytes) whose nodes were inserted. */
typedef struct arc_staged {
    const weft_module_load_t *ctx; /* the load (lives until its commit or abort) */
    const unsigned char *rec;      /* n records of ARC_RECORD bytes */
    uint64_t n;                    /* records */
} arc_staged_t;

static uint32_t rec_u32(const unsigned char *rec, size_t at) {
    uint32_t v;
    memcpy(&v, rec + at, 4);
    return v;
}

static weft_entity_t rec_entity(const weft_module_load_t *ctx, const unsigned char *rec,
                                uint64_t i) {
    return weft_module_load_entity(ctx, rec_u32(rec + i * ARC_RECORD, 0));
}

/* Remove the first `added` records' nodes again, children (later records) first. */
static void undo_inserts(weft__hstore_t *s, const weft_module_load_t *ctx, const unsigned char *rec,
                         uint64_t added) {
    while (added-- > 0) {
        (void)weft__hstore_remove(s, rec_entity(ctx, rec, added), false, NULL, NULL, NULL);
    }
}

/* The records are well-formed (ids in range, parents first: which also rules out cycles)
 * and name exactly the entities carrying the node tag, each once. */
static weft_result_t arc_check(weft_world_t *world, const weft_module_load_t *ctx,
                               const unsigned char *rec, uint64_t n) {
    const uint64_t ents = weft_module_load_count(ctx);
    for (uint64_t i = 0; i < n; ++i) {
        const uint32_t local = rec_u32(rec + i * ARC_RECORD, 0);
        const uint32_t parent = rec_u32(rec + i * ARC_RECORD, 4);
        if (local >= ents || parent > i) {
            return WEFT__FAIL(world->log, WEFT_ECORRUPT,
                              "archive corrupt: hierarchy node %llu (entity %u, parent record "
                              "%u) is out of range or precedes its parent",
                              (unsigned long long)i, local, parent);
        }
    }
    uint64_t tags = 0;
    const void *ids = NULL;
    const bool tagged = weft_module_load_component(ctx, WEFT__HIER_NODE_TAG, &tags, &ids);
    if (n == 0 || !tagged || tags != n) {
        return n == 0 && tags == 0 ? WEFT_OK
                                   : WEFT__FAIL(world->log, WEFT_ECORRUPT,
                                                "archive corrupt: %llu hierarchy nodes but %llu "
                                                "node tags",
                                                (unsigned long long)n, (unsigned long long)tags);
    }
    unsigned char *mark = weft__alloc(world, (size_t)ents + 1u, 1);
    if (mark == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_archive_load: out of memory");
    }
    memset(mark, 0, (size_t)ents + 1u);
    for (uint64_t k = 0; k < tags; ++k) {
        mark[rec_u32(ids, 4u * k)] = 1;
    }
    weft_result_t r = WEFT_OK;
    for (uint64_t i = 0; r == WEFT_OK && i < n; ++i) {
        const uint32_t local = rec_u32(rec + i * ARC_RECORD, 0);
        if (mark[local] != 1) {
            r = WEFT__FAIL(world->log, WEFT_ECORRUPT,
                           "archive corrupt: hierarchy node %llu (entity %u) is repeated or "
                           "lacks the node tag",
                           (unsigned long long)i, local);
        }
        mark[local] = 2;
    }
    weft__free(world, mark, (size_t)ents + 1u);
    return r;
}

static weft_result_t arc_prepare(weft_world_t *world, void *user, const weft_module_load_t *ctx,
                                 const void *src, size_t size, uint32_t version, void **staged) {
    *staged = NULL;
    if (version != 1u) {
        return WEFT__FAIL(world->log, WEFT_EVERSION,
                          "weft_archive_load: hierarchy data version %u (this build reads 1)",
                          version);
    }
    if (size % ARC_RECORD != 0) {
        return WEFT__FAIL(world->log, WEFT_ECORRUPT,
                          "archive corrupt: hierarchy data of %zu bytes is not whole records",
                          size);
    }
    const unsigned char *rec = src;
    const uint64_t n = size / ARC_RECORD;
    weft_result_t r = arc_check(world, ctx, rec, n);
    if (r != WEFT_OK || n == 0) {
        return r;
    }
    arc_staged_t *st = weft__alloc(world, sizeof *st, _Alignof(arc_staged_t));
    if (st == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_archive_load: out of memory");
    }
    *st = (arc_staged_t){ctx, rec, n};
    weft__hstore_t *s = store_of(user);
    uint64_t added = 0;
    for (; added < n; ++added) {
        weft_transform_t local;
        memcpy(&local, rec + added * ARC_RECORD + 8u, sizeof local);
        r = weft__hstore_add(s, rec_entity(ctx, rec, added), &local);
        if (r != WEFT_OK) {
            goto fail_undo;
        }
    }
    /* Attach binds to the parent's current world matrix; make it invertible for now (the
     * commit writes the archived values over both link and world). */
    const weft_mat4_t identity = weft_mat4_identity();
    for (uint64_t i = 0; i < n; ++i) {
        const uint32_t row = weft__hstore_row(s, rec_entity(ctx, rec, i));
        weft__hstore_set_data(s, row, &s->rows.local[row], &identity, &identity);
    }
    for (uint64_t i = 0; i < n; ++i) {
        const uint32_t prec = rec_u32(rec + i * ARC_RECORD, 4);
        if (prec != 0) {
            r = weft__hstore_attach(s, rec_entity(ctx, rec, i), rec_entity(ctx, rec, prec - 1u),
                                    world->log);
            if (r != WEFT_OK) {
                goto fail_undo;
            }
        }
    }
    *staged = st;
    return WEFT_OK;

fail_undo:
    undo_inserts(s, ctx, rec, added);
    weft__free(world, st, sizeof *st);
    return r;
}

static void arc_commit(weft_world_t *world, void *user, const weft_module_load_t *ctx,
                       void *staged) {
    arc_staged_t *st = staged;
    if (st == NULL) {
        return;
    }
    weft__hstore_t *s = store_of(user);
    for (uint64_t i = 0; i < st->n; ++i) {
        const unsigned char *rec = st->rec + i * ARC_RECORD;
        const uint32_t row = weft__hstore_row(s, rec_entity(ctx, st->rec, i));
        weft_mat4_t bind, wm;
        memcpy(&bind, rec + 48, 64);
        memcpy(&wm, rec + 112, 64);
        weft__hstore_set_data(s, row, &s->rows.local[row], &bind, &wm);
    }
    weft__free(world, st, sizeof *st);
}

static void arc_abort(weft_world_t *world, void *user, void *staged) {
    arc_staged_t *st = staged;
    if (st != NULL) {
        undo_inserts(store_of(user), st->ctx, st->rec, st->n);
        weft__free(world, st, sizeof *st);
    }
}

const weft_module_desc_t weft__hier_module_desc = {
    .name = WEFT__HIER_MODULE_NAME,
    .archive_version = 1,
    .hash = hier_hash,
    .snap_size = snap_size,
    .snap_capture = snap_capture,
    .snap_prepare = snap_prepare,
    .snap_commit = snap_commit,
    .snap_abort = snap_abort,
    .archive_mark = arc_mark,
    .archive_size = arc_size,
    .archive_save = arc_save,
    .archive_prepare = arc_prepare,
    .archive_commit = arc_commit,
    .archive_abort = arc_abort,
};
