/* change.h: change ticks — which rows were added or written since a system last ran
 * (private to the build; the public side is weft_query_term_t.filter, weft/query.h).
 *
 * DESIGN
 * The world keeps one 32-bit tick (world->change_tick). Each system run takes a fresh tick
 * when its phase prepares it (weft__change_system_tick: the system gets tick + 1 and the world
 * moves on to tick + 2), so writes made by command applies and by direct calls between
 * frames, which use world->change_tick, are newer than every system run prepared before them.
 * A tracked pool keeps, per row, the tick of its add (`added`) and a stored tick of its last
 * write (`changed`), plus per block of 16 rows a 64-bit summary: the block's newest tick N,
 * the mask of its rows last written at N, and a bound on every other row's tick. A write
 * only sets its row's bit in the summary (one CAS; nothing if already set at this tick), so
 * it touches 8 bytes per 16 rows instead of a tick per row. When a block moves to a newer
 * tick, the rows of its old mask keep their tick in `changed` only if some query still needs
 * it: the pool's horizon is the oldest window start of the seen queries with a CHANGED term
 * on it (recomputed at each frame start and on weft_query_mark_seen, O(queries)); ticks not
 * newer than it look the same to every window, so they are forgotten. A `changed` filter
 * skips a block with one compare when N is not newer than its window and takes the mask
 * alone when the bound is not newer either (the common case), so its cost follows changed
 * blocks and rows; stored ticks are read only for blocks with older writes inside the
 * window. Row moves first settle their blocks (masks written out), then move stored ticks.
 *
 * Which tick a write carries: inside a system chunk the running system's tick (a thread-local
 * the scheduler sets around each chunk, weft__change_enter), elsewhere world->change_tick.
 * A row is newer than a system's previous run when (int32_t)(row - since) > 0: comparisons
 * are on differences, so the counter may wrap. To keep every live tick within 2^31 of the
 * current one, weft__change_clamp (main thread, at each frame start) raises ticks older than
 * 2^30 to that age once the counter has moved 2^29 since the last clamp; a filter whose last
 * run is older than that sees every such row as changed (conservative).
 *
 * Only pools some query filters on are tracked (weft__change_track, from weft_query_create);
 * an untracked pool's write path pays one NULL test. Multi-instance pools are never tracked.
 *
 * Thread: `changed` and `blocks` are written by the jobs of the systems that write the pool
 * (and by get_mut from jobs), so they are relaxed atomics; ordering between a writer and a
 * reader of a pool comes from the scheduler's conflict edges (and job completion). `added`
 * changes only with structure (main thread). */
#ifndef WEFT_SRC_CHANGE_H
#define WEFT_SRC_CHANGE_H

#include "pool.h"

struct weft_world;

#define WEFT__TICK_BLOCK_SHIFT 4u                    /* 16 rows per summary block */
#define WEFT__TICK_MAX_AGE (1u << 30)                /* ticks older than this are clamped */
#define WEFT__TICK_CLAMP_EVERY (1u << 29)            /* counter distance between clamps */
#define WEFT__TICK_BLOCKS(cap) (((cap) + 15u) >> 4u) /* summary entries for cap rows */

/* True when tick `t` is newer than `than` (wrapping). */
static inline bool weft__tick_newer(uint32_t t, uint32_t than) { return (int32_t)(t - than) > 0; }

/* A block summary (64 bits): the block's newest tick N (bits 0-31), the mask M of its rows
 * whose tick is N (bits 32-47), and an age A (bits 48-63, saturating) such that every other
 * row's tick is at most N - A. */
static inline uint32_t weft__sum_newest(uint64_t s) { return (uint32_t)s; }
static inline uint32_t weft__sum_mask(uint64_t s) { return (uint32_t)(s >> 32) & 0xFFFFu; }
static inline uint32_t weft__sum_older(uint64_t s) { return (uint32_t)s - (uint32_t)(s >> 48); }
static inline uint64_t weft__sum_make(uint32_t newest, uint32_t mask, uint32_t older) {
    uint32_t age = newest - older;
    age = age > 0xFFFFu ? 0xFFFFu : age; /* older reads older than it is: still a bound */
    return (uint64_t)newest | (uint64_t)(mask & 0xFFFFu) << 32 | (uint64_t)age << 48;
}

/* The tick of the last write of `row` (pool tracked): its block's newest tick if the row is
 * in the block's mask, else its stored tick. */
static inline uint32_t weft__change_row_tick(const weft__pool_t *pool, uint32_t row) {
    uint64_t s = weft_atomic_load_relaxed(&pool->tick_blocks[row >> WEFT__TICK_BLOCK_SHIFT]);
    if ((weft__sum_mask(s) >> (row & 15u)) & 1u) {
        return weft__sum_newest(s);
    }
    return weft_atomic_load_relaxed(&pool->tick_changed[row]);
}

/* Bit i set for each of the first `rows` (<= 16) rows of block b whose last write is newer
 * than `since` (pool tracked). One compare for a block without such rows; the stored ticks
 * are read only when rows outside the mask may be newer. */
static inline uint32_t weft__change_block_changed(const weft__pool_t *pool, uint32_t b,
                                                  uint32_t since, uint32_t rows) {
    uint64_t s = weft_atomic_load_relaxed(&pool->tick_blocks[b]);
    if (!weft__tick_newer(weft__sum_newest(s), since)) {
        return 0;
    }
    uint32_t keep = rows >= 16u ? 0xFFFFu : (1u << rows) - 1u;
    uint32_t m = weft__sum_mask(s);
    if (weft__tick_newer(weft__sum_older(s), since)) {
        const weft_atomic_u32 *t = pool->tick_changed + ((size_t)b << WEFT__TICK_BLOCK_SHIFT);
        for (uint32_t i = 0; i < rows; i++) {
            m |= (uint32_t)weft__tick_newer(weft_atomic_load_relaxed(&t[i]), since) << i;
        }
    }
    return m & keep;
}

/* The same for `added` filters (adds also count as writes, so the newest tick bounds them). */
static inline uint32_t weft__change_block_added(const weft__pool_t *pool, uint32_t b,
                                                uint32_t since, uint32_t rows) {
    uint64_t s = weft_atomic_load_relaxed(&pool->tick_blocks[b]);
    if (!weft__tick_newer(weft__sum_newest(s), since)) {
        return 0;
    }
    const uint32_t *t = pool->tick_added + ((size_t)b << WEFT__TICK_BLOCK_SHIFT);
    uint32_t m = 0;
    for (uint32_t i = 0; i < rows; i++) {
        m |= (uint32_t)weft__tick_newer(t[i], since) << i;
    }
    return m;
}

/* Record writes at `tick` of the rows of block b in `bits` (pool tracked; any thread). The
 * rows join the block's mask; the stored ticks are not touched unless the block moves to a
 * newer tick while its old mask holds rows some query may still need (newer than the pool's
 * horizon), which are then written out first. (change.c) */
void weft__change_mark_slow(weft__pool_t *pool, uint32_t b, uint32_t bits, uint32_t tick);

static inline void weft__change_mark_bits(weft__pool_t *pool, uint32_t b, uint32_t bits,
                                          uint32_t tick) {
    uint64_t s = weft_atomic_load_relaxed(&pool->tick_blocks[b]);
    if (weft__sum_newest(s) == tick && (weft__sum_mask(s) & bits) == bits) {
        return; /* already written at this tick */
    }
    weft__change_mark_slow(pool, b, bits, tick);
}

/* Record a write of `row` at `tick` (pool tracked; any thread). */
static inline void weft__change_mark(weft__pool_t *pool, uint32_t row, uint32_t tick) {
    weft__change_mark_bits(pool, row >> WEFT__TICK_BLOCK_SHIFT, 1u << (row & 15u), tick);
}

/* Row `row`'s stored tick was set to `tick` (a row move or an add; pool tracked; main
 * thread): the row leaves its block's mask and the summary bounds it. (change.c) */
void weft__change_raise(weft__pool_t *pool, uint32_t row, uint32_t tick);

/* Write the masks of the blocks over rows [first, end) out to the stored ticks, so that the
 * stored ticks alone are every row's tick (before rows are moved in bulk; pool tracked; main
 * thread). (change.c) */
void weft__change_settle(weft__pool_t *pool, uint32_t first, uint32_t end);

/* Record the add of `row` at `tick` (pool tracked; main thread). */
static inline void weft__change_mark_added(weft__pool_t *pool, uint32_t row, uint32_t tick) {
    pool->tick_added[row] = tick;
    weft_atomic_store_relaxed(&pool->tick_changed[row], tick);
    weft__change_raise(pool, row, tick);
}

/* Copy row `from`'s ticks to row `to` (a row move; pool tracked; main thread). */
static inline void weft__change_copy(weft__pool_t *pool, uint32_t from, uint32_t to) {
    uint32_t c = weft__change_row_tick(pool, from);
    pool->tick_added[to] = pool->tick_added[from];
    weft_atomic_store_relaxed(&pool->tick_changed[to], c);
    weft__change_raise(pool, to, c);
}

/* Publish `tick` as the calling thread's write tick for `world` (a system chunk starts);
 * returns the previous publication for weft__change_leave (chunks nest when a system waits
 * on jobs that run other chunks). */
typedef struct weft__change_scope {
    const struct weft_world *world;
    uint32_t tick;
} weft__change_scope_t;

/* The calling thread's publication (change.c); world NULL outside system chunks. Declared here
 * so that weft__change_tick_now inlines into the write paths. */
extern _Thread_local weft__change_scope_t weft__change_current;

/* The tick a write by the calling thread carries: the running system's, else `fallback`
 * (world->change_tick; weft__change_tick_now passes it, for files that include world.h). */
static inline uint32_t weft__change_tick_of(const struct weft_world *world, uint32_t fallback) {
    return weft__change_current.world == world ? weft__change_current.tick : fallback;
}
#define weft__change_tick_now(world) weft__change_tick_of((world), (world)->change_tick)

/* Inline: every system chunk pays these, filters or not. */
static inline weft__change_scope_t weft__change_enter(const struct weft_world *world,
                                                      uint32_t tick) {
    weft__change_scope_t previous = weft__change_current;
    weft__change_current.world = world;
    weft__change_current.tick = tick;
    return previous;
}

static inline void weft__change_leave(weft__change_scope_t previous) {
    weft__change_current = previous;
}

/* A fresh tick for a system run being prepared (main thread): *counter (the world's tick)
 * + 1; the counter moves past it. (Takes the counter so that it inlines without world.h.) */
static inline uint32_t weft__change_next_tick(uint32_t *counter) {
    uint32_t tick = *counter + 1u;
    *counter += 2u;
    return tick;
}
#define weft__change_system_tick(world) weft__change_next_tick(&(world)->change_tick)

/* Start tracking `pool` (no-op when tracked): allocate ticks for its capacity, every present
 * row stamped with the world tick. Errors: WEFT_EINVAL (multi-instance pool), WEFT_ENOMEM
 * (unchanged). Thread: main. */
weft_result_t weft__change_track(struct weft_world *world, weft__pool_t *pool);

/* Grow a tracked pool's tick arrays from old_cap to cap rows, copying `count` rows; all or
 * nothing. Untracked pools: no-op. Errors: WEFT_ENOMEM (unchanged). (pool.c) */
weft_result_t weft__change_grow(struct weft_world *world, weft__pool_t *pool, uint32_t old_cap,
                                uint32_t cap);

/* Stamp rows [first, end) of a tracked pool as added at `tick` (bulk adds, loads).
 * Untracked pools: no-op. */
void weft__change_stamp_added(weft__pool_t *pool, uint32_t first, uint32_t end, uint32_t tick);

/* Raise the block summaries over rows [first, end) after ticks were moved in bulk. */
void weft__change_fix_blocks(weft__pool_t *pool, uint32_t first, uint32_t end);

/* Free a pool's tick arrays (capacity cap). */
void weft__change_fini(struct weft_world *world, weft__pool_t *pool, uint32_t cap);

/* Bytes of the tick arrays of a pool with capacity cap (0 when untracked). */
size_t weft__change_bytes(const weft__pool_t *pool, uint32_t cap);

/* Keep every tick within reach of the counter (see above); `since` values of the world's
 * queries are clamped too. Cheap unless 2^29 ticks passed since the last clamp. Thread: main,
 * outside systems. */
void weft__change_clamp(struct weft_world *world);

#endif /* WEFT_SRC_CHANGE_H */
