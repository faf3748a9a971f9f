/* archive_hier.c: the archive's hierarchy glue — descendants for a partial save, the HIER
 * section (save), and inserting the archived nodes into the hierarchy store (load).
 *
 * DESIGN
 * The hierarchy keeps its nodes in its own ordered store, not in ECS pools: only the `node`
 * tag lives in a pool (and travels as an ordinary component section). The HIER section adds,
 * per node in update order, its local transform, the inverse bind of its parent link and its
 * world matrix, so a loaded hierarchy computes bit-identical world matrices. A parent outside
 * the archive (a partial save of a subtree) makes the node a root on load; its local
 * transform and world matrix are kept as saved.
 * Loading inserts the nodes into the store while staging — the store is not part of
 * weft_world_hash() — parents first, so every attach finds its parent at an earlier row:
 * O(1), no subtree moves, no allocation. If an insert fails (out of memory), the nodes added
 * so far are removed again, children first. The commit then only overwrites the link and
 * world values of the new rows. Save uses only the public hierarchy API; the load reaches the
 * store through weft__hier_store() (hierarchy_store.h), so it does not depend on the layout
 * of the module's world slot. */
#include <string.h>

#include "archive_load.h"
#include "archive_secw.h"
#include "src/hier/hierarchy_store.h"
#include "weft/hierarchy.h"

_Static_assert(sizeof(weft_transform_t) == 40, "HIER record: transform is 40 bytes");
_Static_assert(sizeof(weft_mat4_t) == 64, "HIER record: mat4 is 64 bytes");
_Static_assert(8 + 40 + 64 + 64 == WEFT__ARC_HIER_RECORD, "HIER record size");

/* The store behind world->hier (set), through the hierarchy module's private accessor. */
static weft__hstore_t *store_of(weft_world_t *world) { return weft__hier_store(world->hier); }

/* Nodes in update order (parents first), from the world's allocator; NULL with *n = 0 when
 * there are none. Errors: WEFT_ENOMEM. */
static weft_result_t nodes_in_order(weft_world_t *world, weft_entity_t **out, uint32_t *n) {
    *out = NULL;
    *n = world->hier != NULL ? weft_hier_count(world) : 0;
    if (*n == 0) {
        return WEFT_OK;
    }
    *out = weft__alloc(world, (size_t)*n * sizeof(weft_entity_t), _Alignof(weft_entity_t));
    if (*out == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_archive_save: out of memory");
    }
    weft_hier_order(world, *out, *n);
    return WEFT_OK;
}

weft_result_t weft__hier_mark_descendants(weft_world_t *world, uint32_t *local, uint32_t slots) {
    weft_entity_t *order;
    uint32_t n;
    weft_result_t r = nodes_in_order(world, &order, &n);
    if (r != WEFT_OK) {
        return r;
    }
    /* Parents come first, so one pass marks whole subtrees. */
    for (uint32_t i = 0; i < n; ++i) {
        weft_entity_t p = weft_hier_parent(world, order[i]);
        uint32_t pi = weft_entity_index(p), ci = weft_entity_index(order[i]);
        if (p != 0 && pi < slots && ci < slots && local[pi] != 0) {
            local[ci] = 1;
        }
    }
    weft__free(world, order, (size_t)n * sizeof(weft_entity_t));
    return WEFT_OK;
}

uint64_t weft__hier_saved_nodes(weft_world_t *world, const uint32_t *local, uint32_t slots) {
    weft__component_t *tag =
        weft__component(world, weft_component_lookup(world, WEFT__ARC_HIER_NODE).id);
    if (world->hier == NULL || tag == NULL) {
        return 0;
    }
    uint64_t n = 0;
    for (uint32_t r = 0; r < tag->pool.count; ++r) {
        n += tag->pool.dense[r] < slots && local[tag->pool.dense[r]] != 0;
    }
    return n;
}

weft_result_t weft__hier_write(weft_world_t *world, weft__secw_t *w, const uint32_t *local,
                               uint32_t slots, uint64_t nodes) {
    weft_entity_t *order;
    uint32_t n;
    weft_result_t r = nodes_in_order(world, &order, &n);
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t *rec = weft__alloc(world, (size_t)slots * sizeof(uint32_t), _Alignof(uint32_t));
    if (rec == NULL) {
        weft__free(world, order, (size_t)n * sizeof(weft_entity_t));
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_archive_save: out of memory");
    }
    memset(rec, 0, (size_t)slots * sizeof(uint32_t));
    weft__secw_begin(w, WEFT__ARC_TAG_HIER, nodes * WEFT__ARC_HIER_RECORD, nodes);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; ++i) {
        weft_entity_t e = order[i];
        uint32_t ei = weft_entity_index(e);
        if (ei >= slots || local[ei] == 0) {
            continue;
        }
        weft_entity_t p = weft_hier_parent(world, e);
        uint32_t pi = weft_entity_index(p);
        unsigned char b[WEFT__ARC_HIER_RECORD];
        weft__put32(b, local[ei] - 1u);
        weft__put32(b + 4, p != 0 && pi < slots ? rec[pi] : 0u); /* 0: root or outside */
        memcpy(b + 8, weft_hier_local_read(world, e), 40);
        memcpy(b + 48, &weft_hier_link(world, e)->inverse_bind, 64);
        memcpy(b + 112, weft_hier_world(world, e), 64);
        weft__secw_put(w, b, sizeof b);
        rec[ei] = ++k;
    }
    weft_assert_internal(k == nodes);
    weft__secw_end(w);
    weft__free(world, rec, (size_t)slots * sizeof(uint32_t));
    weft__free(world, order, (size_t)n * sizeof(weft_entity_t));
    return WEFT_OK;
}

/* ---- load ------------------------------------------------------------------- >>load */

/* The section holding the `node` tag, or UINT32_MAX. */
static uint32_t node_section(const weft__stage_t *st) {
    for (uint32_t i = 0; i < st->arc.comp_count; ++i) {
        const weft__arc_comp_t *ac = &st->arc.comps[i];
        if (ac->name_len == sizeof WEFT__ARC_HIER_NODE - 1u &&
            memcmp(ac->name, WEFT__ARC_HIER_NODE, ac->name_len) == 0) {
            return i;
        }
    }
    return UINT32_MAX;
}

/* The archived node set must equal the set of entities carrying the tag, each node once. */
static weft_result_t check_node_sets(weft__stage_t *st, const weft__arc_comp_t *tag) {
    uint64_t n = st->arc.entity_count;
    if (tag->rows != st->arc.hier_count) {
        return WEFT__FAIL(st->world->log, WEFT_ECORRUPT,
                          "archive corrupt: %llu hierarchy nodes but %llu node tags",
                          (unsigned long long)st->arc.hier_count, (unsigned long long)tag->rows);
    }
    unsigned char *mark = weft__alloc(st->world, (size_t)n + 1u, 1);
    if (mark == NULL) {
        return WEFT__FAIL(st->world->log, WEFT_ENOMEM, "weft_archive_load: out of memory");
    }
    memset(mark, 0, (size_t)n + 1u);
    for (uint64_t k = 0; k < tag->rows; ++k) {
        mark[weft__le32(tag->ids + 4u * k)] = 1;
    }
    weft_result_t r = WEFT_OK;
    for (uint64_t i = 0; r == WEFT_OK && i < st->arc.hier_count; ++i) {
        uint32_t local = weft__le32(st->arc.hier + i * WEFT__ARC_HIER_RECORD);
        if (mark[local] != 1) {
            r = WEFT__FAIL(st->world->log, WEFT_ECORRUPT,
                           "archive corrupt: hierarchy node %llu (entity %u) is repeated or "
                           "lacks the node tag",
                           (unsigned long long)i, local);
        }
        mark[local] = 2;
    }
    weft__free(st->world, mark, (size_t)n + 1u);
    return r;
}

static weft_entity_t record_entity(const weft__stage_t *st, uint64_t i) {
    return st->handles[weft__le32(st->arc.hier + i * WEFT__ARC_HIER_RECORD)];
}

/* Remove the first `added` nodes again, children (later records) first. */
static void undo_inserts(weft__stage_t *st, uint64_t added) {
    weft__hstore_t *s = store_of(st->world);
    while (added-- > 0) {
        (void)weft__hstore_remove(s, record_entity(st, added), false, NULL, NULL, NULL);
    }
}

weft_result_t weft__load_stage_hierarchy(weft__stage_t *st) {
    uint32_t ts = node_section(st);
    bool tag_loaded = ts != UINT32_MAX && st->comps[ts].comp != NULL;
    if (st->arc.hier_count == 0) {
        if (tag_loaded && st->arc.comps[ts].rows != 0) {
            return WEFT__FAIL(st->world->log, WEFT_ECORRUPT,
                              "archive corrupt: node tags without a hierarchy section");
        }
        return WEFT_OK;
    }
    if (ts == UINT32_MAX) {
        return WEFT__FAIL(st->world->log, WEFT_ECORRUPT,
                          "archive corrupt: a hierarchy section without node tags");
    }
    if (!tag_loaded) {
        return WEFT_OK; /* skip_unknown: the world has no hierarchy; skip it whole */
    }
    if (st->world->hier == NULL) {
        return WEFT__FAIL(st->world->log, WEFT_EMISMATCH,
                          "weft_archive_load: the archive holds a hierarchy; call "
                          "weft_hier_components() on the world first");
    }
    weft_result_t r = check_node_sets(st, &st->arc.comps[ts]);
    if (r != WEFT_OK) {
        return r;
    }
    weft__hstore_t *s = store_of(st->world);
    uint64_t added = 0;
    for (; added < st->arc.hier_count; ++added) {
        weft_transform_t local;
        memcpy(&local, st->arc.hier + added * WEFT__ARC_HIER_RECORD + 8u, sizeof local);
        r = weft__hstore_add(s, record_entity(st, added), &local);
        if (r != WEFT_OK) {
            goto fail_undo;
        }
    }
    /* Attach binds to the parent's current world matrix; make it invertible for now (the
     * commit writes the archived values over both link and world). */
    const weft_mat4_t identity = weft_mat4_identity();
    for (uint64_t i = 0; i < st->arc.hier_count; ++i) {
        const uint32_t row = weft__hstore_row(s, record_entity(st, i));
        weft__hstore_set_data(s, row, &s->rows.local[row], &identity, &identity);
    }
    for (uint64_t i = 0; i < st->arc.hier_count; ++i) {
        uint32_t prec = weft__le32(st->arc.hier + i * WEFT__ARC_HIER_RECORD + 4u);
        if (prec == 0) {
            continue;
        }
        r = weft__hstore_attach(s, record_entity(st, i), record_entity(st, prec - 1u),
                                st->world->log);
        if (r != WEFT_OK) {
            goto fail_undo;
        }
    }
    st->hier_inserted = true;
    return WEFT_OK;

fail_undo:
    undo_inserts(st, added);
    return r;
}

void weft__load_commit_hierarchy(weft__stage_t *st) {
    if (!st->hier_inserted) {
        return;
    }
    weft__hstore_t *s = store_of(st->world);
    for (uint64_t i = 0; i < st->arc.hier_count; ++i) {
        const unsigned char *rec = st->arc.hier + i * WEFT__ARC_HIER_RECORD;
        const uint32_t row = weft__hstore_row(s, record_entity(st, i));
        weft_mat4_t bind, wm;
        memcpy(&bind, rec + 48, 64);
        memcpy(&wm, rec + 112, 64);
        weft__hstore_set_data(s, row, &s->rows.local[row], &bind, &wm);
    }
}
