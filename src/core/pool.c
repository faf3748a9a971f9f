/* pool.c: growth and row moves of component pools (see pool.h for the layout).
 *
 * DESIGN
 * Growth allocates new dense and data arrays through the world's allocator, copies, and only
 * then frees the old ones, so a failed allocation leaves the pool exactly as it was. Arrays
 * double (measured: 1.5x steps cost create2 about 20% more in copies and first-touch page
 * faults for a similar average slack), and weft__pool_reserve() lets callers that know their
 * size avoid slack altogether. Sparse
 * pages are allocated on first use, zeroed (every entry absent), and kept. Widening to 4-byte
 * entries allocates every new page before it frees any old one, for the same reason; it
 * happens once, when a pool first grows past 2^24 - 1 rows, and costs a copy of the index
 * (a doubling of the dense and data arrays at that size copies far more). Every row move
 * rewrites the sparse entries of the entities it moves, which is the whole invariant:
 * sparse[dense[r]] == r for every row r < count, and every other sparse entry is NONE. */
#include "pool.h"

#include "change.h"

#include "world.h"

/* ---- growth ------------------------------------------------------------------ >>growth */

weft_result_t weft__pool_widen(weft_world_t *world, weft__pool_t *pool) {
    if (pool->sparse_wide) {
        return WEFT_OK;
    }
    const size_t narrow = weft__pool_page_bytes(0), wide = weft__pool_page_bytes(1);
    unsigned char **fresh = NULL;
    if (pool->pages) {
        fresh = weft__alloc(world, (size_t)pool->pages * sizeof *fresh, _Alignof(unsigned char *));
        if (fresh == NULL) {
            goto fail;
        }
    }
    for (uint32_t p = 0; p < pool->pages; p++) {
        fresh[p] = NULL;
        if (pool->sparse[p] != NULL && (fresh[p] = weft__alloc(world, wide, 16)) == NULL) {
            while (p-- > 0) {
                weft__free(world, fresh[p], wide);
            }
            weft__free(world, fresh, (size_t)pool->pages * sizeof *fresh);
            goto fail;
        }
    }
    /* Nothing can fail from here: re-encode, then let go of the narrow pages. */
    for (uint32_t p = 0; p < pool->pages; p++) {
        if (pool->sparse[p] == NULL) {
            continue;
        }
        for (uint32_t i = 0; i < WEFT__SPARSE_PAGE; i++) {
            uint32_t v = weft__sparse_get(pool->sparse[p], i, 0) + 1u; /* the stored row + 1 */
            memcpy(fresh[p] + (size_t)i * 4u, &v, 4u);
        }
        weft__free(world, pool->sparse[p], narrow);
        pool->sparse[p] = fresh[p];
    }
    weft__free(world, fresh, (size_t)pool->pages * sizeof *fresh);
    pool->sparse_wide = 1;
    return WEFT_OK;

fail:
    return WEFT__FAIL(world->log, WEFT_ENOMEM,
                      "component pool %u: out of memory widening its sparse index", pool->id);
}

weft_result_t weft__pool_reserve(weft_world_t *world, weft__pool_t *pool, uint32_t cap) {
    if (cap <= pool->cap) {
        return WEFT_OK;
    }
    uint32_t *dense = weft__alloc(world, (size_t)cap * sizeof(uint32_t), _Alignof(uint32_t));
    if (dense == NULL) {
        goto fail;
    }
    unsigned char *data = pool->data;
    if (pool->size != 0) {
        data = weft__alloc(world, (size_t)cap * pool->size, pool->align);
        if (data == NULL) {
            goto fail_free_dense;
        }
    }
    /* Last fallible step, so a failure here also leaves the pool as it was. */
    if (cap > WEFT__SPARSE_NARROW_CAP && weft__pool_widen(world, pool) != WEFT_OK) {
        if (pool->size != 0) {
            weft__free(world, data, (size_t)cap * pool->size);
        }
        goto fail_free_dense;
    }
    if (weft__change_grow(world, pool, pool->cap, cap) != WEFT_OK) { /* commits on success */
        if (pool->size != 0) {
            weft__free(world, data, (size_t)cap * pool->size);
        }
        weft__free(world, dense, (size_t)cap * sizeof(uint32_t));
        return WEFT_ENOMEM; /* reported by weft__change_grow */
    }
    /* GROWTH BACKING. Nothing can fail from here. The copy below and the rows added next write these arrays front to
     * back; whether their pages are already backed depends on the allocator's history (a
     * block reused from the heap is, a fresh mapping is not), and a fault per page costs
     * more than the copy on a virtual machine. So back them in one call each: a grown pool
     * is past half its capacity, which bounds what this makes resident before use. */
    weft__populate(dense, (size_t)cap * sizeof(uint32_t));
    if (pool->size != 0) {
        weft__populate(data, (size_t)cap * pool->size);
    }
    if (pool->size != 0) {
        if (pool->count) {
            memcpy(data, pool->data, (size_t)pool->count * pool->size);
        }
        weft__free(world, pool->data, (size_t)pool->cap * pool->size);
    }
    if (pool->count) {
        memcpy(dense, pool->dense, (size_t)pool->count * sizeof(uint32_t));
    }
    weft__free(world, pool->dense, (size_t)pool->cap * sizeof(uint32_t));
    pool->dense = dense;
    pool->data = data;
    pool->cap = cap;
    return WEFT_OK;

fail_free_dense:
    weft__free(world, dense, (size_t)cap * sizeof(uint32_t));
fail:
    return WEFT__FAIL(world->log, WEFT_ENOMEM,
                      "component pool %u: out of memory growing to %u rows", pool->id, cap);
}

/* Make the directory long enough and the page of idx present. */
weft_result_t weft__pool_prepare_page(weft_world_t *world, weft__pool_t *pool, uint32_t idx) {
    uint32_t p = idx >> WEFT__SPARSE_SHIFT;
    if (p >= pool->pages) {
        uint32_t pages = pool->pages ? pool->pages : 8u;
        while (pages <= p) {
            pages *= 2u;
        }
        unsigned char **dir =
            weft__alloc(world, (size_t)pages * sizeof *dir, _Alignof(unsigned char *));
        if (dir == NULL) {
            return WEFT__FAIL(world->log, WEFT_ENOMEM, "component pool %u: out of memory",
                              pool->id);
        }
        for (uint32_t i = 0; i < pages; i++) {
            dir[i] = i < pool->pages ? pool->sparse[i] : NULL;
        }
        weft__free(world, pool->sparse, (size_t)pool->pages * sizeof *dir);
        pool->sparse = dir;
        pool->pages = pages;
    }
    if (pool->sparse[p] == NULL) {
        size_t bytes = weft__pool_page_bytes(pool->sparse_wide);
        /* 16, not 64: 64-aligned 3 KiB blocks made glibc's memalign interleave fragments
         * with the pages, and add/remove/destroy measured 1-4 ns slower. */
        unsigned char *page = weft__alloc(world, bytes, 16);
        if (page == NULL) {
            return WEFT__FAIL(world->log, WEFT_ENOMEM, "component pool %u: out of memory",
                              pool->id);
        }
        memset(page, 0, bytes); /* every entry absent */
        pool->sparse[p] = page;
    }
    return WEFT_OK;
}

weft_result_t weft__pool_reserve_more(weft_world_t *world, weft__pool_t *pool, uint64_t extra) {
    uint64_t need = (uint64_t)pool->count + extra;
    if (need <= pool->cap) {
        return WEFT_OK;
    }
    if (need > UINT32_MAX - 1u) {
        return WEFT__FAIL(world->log, WEFT_ECAPACITY, "component pool %u is full", pool->id);
    }
    uint64_t cap = pool->cap < 16u ? 16u : (uint64_t)pool->cap * 2u;
    if (cap < need) {
        cap = need;
    }
    if (cap > UINT32_MAX - 1u) {
        cap = UINT32_MAX - 1u;
    }
    return weft__pool_reserve(world, pool, (uint32_t)cap);
}

weft_result_t weft__pool_prepare(weft_world_t *world, weft__pool_t *pool, uint32_t idx) {
    weft_result_t r = weft__pool_reserve_more(world, pool, 1u);
    if (r != WEFT_OK) {
        return r;
    }
    return weft__pool_prepare_page(world, pool, idx);
}

void weft__pool_fini(weft_world_t *world, weft__pool_t *pool) {
    weft__change_fini(world, pool, pool->cap);
    for (uint32_t p = 0; p < pool->pages; p++) {
        weft__free(world, pool->sparse[p], weft__pool_page_bytes(pool->sparse_wide));
    }
    weft__free(world, pool->sparse, (size_t)pool->pages * sizeof *pool->sparse);
    weft__free(world, pool->dense, (size_t)pool->cap * sizeof(uint32_t));
    if (pool->size != 0) {
        weft__free(world, pool->data, (size_t)pool->cap * pool->size);
    }
    memset(pool, 0, sizeof *pool);
}

size_t weft__pool_bytes(const weft__pool_t *pool) {
    size_t bytes = (size_t)pool->pages * sizeof *pool->sparse;
    for (uint32_t p = 0; p < pool->pages; p++) {
        if (pool->sparse[p] != NULL) {
            bytes += weft__pool_page_bytes(pool->sparse_wide);
        }
    }
    return bytes + (size_t)pool->cap * (sizeof(uint32_t) + pool->size) +
           weft__change_bytes(pool, pool->cap);
}

/* ---- row moves ----------------------------------------------------------------- >>rows */

/* Copy row `from` over row `to` (data and dense) and point the moved entity's sparse at `to`. */
static void copy_row(weft__pool_t *pool, uint32_t from, uint32_t to) {
    uint32_t idx = pool->dense[from];
    pool->dense[to] = idx;
    if (pool->size) {
        memcpy(weft__pool_at(pool, to), weft__pool_at(pool, from), pool->size);
    }
    weft__pool_sparse_set(pool, idx, to);
    if (pool->tick_added != NULL) {
        weft__change_copy(pool, from, to);
    }
}

void weft__pool_check_order(weft__pool_t *pool, uint32_t from) {
    bool asc = from == 0 || pool->ascending;
    uint32_t r = from == 0 ? 1u : from;
    for (; asc && r < pool->count; r++) {
        asc = pool->dense[r - 1u] < pool->dense[r];
    }
    pool->ascending = asc;
}

void weft__pool_swap_rows(weft__pool_t *pool, uint32_t a, uint32_t b) {
    if (a == b) {
        return;
    }
    pool->ascending = false; /* two rows of an ascending pool out of place */
    uint32_t ia = pool->dense[a];
    uint32_t ib = pool->dense[b];
    pool->dense[a] = ib;
    pool->dense[b] = ia;
    weft__pool_sparse_set(pool, ia, b);
    weft__pool_sparse_set(pool, ib, a);
    if (pool->tick_added != NULL) {
        weft__change_swap(pool, a, b);
    }
    /* Swap the data in bounded stack chunks; components can be large. */
    unsigned char tmp[256];
    unsigned char *pa = weft__pool_at(pool, a);
    unsigned char *pb = weft__pool_at(pool, b);
    for (size_t off = 0; off < pool->size; off += sizeof tmp) {
        size_t n = pool->size - off < sizeof tmp ? pool->size - off : sizeof tmp;
        memcpy(tmp, pa + off, n);
        memcpy(pa + off, pb + off, n);
        memcpy(pb + off, tmp, n);
    }
}

void weft__pool_remove_swap(weft__pool_t *pool, uint32_t row) {
    uint32_t idx = pool->dense[row];
    uint32_t last = pool->count - 1u;
    /* The largest entity lands at `row`: still ascending only when that is the new end. */
    pool->ascending = last <= 1u || (pool->ascending && row + 1u >= last);
    if (row != last) {
        copy_row(pool, last, row);
    }
    weft__pool_sparse_set(pool, idx, WEFT__ROW_NONE);
    pool->count = last;
#if WEFT_DEBUG >= 2
    if (pool->size) {
        memset(weft__pool_at(pool, last), 0xDD, pool->size);
    }
#endif /* WEFT_DEBUG */
}

/* Rewrite the sparse entries of rows [first, end) after a block move. */
static void fix_sparse(weft__pool_t *pool, uint32_t first, uint32_t end) {
    for (uint32_t r = first; r < end; r++) {
        weft__pool_sparse_set(pool, pool->dense[r], r);
    }
}

void weft__pool_remove_ordered(weft__pool_t *pool, uint32_t row) {
    uint32_t idx = pool->dense[row];
    uint32_t tail = pool->count - row - 1u;
    memmove(pool->dense + row, pool->dense + row + 1, (size_t)tail * sizeof(uint32_t));
    if (pool->size) {
        memmove(weft__pool_at(pool, row), weft__pool_at(pool, row + 1u), (size_t)tail * pool->size);
    }
    if (pool->tick_added != NULL) {
        weft__change_settle(NULL, pool); /* dirty bits into the ticks before they move */
        memmove(pool->tick_added + row, pool->tick_added + row + 1,
                (size_t)tail * sizeof(uint32_t));
        memmove((void *)(pool->tick_changed + row), (void *)(pool->tick_changed + row + 1),
                (size_t)tail * sizeof(uint32_t));
        weft__change_fix_blocks(pool, row, row + tail);
    }
    pool->count--;
    pool->ascending = pool->ascending || pool->count <= 1u; /* order kept */
    fix_sparse(pool, row, pool->count);
    weft__pool_sparse_set(pool, idx, WEFT__ROW_NONE);
}

/* The tick half of a small-row move_row: the same rotation of rows [lo, hi]. */
static void move_ticks(weft__pool_t *pool, uint32_t from, uint32_t to) {
    if (pool->tick_added == NULL) {
        return;
    }
    weft__change_settle(NULL, pool); /* dirty bits into the ticks before they move */
    uint32_t lo = from < to ? from : to, n = from < to ? to - from : from - to;
    uint32_t added = pool->tick_added[from];
    uint32_t changed = weft_atomic_load_relaxed(&pool->tick_changed[from]);
    uint32_t dst = from < to ? from : to + 1u, src = from < to ? from + 1u : to;
    memmove(pool->tick_added + dst, pool->tick_added + src, (size_t)n * sizeof(uint32_t));
    memmove((void *)(pool->tick_changed + dst), (void *)(pool->tick_changed + src),
            (size_t)n * sizeof(uint32_t));
    pool->tick_added[to] = added;
    weft_atomic_store_relaxed(&pool->tick_changed[to], changed);
    weft__change_fix_blocks(pool, lo, lo + n + 1u);
}

void weft__pool_move_row(weft__pool_t *pool, uint32_t from, uint32_t to) {
    if (from == to) {
        return;
    }
    pool->ascending = false; /* one row of an ascending pool taken out of place */
    /* Rows up to 256 bytes: park the row in a stack buffer and shift the block between in
     * one memmove; larger rows bubble with swaps (no allocation either way). */
    uint32_t idx = pool->dense[from];
    unsigned char tmp[256];
    uint32_t lo = from < to ? from : to;
    uint32_t hi = from < to ? to : from;
    if (pool->size <= sizeof tmp) {
        if (pool->size) {
            memcpy(tmp, weft__pool_at(pool, from), pool->size);
        }
        if (from < to) {
            memmove(pool->dense + from, pool->dense + from + 1,
                    (size_t)(to - from) * sizeof(uint32_t));
            if (pool->size) {
                memmove(weft__pool_at(pool, from), weft__pool_at(pool, from + 1u),
                        (size_t)(to - from) * pool->size);
            }
        } else {
            memmove(pool->dense + to + 1, pool->dense + to, (size_t)(from - to) * sizeof(uint32_t));
            if (pool->size) {
                memmove(weft__pool_at(pool, to + 1u), weft__pool_at(pool, to),
                        (size_t)(from - to) * pool->size);
            }
        }
        pool->dense[to] = idx;
        if (pool->size) {
            memcpy(weft__pool_at(pool, to), tmp, pool->size);
        }
        fix_sparse(pool, lo, hi + 1u);
        move_ticks(pool, from, to);
        return;
    }
    /* Large rows: walk the row step by step with swaps (O(distance * size), no buffer). */
    if (from < to) {
        for (uint32_t r = from; r < to; r++) {
            weft__pool_swap_rows(pool, r, r + 1u);
        }
    } else {
        for (uint32_t r = from; r > to; r--) {
            weft__pool_swap_rows(pool, r, r - 1u);
        }
    }
}
