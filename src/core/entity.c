/* entity.c: the entity table — create, destroy, liveness, bulk operations.
 *
 * DESIGN
 * Slots live in address space reserved once (entity_limit * 4 bytes) and committed in
 * page-multiple steps, so the table never moves and weft_entity_is_alive() needs no lock (see
 * entity.h for the slot encoding and the acquire/release pair). Free slots form a LIFO stack
 * (world->free_list) so the order of recycling is a pure function of the call sequence; its
 * capacity grows only on destroy (checked before anything changes). Destroy walks the entity's
 * interned signature, so it costs O(components the entity has), not O(registered components).
 * Generations are bumped on destroy (the other half of the slot is the signature id); a slot
 * destroyed at its last generation is retired, never recycled: a wrap would let a handle held
 * since the slot's first use name a new entity. A retired slot stays dead with its last
 * generation and is on no free list. */
#include "entity.h"

#include <string.h>

#include "access.h"
#include "group.h"
#include "jobs/platform/vmem.h"
#include "signature.h"

#define COMMIT_STEP (64u * 1024u) /* bytes committed at a time beyond the first commit */

/* ---- table ------------------------------------------------------------------ >>table */

/* Commit enough of the table for `slots` slots. Errors: WEFT_ENOMEM. */
static weft_result_t commit_slots(weft_world_t *world, uint64_t slots) {
    size_t need = (size_t)slots * sizeof(weft_atomic_u32);
    if (need <= world->slots_committed) {
        return WEFT_OK;
    }
    size_t page = weft__vmem_page_size();
    size_t step = world->slots_committed == 0 ? need : need - world->slots_committed;
    if (world->slots_committed != 0 && step < COMMIT_STEP) {
        step = COMMIT_STEP;
    }
    size_t target = (world->slots_committed + step + page - 1) & ~(page - 1);
    if (target > world->slots_reserved) {
        target = world->slots_reserved;
    }
    if (!weft__vmem_commit((unsigned char *)world->slots + world->slots_committed,
                           target - world->slots_committed)) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_entity: cannot commit %zu bytes",
                          target - world->slots_committed);
    }
    world->slots_committed = target;
    return WEFT_OK;
}

weft_result_t weft__entity_init(weft_world_t *world) {
    world->slots_reserved = (size_t)world->desc.entity_limit * sizeof(weft_atomic_u32);
    world->slots = weft__vmem_reserve(world->slots_reserved);
    if (world->slots == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM,
                          "weft_world_create: cannot reserve %zu bytes for the entity table",
                          world->slots_reserved);
    }
    /* +1: slot 0 is reserved for the null entity. */
    weft_result_t r = commit_slots(world, (uint64_t)world->desc.entity_capacity + 1u);
    if (r != WEFT_OK) {
        weft__vmem_release(world->slots, world->slots_reserved);
        world->slots = NULL;
        return r;
    }
    weft_atomic_store_relaxed(&world->slots[0], weft__slot_make(0, WEFT__SIG_DEAD));
    weft_atomic_store_release(&world->slot_count, 1u);
    return WEFT_OK;
}

void weft__entity_fini(weft_world_t *world) {
    weft__free(world, world->free_list, (size_t)world->free_cap * sizeof(uint32_t));
    world->free_list = NULL;
    weft__vmem_release(world->slots, world->slots_reserved);
    world->slots = NULL;
}

/* Make room for `extra` more free-list entries. Errors: WEFT_ENOMEM (unchanged). */
weft_result_t weft__entity_reserve_free(weft_world_t *world, uint32_t extra) {
    uint64_t need = (uint64_t)world->free_count + extra;
    if (need <= world->free_cap) {
        return WEFT_OK;
    }
    uint64_t cap = world->free_cap ? (uint64_t)world->free_cap * 2u : 64u;
    while (cap < need) {
        cap *= 2u;
    }
    uint32_t *list = weft__alloc(world, (size_t)cap * sizeof(uint32_t), _Alignof(uint32_t));
    if (list == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "weft_entity_destroy: out of memory");
    }
    if (world->free_count) {
        memcpy(list, world->free_list, (size_t)world->free_count * sizeof(uint32_t));
    }
    weft__free(world, world->free_list, (size_t)world->free_cap * sizeof(uint32_t));
    world->free_list = list;
    world->free_cap = (uint32_t)cap;
    return WEFT_OK;
}

/* ---- create -------------------------------------------------------------------- >>create */

/* A bulk reservation's fresh slots, up to `slots`, are about to be written (create_with,
 * create_n) or were announced (weft_entity_reserve): back their untouched pages in one call
 * rather than one fault per page, which on a virtual machine costs more than the page's
 * zeroing (measured in bench/bench_core.c's bulk figures, which report faults per entity).
 * Only whole pages past the one holding slot_count and past what an earlier call populated;
 * a range of one page is left to fault in (the call costs about as much as the fault). */
static void populate_slots(weft_world_t *world, uint64_t slots) {
    size_t page = weft__vmem_page_size();
    size_t from = ((size_t)weft_atomic_load_relaxed(&world->slot_count) * sizeof(weft_atomic_u32) +
                   page - 1) &
                  ~(page - 1);
    size_t to = ((size_t)slots * sizeof(weft_atomic_u32) + page - 1) & ~(page - 1);
    if (from < world->slots_populated) {
        from = world->slots_populated;
    }
    if (to > world->slots_committed) {
        to = world->slots_committed;
    }
    if (to > from + page) {
        weft__vmem_populate((unsigned char *)world->slots + from, to - from);
        world->slots_populated = to;
    }
}

weft_result_t weft__entity_reserve_n(weft_world_t *world, uint32_t n, const char *fn) {
    uint32_t fresh = n > world->free_count ? n - world->free_count : 0;
    uint64_t slots = (uint64_t)weft_atomic_load_relaxed(&world->slot_count) + fresh;
    if (slots > world->desc.entity_limit) {
        return WEFT__FAIL(world->log, WEFT_ECAPACITY, "%s: %u more entities exceed entity_limit %u",
                          fn, n, world->desc.entity_limit);
    }
    weft_result_t r = commit_slots(world, slots);
    if (r == WEFT_OK) {
        populate_slots(world, slots);
    }
    return r;
}

weft_result_t weft_entity_reserve(weft_world_t *world, uint32_t n) {
    WEFT__MAIN_CALL(world);
    return weft__entity_reserve_n(world, n, "weft_entity_reserve");
}

/* Hand out one slot; the caller has reserved room. */
static weft_entity_t create_one(weft_world_t *world) {
    world->live++;
    if (world->free_count > 0) {
        uint32_t idx = world->free_list[--world->free_count];
        uint32_t gen = weft__slot_gen(weft__entity_slot_raw(world, idx));
        weft_atomic_store_relaxed(&world->slots[idx], weft__slot_make(gen, 0));
        return weft_entity_make(idx, gen);
    }
    uint32_t idx = weft_atomic_load_relaxed(&world->slot_count);
    weft_atomic_store_relaxed(&world->slots[idx], weft__slot_make(0, 0));
    /* entity_publish_slot: pairs with the acquire in weft__entity_slot(); readers that see
     * the new count see the initialised slot. */
    weft_atomic_store_release(&world->slot_count, idx + 1u);
    return weft_entity_make(idx, 0);
}

void weft__entity_take(weft_world_t *world, uint32_t n, uint32_t sig, weft_entity_t *out) {
    uint32_t k = 0;
    for (; k < n && world->free_count > 0; k++) {
        uint32_t idx = world->free_list[--world->free_count];
        uint32_t gen = weft__slot_gen(weft__entity_slot_raw(world, idx));
        weft_atomic_store_relaxed(&world->slots[idx], weft__slot_make(gen, sig));
        out[k] = weft_entity_make(idx, gen);
    }
    uint32_t next = weft_atomic_load_relaxed(&world->slot_count);
    for (; k < n; k++, next++) {
        weft_atomic_store_relaxed(&world->slots[next], weft__slot_make(0, sig));
        out[k] = weft_entity_make(next, 0);
    }
    /* entity_publish_slot, once for the batch: pairs with the acquire in weft__entity_slot();
     * readers that see the new count see every initialised slot below it. */
    weft_atomic_store_release(&world->slot_count, next);
    world->live += n;
}

weft_result_t weft_entity_create_n(weft_world_t *world, uint32_t n, weft_entity_t *out) {
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(out != NULL || n == 0, world->log, WEFT_EINVAL,
                   "weft_entity_create_n: out is NULL");
    weft_result_t r = weft_entity_reserve(world, n);
    if (r != WEFT_OK) {
        return r;
    }
    for (uint32_t i = 0; i < n; i++) {
        out[i] = create_one(world);
    }
    return WEFT_OK;
}

weft_result_t weft_entity_create(weft_world_t *world, weft_entity_t *out) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    WEFT__CONTRACT(out != NULL, world->log, WEFT_EINVAL, "weft_entity_create: out is NULL");
    *out = WEFT_ENTITY_NULL;
    return weft_entity_create_n(world, 1, out);
}

/* ---- destroy ------------------------------------------------------------------- >>destroy */

void weft__entity_destroy_index(weft_world_t *world, uint32_t idx) {
    uint32_t slot = weft__entity_slot_raw(world, idx);
    uint32_t sig = weft__slot_sig(slot);
    uint32_t count;
    const uint32_t *ids = weft__sig_ids(world, sig, &count);
    /* Hooks first (all of them see the entity whole), then the rows go. */
    weft_entity_t e = weft_entity_make(idx, weft__slot_gen(slot));
    for (uint32_t i = 0; i < count; i++) {
        weft__component_fire_remove(world, world->components[ids[i]], idx, e);
    }
    for (uint32_t i = 0; i < count; i++) {
        weft__component_remove_index(world, world->components[ids[i]], idx, false);
    }
    weft__entity_release_index(world, idx);
}

void weft__entity_release_index(weft_world_t *world, uint32_t idx) {
    uint32_t slot = weft__entity_slot_raw(world, idx);
    uint32_t gen = weft__slot_gen(slot);
    if (gen == WEFT__GEN_MASK) { /* the last generation: retire the slot */
        weft_atomic_store_relaxed(&world->slots[idx], weft__slot_make(gen, WEFT__SIG_DEAD));
    } else {
        weft_atomic_store_relaxed(&world->slots[idx], weft__slot_make(gen + 1u, WEFT__SIG_DEAD));
        world->free_list[world->free_count++] = idx;
    }
    world->live--;
}

weft_result_t weft_entity_destroy(weft_world_t *world, weft_entity_t e) {
    WEFT__MAIN_CALL(world);
    uint32_t slot;
    if (!weft__entity_slot(world, e, &slot)) {
        return WEFT__FAIL(world->log, WEFT_ESTALE,
                          "weft_entity_destroy: entity 0x%llx is null or stale",
                          (unsigned long long)e);
    }
    weft_result_t r = weft__entity_reserve_free(world, 1);
    if (r != WEFT_OK) {
        return r;
    }
    weft__entity_destroy_index(world, weft_entity_index(e));
    return WEFT_OK;
}

weft_result_t weft_entity_destroy_n(weft_world_t *world, const weft_entity_t *es, uint32_t n) {
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(es != NULL || n == 0, world->log, WEFT_EINVAL,
                   "weft_entity_destroy_n: es is NULL");
    /* n is an upper bound on the slots freed, so one reservation covers the whole call. */
    weft_result_t r = weft__entity_reserve_free(world, n);
    if (r != WEFT_OK) {
        return r;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t slot;
        if (weft__entity_slot(world, es[i], &slot)) {
            weft__entity_destroy_index(world, weft_entity_index(es[i]));
        }
    }
    return WEFT_OK;
}

/* ---- queries on handles -------------------------------------------------------- >>alive */

bool weft_entity_is_alive(const weft_world_t *world, weft_entity_t e) {
    WEFT__NONNULL(world, false);
    uint32_t slot;
    return weft__entity_slot(world, e, &slot);
}

weft_entity_t weft_entity_from_index(const weft_world_t *world, uint32_t index) {
    WEFT__NONNULL(world, WEFT_ENTITY_NULL);
    /* pairs with the release in create_one(): the slot is initialised */
    uint32_t n = weft_atomic_load_acquire(&((weft_world_t *)world)->slot_count);
    if (index == 0 || index >= n) {
        return WEFT_ENTITY_NULL;
    }
    uint32_t s = weft_atomic_load_relaxed(&world->slots[index]);
    if (weft__slot_sig(s) == WEFT__SIG_DEAD) {
        return WEFT_ENTITY_NULL;
    }
    return weft_entity_make(index, weft__slot_gen(s));
}

uint32_t weft_entity_count(const weft_world_t *world) {
    WEFT__NONNULL(world, 0);
    return world->live;
}
