/* multi.c: multi-instance components — instance slots over an ordinary pool (see multi.h)
 * and the public weft_instance_* API.
 *
 * DESIGN
 * Growth follows the pool's rule: every allocation happens in weft__multi_prepare() before any
 * change, so a failed call leaves the world as it was; weft__multi_reserve() does the same
 * for k adds at once (the staged command apply), after which those prepares allocate
 * nothing. The entity's signature holds the
 * component while it has at least one instance: the first instance steps the signature
 * forward, removing the last steps it back (that step is computed before anything changes). */
#include <string.h>

#include "access.h"
#include "entity.h"
#include "multi.h"
#include "signature.h"

/* ---- slot tables -------------------------------------------------------------- >>slots */

weft_result_t weft__multi_init(weft_world_t *world, weft__pool_t *pool) {
    weft__multi_t *m = weft__alloc(world, sizeof *m, _Alignof(weft__multi_t));
    if (m == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_component_register: out of memory");
    }
    memset(m, 0, sizeof *m);
    m->slot_count = 1; /* slot 0 ends lists */
    pool->multi = m;
    pool->sparse_wide = 1; /* entries are slots, whose range is not the pool's row count */
    return WEFT_OK;
}

void weft__multi_fini(weft_world_t *world, weft__pool_t *pool) {
    weft__multi_t *m = pool->multi;
    if (m == NULL) {
        return;
    }
    weft__free(world, m->row_slot, (size_t)m->row_cap * sizeof(uint32_t));
    weft__free(world, m->slot_row, (size_t)m->slot_cap * sizeof(uint32_t));
    weft__free(world, m->slot_next, (size_t)m->slot_cap * sizeof(uint32_t));
    weft__free(world, m->slot_gen, (size_t)m->slot_cap * sizeof(uint32_t));
    weft__free(world, m, sizeof *m);
    pool->multi = NULL;
}

#define MULTI_SLOT_MAX (1u << 31) /* slot capacity limit (handles keep 32 bits of slot) */

/* n fresh arrays of `cap` uint32_t entries into fresh[], all or none. */
static bool alloc_u32(weft_world_t *world, uint32_t *fresh[], int n, uint32_t cap) {
    for (int i = 0; i < n; i++) {
        fresh[i] = weft__alloc(world, (size_t)cap * sizeof(uint32_t), _Alignof(uint32_t));
        if (fresh[i] == NULL) {
            for (int j = 0; j < i; j++) {
                weft__free(world, fresh[j], (size_t)cap * sizeof(uint32_t));
            }
            return false;
        }
    }
    return true;
}

/* Move the first `used` entries of each *arrs[i] (capacity `old`) into fresh[i]; free the old. */
static void adopt_u32(weft_world_t *world, uint32_t **arrs[], uint32_t *fresh[], int n,
                      uint32_t used, uint32_t old) {
    for (int i = 0; i < n; i++) {
        if (used && *arrs[i] != NULL) {
            memcpy(fresh[i], *arrs[i], (size_t)used * sizeof(uint32_t));
        }
        weft__free(world, *arrs[i], (size_t)old * sizeof(uint32_t));
        *arrs[i] = fresh[i];
    }
}

weft_result_t weft__multi_prepare(weft_world_t *world, weft__pool_t *pool, uint32_t idx) {
    weft_result_t r = weft__pool_prepare(world, pool, idx);
    if (r != WEFT_OK) {
        return r;
    }
    /* One more instance: the slot-table growth is weft__multi_reserve's, for k = 1. */
    return weft__multi_reserve(world, pool, 1u);
}

/* Every fresh array is allocated before any is adopted, so a failure changes nothing. The
 * slot arrays grow geometrically from the current capacity, so a stream of single adds
 * (weft__multi_prepare) or of small applies stays amortised. */
weft_result_t weft__multi_reserve(weft_world_t *world, weft__pool_t *pool, uint32_t k) {
    weft__multi_t *m = pool->multi;
    uint64_t rows = (uint64_t)pool->count + k;
    uint64_t fresh_slots = k > m->free_count ? k - m->free_count : 0u;
    uint64_t slots = (uint64_t)m->slot_count + fresh_slots;
    if (rows > UINT32_MAX - 1u || slots > MULTI_SLOT_MAX) {
        return WEFT__FAIL(world->log, WEFT_ECAPACITY,
                          "multi-instance pool %u: too many instances (%u more requested)",
                          pool->id, k);
    }
    uint32_t row_cap = m->row_cap;
    if (rows >
        row_cap) { /* follow the pool's capacity when it suffices (it does after a prepare) */
        row_cap = pool->cap >= rows ? pool->cap : (uint32_t)rows;
    }
    uint32_t slot_cap = m->slot_cap;
    if (slots > slot_cap) {
        uint64_t cap = slot_cap ? slot_cap : 16u;
        while (cap < slots) {
            cap *= 2u;
        }
        slot_cap = (uint32_t)(cap > MULTI_SLOT_MAX ? MULTI_SLOT_MAX : cap);
    }
    uint32_t *row_fresh[1] = {NULL};
    uint32_t *slot_fresh[3] = {NULL, NULL, NULL};
    bool grow_rows = row_cap != m->row_cap, grow_slots = slot_cap != m->slot_cap;
    if (grow_rows && !alloc_u32(world, row_fresh, 1, row_cap)) {
        goto fail;
    }
    if (grow_slots && !alloc_u32(world, slot_fresh, 3, slot_cap)) {
        if (grow_rows) {
            weft__free(world, row_fresh[0], (size_t)row_cap * sizeof(uint32_t));
        }
        goto fail;
    }
    if (grow_rows) {
        uint32_t **arrs[] = {&m->row_slot};
        adopt_u32(world, arrs, row_fresh, 1, pool->count, m->row_cap);
        m->row_cap = row_cap;
    }
    if (grow_slots) {
        uint32_t **arrs[] = {&m->slot_row, &m->slot_next, &m->slot_gen};
        adopt_u32(world, arrs, slot_fresh, 3, m->slot_count, m->slot_cap);
        m->slot_cap = slot_cap;
    }
    return WEFT_OK;

fail:
    return WEFT__FAIL(world->log, WEFT_ENOMEM,
                      "multi-instance pool %u: out of memory reserving %u more instances", pool->id,
                      k);
}

uint32_t weft__multi_push(weft__pool_t *pool, uint32_t idx) {
    weft__multi_t *m = pool->multi;
    uint32_t slot = m->free_head;
    if (slot != 0) {
        m->free_head = m->slot_next[slot];
        m->free_count--;
    } else {
        slot = m->slot_count++;
        m->slot_gen[slot] = 0;
    }
    uint32_t row = pool->count++;
    pool->dense[row] = idx;
    weft__pool_check_order(pool, row);
    if (pool->size) {
        memset(weft__pool_at(pool, row), 0, pool->size);
    }
    m->row_slot[row] = slot;
    m->slot_row[slot] = row;
    uint32_t head = weft__pool_row(pool, idx); /* the sparse entry holds the head slot */
    m->slot_next[slot] = head == WEFT__ROW_NONE ? 0u : head;
    weft__pool_sparse_set(pool, idx, slot);
    return slot;
}

void weft__multi_remove_slot(weft__pool_t *pool, uint32_t slot) {
    weft__multi_t *m = pool->multi;
    uint32_t row = m->slot_row[slot];
    uint32_t idx = pool->dense[row];
    /* unlink from the entity's list */
    uint32_t head = weft__pool_row(pool, idx);
    if (head == slot) {
        uint32_t next = m->slot_next[slot];
        weft__pool_sparse_set(pool, idx, next ? next : WEFT__ROW_NONE);
    } else {
        uint32_t prev = head;
        while (m->slot_next[prev] != slot) {
            prev = m->slot_next[prev];
        }
        m->slot_next[prev] = m->slot_next[slot];
    }
    /* swap-remove the row; only the slot mapping follows the moved row */
    uint32_t last = pool->count - 1u;
    if (row != last) {
        pool->dense[row] = pool->dense[last];
        if (pool->size) {
            memcpy(weft__pool_at(pool, row), weft__pool_at(pool, last), pool->size);
        }
        m->row_slot[row] = m->row_slot[last];
        m->slot_row[m->row_slot[row]] = row;
    }
    pool->count = last;
    pool->ascending = false; /* not tracked for multi-instance pools (never merge-joined) */
    m->slot_row[slot] = WEFT__ROW_NONE;
    m->slot_gen[slot] = (m->slot_gen[slot] + 1u) & WEFT__INSTANCE_GEN_MASK;
    m->slot_next[slot] = m->free_head;
    m->free_head = slot;
    m->free_count++;
}

void weft__multi_remove_all(weft__pool_t *pool, uint32_t idx) {
    uint32_t slot;
    while ((slot = weft__pool_row(pool, idx)) != WEFT__ROW_NONE) {
        weft__multi_remove_slot(pool, slot);
    }
}

/* ---- public API ---------------------------------------------------------------- >>api */

/* The pool and slot of a live instance handle, or NULL. */
static weft__pool_t *resolve(const weft_world_t *world, weft_instance_t inst, uint32_t *slot) {
    weft__component_t *comp =
        weft__component(world, world->multi_ids[(uint32_t)(inst.id >> 56) & 255u]);
    if (comp == NULL || comp->pool.multi == NULL) {
        return NULL;
    }
    const weft__multi_t *m = comp->pool.multi;
    uint32_t s = (uint32_t)inst.id;
    uint32_t gen = (uint32_t)(inst.id >> 32) & WEFT__INSTANCE_GEN_MASK;
    if (s == 0 || s >= m->slot_count || m->slot_row[s] == WEFT__ROW_NONE || m->slot_gen[s] != gen) {
        return NULL;
    }
    *slot = s;
    return &comp->pool;
}

static void fire(weft_world_t *world, weft__component_t *comp, weft_component_hook_t hook,
                 uint32_t idx, uint32_t slot) {
    weft_entity_t e = weft_entity_from_index(world, idx);
    world->hook_depth++;
    hook(world, e, (weft_component_t){comp->pool.id},
         weft__pool_at(&comp->pool, comp->pool.multi->slot_row[slot]), comp->hook_user);
    world->hook_depth--;
}

weft_result_t weft_component_add_instance(weft_world_t *world, weft_entity_t e, weft_component_t c,
                                          weft_instance_t *out, void **ptr) {
    WEFT__MAIN_CALL(world);
    if (out != NULL) {
        out->id = 0;
    }
    if (ptr != NULL) {
        *ptr = NULL;
    }
    uint32_t slot_e = 0;
    if (!weft__entity_slot(world, e, &slot_e)) {
        return WEFT__FAIL(world->log, WEFT_ESTALE,
                          "weft_component_add_instance: entity 0x%llx is null or stale",
                          (unsigned long long)e);
    }
    weft__component_t *comp = weft__component(world, c.id);
    if (comp == NULL || comp->pool.multi == NULL) {
        return WEFT__FAIL(world->log, WEFT_EINVAL,
                          "weft_component_add_instance: component %u is not multi-instance", c.id);
    }
    uint32_t idx = weft_entity_index(e);
    bool first = weft__pool_row(&comp->pool, idx) == WEFT__ROW_NONE;
    uint32_t sig = weft__slot_sig(slot_e);
    weft_result_t r = first ? weft__sig_step(world, sig, c.id, false, &sig) : WEFT_OK;
    if (r == WEFT_OK) {
        r = weft__multi_prepare(world, &comp->pool, idx);
    }
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t slot = weft__multi_push(&comp->pool, idx);
    if (first) {
        weft__entity_set_sig(world, idx, sig);
    }
    if (out != NULL) {
        *out = weft__multi_handle(&comp->pool, slot);
    }
    if (ptr != NULL) {
        *ptr = weft__pool_at(&comp->pool, comp->pool.multi->slot_row[slot]);
    }
    if (comp->on_add != NULL) {
        fire(world, comp, comp->on_add, idx, slot);
    }
    return WEFT_OK;
}

const void *weft_instance_get(const weft_world_t *world, weft_instance_t inst) {
    WEFT__NONNULL(world, NULL);
    uint32_t slot;
    const weft__pool_t *pool = resolve(world, inst, &slot);
    if (pool == NULL) {
        return NULL;
    }
    WEFT__ACCESS(world, pool->id, WEFT__ACCESS_READ);
    return weft__pool_at(pool, pool->multi->slot_row[slot]);
}

void *weft_instance_get_mut(weft_world_t *world, weft_instance_t inst) {
    WEFT__NONNULL(world, NULL);
    uint32_t slot;
    const weft__pool_t *pool = resolve(world, inst, &slot);
    if (pool == NULL) {
        return NULL;
    }
    WEFT__ACCESS(world, pool->id, WEFT__ACCESS_WRITE);
    return weft__pool_at(pool, pool->multi->slot_row[slot]);
}

weft_entity_t weft_instance_entity(const weft_world_t *world, weft_instance_t inst) {
    WEFT__NONNULL(world, WEFT_ENTITY_NULL);
    uint32_t slot;
    const weft__pool_t *pool = resolve(world, inst, &slot);
    if (pool == NULL) {
        return WEFT_ENTITY_NULL;
    }
    return weft_entity_from_index(world, pool->dense[pool->multi->slot_row[slot]]);
}

weft_result_t weft_instance_remove(weft_world_t *world, weft_instance_t inst) {
    WEFT__MAIN_CALL(world);
    uint32_t slot;
    weft__pool_t *pool = resolve(world, inst, &slot);
    if (pool == NULL) {
        return WEFT__FAIL(world->log, WEFT_ESTALE,
                          "weft_instance_remove: instance 0x%llx is null or stale",
                          (unsigned long long)inst.id);
    }
    weft__component_t *comp = world->components[pool->id];
    uint32_t idx = pool->dense[pool->multi->slot_row[slot]];
    bool last = weft__pool_row(pool, idx) == slot && pool->multi->slot_next[slot] == 0;
    uint32_t sig = weft__slot_sig(weft__entity_slot_raw(world, idx));
    if (last) {
        weft_result_t r = weft__sig_step(world, sig, pool->id, true, &sig);
        if (r != WEFT_OK) {
            return r;
        }
    }
    if (comp->on_remove != NULL) {
        fire(world, comp, comp->on_remove, idx, slot);
    }
    weft__multi_remove_slot(pool, slot);
    if (last) {
        weft__entity_set_sig(world, idx, sig);
    }
    return WEFT_OK;
}

uint32_t weft_component_instances(const weft_world_t *world, weft_entity_t e, weft_component_t c,
                                  weft_instance_t *out, uint32_t cap) {
    WEFT__NONNULL(world, 0);
    WEFT__ACCESS(world, c.id, WEFT__ACCESS_READ);
    uint32_t slot_e;
    const weft__component_t *comp = weft__component(world, c.id);
    if (comp == NULL || !weft__entity_slot(world, e, &slot_e)) {
        return 0;
    }
    uint32_t head = weft__pool_row(&comp->pool, weft_entity_index(e));
    if (head == WEFT__ROW_NONE) {
        return 0;
    }
    if (comp->pool.multi == NULL) {
        return 1;
    }
    uint32_t n = 0;
    for (uint32_t s = head; s != 0; s = comp->pool.multi->slot_next[s], n++) {
        if (out != NULL && n < cap) {
            out[n] = weft__multi_handle(&comp->pool, s);
        }
    }
    return n;
}
