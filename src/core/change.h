/* change.h: change ticks — which rows were added or written since a system last ran
 * (private to the build; the public side is weft_query_term_t.filter, weft/query.h).
 *
 * DESIGN
 * The world keeps one 32-bit tick (world->change_tick). Each system run takes a fresh tick
 * when its phase prepares it (weft__change_system_tick: the system gets tick + 1 and the world
 * moves on to tick + 2), so writes made by command applies and by direct calls between
 * frames, which use world->change_tick, are newer than every system run prepared before them.
 * A tracked pool keeps, per row, the tick of its add (`added`) and of its last write
 * (`changed`; an add is also a write), plus per block of 16 rows the newest `changed` tick of
 * the block (`blocks`, an upper bound: it is raised when a newer row enters and never
 * lowered), so a `changed` or `added` filter skips a whole block with one compare and its
 * cost follows the changed rows rather than the pool size. Ticks move with their rows
 * (swap, remove, ordered moves, sorts).
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

/* Raise the summary of row's block to `tick` if it is older (a CAS loop: two writers of one
 * block with different ticks, a system chunk and a nested job, must keep the newer). */
static inline void weft__change_raise(weft__pool_t *pool, uint32_t row, uint32_t tick) {
    weft_atomic_u32 *b = &pool->tick_blocks[row >> WEFT__TICK_BLOCK_SHIFT];
    uint32_t cur = weft_atomic_load_relaxed(b);
    while (weft__tick_newer(tick, cur) && !weft_atomic_cas_weak_relaxed(b, &cur, tick)) {
    }
}

/* Record a write of `row` at `tick` (pool tracked). */
static inline void weft__change_mark(weft__pool_t *pool, uint32_t row, uint32_t tick) {
    if (weft_atomic_load_relaxed(&pool->tick_changed[row]) != tick) {
        weft_atomic_store_relaxed(&pool->tick_changed[row], tick);
        weft__change_raise(pool, row, tick);
    }
}

/* Record the add of `row` at `tick` (pool tracked; main thread). */
static inline void weft__change_mark_added(weft__pool_t *pool, uint32_t row, uint32_t tick) {
    pool->tick_added[row] = tick;
    weft_atomic_store_relaxed(&pool->tick_changed[row], tick);
    weft__change_raise(pool, row, tick);
}

/* Copy row `from`'s ticks to row `to` (a row move; pool tracked; main thread). */
static inline void weft__change_copy(weft__pool_t *pool, uint32_t from, uint32_t to) {
    uint32_t c = weft_atomic_load_relaxed(&pool->tick_changed[from]);
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
