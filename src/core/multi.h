/* multi.h: multi-instance pools — several rows per entity, addressed by instance slots
 * (private to the build).
 *
 * DESIGN
 * A multi-instance pool keeps the ordinary dense/data arrays (dense may repeat an entity, so
 * row access and a driving query see every instance) plus instance slots: slot_row[slot] is
 * the slot's row, row_slot[row] the reverse, and the instances of one entity form a singly
 * linked list through slot_next, headed by the pool's sparse entry for the entity (a slot,
 * not a row). A handle is slot | generation << 32 | type << 56, `type` the pool's rank among
 * the world's multi-instance components (1..255, world->multi_ids); removing an instance
 * bumps the slot's 24-bit generation and pushes the slot on a free list. Rows still swap-remove;
 * only row_slot/slot_row follow, so handles survive row moves. Slot 0 is never used, so 0 in
 * slot_next ends a list. */
#ifndef WEFT_SRC_MULTI_H
#define WEFT_SRC_MULTI_H

#include "world.h"

#define WEFT__INSTANCE_GEN_MASK 0xFFFFFFu

typedef struct weft__multi {
    uint32_t *row_slot;  /* [row_cap] instance slot of each row */
    uint32_t row_cap;    /* capacity of row_slot */
    uint32_t *slot_row;  /* [slot_cap] row of a live slot, WEFT__ROW_NONE when free */
    uint32_t *slot_next; /* [slot_cap] next instance of the same entity / next free slot; 0 ends */
    uint32_t *slot_gen;  /* [slot_cap] generation of each slot (24 bits) */
    uint32_t slot_cap;   /* capacity of the slot arrays */
    uint32_t slot_count; /* slots ever used, slot 0 included (never handed out) */
    uint32_t free_head;  /* first free slot, 0: none */
    uint32_t free_count; /* slots on the free list (lets weft__multi_reserve count reuse) */
    uint32_t type;       /* 1..255: the handle's type field (world->multi_ids[type] is the id) */
} weft__multi_t;

/* Data of entity index idx's most recent instance (or its only row for ordinary pools), or
 * NULL. Safe from any reader. */
static inline void *weft__pool_entity_data(const weft__pool_t *pool, uint32_t idx) {
    uint32_t row = weft__pool_row(pool, idx);
    if (row == WEFT__ROW_NONE) {
        return NULL;
    }
    if (pool->multi != NULL) {
        row = pool->multi->slot_row[row];
    }
    return weft__pool_at(pool, row);
}

/* Allocate the slot tables of a new multi-instance pool. Errors: WEFT_ENOMEM. */
weft_result_t weft__multi_init(weft_world_t *world, weft__pool_t *pool);

/* Free them. */
void weft__multi_fini(weft_world_t *world, weft__pool_t *pool);

/* Make the next weft__multi_push for idx infallible. Errors: WEFT_ENOMEM, WEFT_ECAPACITY. */
weft_result_t weft__multi_prepare(weft_world_t *world, weft__pool_t *pool, uint32_t idx);

/* Make the next k weft__multi_push calls on this pool need no slot-table growth: row_slot
 * gets room for pool->count + k rows and the slot arrays for k new slots beyond the free
 * list. Removes in between only free rows and slots, so they keep it true. The pool's own
 * rows and sparse pages are the caller's (weft__pool_reserve, weft__pool_prepare). Used by
 * the staged command apply (command.c), which cannot tell in advance which adds hit which
 * entity. All or nothing: on error nothing changed, capacity included; on success only
 * capacity did (no slot, handle or row moves). Errors: WEFT_ENOMEM, WEFT_ECAPACITY (more
 * instances than the handle's slot range or a pool's row count allows), reported through
 * the world's logger. Thread: main. */
weft_result_t weft__multi_reserve(weft_world_t *world, weft__pool_t *pool, uint32_t k);

/* Append a zeroed instance for entity index idx at the head of its list; returns its slot. */
uint32_t weft__multi_push(weft__pool_t *pool, uint32_t idx);

/* Remove the instance in `slot` (swap-removing its row, unlinking it, freeing the slot). */
void weft__multi_remove_slot(weft__pool_t *pool, uint32_t slot);

/* Remove every instance of entity index idx. */
void weft__multi_remove_all(weft__pool_t *pool, uint32_t idx);

/* The handle of `slot` in a multi-instance pool. */
static inline weft_instance_t weft__multi_handle(const weft__pool_t *pool, uint32_t slot) {
    uint64_t gen = pool->multi->slot_gen[slot];
    return (weft_instance_t){slot | gen << 32 | (uint64_t)pool->multi->type << 56};
}

#endif /* WEFT_SRC_MULTI_H */
