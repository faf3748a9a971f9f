/* pool.h: the component pool — dense entity indices, dense data, paged sparse index
 * (private to the build; other modules use the weft__pool_* API below).
 *
 * DESIGN
 * Rows [0, count) hold one component each: dense[row] is the owner's entity index (32 bits:
 * the generation lives in the entity table, and a component exists only on a live entity) and
 * data + row * size its bytes. The sparse index maps entity index -> row through a directory
 * of pages of 1024 uint32_t rows; WEFT__ROW_NONE (all ones) marks "absent", pages are
 * allocated on first use and kept until the world dies. So has/get are two dependent loads
 * after a bounds check, and memory is 4 (dense) + size (data) + ~4 (sparse, when indices
 * are dense) bytes per row.
 *
 * Fallible work (growing arrays, allocating a sparse page) is split from mutation: callers run
 * weft__pool_prepare() first and only then the infallible push/swap/remove operations, which
 * is how every ECS call leaves the world unchanged on WEFT_ENOMEM.
 *
 * Thread: readers (row lookup, pointers) may run concurrently while nobody mutates; every
 * mutating operation is for the main thread. */
#ifndef WEFT_SRC_POOL_H
#define WEFT_SRC_POOL_H

#include <string.h>

#include "weft/query.h"

#define WEFT__ROW_NONE 0xFFFFFFFFu
#define WEFT__SPARSE_PAGE (1u << WEFT__SPARSE_SHIFT) /* entries per sparse page */

typedef struct weft__pool {
    uint32_t *dense;           /* [cap] entity index of each row */
    unsigned char *data;       /* [cap * size] row data; tag pools point at a world dummy */
    uint32_t **sparse;         /* [pages] directory; a NULL page holds no rows */
    uint32_t pages;            /* directory length */
    uint32_t count;            /* rows in use */
    uint32_t cap;              /* rows allocated */
    uint32_t size;             /* bytes per row (0: tag) */
    uint32_t align;            /* data alignment (power of two) */
    uint32_t group;            /* id of the group owning this pool, 0: none */
    uint32_t id;               /* component id */
    struct weft__multi *multi; /* multi-instance bookkeeping (multi.h); NULL: one row per
                                  entity. When set, sparse maps an entity to the slot of its
                                  first instance, not to a row: use multi.h, never
                                  weft__pool_row() for data. */
} weft__pool_t;

struct weft_world;

/* Row of entity index `idx`, or WEFT__ROW_NONE. Safe from any reader. */
static inline uint32_t weft__pool_row(const weft__pool_t *pool, uint32_t idx) {
    uint32_t p = idx >> WEFT__SPARSE_SHIFT;
    if (p >= pool->pages || pool->sparse[p] == NULL)
        return WEFT__ROW_NONE;
    return pool->sparse[p][idx & WEFT__SPARSE_MASK];
}

/* Data of `row` (no bounds check). */
static inline void *weft__pool_at(const weft__pool_t *pool, uint32_t row) {
    return pool->data + (size_t)row * pool->size;
}

/* Set the sparse entry of `idx` (its page must exist). */
static inline void weft__pool_sparse_set(weft__pool_t *pool, uint32_t idx, uint32_t row) {
    pool->sparse[idx >> WEFT__SPARSE_SHIFT][idx & WEFT__SPARSE_MASK] = row;
}

/* Make the next push of entity index `idx` infallible: room for one more row and the sparse
 * page of idx. Errors: WEFT_ENOMEM (the pool is unchanged apart from spare capacity). */
weft_result_t weft__pool_prepare(struct weft_world *world, weft__pool_t *pool, uint32_t idx);

/* Grow to at least `cap` rows. Errors: WEFT_ENOMEM (unchanged). */
weft_result_t weft__pool_reserve(struct weft_world *world, weft__pool_t *pool, uint32_t cap);

/* Append entity index idx with zeroed data (prepare must have succeeded); returns its row. */
static inline uint32_t weft__pool_push(weft__pool_t *pool, uint32_t idx) {
    uint32_t row = pool->count++;
    pool->dense[row] = idx;
    if (pool->size)
        memset(weft__pool_at(pool, row), 0, pool->size);
    weft__pool_sparse_set(pool, idx, row);
    return row;
}

/* Exchange rows a and b, fixing both sparse entries. */
void weft__pool_swap_rows(weft__pool_t *pool, uint32_t a, uint32_t b);

/* Remove `row`, moving the last row into its place. */
void weft__pool_remove_swap(weft__pool_t *pool, uint32_t row);

/* Remove `row`, shifting the rows after it down by one (order kept). */
void weft__pool_remove_ordered(weft__pool_t *pool, uint32_t row);

/* Move the row at `from` to index `to`, shifting the rows between (order of the others kept). */
void weft__pool_move_row(weft__pool_t *pool, uint32_t from, uint32_t to);

/* Free every array of the pool. */
void weft__pool_fini(struct weft_world *world, weft__pool_t *pool);

/* Bytes of heap the pool holds (dense, data, directory, pages). */
size_t weft__pool_bytes(const weft__pool_t *pool);

#endif /* WEFT_SRC_POOL_H */
