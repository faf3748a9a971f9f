/* entity.h: the entity table's slot encoding and lock-free liveness fast path (private).
 *
 * DESIGN
 * One 4-byte atomic slot per entity index: generation in the low 16 bits, signature id in the
 * high 16 (WEFT__SIG_DEAD for a free slot). The table lives in address space reserved at world
 * creation (jobs/platform/vmem.h) and is committed page by page, so it never moves and any
 * thread can read it: a reader loads slot_count with acquire (pairs with the release in
 * entity_publish_slot(), entity.c, which initialises a new slot before publishing it) and then
 * the slot. Only the main thread writes slots. */
#ifndef WEFT_SRC_ENTITY_H
#define WEFT_SRC_ENTITY_H

#include "world.h"

#define WEFT__GEN_MASK 0xFFFFu

static inline uint32_t weft__slot_gen(uint32_t slot) { return slot & WEFT__GEN_MASK; }

static inline uint32_t weft__slot_sig(uint32_t slot) { return slot >> 16; }

static inline uint32_t weft__slot_make(uint32_t gen, uint32_t sig) {
    return (gen & WEFT__GEN_MASK) | (sig << 16);
}

/* The slot of `e` when e is alive (true), else false. Thread: any. */
static inline bool weft__entity_slot(const weft_world_t *world, weft_entity_t e, uint32_t *slot) {
    uint32_t idx = weft_entity_index(e);
    /* pairs with the release in entity_publish_slot(): the slot is initialised */
    uint32_t n = weft_atomic_load_acquire(&((weft_world_t *)world)->slot_count);
    if (idx == 0 || idx >= n) {
        return false;
    }
    uint32_t s = weft_atomic_load_relaxed(&world->slots[idx]);
    if (weft__slot_sig(s) == WEFT__SIG_DEAD || weft__slot_gen(s) != weft_entity_generation(e)) {
        return false;
    }
    *slot = s;
    return true;
}

/* Main thread: the slot of a known-valid index (no liveness check). */
static inline uint32_t weft__entity_slot_raw(const weft_world_t *world, uint32_t idx) {
    return weft_atomic_load_relaxed(&world->slots[idx]);
}

/* Main thread: replace the signature of live index idx. Relaxed: readers only use the
 * generation bits, which do not change here. */
static inline void weft__entity_set_sig(weft_world_t *world, uint32_t idx, uint32_t sig) {
    uint32_t s = weft_atomic_load_relaxed(&world->slots[idx]);
    weft_atomic_store_relaxed(&world->slots[idx], weft__slot_make(weft__slot_gen(s), sig));
}

/* Set up the entity table (reserve + initial commit). Errors: WEFT_ENOMEM. */
weft_result_t weft__entity_init(weft_world_t *world);

/* Release the table and the free list. */
void weft__entity_fini(weft_world_t *world);

/* Make room for `n` more free-list entries, so the next n destroys cannot fail for lack of
 * memory (the scheduler's staged command apply). Errors: WEFT_ENOMEM (nothing changes apart
 * from spare capacity). Thread: main. */
weft_result_t weft__entity_reserve_free(weft_world_t *world, uint32_t n);

/* weft_entity_reserve without the entry checks: room for n more entities (table commit);
 * failures are reported under `fn`. Errors: WEFT_ECAPACITY, WEFT_ENOMEM. Thread: main. */
weft_result_t weft__entity_reserve_n(weft_world_t *world, uint32_t n, const char *fn);

/* Hand out n entities into out[0..n) exactly as n weft_entity_create calls would (free list
 * LIFO first, then fresh slots), each with signature `sig`, publishing the new slot count
 * once. The caller reserved room (weft__entity_reserve_n) and puts the rows of sig's
 * components in place before anything reads them. Thread: main. */
void weft__entity_take(weft_world_t *world, uint32_t n, uint32_t sig, weft_entity_t *out);

/* Destroy a live entity given its index (hooks, components, generation, free list).
 * The free list must have room for one more entry. */
void weft__entity_destroy_index(weft_world_t *world, uint32_t idx);

/* The entity-table half of a destroy: bump the generation (or retire the slot), push the
 * index on the free list, count one fewer live entity. The caller has already removed every
 * row of the entity (or will, before anything reads them: the scheduler's placed apply) and
 * the free list has room. Thread: main. */
void weft__entity_release_index(weft_world_t *world, uint32_t idx);

#endif /* WEFT_SRC_ENTITY_H */
