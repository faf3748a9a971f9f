/* weft/entity.h: entities — 64-bit generational handles to slots of the world's entity table.
 *
 * A handle holds the slot index in its low 32 bits and the slot's generation in its high 32
 * bits. Slot 0 is never handed out, so 0 (WEFT_ENTITY_NULL) is the null entity and a zeroed
 * field means "no entity". Destroying an entity bumps its slot's generation, so every handle
 * to it becomes stale; a recycled slot hands out a handle with the new generation.
 *
 * Generations have WEFT_ENTITY_GENERATION_BITS (16) bits. A slot whose generation has reached
 * the last value (65535) is retired when its entity is destroyed instead of being recycled,
 * so a stale handle never names a later entity, however long the program runs; a retired
 * slot keeps its 4 bytes of table (one per 65536 destroys of the same slot). Snapshots and
 * archives keep retired slots retired, and an archive loaded with keep_ids keeps the saved
 * world's stale handles stale (weft/archive.h). (The other 16 bits of each 4-byte slot hold the
 * entity's signature; that is how an entity costs 4 bytes of table.)
 *
 * The table never moves: its address space is reserved at world creation and pages are
 * committed as it grows, so weft_entity_is_alive() is lock-free and safe from any thread,
 * even while the main thread creates entities. */
#ifndef WEFT_ENTITY_H
#define WEFT_ENTITY_H

#include "weft/world.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t weft_entity_t; /* index | generation << 32; 0 is null */

#define WEFT_ENTITY_NULL ((weft_entity_t)0)
#define WEFT_ENTITY_GENERATION_BITS 16

/* Slot index of a handle (0 for the null entity). */
static inline uint32_t weft_entity_index(weft_entity_t e) { return (uint32_t)(e & 0xFFFFFFFFu); }

/* Generation of a handle, 0 .. 2^WEFT_ENTITY_GENERATION_BITS - 1. */
static inline uint32_t weft_entity_generation(weft_entity_t e) { return (uint32_t)(e >> 32); }

/* Build a handle from its parts (no check that it is alive). */
static inline weft_entity_t weft_entity_make(uint32_t index, uint32_t generation) {
    return (weft_entity_t)index | ((weft_entity_t)generation << 32);
}

/* ---- lifecycle ---------------------------------------------------------- >>entity */

/* Create an entity with no components; *out receives its handle (0 on failure).
 * Recycles the most recently freed slot first (LIFO), so a sequence of calls is deterministic.
 * Errors: WEFT_ENOMEM, WEFT_ECAPACITY (desc.entity_limit reached); the world is unchanged.
 * In debug builds, calling this from inside a system is a contract violation (use the command
 * buffer). Thread: main. */
WEFT_API weft_result_t weft_entity_create(weft_world_t *world, weft_entity_t *out);

/* Create n entities into out[0..n); all or nothing. Errors as weft_entity_create.
 * Thread: main. */
WEFT_API weft_result_t weft_entity_create_n(weft_world_t *world, uint32_t n, weft_entity_t *out);

/* Bulk creation with component values: weft_entity_create_with (weft/component.h). Bulk
 * destruction of every entity a query matches: weft_query_destroy_all (weft/query.h). */

/* Destroy `e`: its remove hooks fire (components in id order), its components are removed
 * (cost proportional to the components it has), its slot's generation is bumped and the slot
 * goes on the free list (or, at its last generation, is retired: see the top of this file). Errors: WEFT_ESTALE (null or stale `e`: nothing happens),
 * WEFT_ENOMEM (the free list could not grow: nothing happens). Thread: main. */
WEFT_API weft_result_t weft_entity_destroy(weft_world_t *world, weft_entity_t e);

/* Destroy every live handle in es[0..n) in array order; stale, null and repeated handles are
 * skipped. Errors: WEFT_ENOMEM (checked before anything is destroyed). Thread: main. */
WEFT_API weft_result_t weft_entity_destroy_n(weft_world_t *world, const weft_entity_t *es,
                                             uint32_t n);

/* Make sure n more entities can be created without allocating (the free-list reserve and the
 * table commit). The table pages the new slots will use are backed now, in one call where the
 * OS offers it, so the creates that follow take no page faults (as do weft_entity_create_n and
 * weft_entity_create_with). Errors: WEFT_ENOMEM, WEFT_ECAPACITY. Thread: main. */
WEFT_API weft_result_t weft_entity_reserve(weft_world_t *world, uint32_t n);

/* ---- queries on handles -------------------------------------------------- >>entity_query */

/* True when `e` names a live entity. Lock-free. Thread: any, at any time. */
WEFT_API bool weft_entity_is_alive(const weft_world_t *world, weft_entity_t e);

/* The live handle for slot `index`, or WEFT_ENTITY_NULL when the slot is free or was never
 * handed out. Lock-free. Thread: any, at any time. */
WEFT_API weft_entity_t weft_entity_from_index(const weft_world_t *world, uint32_t index);

/* Number of live entities. Thread: main (or jobs, while no structural change runs). */
WEFT_API uint32_t weft_entity_count(const weft_world_t *world);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_ENTITY_H */
