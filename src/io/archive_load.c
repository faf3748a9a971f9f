/* archive_load.c: weft_archive_load — stage 2 (match, check, choose ids, reserve) and stage 3
 * (commit) of loading an archive into a world. Stage 1 is archive_parse.c.
 *
 * DESIGN
 * All-or-nothing without an undo log: every step that can fail runs before the first change
 * a caller could observe. Staging may grow capacities the world hash does not see (pool
 * arrays, sparse pages, committed entity-table pages, interned signatures), which is why a
 * failed load leaves weft_world_hash() identical. The commit then only writes into memory
 * that exists: it creates the entities (their ids were predicted from the free list and the
 * table's high-water mark, exactly as weft_entity_create_n hands them out), appends each
 * section's rows at the end of its pool with one bulk copy of the data, rewrites the owner
 * column and the declared entity fields through the remap table, sets every new entity's
 * signature, restores group alignment and fires on_add hooks.
 *
 * Per load the stage holds, per archived entity, its new handle (the remap table) and its new
 * signature (which also catches an entity listed twice in a section): 12 bytes for every 8
 * bytes of input, so hostile input cannot make the loader allocate more than a small multiple
 * of its own size. */
#include <string.h>

#include "archive_internal.h"
#include "archive_load.h"
#include "src/core/access.h"
#include "src/core/change.h"
#include "src/core/entity.h"
#include "src/core/signature.h"
#include "src/core/world.h"

#define DEFAULT_MAX_BYTES ((size_t)1 << 30)

/* ---- stage lifetime --------------------------------------------------------- >>stage */

static void *stage_alloc(weft__stage_t *st, size_t size, size_t align) {
    return weft__alloc(st->world, size ? size : 1u, align);
}

static void stage_free(weft__stage_t *st, void *p, size_t size) {
    weft__free(st->world, p, size ? size : 1u);
}

static void stage_fini(weft__stage_t *st) {
    uint64_t n = st->arc.entity_count;
    if (st->comps) {
        for (uint32_t i = 0; i < st->arc.comp_count; ++i) {
            stage_free(st, st->comps[i].converted, st->comps[i].converted_bytes);
        }
        stage_free(st, st->comps, sizeof(weft__stage_comp_t) * st->arc.comp_count);
    }
    stage_free(st, st->handles, (size_t)n * sizeof(uint64_t));
    stage_free(st, st->sig, (size_t)n * sizeof(uint32_t));
    stage_free(st, st->new_free, (size_t)st->new_free_cap * sizeof(uint32_t));
    weft__arc_free(&st->arc);
}

/* ---- matching sections to components ---------------------------------- >>match */

static const weft_archive_upgrade_t *find_upgrade(const weft_archive_load_desc_t *d,
                                                  const weft__arc_comp_t *ac, const char *name) {
    for (uint32_t i = 0; i < d->upgrade_count; ++i) {
        const weft_archive_upgrade_t *u = &d->upgrades[i];
        if (u->component && u->fn && strcmp(u->component, name) == 0 &&
            u->from_schema == ac->schema && (u->from_size == 0 || u->from_size == ac->size)) {
            return u;
        }
    }
    return NULL;
}

static bool same_fields(const weft__arc_comp_t *ac, const weft__component_t *c) {
    if (ac->field_count != c->entity_field_count) {
        return false;
    }
    for (uint32_t f = 0; f < ac->field_count; ++f) {
        if (weft__le32(ac->fields + 4u * f) != c->entity_fields[f]) {
            return false;
        }
    }
    return true;
}

/* A resource section: its value replaces the value of the world's resource of that name,
 * which must have the same layout (resources have no schema versions to upgrade). */
static weft_result_t match_resource(weft__stage_t *st, uint32_t i, weft_component_t id,
                                    const char *name, uint8_t *seen) {
    const weft__arc_comp_t *ac = &st->arc.comps[i];
    weft__component_t *c = weft__component_any(st->world, id.id);
    if (!c || !c->resource) {
        if (!c && st->desc.skip_unknown) {
            return WEFT_OK;
        }
        return WEFT__FAIL(st->world->log, WEFT_EMISMATCH,
                          "weft_archive_load: resource '%s' is %s in this world", name,
                          c ? "a component" : "not registered");
    }
    if (seen[id.id]) {
        return WEFT__FAIL(st->world->log, WEFT_ECORRUPT,
                          "weft_archive_load: resource '%s' appears twice", name);
    }
    seen[id.id] = 1;
    if (ac->size != c->pool.size || ac->align != c->pool.align) {
        return WEFT__FAIL(st->world->log, WEFT_EMISMATCH,
                          "weft_archive_load: resource '%s' layout differs (archive: size %u "
                          "align %u; world: size %u align %u)",
                          name, ac->size, ac->align, c->pool.size, c->pool.align);
    }
    st->comps[i].resource = c;
    return WEFT_OK;
}

/* Decide, for one section, its target component and whether it needs an upgrade. */
static weft_result_t match_section(weft__stage_t *st, uint32_t i, uint8_t *seen) {
    const weft__arc_comp_t *ac = &st->arc.comps[i];
    weft__stage_comp_t *sc = &st->comps[i];
    char name[WEFT__ARC_NAME_MAX + 1];
    memcpy(name, ac->name, ac->name_len);
    name[ac->name_len] = '\0';
    weft_component_t id = weft_component_lookup(st->world, name);
    if (ac->resource) {
        return match_resource(st, i, id, name, seen);
    }
    weft__component_t *c = weft__component(st->world, id.id);
    if (!c) {
        if (st->desc.skip_unknown) {
            return WEFT_OK;
        }
        return WEFT__FAIL(st->world->log, WEFT_EMISMATCH,
                          "weft_archive_load: component '%s' is not registered in this world",
                          name);
    }
    if (seen[id.id]) {
        return WEFT__FAIL(st->world->log, WEFT_ECORRUPT,
                          "weft_archive_load: component '%s' appears twice", name);
    }
    seen[id.id] = 1;
    sc->comp = c;
    /* Exact layout match is the fast path (bulk copy). Otherwise an upgrade hook for the
     * archived schema version decides; without one, a schema difference is a version error
     * and a same-schema layout difference a mismatch. */
    if (ac->schema == c->version && ac->size == c->pool.size && ac->align == c->pool.align &&
        same_fields(ac, c)) {
        return WEFT_OK;
    }
    sc->up = find_upgrade(&st->desc, ac, name);
    if (sc->up) {
        return WEFT_OK;
    }
    if (ac->schema != c->version) {
        return WEFT__FAIL(st->world->log, WEFT_EVERSION,
                          "weft_archive_load: component '%s' was saved with schema %u, the world "
                          "has %u, and no upgrade hook handles %u",
                          name, ac->schema, c->version, ac->schema);
    }
    return WEFT__FAIL(st->world->log, WEFT_EMISMATCH,
                      "weft_archive_load: component '%s' layout differs (archive: size %u align "
                      "%u, %u entity fields; world: size %u align %u, %u entity fields)",
                      name, ac->size, ac->align, ac->field_count, c->pool.size, c->pool.align,
                      c->entity_field_count);
}

/* Run the upgrade hook over every row of section i into a converted copy. */
static weft_result_t upgrade_section(weft__stage_t *st, uint32_t i) {
    const weft__arc_comp_t *ac = &st->arc.comps[i];
    weft__stage_comp_t *sc = &st->comps[i];
    size_t size = sc->comp->pool.size;
    if (ac->rows > SIZE_MAX / (size ? size : 1u)) {
        return WEFT__FAIL(st->world->log, WEFT_ENOMEM, "weft_archive_load: upgrade too large");
    }
    sc->converted_bytes = (size_t)ac->rows * size;
    sc->converted = stage_alloc(st, sc->converted_bytes, sc->comp->pool.align);
    if (!sc->converted) {
        sc->converted_bytes = 0;
        return WEFT__FAIL(st->world->log, WEFT_ENOMEM, "weft_archive_load: out of memory");
    }
    memset(sc->converted, 0, sc->converted_bytes);
    for (uint64_t r = 0; r < ac->rows; ++r) {
        weft_result_t res =
            sc->up->fn(ac->data + r * ac->size, ac->size, sc->converted + r * size, sc->up->user);
        if (res != WEFT_OK) {
            return WEFT__FAIL(st->world->log, res,
                              "weft_archive_load: upgrade hook of '%s' failed on row %llu (%s)",
                              sc->comp->name, (unsigned long long)r, weft_result_name(res));
        }
    }
    return WEFT_OK;
}

/* ---- signatures and duplicates ---------------------------------------- >>sigs */

/* True when the interned set `sig` holds component c (ids are sorted: a binary search). */
static bool sig_holds(const weft_world_t *world, uint32_t sig, uint32_t c) {
    uint32_t count;
    const uint32_t *ids = weft__sig_ids(world, sig, &count);
    return weft__ids_have(ids, count, c);
}

/* Walk every matched section's owner column: step each entity's signature by the section's
 * component (interning new sets now, so the commit cannot fail) and reject an entity listed
 * twice in one section. Every staged set starts empty and a component's section appears once,
 * so an entity whose set already holds the section's component was listed before in this
 * section: the set is the duplicate check, with no table of its own. A one-entry memo makes
 * the common case (every entity in a section has the same set) one compare per row. */
static weft_result_t stage_signatures(weft__stage_t *st) {
    for (uint32_t i = 0; i < st->arc.comp_count; ++i) {
        const weft__arc_comp_t *ac = &st->arc.comps[i];
        weft__stage_comp_t *sc = &st->comps[i];
        if (!sc->comp) {
            continue;
        }
        const uint32_t c = sc->comp->pool.id;
        uint32_t memo_from = UINT32_MAX, memo_to = 0;
        bool memo_dup = false;
        for (uint64_t r = 0; r < ac->rows; ++r) {
            uint32_t local = weft__le32(ac->ids + 4u * r);
            uint32_t from = st->sig[local];
            if (from != memo_from) {
                memo_dup = sig_holds(st->world, from, c);
                if (!memo_dup) {
                    weft_result_t res = weft__sig_step(st->world, from, c, false, &memo_to);
                    if (res != WEFT_OK) {
                        return res;
                    }
                }
                memo_from = from;
            }
            if (memo_dup) {
                return WEFT__FAIL(st->world->log, WEFT_ECORRUPT,
                                  "archive corrupt: entity %u has component '%s' twice", local,
                                  sc->comp->name);
            }
            st->sig[local] = memo_to;
        }
    }
    return WEFT_OK;
}

/* ---- pools ------------------------------------------------------------------- >>pools */

/* Room for every new row and the sparse page of every new owner. */
static weft_result_t stage_pools(weft__stage_t *st) {
    for (uint32_t i = 0; i < st->arc.comp_count; ++i) {
        const weft__arc_comp_t *ac = &st->arc.comps[i];
        weft__pool_t *pool = st->comps[i].comp ? &st->comps[i].comp->pool : NULL;
        if (!pool || ac->rows == 0) {
            continue;
        }
        if (ac->rows > (uint64_t)(UINT32_MAX - 1u) - pool->count) {
            return WEFT__FAIL(st->world->log, WEFT_ECAPACITY,
                              "weft_archive_load: component '%s' would exceed 2^32 rows",
                              st->comps[i].comp->name);
        }
        weft_result_t r = weft__pool_reserve(st->world, pool, pool->count + (uint32_t)ac->rows);
        uint32_t last_page = UINT32_MAX;
        for (uint64_t k = 0; r == WEFT_OK && k < ac->rows; ++k) {
            uint32_t idx = weft_entity_index(st->handles[weft__le32(ac->ids + 4u * k)]);
            if (idx >> WEFT__SPARSE_SHIFT != last_page) {
                r = weft__pool_prepare(st->world, pool, idx);
                last_page = idx >> WEFT__SPARSE_SHIFT;
            }
        }
        if (r != WEFT_OK) {
            return r;
        }
    }
    return WEFT_OK;
}

/* Rewrite the declared entity fields of `rows` values at `data` through the remap table. */
static void remap_fields(const weft__stage_t *st, const weft__component_t *c, unsigned char *data,
                         uint64_t rows) {
    if (c->entity_field_count == 0) {
        return;
    }
    /* The external-reference rule: with kept ids every handle is kept verbatim (the id
     * spaces are the same); with remapping, outside references become null unless the
     * caller asked to keep them (keep_external). */
    bool keep = st->desc.keep_ids || st->desc.keep_external;
    for (uint64_t r = 0; r < rows; ++r) {
        unsigned char *row = data + r * c->pool.size;
        for (uint32_t f = 0; f < c->entity_field_count; ++f) {
            uint64_t v = weft__le64(row + c->entity_fields[f]);
            if (v == 0) {
                continue;
            }
            uint64_t local = weft__arc_find(&st->arc, v);
            uint64_t nv = local != UINT64_MAX ? st->handles[local] : keep ? v : 0u;
            weft__put64(row + c->entity_fields[f], nv);
        }
    }
}

/* Append section i's rows to its pool: owner column, bulk data, fields, sparse index. */
static void commit_section(weft__stage_t *st, uint32_t i) {
    const weft__arc_comp_t *ac = &st->arc.comps[i];
    const weft__stage_comp_t *sc = &st->comps[i];
    weft__pool_t *pool = &sc->comp->pool;
    /* Rows go after the existing ones in archive order, so a whole-world save loaded into
     * an empty world reproduces each pool's row order. */
    uint32_t base = pool->count;
    for (uint64_t k = 0; k < ac->rows; ++k) {
        uint32_t idx = weft_entity_index(st->handles[weft__le32(ac->ids + 4u * k)]);
        pool->dense[base + k] = idx;
        weft__pool_sparse_set(pool, idx, base + (uint32_t)k);
    }
    if (pool->size) {
        unsigned char *dst = weft__pool_at(pool, base);
        memcpy(dst, sc->converted ? sc->converted : ac->data, (size_t)ac->rows * pool->size);
        remap_fields(st, sc->comp, dst, ac->rows);
    }
    pool->count = base + (uint32_t)ac->rows;
    weft__pool_check_order(pool, base);
    weft__change_stamp_added(pool, base, pool->count, st->world->change_tick);
}

/* ---- entry points ------------------------------------------------------------ >>load */

/* What both entry points check first; resolves `desc` (NULL: defaults) into *d. */
static weft_result_t load_begin(weft_world_t *world, const weft_archive_load_desc_t *desc,
                                weft_archive_load_desc_t *d) {
    WEFT__MAIN_CALL_AS(world, "weft_archive_load");
    *d = desc ? *desc : (weft_archive_load_desc_t){0};
    WEFT__CONTRACT(d->_canary == 0, world->log, WEFT_EINVAL,
                   "weft_archive_load: desc._canary is %u (desc not zero-initialised)", d->_canary);
    WEFT__CONTRACT(d->upgrades != NULL || d->upgrade_count == 0, world->log, WEFT_EINVAL,
                   "weft_archive_load: upgrade_count %u with NULL upgrades", d->upgrade_count);
    for (uint32_t i = 0; i < d->upgrade_count; ++i) {
        WEFT__CONTRACT(d->upgrades[i].component != NULL && d->upgrades[i].fn != NULL, world->log,
                       WEFT_EINVAL, "weft_archive_load: upgrades[%u] lacks component or fn", i);
    }
    return WEFT_OK;
}

/* Stage 2: everything that can fail. */
static weft_result_t stage_all(weft__stage_t *st) {
    uint64_t n = st->arc.entity_count;
    if (st->desc.out_entities && st->desc.out_capacity < n) {
        return WEFT__FAIL(st->world->log, WEFT_ECAPACITY,
                          "weft_archive_load: out_capacity %zu < %llu archived entities",
                          st->desc.out_capacity, (unsigned long long)n);
    }
    uint32_t ncomp = st->arc.comp_count;
    st->comps = stage_alloc(st, sizeof(weft__stage_comp_t) * ncomp, _Alignof(weft__stage_comp_t));
    if (st->comps) {
        memset(st->comps, 0, sizeof(weft__stage_comp_t) * ncomp);
    }
    st->handles = stage_alloc(st, (size_t)n * sizeof(uint64_t), _Alignof(uint64_t));
    st->sig = stage_alloc(st, (size_t)n * sizeof(uint32_t), _Alignof(uint32_t));
    if (!st->comps || !st->handles || !st->sig) {
        return WEFT__FAIL(st->world->log, WEFT_ENOMEM, "weft_archive_load: out of memory");
    }
    memset(st->sig, 0, (size_t)n * sizeof(uint32_t));

    /* Which registered ids a section already matched (an archive naming one twice is
     * corrupt): one byte per registered id. */
    size_t nseen = (size_t)st->world->component_count + 1u;
    uint8_t *seen = stage_alloc(st, nseen, 1u);
    if (!seen) {
        return WEFT__FAIL(st->world->log, WEFT_ENOMEM, "weft_archive_load: out of memory");
    }
    memset(seen, 0, nseen);
    weft_result_t r = WEFT_OK;
    for (uint32_t i = 0; r == WEFT_OK && i < ncomp; ++i) {
        r = match_section(st, i, seen);
    }
    stage_free(st, seen, nseen);
    for (uint32_t i = 0; r == WEFT_OK && i < ncomp; ++i) {
        if (st->comps[i].up) {
            r = upgrade_section(st, i);
        }
    }
    if (r == WEFT_OK) {
        r = stage_signatures(st);
    }
    if (r == WEFT_OK) {
        r = st->desc.keep_ids ? weft__load_stage_kept_ids(st) : weft__load_stage_fresh_ids(st);
    }
    if (r == WEFT_OK) {
        r = stage_pools(st);
    }
    if (r == WEFT_OK) {
        r = weft__load_stage_modules(st);
    }
    return r;
}

/* Stage 3: cannot fail. */
static void commit_all(weft__stage_t *st) {
    uint64_t n = st->arc.entity_count;
    if (st->desc.keep_ids) {
        weft__load_commit_kept_ids(st);
    } else {
        weft__load_commit_fresh_ids(st);
    }
    for (uint32_t i = 0; i < st->arc.comp_count; ++i) {
        if (st->comps[i].comp) {
            commit_section(st, i);
        } else if (st->comps[i].resource) {
            memcpy(st->comps[i].resource->resource, st->arc.comps[i].data,
                   st->comps[i].resource->pool.size);
        }
    }
    for (uint64_t k = 0; k < n; ++k) {
        weft__entity_set_sig(st->world, weft_entity_index(st->handles[k]), st->sig[k]);
    }
    weft__load_commit_groups(st);
    weft__load_commit_modules(st);
    weft__load_fire_hooks(st);
    if (st->desc.out_entities) {
        memcpy(st->desc.out_entities, st->handles, (size_t)n * sizeof(uint64_t));
    }
}

static weft_result_t load_bytes(weft_world_t *world, const void *data, size_t size,
                                const weft_archive_load_desc_t *d, weft_archive_info_t *info) {
    weft__stage_t st;
    memset(&st, 0, sizeof st);
    st.world = world;
    st.desc = *d;
    weft_result_t r =
        weft__arc_parse(data, size, !d->skip_checksums, &world->alloc, world->log, &st.arc);
    if (r != WEFT_OK) {
        return r;
    }
    r = stage_all(&st);
    if (r == WEFT_OK) {
        commit_all(&st);
        if (info) {
            *info = (weft_archive_info_t){
                .format_version = st.arc.format_version,
                .component_count = st.arc.comp_count,
                .entity_count = st.arc.entity_count,
                .rows = st.arc.row_count,
                .hierarchy_nodes = weft__arc_module_items(&st.arc, WEFT__ARC_HIER_MODULE),
                .byte_size = st.arc.byte_size};
        }
    }
    stage_fini(&st);
    return r;
}

weft_result_t weft_archive_load_memory(weft_world_t *world, const void *data, size_t size,
                                       const weft_archive_load_desc_t *desc,
                                       weft_archive_info_t *info) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_archive_load: world is NULL");
    weft_archive_load_desc_t d;
    weft_result_t r = load_begin(world, desc, &d);
    if (r != WEFT_OK) {
        return r;
    }
    return load_bytes(world, data, size, &d, info);
}

weft_result_t weft_archive_load(weft_world_t *world, const weft_reader_t *reader,
                                const weft_archive_load_desc_t *desc, weft_archive_info_t *info) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_archive_load: world is NULL");
    WEFT__CONTRACT(reader != NULL && reader->read != NULL, world->log, WEFT_EINVAL,
                   "weft_archive_load: reader or reader->read is NULL");
    weft_archive_load_desc_t d;
    weft_result_t r = load_begin(world, desc, &d);
    if (r != WEFT_OK) {
        return r;
    }
    weft_membuf_t buf;
    r = weft__archive_slurp(reader, &world->alloc, d.max_bytes ? d.max_bytes : DEFAULT_MAX_BYTES,
                            world->log, &buf);
    if (r != WEFT_OK) {
        return r;
    }
    r = load_bytes(world, buf.data, buf.size, &d, info);
    weft_membuf_free(&buf);
    return r;
}
