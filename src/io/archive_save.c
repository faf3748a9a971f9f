/* archive_save.c: weft_archive_save — write the whole world or a chosen set of entities as a
 * weft archive (format in archive_format.h).
 *
 * DESIGN
 * Saving never changes the world. It first fixes the entity set and gives each entity an
 * archive-local id (its rank by entity index): a `local` table indexed by entity index holds
 * id + 1 (0: not saved), so a pool row's owner is translated with one load. Then one section
 * per non-empty component streams out in pool row order, so a whole-world save copies every
 * data array in bulk (archive_secw.c hashes and writes it in cache-sized slices) and only the
 * 4-byte owner column is converted. Entity fields inside component data are written as they
 * are: the loader finds them among the archived handles (ascending by index, so a binary
 * search) and applies its remapping rule. The slot table follows the entities, so a keep_ids
 * load can keep the saved world's stale handles stale. Memory: 4 bytes and 1 bit per entity
 * slot of the world plus 8 per saved entity, from the world's allocator. */
#include <string.h>

#include "archive_internal.h"
#include "archive_secw.h"
#include "src/core/access.h"
#include "src/core/entity.h"
#include "src/core/world.h"

typedef struct save_set {
    uint32_t *local; /* [slots] archive-local id + 1 by entity index; 0: not saved */
    uint32_t slots;  /* entries in local (the table's high-water mark) */
    uint64_t *ents;  /* [n] saved handles, ascending index */
    uint32_t n;      /* saved entities */
    bool whole;      /* every alive entity is saved */
} save_set_t;

static void save_set_free(weft_world_t *world, save_set_t *s) {
    weft__free(world, s->local, (size_t)s->slots * sizeof(uint32_t));
    weft__free(world, s->ents, ((size_t)s->n + 1u) * sizeof(uint64_t));
    s->local = NULL;
    s->ents = NULL;
}

/* Fix the entity set. With a list, `local` is first used as a membership mark (1), then
 * modules add what they tie to it (the hierarchy: descendants), then ids are assigned by
 * ascending index. */
static weft_result_t save_set_build(weft_world_t *world, const weft_archive_save_desc_t *d,
                                    save_set_t *s) {
    memset(s, 0, sizeof *s);
    s->slots = weft_atomic_load_relaxed(&world->slot_count);
    s->whole = d->entities == NULL;
    s->local = weft__alloc(world, (size_t)s->slots * sizeof(uint32_t), _Alignof(uint32_t));
    if (!s->local) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_archive_save: out of memory");
    }
    memset(s->local, 0, (size_t)s->slots * sizeof(uint32_t));
    uint32_t n = 0;
    if (s->whole) {
        for (uint32_t i = 1; i < s->slots; ++i) {
            if (weft__slot_sig(weft__entity_slot_raw(world, i)) != WEFT__SIG_DEAD) {
                s->local[i] = 1u;
            }
        }
        n = world->live;
    } else {
        for (size_t k = 0; k < d->entity_count; ++k) {
            uint32_t slot;
            if (!weft__entity_slot(world, d->entities[k], &slot)) {
                save_set_free(world, s);
                return WEFT__FAIL(world->log, WEFT_ESTALE,
                                  "weft_archive_save: entities[%zu] = 0x%llx is not alive", k,
                                  (unsigned long long)d->entities[k]);
            }
            s->local[weft_entity_index(d->entities[k])] = 1u;
        }
        if (d->with_descendants) {
            weft_result_t r = weft__save_mark_modules(world, s->local, s->slots);
            if (r != WEFT_OK) {
                weft__free(world, s->local, (size_t)s->slots * sizeof(uint32_t));
                return r;
            }
        }
        for (uint32_t i = 1; i < s->slots; ++i) {
            n += s->local[i] != 0;
        }
    }
    s->n = n;
    s->ents = weft__alloc(world, ((size_t)n + 1u) * sizeof(uint64_t), _Alignof(uint64_t));
    if (!s->ents) {
        weft__free(world, s->local, (size_t)s->slots * sizeof(uint32_t));
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_archive_save: out of memory");
    }
    uint32_t k = 0;
    for (uint32_t i = 1; i < s->slots; ++i) {
        if (s->local[i] == 0) {
            continue;
        }
        uint32_t gen = weft__slot_gen(weft__entity_slot_raw(world, i));
        s->ents[k] = weft_entity_make(i, gen);
        s->local[i] = ++k;
    }
    return WEFT_OK;
}

/* Rows of `pool` owned by saved entities. Sizes are computed before anything is written
 * because each section header carries its payload size (the writer streams, it never seeks
 * back). */
static uint64_t rows_saved(const save_set_t *s, const weft__pool_t *pool) {
    if (s->whole) {
        return pool->count;
    }
    uint64_t rows = 0;
    for (uint32_t r = 0; r < pool->count; ++r) {
        rows += s->local[pool->dense[r]] != 0;
    }
    return rows;
}

static uint64_t comp_section_size(const weft__component_t *c, uint64_t rows) {
    return WEFT__ARC_COMP_DESC + weft__pad8(strlen(c->name)) +
           weft__pad8(4ull * c->entity_field_count) + weft__pad8(4ull * rows) +
           weft__pad8(rows * c->pool.size);
}

/* The descriptor makes the archive self-describing: the loader matches by name and checks
 * size, alignment, schema version and entity-field offsets against the registration. */
static void write_comp_desc(weft__secw_t *w, const weft__component_t *c, uint32_t flags) {
    unsigned char d[WEFT__ARC_COMP_DESC] = {0};
    uint32_t name_len = (uint32_t)strlen(c->name);
    weft__put32(d, name_len);
    weft__put32(d + 4, c->pool.size);
    weft__put32(d + 8, c->pool.align);
    weft__put32(d + 12, c->version);
    weft__put32(d + 16, c->entity_field_count);
    weft__put32(d + 20, flags);
    weft__secw_put(w, d, sizeof d);
    weft__secw_put(w, c->name, name_len);
    weft__secw_zeros(w, (size_t)(weft__pad8(name_len) - name_len));
    unsigned char f[4u * WEFT_COMPONENT_MAX_ENTITY_FIELDS];
    for (uint32_t i = 0; i < c->entity_field_count; ++i) {
        weft__put32(f + 4u * i, c->entity_fields[i]);
    }
    weft__secw_put(w, f, 4u * c->entity_field_count);
    weft__secw_zeros(
        w, (size_t)(weft__pad8(4ull * c->entity_field_count) - 4ull * c->entity_field_count));
}

/* The owner column: archive-local ids, converted straight into the staging block. */
static void write_comp_ids(weft__secw_t *w, const save_set_t *s, const weft__pool_t *pool,
                           uint64_t rows) {
    uint32_t r = 0;
    while (r < pool->count) {
        size_t room;
        unsigned char *dst = weft__secw_space(w, &room);
        size_t k = 0;
        for (; r < pool->count && k + 4u <= room; ++r) {
            uint32_t id = s->local[pool->dense[r]];
            if (id == 0) {
                continue;
            }
            weft__put32(dst + k, id - 1u);
            k += 4u;
        }
        weft__secw_commit(w, k);
    }
    weft__secw_zeros(w, (size_t)(weft__pad8(4u * rows) - 4u * rows));
}

static void write_comp_data(weft__secw_t *w, const save_set_t *s, const weft__pool_t *pool,
                            uint64_t rows) {
    if (pool->size == 0) {
        return;
    }
    /* A whole pool (always the case for whole-world saves) is one contiguous span: the
     * section writer hashes and forwards it without staging. A partial pool goes row by row. */
    if (rows == pool->count) {
        weft__secw_put(w, pool->data, (size_t)rows * pool->size); /* bulk, zero-copy */
    } else {
        for (uint32_t r = 0; r < pool->count; ++r) {
            if (s->local[pool->dense[r]] != 0) {
                weft__secw_put(w, weft__pool_at(pool, r), pool->size);
            }
        }
    }
    uint64_t bytes = rows * pool->size;
    weft__secw_zeros(w, (size_t)(weft__pad8(bytes) - bytes));
}

/* A resource's section: descriptor (flagged), name, value. */
static void write_resource(weft__secw_t *w, const weft__component_t *c) {
    uint64_t size = WEFT__ARC_COMP_DESC + weft__pad8(strlen(c->name)) + weft__pad8(c->pool.size);
    weft__secw_begin(w, WEFT__ARC_TAG_COMP, size, 1);
    write_comp_desc(w, c, WEFT__ARC_COMP_RESOURCE);
    weft__secw_put(w, c->resource, c->pool.size);
    weft__secw_zeros(w, (size_t)(weft__pad8(c->pool.size) - c->pool.size));
    weft__secw_end(w);
}

/* ---- slot table ----------------------------------------------------------- >>slots */

/* A live entity left out of a partial save is written as if destroyed now: its slot's next
 * generation, or retired at the last one. */
static bool unsaved_live(const weft_world_t *world, const save_set_t *s, uint32_t i) {
    return s->local[i] == 0 && weft__slot_sig(weft__entity_slot_raw(world, i)) != WEFT__SIG_DEAD;
}

/* The SLOT section (format in archive_format.h). A dead slot at generation 65535 is either
 * free (destroyed at 65534) or retired; the free list tells which, through a bitmap of the
 * free slots (slots / 8 bytes, from the world's allocator). Errors: WEFT_ENOMEM. */
static weft_result_t write_slots(weft_world_t *world, weft__secw_t *w, const save_set_t *s) {
    size_t words = ((size_t)s->slots + 63u) / 64u;
    uint64_t *is_free = weft__alloc(world, words * 8u, 8);
    if (!is_free) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_archive_save: out of memory");
    }
    memset(is_free, 0, words * 8u);
    for (uint32_t j = 0; j < world->free_count; ++j) {
        uint32_t idx = world->free_list[j];
        is_free[idx / 64u] |= (uint64_t)1 << (idx % 64u);
    }
    uint64_t freed = 0; /* unsaved live entities that go on the free list */
    if (!s->whole) {
        for (uint32_t i = 1; i < s->slots; ++i) {
            freed += unsaved_live(world, s, i) &&
                     weft__slot_gen(weft__entity_slot_raw(world, i)) != WEFT__GEN_MASK;
        }
    }
    uint64_t nfree = world->free_count + freed;
    weft__secw_begin(w, WEFT__ARC_TAG_SLOT, 8u + weft__pad8(4u * ((uint64_t)s->slots + nfree)),
                     s->slots);
    unsigned char head[8];
    weft__put64(head, nfree);
    weft__secw_put(w, head, sizeof head);
    for (uint32_t i = 0; i < s->slots;) {
        size_t room;
        unsigned char *dst = weft__secw_space(w, &room);
        size_t k = 0;
        for (; i < s->slots && k + 4u <= room; ++i, k += 4u) {
            uint32_t slot = weft__entity_slot_raw(world, i), gen = weft__slot_gen(slot);
            uint32_t st = gen;
            if (i == 0) {
                st = 0;
            } else if (weft__slot_sig(slot) == WEFT__SIG_DEAD) {
                bool retired = gen == WEFT__GEN_MASK && !(is_free[i / 64u] >> (i % 64u) & 1u);
                st = retired ? gen | WEFT__ARC_SLOT_RETIRED : gen;
            } else if (s->local[i] == 0) {
                st = gen == WEFT__GEN_MASK ? gen | WEFT__ARC_SLOT_RETIRED : gen + 1u;
            }
            weft__put32(dst + k, st);
        }
        weft__secw_commit(w, k);
    }
    if (world->free_count) {
        weft__secw_put(w, world->free_list, (size_t)world->free_count * 4u);
    }
    for (uint32_t i = 1; i < s->slots && freed != 0; ++i) {
        if (unsaved_live(world, s, i) &&
            weft__slot_gen(weft__entity_slot_raw(world, i)) != WEFT__GEN_MASK) {
            unsigned char v[4];
            weft__put32(v, i);
            weft__secw_put(w, v, sizeof v);
        }
    }
    uint64_t bytes = 4u * ((uint64_t)s->slots + nfree);
    weft__secw_zeros(w, (size_t)(weft__pad8(bytes) - bytes));
    weft__secw_end(w);
    weft__free(world, is_free, words * 8u);
    return WEFT_OK;
}

static weft_result_t write_sections(weft_world_t *world, const save_set_t *s,
                                    const weft_writer_t *writer, uint64_t *rows);

static weft_result_t write_archive(weft_world_t *world, const save_set_t *s,
                                   const weft_writer_t *writer) {
    /* Rows saved per component id, so the counts and the sections agree. */
    size_t rows_bytes = ((size_t)world->component_count + 1u) * sizeof(uint64_t);
    uint64_t *rows = weft__alloc(world, rows_bytes, _Alignof(uint64_t));
    if (rows == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_archive_save: out of memory");
    }
    weft_result_t r = write_sections(world, s, writer, rows);
    weft__free(world, rows, rows_bytes);
    return r;
}

static weft_result_t write_sections(weft_world_t *world, const save_set_t *s,
                                    const weft_writer_t *writer, uint64_t *rows) {
    uint32_t ncomp = 0;
    uint32_t nres = 0; /* resources: whole-world saves only */
    for (uint32_t c = 1; c <= world->component_count; ++c) {
        rows[c] = rows_saved(s, &world->components[c]->pool);
        ncomp += rows[c] != 0;
        nres += s->whole && world->components[c]->resource != NULL;
    }
    ncomp += nres;
    /* Empty pools are left out: an archive then never names a component it has no data for,
     * so it loads into worlds that lack that registration. */
    weft__secw_t w;
    weft_result_t r = weft__secw_init(&w, writer, &world->alloc, world->log);
    if (r != WEFT_OK) {
        return r;
    }
    uint64_t mod_size[WEFT_MODULE_MAX], mod_items[WEFT_MODULE_MAX];
    const uint32_t nmod = weft__save_module_sizes(world, s->local, s->slots, mod_size, mod_items);
    weft__secw_file_header(&w, ncomp, nmod);
    weft__secw_begin(&w, WEFT__ARC_TAG_ENTS, 8ull * s->n, s->n);
    weft__secw_put(&w, s->ents, (size_t)s->n * 8u);
    weft__secw_end(&w);
    r = write_slots(world, &w, s);
    if (r != WEFT_OK) {
        (void)weft__secw_finish(&w);
        return r;
    }
    for (uint32_t c = 1; c <= world->component_count; ++c) {
        if (rows[c] == 0) {
            continue;
        }
        const weft__component_t *comp = world->components[c];
        weft__secw_begin(&w, WEFT__ARC_TAG_COMP, comp_section_size(comp, rows[c]), rows[c]);
        write_comp_desc(&w, comp, 0);
        write_comp_ids(&w, s, &comp->pool, rows[c]);
        write_comp_data(&w, s, &comp->pool, rows[c]);
        weft__secw_end(&w);
        if (w.error != WEFT_OK) {
            break;
        }
    }
    for (uint32_t c = 1; c <= world->component_count && nres != 0 && w.error == WEFT_OK; ++c) {
        if (world->components[c]->resource) {
            write_resource(&w, world->components[c]);
        }
    }
    if (nmod != 0 && w.error == WEFT_OK) {
        r = weft__save_write_modules(world, &w, s->local, s->slots, mod_size, mod_items);
        if (r != WEFT_OK) {
            (void)weft__secw_finish(&w);
            return r;
        }
    }
    return weft__secw_finish(&w);
}

weft_result_t weft_archive_save(weft_world_t *world, const weft_archive_save_desc_t *desc,
                                const weft_writer_t *writer) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_archive_save: world is NULL");
    WEFT__CONTRACT(writer != NULL && writer->write != NULL, world->log, WEFT_EINVAL,
                   "weft_archive_save: writer or writer->write is NULL");
    weft_archive_save_desc_t d = desc ? *desc : (weft_archive_save_desc_t){0};
    WEFT__CONTRACT(d._canary == 0, world->log, WEFT_EINVAL,
                   "weft_archive_save: desc._canary is %u (desc not zero-initialised)", d._canary);
    WEFT__CONTRACT(d.entities != NULL || d.entity_count == 0, world->log, WEFT_EINVAL,
                   "weft_archive_save: entity_count %zu with NULL entities", d.entity_count);
    WEFT__CONTRACT(!(d.entities == NULL && d.with_descendants), world->log, WEFT_EINVAL,
                   "weft_archive_save: with_descendants needs an entity list");
    WEFT__MAIN_CALL(world);
    save_set_t s;
    weft_result_t r = save_set_build(world, &d, &s);
    if (r != WEFT_OK) {
        return r;
    }
    r = write_archive(world, &s, writer);
    save_set_free(world, &s);
    return r;
}
