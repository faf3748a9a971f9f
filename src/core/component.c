/* component.c: component registration and per-entity access (add, set, get, has, remove).
 *
 * DESIGN
 * Each mutation runs in two halves: first everything that can fail (validation, the signature
 * step, pool growth and sparse pages), then the infallible changes (push/remove, signature
 * store, group alignment, hooks). That split is what makes every call leave the world
 * unchanged on error. Group alignment runs after a push and before a removal, so a group's
 * prefix only ever holds entities that have every member. Hooks run with hook_depth raised so
 * a structural call from inside a hook is caught in debug builds. */
#include <string.h>

#include "access.h"
#include "change.h"
#include "entity.h"
#include "group.h"
#include "multi.h"
#include "signature.h"
#include "world.h"

/* ---- registration ----------------------------------------------------------- >>register */

/* Names hash over at most WEFT_COMPONENT_NAME_MAX bytes, as lookups compare (FNV-1a). */
static uint32_t name_hash(const char *name) {
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < WEFT_COMPONENT_NAME_MAX && name[i] != '\0'; i++) {
        h = (h ^ (unsigned char)name[i]) * 16777619u;
    }
    return h;
}

static void name_insert(weft_world_t *world, uint32_t id) {
    const uint32_t mask = world->name_table_cap - 1u;
    uint32_t i = name_hash(world->components[id]->name) & mask;
    while (world->name_table[i] != 0) {
        i = (i + 1u) & mask;
    }
    world->name_table[i] = id;
    world->name_table_used++;
}

/* Room for one more registration: a components[] entry and a name-table entry (the table is
 * rebuilt from the registered components when it would pass half full, which also sheds the
 * entries of registrations dropped since). Errors: WEFT_ENOMEM (nothing changed). */
static weft_result_t reserve_slot(weft_world_t *world) {
    uint32_t need = world->component_count + 2u; /* [0] unused, plus the new id */
    if (need > world->component_cap) {
        uint32_t cap = world->component_cap ? world->component_cap * 2u : 64u;
        cap = cap < WEFT_MAX_COMPONENTS ? cap : WEFT_MAX_COMPONENTS;
        weft__component_t **a = weft__alloc(world, (size_t)cap * sizeof *a, _Alignof(void *));
        if (a == NULL) {
            return WEFT_ENOMEM;
        }
        memset(a, 0, (size_t)cap * sizeof *a);
        if (world->component_count) {
            memcpy(a, world->components, ((size_t)world->component_count + 1u) * sizeof *a);
        }
        weft__free(world, world->components, (size_t)world->component_cap * sizeof *a);
        world->components = a;
        world->component_cap = cap;
    }
    if ((world->name_table_used + 1u) * 2u > world->name_table_cap) {
        uint32_t cap = 64u;
        while (cap < (world->component_count + 1u) * 4u) {
            cap *= 2u;
        }
        uint32_t *t = weft__alloc(world, (size_t)cap * sizeof *t, _Alignof(uint32_t));
        if (t == NULL) {
            return WEFT_ENOMEM;
        }
        memset(t, 0, (size_t)cap * sizeof *t);
        weft__free(world, world->name_table, (size_t)world->name_table_cap * sizeof *t);
        world->name_table = t;
        world->name_table_cap = cap;
        world->name_table_used = 0;
        for (uint32_t c = 1; c <= world->component_count; c++) {
            name_insert(world, c);
        }
    }
    return WEFT_OK;
}

void weft__component_tables_fini(weft_world_t *world) {
    weft__free(world, world->components, (size_t)world->component_cap * sizeof *world->components);
    weft__free(world, world->name_table, (size_t)world->name_table_cap * sizeof(uint32_t));
    world->components = NULL;
    world->name_table = NULL;
    world->component_cap = world->name_table_cap = world->name_table_used = 0;
}

static bool is_pow2(size_t x) { return x != 0 && (x & (x - 1u)) == 0; }

static size_t natural_align(size_t size) {
    size_t a = 1;
    while (a < 16u && size % (a * 2u) == 0) {
        a *= 2u;
    }
    return size == 0 ? 1u : a;
}

static weft_result_t check_desc(const weft_world_t *world, const weft_component_desc_t *d) {
    const weft_logger_t *log = world->log;
    WEFT__CONTRACT(d != NULL, log, WEFT_EINVAL, "weft_component_register: desc is NULL");
    WEFT__CONTRACT(d->_canary == 0, log, WEFT_EINVAL, "weft_component_register: desc._canary is %u",
                   d->_canary);
    WEFT__CONTRACT(d->name != NULL && d->name[0] != '\0', log, WEFT_EINVAL,
                   "weft_component_register: name is required");
    /* Returned in every build: truncating would let two long names collide silently. */
    size_t len = strlen(d->name);
    if (len > WEFT_COMPONENT_NAME_MAX) {
        return WEFT__FAIL(log, WEFT_EINVAL,
                          "weft_component_register: name '%.20s...' is %zu bytes (max %u)", d->name,
                          len, WEFT_COMPONENT_NAME_MAX);
    }
    WEFT__CONTRACT((d->flags & ~WEFT_COMPONENT_MULTI) == 0, log, WEFT_EINVAL,
                   "weft_component_register: '%s': unknown flags 0x%x", d->name, d->flags);
    size_t align = d->align ? d->align : natural_align(d->size);
    WEFT__CONTRACT(is_pow2(align) && align <= WEFT_COMPONENT_MAX_ALIGN, log, WEFT_EINVAL,
                   "weft_component_register: '%s': align %zu is not a power of two <= %u", d->name,
                   align, WEFT_COMPONENT_MAX_ALIGN);
    WEFT__CONTRACT(d->size % align == 0 && d->size <= UINT32_MAX / 2u, log, WEFT_EINVAL,
                   "weft_component_register: '%s': size %zu is not a multiple of align %zu",
                   d->name, d->size, align);
    WEFT__CONTRACT(d->entity_field_count <= WEFT_COMPONENT_MAX_ENTITY_FIELDS, log, WEFT_EINVAL,
                   "weft_component_register: '%s': %u entity fields (max %u)", d->name,
                   d->entity_field_count, WEFT_COMPONENT_MAX_ENTITY_FIELDS);
    for (uint32_t i = 0; i < d->entity_field_count; i++) {
        WEFT__CONTRACT((size_t)d->entity_fields[i] + sizeof(weft_entity_t) <= d->size, log,
                       WEFT_EINVAL,
                       "weft_component_register: '%s': entity field at %u overruns size %zu",
                       d->name, d->entity_fields[i], d->size);
    }
    return WEFT_OK;
}

weft_result_t weft_component_register(weft_world_t *world, const weft_component_desc_t *desc,
                                      weft_component_t *out) {
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(out != NULL, world->log, WEFT_EINVAL, "weft_component_register: out is NULL");
    out->id = 0;
    weft_result_t r = check_desc(world, desc);
    if (r != WEFT_OK) {
        return r;
    }
    size_t align = desc->align ? desc->align : natural_align(desc->size);
    weft_component_t known = weft_component_lookup(world, desc->name);
    if (known.id != 0) {
        const weft__pool_t *pool = &world->components[known.id]->pool;
        if (pool->size != desc->size || pool->align != align) {
            return WEFT__FAIL(world->log, WEFT_ECONFLICT,
                              "weft_component_register: '%s' is registered with size %u align "
                              "%u, not size %zu align %zu",
                              desc->name, pool->size, pool->align, desc->size, align);
        }
        *out = known;
        return WEFT_OK;
    }
    if (world->component_count + 1u >= WEFT_MAX_COMPONENTS) {
        return WEFT__FAIL(world->log, WEFT_ECAPACITY,
                          "weft_component_register: '%s': %u components already registered",
                          desc->name, world->component_count);
    }
    if ((desc->flags & WEFT_COMPONENT_MULTI) != 0 && world->multi_count >= 255u) {
        return WEFT__FAIL(world->log, WEFT_ECAPACITY,
                          "weft_component_register: '%s': 255 multi-instance components "
                          "already registered (instance handles carry 8 bits of type)",
                          desc->name);
    }
    r = reserve_slot(world);
    if (r != WEFT_OK) {
        return WEFT__FAIL(world->log, r, "weft_component_register: '%s': out of memory",
                          desc->name);
    }
    weft__component_t *comp = weft__alloc(world, sizeof *comp, _Alignof(weft__component_t));
    if (comp == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_component_register: out of memory");
    }
    memset(comp, 0, sizeof *comp);
    uint32_t id = world->component_count + 1u;
    memcpy(comp->name, desc->name, strlen(desc->name)); /* fits: checked in check_desc */
    comp->flags = desc->flags;
    comp->version = desc->version ? desc->version : 1u;
    comp->on_add = desc->on_add;
    comp->on_remove = desc->on_remove;
    comp->on_set = desc->on_set;
    comp->desc_hook[0] = desc->on_add;
    comp->desc_hook[1] = desc->on_remove;
    comp->desc_hook[2] = desc->on_set;
    comp->hook_user = desc->hook_user;
    comp->entity_field_count = desc->entity_field_count;
    memcpy(comp->entity_fields, desc->entity_fields, sizeof comp->entity_fields);
    comp->pool.size = (uint32_t)desc->size;
    comp->pool.align = (uint32_t)align;
    comp->pool.id = id;
    if (desc->size == 0) {
        comp->pool.data = (unsigned char *)&world->tag_dummy;
    }
    if ((desc->flags & WEFT_COMPONENT_MULTI) != 0) {
        r = weft__multi_init(world, &comp->pool);
        if (r != WEFT_OK) {
            weft__free(world, comp, sizeof *comp);
            return r;
        }
        comp->pool.multi->type = ++world->multi_count;
        world->multi_ids[world->multi_count] = id;
    }
    world->components[id] = comp;
    world->component_count = id;
    name_insert(world, id); /* room reserved by reserve_slot */
    *out = (weft_component_t){id};
    if (world->on_component_registered) {
        world->on_component_registered(world, comp);
    }
    return WEFT_OK;
}

weft_component_t weft_component_lookup(const weft_world_t *world, const char *name) {
    WEFT__NONNULL(world, (weft_component_t){0});
    if (name == NULL) {
        return (weft_component_t){0};
    }
    if (world->name_table_cap == 0) {
        return (weft_component_t){0};
    }
    const uint32_t mask = world->name_table_cap - 1u;
    for (uint32_t i = name_hash(name) & mask;; i = (i + 1u) & mask) {
        uint32_t c = world->name_table[i];
        if (c == 0) {
            return (weft_component_t){0};
        }
        if (c <= world->component_count &&
            strncmp(world->components[c]->name, name, WEFT_COMPONENT_NAME_MAX) == 0) {
            return (weft_component_t){c};
        }
    }
}

uint32_t weft_component_type_count(const weft_world_t *world) {
    WEFT__NONNULL(world, 0);
    return world->component_count;
}

weft_result_t weft_component_describe(const weft_world_t *world, weft_component_t c,
                                      weft_component_desc_t *out) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    const weft__component_t *comp = weft__component(world, c.id);
    if (comp == NULL || out == NULL) {
        return WEFT__FAIL(world->log, WEFT_EINVAL, "weft_component_describe: unknown component %u",
                          c.id);
    }
    memset(out, 0, sizeof *out);
    out->name = comp->name;
    out->size = comp->pool.size;
    out->align = comp->pool.align;
    out->flags = comp->flags;
    out->on_add = comp->desc_hook[0];
    out->on_remove = comp->desc_hook[1];
    out->on_set = comp->desc_hook[2];
    out->hook_user = comp->hook_user;
    out->entity_field_count = comp->entity_field_count;
    memcpy(out->entity_fields, comp->entity_fields, sizeof out->entity_fields);
    out->version = comp->version;
    return WEFT_OK;
}

/* ---- lookups shared by the mutators ----------------------------------------- >>lookup */

/* Resolve (e, c) for a mutation: the live slot and the component record, or an error. */
static weft_result_t resolve(weft_world_t *world, weft_entity_t e, weft_component_t c,
                             const char *fn, uint32_t *slot, weft__component_t **comp) {
    if (!weft__entity_slot(world, e, slot)) {
        return WEFT__FAIL(world->log, WEFT_ESTALE, "%s: entity 0x%llx is null or stale", fn,
                          (unsigned long long)e);
    }
    *comp = weft__component(world, c.id);
    if (*comp == NULL) {
        return WEFT__FAIL(world->log, WEFT_EINVAL, "%s: unknown component id %u", fn, c.id);
    }
    return WEFT_OK;
}

/* Run `hook` on idx's data (for multi-instance pools: every instance when all is set, else
 * the most recent one). */
static void run_hook(weft_world_t *world, weft_component_hook_t hook, weft__component_t *comp,
                     weft_entity_t e, uint32_t idx, bool all) {
    world->hook_depth++;
    if (comp->pool.multi != NULL && all) {
        const weft__multi_t *m = comp->pool.multi;
        for (uint32_t s = weft__pool_row(&comp->pool, idx); s != 0; s = m->slot_next[s]) {
            hook(world, e, (weft_component_t){comp->pool.id},
                 weft__pool_at(&comp->pool, m->slot_row[s]), comp->hook_user);
        }
    } else {
        hook(world, e, (weft_component_t){comp->pool.id}, weft__pool_entity_data(&comp->pool, idx),
             comp->hook_user);
    }
    world->hook_depth--;
}

void weft__component_fire_remove(weft_world_t *world, weft__component_t *comp, uint32_t idx,
                                 weft_entity_t e) {
    if (comp->on_remove != NULL) {
        run_hook(world, comp->on_remove, comp, e, idx, true);
    }
}

/* ---- add / set ------------------------------------------------------------------ >>add */

/* Add comp to live entity e (absent). Fires on_add. *ptr receives the row's data. */
static weft_result_t add_index(weft_world_t *world, weft__component_t *comp, weft_entity_t e,
                               uint32_t slot, void **ptr) {
    uint32_t idx = weft_entity_index(e);
    uint32_t sig;
    weft_result_t r = weft__sig_step(world, weft__slot_sig(slot), comp->pool.id, false, &sig);
    if (r != WEFT_OK) {
        return r;
    }
    r = weft__pool_prepare(world, &comp->pool, idx);
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t row = weft__pool_push(&comp->pool, idx);
    if (comp->pool.tick_added != NULL) {
        weft__change_mark_added(&comp->pool, row, weft__change_tick_now(world));
    }
    weft__entity_set_sig(world, idx, sig);
    if (comp->pool.group != 0) {
        uint32_t moved = weft__group_on_add(world, comp->pool.group, idx);
        if (moved != WEFT__ROW_NONE) { /* alignment moved it into the prefix */
            row = moved;
        }
    }
    *ptr = weft__pool_at(&comp->pool, row);
    if (comp->on_add != NULL) {
        run_hook(world, comp->on_add, comp, e, idx, false);
    }
    return WEFT_OK;
}

weft_result_t weft_component_add(weft_world_t *world, weft_entity_t e, weft_component_t c,
                                 void **ptr) {
    WEFT__MAIN_CALL(world);
    if (ptr != NULL) {
        *ptr = NULL;
    }
    uint32_t slot = 0;
    weft__component_t *comp = NULL;
    weft_result_t r = resolve(world, e, c, "weft_component_add", &slot, &comp);
    if (r != WEFT_OK) {
        return r;
    }
    if (comp->owned.refuse != NULL) {
        return weft__owned_refuse(world, comp, "weft_component_add");
    }
    if (comp->pool.multi != NULL) {
        return weft_component_add_instance(world, e, c, NULL, ptr);
    }
    uint32_t idx = weft_entity_index(e);
    if (weft__pool_row(&comp->pool, idx) != WEFT__ROW_NONE) {
        return WEFT__NOTE(world->log, WEFT_EEXIST,
                          "weft_component_add: entity 0x%llx already has component '%s'",
                          (unsigned long long)e, comp->name);
    }
    void *data;
    r = add_index(world, comp, e, slot, &data);
    if (r == WEFT_OK && ptr != NULL) {
        *ptr = data;
    }
    return r;
}

weft_result_t weft_component_set(weft_world_t *world, weft_entity_t e, weft_component_t c,
                                 const void *value) {
    WEFT__MAIN_CALL(world);
    uint32_t slot = 0;
    weft__component_t *comp = NULL;
    weft_result_t r = resolve(world, e, c, "weft_component_set", &slot, &comp);
    if (r != WEFT_OK) {
        return r;
    }
    WEFT__CONTRACT(value != NULL || comp->pool.size == 0, world->log, WEFT_EINVAL,
                   "weft_component_set: value is NULL for '%s'", comp->name);
    if (comp->owned.refuse != NULL) { /* the module writes (or refuses) */
        return comp->owned.set != NULL ? comp->owned.set(world, comp->owned.user, e, value)
                                       : weft__owned_refuse(world, comp, "weft_component_set");
    }
    for (uint32_t i = 0; i < comp->entity_field_count; i++) {
        weft_entity_t field;
        memcpy(&field, (const unsigned char *)value + comp->entity_fields[i], sizeof field);
        /* A placeholder (index 0, generation != 0) means something only inside the command
         * buffer that made it, which resolves it at apply. */
        WEFT__CONTRACT((uint32_t)field != 0 || field == WEFT_ENTITY_NULL, world->log, WEFT_EINVAL,
                       "weft_component_set: the entity field at offset %u of '%s' holds "
                       "placeholder 0x%llx; placeholders are resolved only by the command buffer "
                       "that made them",
                       comp->entity_fields[i], comp->name, (unsigned long long)field);
    }
    uint32_t idx = weft_entity_index(e);
    uint32_t row = weft__pool_row(&comp->pool, idx); /* kept for the change mark */
    void *data = row == WEFT__ROW_NONE ? NULL
                 : comp->pool.multi != NULL
                     ? weft__pool_at(&comp->pool, comp->pool.multi->slot_row[row])
                     : weft__pool_at(&comp->pool, row);
    if (data == NULL) {
        r = comp->pool.multi != NULL ? weft_component_add_instance(world, e, c, NULL, &data)
                                     : add_index(world, comp, e, slot, &data);
        if (r != WEFT_OK) {
            return r;
        }
        row = weft__pool_row(&comp->pool, idx); /* group alignment may move it */
    }
    if (comp->pool.size) {
        memcpy(data, value, comp->pool.size);
    }
    if (comp->pool.tick_added != NULL) {
        weft__change_write_now(world, &comp->pool, row, idx, true);
    }
    if (comp->on_set != NULL) {
        run_hook(world, comp->on_set, comp, e, idx, false);
    }
    return WEFT_OK;
}

/* ---- get / has --------------------------------------------------------------------- >>get */

const void *weft_component_get(const weft_world_t *world, weft_entity_t e, weft_component_t c) {
    WEFT__NONNULL(world, NULL);
    WEFT__ACCESS(world, c.id, WEFT__ACCESS_READ);
    uint32_t slot = 0;
    const weft__component_t *comp = weft__component(world, c.id);
    if (comp == NULL || !weft__entity_slot(world, e, &slot)) {
        return NULL;
    }
    if (comp->owned.refuse != NULL) {
        return comp->owned.get(world, comp->owned.user, e);
    }
    return weft__pool_entity_data(&comp->pool, weft_entity_index(e));
}

void *weft_component_get_mut(weft_world_t *world, weft_entity_t e, weft_component_t c) {
    WEFT__NONNULL(world, NULL);
    WEFT__ACCESS(world, c.id, WEFT__ACCESS_WRITE);
    uint32_t slot = 0;
    weft__component_t *comp = weft__component(world, c.id);
    if (comp == NULL || !weft__entity_slot(world, e, &slot)) {
        return NULL;
    }
    if (comp->owned.refuse != NULL) {
        if (comp->owned.get_mut == NULL) {
            (void)weft__owned_refuse(world, comp, "weft_component_get_mut");
            return NULL;
        }
        return comp->owned.get_mut(world, comp->owned.user, e);
    }
    if (comp->pool.tick_added != NULL) { /* tracked: the pointer counts as a write */
        uint32_t idx = weft_entity_index(e);
        uint32_t row = weft__pool_row(&comp->pool, idx);
        if (row == WEFT__ROW_NONE) {
            return NULL;
        }
        return weft__change_write_get_now(world, &comp->pool, row, idx);
    }
    return weft__pool_entity_data(&comp->pool, weft_entity_index(e));
}

bool weft_component_has(const weft_world_t *world, weft_entity_t e, weft_component_t c) {
    WEFT__NONNULL(world, false);
    WEFT__ACCESS(world, c.id, WEFT__ACCESS_READ);
    uint32_t slot = 0;
    const weft__component_t *comp = weft__component(world, c.id);
    if (comp == NULL || !weft__entity_slot(world, e, &slot)) {
        return false;
    }
    if (comp->owned.refuse != NULL) {
        return comp->owned.get(world, comp->owned.user, e) != NULL;
    }
    return weft__pool_row(&comp->pool, weft_entity_index(e)) != WEFT__ROW_NONE;
}

/* ---- remove ----------------------------------------------------------------------- >>remove */

/* Drop idx's row from comp's pool (group first, then the pool). No hooks, no signature. */
void weft__component_remove_index(weft_world_t *world, weft__component_t *comp, uint32_t idx,
                                  bool ordered) {
    if (comp->pool.multi != NULL) {
        weft__multi_remove_all(&comp->pool, idx);
        return;
    }
    uint32_t row = WEFT__ROW_NONE;
    if (comp->pool.group != 0) {
        row = weft__group_on_remove(world, comp->pool.group, idx);
    }
    if (row == WEFT__ROW_NONE) { /* not moved by the group */
        row = weft__pool_row(&comp->pool, idx);
    }
    if (ordered) {
        weft__pool_remove_ordered(&comp->pool, row);
    } else {
        weft__pool_remove_swap(&comp->pool, row);
    }
}

static weft_result_t remove_common(weft_world_t *world, weft_entity_t e, weft_component_t c,
                                   bool ordered, const char *fn) {
    uint32_t slot = 0;
    weft__component_t *comp = NULL;
    weft_result_t r = resolve(world, e, c, fn, &slot, &comp);
    if (r != WEFT_OK) {
        return r;
    }
    if (comp->owned.refuse != NULL) {
        return weft__owned_refuse(world, comp, fn);
    }
    uint32_t idx = weft_entity_index(e);
    if (weft__pool_row(&comp->pool, idx) == WEFT__ROW_NONE) {
        return WEFT__NOTE(world->log, WEFT_ENOENT, "%s: entity 0x%llx has no component '%s'", fn,
                          (unsigned long long)e, comp->name);
    }
    if (ordered && (comp->pool.multi != NULL || weft__group_user_owned(world, &comp->pool))) {
        return WEFT__FAIL(world->log, WEFT_ESTATE, "%s: '%s' is grouped or multi-instance", fn,
                          comp->name);
    }
    uint32_t sig;
    r = weft__sig_step(world, weft__slot_sig(slot), c.id, true, &sig);
    if (r != WEFT_OK) {
        return r;
    }
    if (ordered) {
        weft__group_yield_pool(world, comp);
    }
    if (comp->on_remove != NULL) {
        run_hook(world, comp->on_remove, comp, e, idx, true);
    }
    weft__component_remove_index(world, comp, idx, ordered);
    weft__entity_set_sig(world, idx, sig);
    return WEFT_OK;
}

weft_result_t weft_component_remove(weft_world_t *world, weft_entity_t e, weft_component_t c) {
    WEFT__MAIN_CALL(world);
    return remove_common(world, e, c, false, "weft_component_remove");
}

weft_result_t weft_component_remove_ordered(weft_world_t *world, weft_entity_t e,
                                            weft_component_t c) {
    WEFT__MAIN_CALL(world);
    return remove_common(world, e, c, true, "weft_component_remove_ordered");
}
