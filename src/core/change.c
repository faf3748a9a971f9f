/* change.c: change ticks — tracking a pool, growing and clamping its tick arrays, the
 * thread's write tick (see change.h). */
#include "change.h"

#include <string.h>

#include "query.h"
#include "world.h"

_Thread_local weft__change_scope_t weft__change_current;

/* ---- arrays ------------------------------------------------------------------ >>arrays */

size_t weft__change_bytes(const weft__pool_t *pool, uint32_t cap) {
    if (pool->tick_added == NULL) {
        return 0;
    }
    return (size_t)cap * 2u * sizeof(uint32_t) + (size_t)WEFT__TICK_BLOCKS(cap) * sizeof(uint64_t);
}

typedef struct arrays {
    uint32_t *added;
    weft_atomic_u32 *changed;
    weft_atomic_u64 *blocks;
} arrays_t;

static void free_arrays(weft_world_t *world, arrays_t *a, uint32_t cap) {
    weft__free(world, a->added, (size_t)cap * sizeof(uint32_t));
    weft__free(world, (void *)a->changed, (size_t)cap * sizeof(uint32_t));
    weft__free(world, (void *)a->blocks, (size_t)WEFT__TICK_BLOCKS(cap) * sizeof(uint64_t));
}

static bool alloc_arrays(weft_world_t *world, arrays_t *a, uint32_t cap) {
    a->added = weft__alloc(world, (size_t)cap * sizeof(uint32_t), _Alignof(uint32_t));
    a->changed = weft__alloc(world, (size_t)cap * sizeof(uint32_t), _Alignof(weft_atomic_u32));
    a->blocks = weft__alloc(world, (size_t)WEFT__TICK_BLOCKS(cap) * sizeof(uint64_t),
                            _Alignof(weft_atomic_u64));
    if (a->added == NULL || a->changed == NULL || a->blocks == NULL) {
        free_arrays(world, a, cap);
        return false;
    }
    return true;
}

weft_result_t weft__change_grow(weft_world_t *world, weft__pool_t *pool, uint32_t old_cap,
                                uint32_t cap) {
    if (pool->tick_added == NULL) {
        return WEFT_OK;
    }
    arrays_t a;
    if (!alloc_arrays(world, &a, cap)) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM,
                          "component pool %u: out of memory growing its change ticks", pool->id);
    }
    /* Nobody iterates while a pool grows (main thread, outside frames): plain copies. */
    memcpy(a.added, pool->tick_added, (size_t)pool->count * sizeof(uint32_t));
    memcpy((void *)a.changed, (void *)pool->tick_changed, (size_t)pool->count * sizeof(uint32_t));
    memcpy((void *)a.blocks, (void *)pool->tick_blocks,
           (size_t)WEFT__TICK_BLOCKS(old_cap) * sizeof(uint64_t));
    arrays_t old = {pool->tick_added, pool->tick_changed, pool->tick_blocks};
    free_arrays(world, &old, old_cap);
    pool->tick_added = a.added;
    pool->tick_changed = a.changed;
    pool->tick_blocks = a.blocks;
    /* Blocks past the old capacity hold 0, which may read as newer than a last run after the
     * counter wraps: give them the oldest value in reach. */
    uint32_t oldest = world->change_tick - WEFT__TICK_MAX_AGE;
    for (uint32_t b = WEFT__TICK_BLOCKS(old_cap); b < WEFT__TICK_BLOCKS(cap); b++) {
        weft_atomic_store_relaxed(&pool->tick_blocks[b], weft__sum_make(oldest, 0, oldest));
    }
    return WEFT_OK;
}

weft_result_t weft__change_track(weft_world_t *world, weft__pool_t *pool) {
    if (pool->tick_added != NULL) {
        return WEFT_OK;
    }
    if (pool->multi != NULL) {
        return WEFT__FAIL(world->log, WEFT_EINVAL,
                          "component pool %u: multi-instance components have no change ticks",
                          pool->id);
    }
    /* A tracked pool always has tick arrays (NULL means untracked): give an empty pool its
     * first rows (spare capacity, which a failure may leave behind). */
    weft_result_t r = weft__pool_reserve(world, pool, pool->cap ? pool->cap : 16u);
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t cap = pool->cap;
    arrays_t a;
    if (!alloc_arrays(world, &a, cap)) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM,
                          "component pool %u: out of memory allocating change ticks", pool->id);
    }
    uint32_t now = world->change_tick;
    for (uint32_t row = 0; row < cap; row++) {
        a.added[row] = now;
        weft_atomic_store_relaxed(&a.changed[row], now);
    }
    for (uint32_t b = 0; b < WEFT__TICK_BLOCKS(cap); b++) {
        weft_atomic_store_relaxed(&a.blocks[b], weft__sum_make(now, 0, now));
    }
    weft_atomic_store_relaxed(&pool->tick_horizon, now); /* no query reads the pool yet */
    pool->tick_added = a.added;
    pool->tick_changed = a.changed;
    pool->tick_blocks = a.blocks;
    return WEFT_OK;
}

void weft__change_stamp_added(weft__pool_t *pool, uint32_t first, uint32_t end, uint32_t tick) {
    if (pool->tick_added == NULL) {
        return;
    }
    for (uint32_t r = first; r < end; r++) {
        pool->tick_added[r] = tick;
        weft_atomic_store_relaxed(&pool->tick_changed[r], tick);
        weft__change_raise(pool, r, tick);
    }
}

void weft__change_fix_blocks(weft__pool_t *pool, uint32_t first, uint32_t end) {
    if (pool->tick_added == NULL) {
        return;
    }
    for (uint32_t r = first; r < end; r++) {
        weft__change_raise(pool, r, weft_atomic_load_relaxed(&pool->tick_changed[r]));
    }
}

/* ---- summaries --------------------------------------------------------------- >>summary */

/* Raise the stored tick of each row of block b in `rows` to at least `tick` (a CAS per row:
 * a writer of an older tick may race on another thread; ticks of a row only grow). */
static void spill(weft__pool_t *pool, uint32_t b, uint32_t rows, uint32_t tick) {
    weft_atomic_u32 *t = pool->tick_changed + ((size_t)b << WEFT__TICK_BLOCK_SHIFT);
    for (uint32_t i = 0; rows >> i != 0; i++) {
        if (!((rows >> i) & 1u)) {
            continue;
        }
        weft_atomic_u32 *at = &t[i];
        uint32_t cur = weft_atomic_load_relaxed(at);
        while (weft__tick_newer(tick, cur) && !weft_atomic_cas_weak_relaxed(at, &cur, tick)) {
        }
    }
}

void weft__change_mark_slow(weft__pool_t *pool, uint32_t b, uint32_t bits, uint32_t tick) {
    weft_atomic_u64 *at = &pool->tick_blocks[b];
    uint64_t cur = weft_atomic_load_relaxed(at), next;
    do {
        uint32_t newest = weft__sum_newest(cur), mask = weft__sum_mask(cur);
        uint32_t older = weft__sum_older(cur);
        if (newest == tick) {
            next = weft__sum_make(newest, mask | bits, older);
        } else if (weft__tick_newer(tick, newest)) {
            /* The old mask's rows leave it. Their tick matters only to a query whose window
             * starts before it: write it out then (the horizon is the oldest window start),
             * else forget it, since every window already excludes it. */
            if (mask != 0 &&
                weft__tick_newer(newest, weft_atomic_load_relaxed(&pool->tick_horizon))) {
                spill(pool, b, mask, newest);
            }
            next = weft__sum_make(tick, bits, mask != 0 ? newest : older);
        } else {
            /* An older write after a newer one (a writer with an older tick): rows already in
             * the mask keep the newer tick; the others store it. */
            uint32_t out = bits & ~mask;
            if (out == 0) {
                return;
            }
            spill(pool, b, out, tick);
            next = weft__sum_make(newest, mask, weft__tick_newer(tick, older) ? tick : older);
        }
    } while (!weft_atomic_cas_weak_relaxed(at, &cur, next));
}

void weft__change_raise(weft__pool_t *pool, uint32_t row, uint32_t tick) {
    weft_atomic_u64 *at = &pool->tick_blocks[row >> WEFT__TICK_BLOCK_SHIFT];
    uint32_t b = row >> WEFT__TICK_BLOCK_SHIFT;
    uint64_t s = weft_atomic_load_relaxed(at);
    uint32_t newest = weft__sum_newest(s), older = weft__sum_older(s);
    uint32_t mask = weft__sum_mask(s) & ~(1u << (row & 15u));
    if (weft__tick_newer(tick, newest)) {
        spill(pool, b, mask, newest); /* everything is now bounded by the new tick */
        weft_atomic_store_relaxed(at, weft__sum_make(tick, 0, tick));
        return;
    }
    weft_atomic_store_relaxed(
        at, weft__sum_make(newest, mask, weft__tick_newer(tick, older) ? tick : older));
}

void weft__change_settle(weft__pool_t *pool, uint32_t first, uint32_t end) {
    if (pool->tick_added == NULL || first >= end) {
        return;
    }
    for (uint32_t b = first >> WEFT__TICK_BLOCK_SHIFT; b <= (end - 1u) >> WEFT__TICK_BLOCK_SHIFT;
         b++) {
        uint64_t s = weft_atomic_load_relaxed(&pool->tick_blocks[b]);
        uint32_t newest = weft__sum_newest(s);
        spill(pool, b, weft__sum_mask(s), newest);
        weft_atomic_store_relaxed(&pool->tick_blocks[b], weft__sum_make(newest, 0, newest));
    }
}

void weft__change_fini(weft_world_t *world, weft__pool_t *pool, uint32_t cap) {
    if (pool->tick_added == NULL) {
        return;
    }
    arrays_t a = {pool->tick_added, pool->tick_changed, pool->tick_blocks};
    free_arrays(world, &a, cap);
    pool->tick_added = NULL;
    pool->tick_changed = NULL;
    pool->tick_blocks = NULL;
}

/* ---- wrap-around ------------------------------------------------------------- >>clamp */

static uint32_t clamp(uint32_t t, uint32_t floor) { return weft__tick_newer(floor, t) ? floor : t; }

void weft__change_clamp(weft_world_t *world) {
    if (world->change_tick - world->tick_clamped < WEFT__TICK_CLAMP_EVERY) {
        if (world->changed_queries != 0) {
            weft__query_horizons(world); /* last frame's runs moved their windows on */
        }
        return;
    }
    uint32_t floor = world->change_tick - WEFT__TICK_MAX_AGE;
    for (uint32_t c = 1; c <= world->component_count; c++) {
        weft__pool_t *pool = &world->components[c]->pool;
        if (pool->tick_added == NULL) {
            continue;
        }
        for (uint32_t r = 0; r < pool->count; r++) {
            pool->tick_added[r] = clamp(pool->tick_added[r], floor);
            weft_atomic_store_relaxed(
                &pool->tick_changed[r],
                clamp(weft_atomic_load_relaxed(&pool->tick_changed[r]), floor));
        }
        for (uint32_t b = 0; b < WEFT__TICK_BLOCKS(pool->cap); b++) {
            uint64_t s = weft_atomic_load_relaxed(&pool->tick_blocks[b]);
            weft_atomic_store_relaxed(&pool->tick_blocks[b],
                                      weft__sum_make(clamp(weft__sum_newest(s), floor),
                                                     weft__sum_mask(s),
                                                     clamp(weft__sum_older(s), floor)));
        }
        weft_atomic_store_relaxed(&pool->tick_horizon,
                                  clamp(weft_atomic_load_relaxed(&pool->tick_horizon), floor));
    }
    /* A last run older than the floor goes just below it, so rows clamped to the floor still
     * count as changed for it (conservative). */
    weft__query_clamp_since(world, floor - 1u);
    world->tick_clamped = world->change_tick;
    weft__query_horizons(world);
}
