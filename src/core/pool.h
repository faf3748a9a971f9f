/* pool.h: the component pool — dense entity indices, dense data, paged sparse index
 * (private to the build; other modules use the weft__pool_* API below).
 *
 * DESIGN
 * Rows [0, count) hold one component each: dense[row] is the owner's entity index (32 bits:
 * the generation lives in the entity table, and a component exists only on a live entity) and
 * data + row * size its bytes. The sparse index maps entity index -> row through a directory
 * of pages of 1024 entries, allocated on first use and kept until the world dies. An entry
 * holds row + 1, so 0 is "absent" (decoding gives WEFT__ROW_NONE) and a fresh page is all
 * zeroes. Entries are 3 bytes while the pool's capacity stays below 2^24 rows, which is
 * every pool but the huge ones: that saves 1 byte per entity per component (at 1M entities
 * with two 12-byte components, 42 B/entity instead of 44). Growing past it widens every page
 * to 4-byte entries once (weft__pool_reserve; multi-instance pools start wide, their entries
 * are slots, not rows). So has/get are two dependent loads after a bounds check, and memory
 * is 4 (dense) + size (data) + ~3 (sparse, when indices are dense) bytes per row.
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

#include "jobs/platform/atomic.h"
#include "weft/query.h"

#define WEFT__ROW_NONE 0xFFFFFFFFu
#define WEFT__SPARSE_PAGE (1u << WEFT__SPARSE_SHIFT) /* entries per sparse page */
#define WEFT__SPARSE_NARROW_CAP 0xFFFFFFu /* largest capacity a narrow (3-byte) pool may have */

typedef struct weft__pool {
    uint32_t *dense;           /* [cap] entity index of each row */
    unsigned char *data;       /* [cap * size] row data; tag pools point at a world dummy */
    unsigned char **sparse;    /* [pages] directory; a NULL page holds no rows */
    uint32_t pages;            /* directory length */
    uint32_t sparse_wide;      /* 0: 3-byte entries, 1: 4-byte entries (see above) */
    uint32_t count;            /* rows in use */
    uint32_t cap;              /* rows allocated */
    uint32_t size;             /* bytes per row (0: tag) */
    uint32_t align;            /* data alignment (power of two) */
    uint32_t group;            /* outermost group owning this pool (group.c), 0: none */
    uint32_t id;               /* component id */
    bool ascending;            /* dense[0, count) is strictly ascending by entity index:
                                  set by appends in ascending order (from an empty pool) and
                                  by weft__pool_check_order, cleared by every row move that
                                  breaks it (kept exactly, never by a scan of its own; the
                                  merge-join plan relies on it, merge_join.h) */
    uint64_t layout;           /* sparse entry writes so far: bumped by every add, move and
                                  remove of a row (query join caches compare it) */
    struct weft__multi *multi; /* multi-instance bookkeeping (multi.h); NULL: one row per
                                  entity. When set, sparse maps an entity to the slot of its
                                  first instance, not to a row: use multi.h, never
                                  weft__pool_row() for data. */
    /* Change ticks (change.h); all NULL while no query filters on the pool. */
    uint32_t *tick_added;           /* [cap] tick of each row's add */
    weft_atomic_u32 *tick_changed;  /* [cap] tick of each row's last write */
    weft_atomic_u32 *tick_blocks;   /* [2 * WEFT__TICK_BLOCKS(cap)] block slots (change.h) */
    weft_atomic_u32 *tick_dirty;    /* [WEFT__DIRTY_WORDS(cap)] rows the main thread wrote at
                                      tick_dirty_at, not yet in tick_changed (change.h) */
    weft_atomic_u32 *dirty_sum;     /* [WEFT__DIRTY_SUM_WORDS(cap)] bit w: tick_dirty[w] may
                                      hold rows (change.h); in tick_dirty's allocation */
    uint32_t *dirty_log;            /* [WEFT__DIRTY_LOG_CAP(cap)] (row, entity) entries the main
                                      thread wrote in the open epoch, not yet in tick_dirty
                                      (change.h); in tick_dirty's allocation */
    uint32_t *list_rows;            /* [WEFT__DIRTY_LOG_CAP(cap)] the epoch's write list: rows in
                                      first-write order (change.h, THE WRITE LIST) */
    uint32_t *list_ents;            /* [WEFT__DIRTY_LOG_CAP(cap)] their entity indices */
    weft_atomic_u32 list_len;       /* rows in the write list */
    weft_atomic_u32 list_ok;        /* 1: the list names exactly the dirty rows */
    weft_atomic_u32 sum_built;      /* 0 while list_ok and dirty_sum lacks listed rows */
    uint64_t list_layout;           /* `layout` when the epoch opened (the list's rows hold) */
    weft_atomic_u64 log_key;        /* the fast write's key: (open epoch's tick << 32) | the
                                      tracking thread's key, else WEFT__LOG_CLOSED (change.h) */
    weft_atomic_ptr dirty_log_at;   /* the log's next free entry; release by the writer, so
                                      dirty_log[0, at) is what a publisher sees (change.h) */
    uint32_t *dirty_log_end;        /* dirty_log + WEFT__LOG_ENTRY * WEFT__DIRTY_LOG_CAP(cap) */
    weft_atomic_u32 dirty_pending;  /* 1 while a publisher moves dirty_log, else 0 (change.h) */
    weft_atomic_u32 tick_dirty_at;  /* the tick of every tick_dirty row; old when empty */
    weft_atomic_u32 tick_newest[2]; /* newest tick stored in tick_changed, per slot kind */
    uint32_t dirty_tick;            /* main thread: tick of the open dirty epoch */
    bool dirty_open;                /* main thread: tick_dirty may hold rows */
    const void *tick_owner;         /* &weft__change_current of the thread that tracks */
} weft__pool_t;

struct weft_world;

/* Row of entity index `idx`, or WEFT__ROW_NONE. Safe from any reader. */
static inline uint32_t weft__pool_row(const weft__pool_t *pool, uint32_t idx) {
    uint32_t p = idx >> WEFT__SPARSE_SHIFT;
    if (p >= pool->pages || pool->sparse[p] == NULL) {
        return WEFT__ROW_NONE;
    }
    return weft__sparse_get(pool->sparse[p], idx & WEFT__SPARSE_MASK, pool->sparse_wide);
}

/* Data of `row` (no bounds check). */
static inline void *weft__pool_at(const weft__pool_t *pool, uint32_t row) {
    return pool->data + (size_t)row * pool->size;
}

/* Set the sparse entry of `idx` to `row` or WEFT__ROW_NONE (its page must exist; a narrow
 * pool's rows are below WEFT__SPARSE_NARROW_CAP by construction). */
static inline void weft__pool_sparse_set(weft__pool_t *pool, uint32_t idx, uint32_t row) {
    unsigned char *page = pool->sparse[idx >> WEFT__SPARSE_SHIFT];
    uint32_t i = idx & WEFT__SPARSE_MASK, v = row + 1u;
    pool->layout++;
    if (pool->sparse_wide) {
        memcpy(page + (size_t)i * 4u, &v, 4u);
    } else { /* the two accesses weft__sparse_get reads (a 3-byte memcpy goes via the stack) */
        uint16_t lo = (uint16_t)v;
        memcpy(page + (size_t)i * 3u, &lo, 2u);
        page[(size_t)i * 3u + 2u] = (unsigned char)(v >> 16);
    }
}

/* Bytes of one sparse page: 3 or 4 per entry. */
static inline size_t weft__pool_page_bytes(uint32_t wide) {
    return WEFT__SPARSE_PAGE * (3u + wide);
}

/* Switch the pool to 4-byte sparse entries, re-encoding every page (all or nothing).
 * weft__pool_reserve calls it when growing past WEFT__SPARSE_NARROW_CAP (multi-instance pools
 * are created wide). Errors: WEFT_ENOMEM (the pool is unchanged). Thread: main. */
weft_result_t weft__pool_widen(struct weft_world *world, weft__pool_t *pool);

/* Make the next push of entity index `idx` infallible: room for one more row and the sparse
 * page of idx. Errors: WEFT_ENOMEM (the pool is unchanged apart from spare capacity). */
weft_result_t weft__pool_prepare(struct weft_world *world, weft__pool_t *pool, uint32_t idx);

/* Make sure the sparse page of entity index `idx` exists (bulk callers prepare every page
 * they will touch, then reserve rows once). Errors: WEFT_ENOMEM (the pool is unchanged apart
 * from spare capacity: a longer directory or an empty page). */
weft_result_t weft__pool_prepare_page(struct weft_world *world, weft__pool_t *pool, uint32_t idx);

/* Room for `extra` more rows, growing geometrically (doubling, at least 16) like single
 * pushes do, so callers that add in batches stay amortised. Errors: WEFT_ECAPACITY (past
 * 2^32 - 2 rows), WEFT_ENOMEM (the pool is unchanged). */
weft_result_t weft__pool_reserve_more(struct weft_world *world, weft__pool_t *pool, uint64_t extra);

/* Grow to at least `cap` rows (widening the sparse entries when cap passes
 * WEFT__SPARSE_NARROW_CAP). Errors: WEFT_ENOMEM (unchanged). */
weft_result_t weft__pool_reserve(struct weft_world *world, weft__pool_t *pool, uint32_t cap);

/* Append entity index idx with zeroed data (prepare must have succeeded); returns its row. */
static inline uint32_t weft__pool_push(weft__pool_t *pool, uint32_t idx) {
    uint32_t row = pool->count++;
    pool->ascending = row == 0 || (pool->ascending && pool->dense[row - 1u] < idx);
    pool->dense[row] = idx;
    if (pool->size) {
        memset(weft__pool_at(pool, row), 0, pool->size);
    }
    weft__pool_sparse_set(pool, idx, row);
    return row;
}

/* Recompute pool->ascending after rows [from, count) were written by a bulk path (appends
 * from row `from`, or from = 0 after a rewrite of the whole dense array): O(count - from). */
void weft__pool_check_order(weft__pool_t *pool, uint32_t from);

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
