/* change.h: change ticks — which rows were added or written since a system last ran
 * (private to the build; the public side is weft_query_term_t.filter, weft/query.h).
 *
 * DESIGN
 * The world keeps one 32-bit tick (world->change_tick). Each system run takes a fresh tick
 * when its phase prepares it (weft__change_system_tick: the system gets tick + 1 and the world
 * moves on to tick + 2), so writes made by command applies and by direct calls between
 * frames, which use world->change_tick, are newer than every system run prepared before them.
 * A tracked pool keeps, per row, the tick of its add (`added`) and of its last write
 * (`changed`), plus per block of 16 rows two newest-tick slots: one for writes at a system's
 * tick (inside its chunks) and one for every other write (the world's tick: nested jobs,
 * commands, direct calls). A write (weft__change_mark) stores its row's tick and its slot's
 * tick: two plain (relaxed) stores, no load and no read-modify-write, so nothing waits on
 * their misses (a CAS per write serialised the writes' misses: the tracked write measured
 * about twice an untracked one). Why that is enough: writers that run at once and touch one
 * pool carry at most two ticks, the running system's (its chunks, all the same tick: no two
 * systems writing a pool run at once) and the world's of that phase (fixed while the phase's
 * systems run), so each slot only races with stores of its own value; and the ticks a slot
 * receives that way never decrease (system ticks are handed out in run order; the world's
 * tick only grows). Stamps of write terms and row moves raise a slot instead (load, compare,
 * store), since they may carry an older tick (a system's query iterated after its run).
 * Concurrent writes of one row (a data race on the row itself) leave either tick. A
 * `changed` filter skips a block with two compares when neither slot is newer than its
 * window; otherwise it reads the block's 16 row ticks (one 64-byte line). Row moves (main
 * thread) move row ticks and raise the destination blocks' slots; a slot may stay newer than
 * every row of its block (rows left): such a block is read and yields nothing.
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
 * Thread: `changed` and the slots are written by the jobs of the systems that write the pool
 * (and by get_mut from jobs), so they are relaxed atomics; ordering between a writer and a
 * reader of a pool comes from the scheduler's conflict edges (and job completion). `added`
 * changes only with structure (main thread). */
#ifndef WEFT_SRC_CHANGE_H
#define WEFT_SRC_CHANGE_H

#include "pool.h"

struct weft_world;

#define WEFT__TICK_BLOCK_SHIFT 4u                    /* 16 rows per tick block */
#define WEFT__TICK_MAX_AGE (1u << 30)                /* ticks older than this are clamped */
#define WEFT__TICK_CLAMP_EVERY (1u << 29)            /* counter distance between clamps */
#define WEFT__TICK_BLOCKS(cap) (((cap) + 15u) >> 4u) /* tick blocks of cap rows */

/* True when tick `t` is newer than `than` (wrapping). */
static inline bool weft__tick_newer(uint32_t t, uint32_t than) { return (int32_t)(t - than) > 0; }

/* The slot of block b written at a system's tick (0) or at any other tick (1). */
#define WEFT__TICK_SLOT_SYSTEM 0u
#define WEFT__TICK_SLOT_OTHER 1u

/* DIRTY ROWS. Writes by the thread that tracks the pool (the main thread: weft_query_create)
 * outside system chunks (direct calls, command applies) do not store row ticks: they set the
 * row's bit in `tick_dirty` (1 bit per row, in L2 for a million rows, where the row tick is a
 * second random miss per write), and every bit of it stands for tick `tick_dirty_at` (one
 * "epoch"). A row's changed tick is the newest of tick_changed[row] and, when its bit is
 * set, tick_dirty_at. An epoch stays open while the world's tick stays the same; a write at
 * another tick closes it (weft__change_settle) only in a structural call (set, set_n: no
 * reader runs then, weft/component.h), where the bits are dropped when every query filtering
 * on the pool has a window at or past the epoch's tick (none can tell them apart from older
 * ticks), else copied into the row ticks first ("materialised"); otherwise (get_mut,
 * row_mut) such a write stores its row tick as a system's write does. Row moves carry the
 * bits (swap-removes) or materialise them first (ordered moves, sorts, growth). So the
 * cost of tracking follows the rows written, and the memory is one bit per row (plus the
 * summary below, one bit per 32 rows, and the log, one row index per 32 rows).
 * `tick_newest` bounds every row tick: a filter whose window is at or past it reads only
 * the bits (no slot, no row tick), which is what makes the cost of a `changed` query follow
 * the changed rows when they were written by the main thread. */
#define WEFT__DIRTY_WORDS(cap) (((cap) + 127u) / 128u * 4u) /* 32-bit words, whole 128-row groups */
/* SUMMARY. Bit w of `dirty_sum` is set whenever word w of `tick_dirty` holds a bit (it
 * may stay set after the word empties), so the readers of the bits (next_dirty in query.c,
 * weft__change_settle) visit only the words that hold rows: their cost follows the written
 * rows plus one load per 1,024 rows, where reading every word was a data-dependent branch per
 * 32 rows (a misprediction for about every third word at 1% random rows). */
#define WEFT__DIRTY_SUM_WORDS(cap) ((WEFT__DIRTY_WORDS(cap) + 31u) / 32u)
/* LOG. The fast write (weft__change_write) does not set the row's bit either: it appends the row
 * to `dirty_log`, a store to a line the previous append loaded, where the bit was a
 * read-modify-write of a random line (the write waited for its miss: measured 1.28x an untracked
 * write with the bit, 1.08x without). The bits are set later, by the first reader, with each row's
 * line fetched 16 rows ahead so the misses overlap (about 28 instructions a row), or never when
 * the epoch is dropped unread. The log holds up to WEFT__DIRTY_LOG_CAP(cap) rows (as many bytes as
 * the bits, allocated with them: no allocation on the write path); a write that finds it full
 * moves it into the bits first. Every reader of the bits publishes the log before reading: an
 * iteration with a change filter (weft__change_publish, any thread: the first reader moves the
 * rows into the bits, others wait for it), and the main thread's row moves, adds, growth and epoch
 * closes (weft__change_log_drain). An epoch close that drops the bits drops the log unread; one
 * that copies them copies the log's rows straight into their row ticks. A row may be in the log
 * more than once; moving it into the bits sets its bit (and summary bit) with the lines fetched
 * ahead. The tracking thread's writes never run beside an iteration of the same pool (the bits'
 * rule), so the log's writer and its publishers never meet. */
#define WEFT__DIRTY_LOG_CAP(cap) WEFT__DIRTY_WORDS(cap)
/* An entry of the log is two words: the row, then its entity index. */
#define WEFT__LOG_ENTRY 2u
/* THE WRITE LIST. Publishing the log also appends each row whose bit was not yet set to the
 * epoch's write list (list_rows, list_ents: up to WEFT__DIRTY_LOG_CAP(cap) rows each, in the
 * same allocation), so the list holds the epoch's rows once each, in the order of their
 * first write, with their entities. While it names exactly the rows whose bits are set
 * (list_ok: cleared by every main-thread row move or add, which drain the log first, and by
 * a list that would overflow) and pool->layout is what it was when the epoch opened, a
 * `changed` iteration over the whole pool hands out its rows straight from the list
 * (query.c, next_listed): no bit, summary or entity line is read, so its cost follows the
 * changed rows (the data line of each), not the pool's size. Otherwise the bits serve, in
 * row order. While the list serves, publishing sets the rows' bits but not their summary
 * bits (a word's summary bit was about a fifth of the publication's instructions);
 * `sum_built` says so, and the summary is built from the list when a reader of part of the
 * pool needs it (weft__change_publish), when the list stops serving, or never (the epoch's
 * close then clears the bits by the list). The list is only appended to while the epoch is
 * open and its prefix never rewritten before the epoch closes (a structural call), so an
 * iteration reading it meets no writer. */
/* THE FAST WRITE'S KEY. The fast path tests one thing: pool->log_key == (now << 32 | the
 * calling thread's key). A thread's key (weft__change_current.key) is a nonzero number of its
 * own while it runs outside every system chunk (set by weft__change_write_slow on the tracking
 * thread, restored by weft__change_leave) and 0 inside one (weft__change_enter); log_key is
 * (the open epoch's tick << 32 | the tracking thread's key) while an epoch is open and the
 * tracking thread has a key, else WEFT__LOG_CLOSED, whose low half no thread's key takes. So a
 * match means: the tracking thread, outside chunks, at the open epoch's tick: the three tests
 * (chunk, owner, epoch) in one compare. The log is a cursor (dirty_log_at, release by the
 * writer, acquire by weft__change_publish), so no flag is stored per write. Why it matters:
 * a write waits on several misses (entity, sparse entry, row), so its instructions bound how
 * many writes' misses are in flight; callgrind counted 22 instructions a tracked write over
 * an untracked one with the three tests, a length and a flag, 13 with the key and the cursor
 * (get_mut 12, set 15). */
#define WEFT__LOG_CLOSED (~(uint64_t)0)

/* True when the dirty bits may hold rows newer than `since`. */
static inline bool weft__change_dirty_live(const weft__pool_t *pool, uint32_t since) {
    return weft__tick_newer(weft_atomic_load_relaxed(&pool->tick_dirty_at), since);
}

/* True when some row tick may be newer than `since` (the dirty bits aside). */
static inline bool weft__change_ticks_live(const weft__pool_t *pool, uint32_t since) {
    return weft__tick_newer(weft_atomic_load_relaxed(&pool->tick_newest[0]), since) ||
           weft__tick_newer(weft_atomic_load_relaxed(&pool->tick_newest[1]), since);
}

/* The dirty bits of block b's 16 rows. */
static inline uint32_t weft__change_dirty16(const weft__pool_t *pool, uint32_t b) {
    uint32_t w = weft_atomic_load_relaxed(&pool->tick_dirty[b >> 1u]);
    return (b & 1u) ? w >> 16u : w & 0xFFFFu;
}

/* Bit i (i < 8) set when block first + i (first a multiple of 8) has a dirty bit. */
static inline uint32_t weft__change_dirty_blocks8(const weft__pool_t *pool, uint32_t first) {
    const weft_atomic_u32 *w = pool->tick_dirty + (first >> 1u);
    uint32_t m = 0;
    for (uint32_t i = 0; i < 4u; i++) {
        uint32_t x = weft_atomic_load_relaxed(&w[i]);
        m |= ((uint32_t)((x & 0xFFFFu) != 0) | (uint32_t)((x >> 16u) != 0) << 1u) << (2u * i);
    }
    return m;
}

/* True when block b's slots say some row tick of the block may be newer than `since`. */
static inline bool weft__change_slots_dirty(const weft__pool_t *pool, uint32_t b, uint32_t since) {
    const weft_atomic_u32 *s = pool->tick_blocks + 2u * (size_t)b;
    uint32_t system = weft_atomic_load_relaxed(&s[0]), other = weft_atomic_load_relaxed(&s[1]);
    return weft__tick_newer(system, since) || weft__tick_newer(other, since);
}

/* True when some row of block b may have been written after `since`. */
static inline bool weft__change_block_dirty(const weft__pool_t *pool, uint32_t b, uint32_t since) {
    return weft__change_slots_dirty(pool, b, since) ||
           (weft__change_dirty_live(pool, since) && weft__change_dirty16(pool, b) != 0);
}

/* True when `row` was written (or added) after `since` (pool tracked). */
static inline bool weft__change_row_changed(const weft__pool_t *pool, uint32_t row,
                                            uint32_t since) {
    if (weft__tick_newer(weft_atomic_load_relaxed(&pool->tick_changed[row]), since)) {
        return true;
    }
    uint32_t w = weft_atomic_load_relaxed(&pool->tick_dirty[row >> 5u]);
    return ((w >> (row & 31u)) & 1u) && weft__change_dirty_live(pool, since);
}

/* The tick of the last direct store of `row` (pool tracked; dirty bits aside). */
static inline uint32_t weft__change_row_tick(const weft__pool_t *pool, uint32_t row) {
    return weft_atomic_load_relaxed(&pool->tick_changed[row]);
}

/* Bit i set for each of the first `rows` (<= 16) rows of block b written after `since`
 * (pool tracked). Two compares for a block without such rows. */
static inline uint32_t weft__change_block_changed(const weft__pool_t *pool, uint32_t b,
                                                  uint32_t since, uint32_t rows) {
    uint32_t m = weft__change_dirty_live(pool, since) ? weft__change_dirty16(pool, b) : 0u;
    if (weft__change_slots_dirty(pool, b, since)) {
        const weft_atomic_u32 *t = pool->tick_changed + ((size_t)b << WEFT__TICK_BLOCK_SHIFT);
        for (uint32_t i = 0; i < rows; i++) {
            m |= (uint32_t)weft__tick_newer(weft_atomic_load_relaxed(&t[i]), since) << i;
        }
    }
    return rows >= 16u ? m : m & ((1u << rows) - 1u);
}

/* VECTOR READS. The changed scan (query.c) reads 8 blocks' slots and a block's 16 row ticks
 * a group at a time: on x86 with SSE2, plain 16-byte vector loads (four per group), about a
 * sixth of the instructions of one relaxed atomic load, compare and shift per tick (the scan
 * is bound by instructions as much as by misses: callgrind counted about 20 instructions
 * per block summary and 7 per row tick). Readers race only with writers of the iterating
 * system itself (its other chunks' stamps and get_mut calls, its nested jobs): such a tick
 * may be read before or after its store, as with the relaxed loads, and aligned 4-byte
 * elements are never torn. ThreadSanitizer cannot see that reasoning, so its builds (and
 * the model-checking and chaos builds, whose atomics are hooks) read tick by tick. */
#if defined(__SANITIZE_THREAD__)
#define WEFT__CHANGE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WEFT__CHANGE_TSAN 1
#endif
#endif
#if defined(__SSE2__) && !defined(WEFT__CHANGE_TSAN) && !defined(WEFT_MODEL_CHECK) && \
    !defined(WEFT_CHAOS)
#define WEFT__CHANGE_VECTOR 1
#include <emmintrin.h>

/* Bit i set when tick v[i] (16 ticks, 16-byte aligned) is newer than `since`. */
static inline uint32_t weft__ticks16_newer(const void *v, uint32_t since) {
    const __m128i *p = (const __m128i *)v;
    const __m128i s = _mm_set1_epi32((int)since), z = _mm_setzero_si128();
    __m128i c0 = _mm_cmpgt_epi32(_mm_sub_epi32(_mm_load_si128(p), s), z);
    __m128i c1 = _mm_cmpgt_epi32(_mm_sub_epi32(_mm_load_si128(p + 1), s), z);
    __m128i c2 = _mm_cmpgt_epi32(_mm_sub_epi32(_mm_load_si128(p + 2), s), z);
    __m128i c3 = _mm_cmpgt_epi32(_mm_sub_epi32(_mm_load_si128(p + 3), s), z);
    __m128i b = _mm_packs_epi16(_mm_packs_epi32(c0, c1), _mm_packs_epi32(c2, c3));
    return (uint32_t)_mm_movemask_epi8(b);
}
#endif

/* Bit i (i < 8) set when block first + i has a slot newer than `since`, as
 * weft__change_slots_dirty for each (dirty bits aside); first is a multiple of 8 and the 8 blocks lie inside
 * the tick arrays. */
static inline uint32_t weft__change_dirty8(const weft__pool_t *pool, uint32_t first,
                                           uint32_t since) {
#ifdef WEFT__CHANGE_VECTOR
    uint32_t m = weft__ticks16_newer((const void *)(pool->tick_blocks + 2u * (size_t)first), since);
    m = (m | (m >> 1u)) & 0x5555u; /* bit 2i: either slot of block i */
    m = (m | (m >> 1u)) & 0x3333u;
    m = (m | (m >> 2u)) & 0x0F0Fu;
    return (m | (m >> 4u)) & 0x00FFu;
#else
    uint32_t m = 0;
    for (uint32_t i = 0; i < 8u; i++) {
        m |= (uint32_t)weft__change_slots_dirty(pool, first + i, since) << i;
    }
    return m;
#endif
}

/* Bit i set for each of the 16 rows of block b (whole, inside the arrays) whose `changed`
 * (added: false) or `added` (true) tick is newer than `since`; the summaries are not read. */
static inline uint32_t weft__change_rows16(const weft__pool_t *pool, uint32_t b, uint32_t since,
                                           bool added) {
    size_t first = (size_t)b << WEFT__TICK_BLOCK_SHIFT;
#ifdef WEFT__CHANGE_VECTOR
    return weft__ticks16_newer(added ? (const void *)(pool->tick_added + first)
                                     : (const void *)(pool->tick_changed + first),
                               since);
#else
    uint32_t m = 0;
    for (uint32_t i = 0; i < 16u; i++) {
        uint32_t t = added ? pool->tick_added[first + i]
                           : weft_atomic_load_relaxed(&pool->tick_changed[first + i]);
        m |= (uint32_t)weft__tick_newer(t, since) << i;
    }
    return m;
#endif
}

/* The same for `added` filters (adds store row ticks, so the slots bound them). */
static inline uint32_t weft__change_block_added(const weft__pool_t *pool, uint32_t b,
                                                uint32_t since, uint32_t rows) {
    if (!weft__change_slots_dirty(pool, b, since)) {
        return 0;
    }
    const uint32_t *t = pool->tick_added + ((size_t)b << WEFT__TICK_BLOCK_SHIFT);
    uint32_t m = 0;
    for (uint32_t i = 0; i < rows; i++) {
        m |= (uint32_t)weft__tick_newer(t[i], since) << i;
    }
    return m;
}

/* Raise block b's slot `slot` to `tick` (plain load and store; see DESIGN for why no RMW). */
static inline void weft__change_raise_slot(weft__pool_t *pool, uint32_t b, uint32_t slot,
                                           uint32_t tick) {
    weft_atomic_u32 *at = &pool->tick_blocks[2u * (size_t)b + slot];
    if (weft__tick_newer(tick, weft_atomic_load_relaxed(at))) {
        weft_atomic_store_relaxed(at, tick);
    }
    at = &pool->tick_newest[slot];
    if (weft__tick_newer(tick, weft_atomic_load_relaxed(at))) {
        weft_atomic_store_relaxed(at, tick);
    }
}

/* Record a write of `row` at `tick` into slot `slot` (pool tracked; any thread, under the
 * rule of DESIGN). The slot is stored without a load, so `tick` must be the calling
 * thread's current write tick (weft__change_tick_now / weft__change_slot_now): the ticks a
 * slot receives that way never decrease (system ticks are handed out in run order and one
 * system writes a pool at a time; the world's tick only grows). */
static inline void weft__change_mark(weft__pool_t *pool, uint32_t row, uint32_t tick,
                                     uint32_t slot) {
    weft_atomic_store_relaxed(&pool->tick_changed[row], tick);
    weft_atomic_store_relaxed(
        &pool->tick_blocks[2u * (size_t)(row >> WEFT__TICK_BLOCK_SHIFT) + slot], tick);
    /* The pool's bound: a load of a line every writer shares, stored once per tick. */
    if (weft_atomic_load_relaxed(&pool->tick_newest[slot]) != tick) {
        weft_atomic_store_relaxed(&pool->tick_newest[slot], tick);
    }
}

/* Record a write of `row` at `tick`, raising the slot only if older (any tick: a stamp of a
 * system's query iterated after its run carries that run's tick). */
static inline void weft__change_stamp(weft__pool_t *pool, uint32_t row, uint32_t tick,
                                      uint32_t slot) {
    weft_atomic_store_relaxed(&pool->tick_changed[row], tick);
    weft__change_raise_slot(pool, row >> WEFT__TICK_BLOCK_SHIFT, slot, tick);
}

/* Record writes at `tick` of rows [first, end) (as weft__change_stamp) (a batch of a write term; pool tracked). */
void weft__change_mark_run(weft__pool_t *pool, uint32_t first, uint32_t end, uint32_t tick,
                           uint32_t slot);

/* Row `row`'s tick was set to `tick` by a row move or an add (pool tracked; main thread,
 * no writer running): its block's slot bounds it. */
static inline void weft__change_raise(weft__pool_t *pool, uint32_t row, uint32_t tick) {
    weft__change_raise_slot(pool, row >> WEFT__TICK_BLOCK_SHIFT, WEFT__TICK_SLOT_OTHER, tick);
}

/* Set row `row`'s dirty bit and its word's summary bit (main thread; single writer, so plain
 * loads and stores: no read-modify-write). No branch: the summary word is stored every time
 * (4 KiB of summary per million rows stays in the L1 cache). */
static inline void weft__change_dirty_set_in(weft_atomic_u32 *bits, weft_atomic_u32 *sum,
                                             uint32_t row) {
    uint32_t wi = row >> 5u;
    weft_atomic_u32 *w = &bits[wi], *s = &sum[wi >> 5u];
    weft_atomic_store_relaxed(w, weft_atomic_load_relaxed(w) | 1u << (row & 31u));
    weft_atomic_store_relaxed(s, weft_atomic_load_relaxed(s) | 1u << (wi & 31u));
}

static inline void weft__change_dirty_set(weft__pool_t *pool, uint32_t row) {
    weft__change_dirty_set_in(pool->tick_dirty, pool->dirty_sum, row);
}

/* Set or clear row `row`'s dirty bit (main thread). A clear leaves the summary bit. */
static inline void weft__change_dirty_put(weft__pool_t *pool, uint32_t row, bool on) {
    if (on) {
        weft__change_dirty_set(pool, row);
        return;
    }
    weft_atomic_u32 *w = &pool->tick_dirty[row >> 5u];
    uint32_t bit = 1u << (row & 31u), v = weft_atomic_load_relaxed(w);
    if (v & bit) {
        weft_atomic_store_relaxed(w, v & ~bit);
    }
}

/* Rows in the log (the tracking thread, or a publisher that claimed the log). */
static inline uint32_t weft__change_log_len(const weft__pool_t *pool) {
    const uint32_t *at = (const uint32_t *)weft_atomic_load_relaxed(&pool->dirty_log_at);
    return (uint32_t)(at - pool->dirty_log) / WEFT__LOG_ENTRY;
}

/* The row of log entry i. */
static inline uint32_t weft__change_log_row(const weft__pool_t *pool, uint32_t i) {
    return pool->dirty_log[(size_t)i * WEFT__LOG_ENTRY];
}

/* Rows in the epoch's write list, or 0 when it does not serve (THE WRITE LIST): it no longer
 * names exactly the dirty rows, or rows moved since the epoch opened. Any thread, after
 * weft__change_publish. */
static inline uint32_t weft__change_list_usable(const weft__pool_t *pool) {
    if (!weft_atomic_load_relaxed(&pool->list_ok) || pool->layout != pool->list_layout) {
        return 0;
    }
    return weft_atomic_load_relaxed(&pool->list_len);
}

/* Move the log's rows into the bits and empty it (the tracking thread, or a publisher that
 * claimed the log; change.c). */
void weft__change_log_flush(weft__pool_t *pool);

/* The write list serves no more (main thread, or a publisher that claimed the log): the
 * summary is built from it first (change.c). */
void weft__change_list_stop(weft__pool_t *pool);

/* Publish the log before a main-thread mover of the bits (a row move, an add, growth; pool
 * tracked): the bits it moves are then the write list's no longer (THE WRITE LIST). */
static inline void weft__change_log_drain(weft__pool_t *pool) {
    if (weft_atomic_load_relaxed(&pool->dirty_log_at) != (void *)pool->dirty_log) {
        weft__change_log_flush(pool);
    }
    if (weft_atomic_load_relaxed(&pool->list_ok)) {
        weft__change_list_stop(pool);
    }
}

/* True when a reader must publish first: rows pending in the log, or (`whole` false: the
 * reader covers part of the pool, so it may scan the bits with their summary) a summary that
 * lacks the write list's rows. */
static inline bool weft__change_publish_due(const weft__pool_t *pool, bool whole) {
    return weft_atomic_load_acquire(&pool->dirty_log_at) != (void *)pool->dirty_log ||
           (!whole && !weft_atomic_load_acquire(&pool->sum_built));
}

/* The slow half of weft__change_publish (change.c). */
void weft__change_publish_slow(weft__pool_t *pool, bool whole);

/* Publish the log before reading the bits (pool tracked; any thread, any number at once):
 * the first caller that finds work due moves the log into the bits and the write list (and
 * builds the summary), the others wait for it. `whole`: the reader iterates every row of the
 * pool and the list's rows have not moved, so the write list serves it or the summary is
 * built already (THE WRITE LIST); otherwise the summary is built from the list first.
 * Logically const: the pool's set of changed rows stays the same. */
static inline void weft__change_publish(weft__pool_t *pool, bool whole) {
    if (weft__change_publish_due(pool, whole)) {
        weft__change_publish_slow(pool, whole);
    }
}

/* The first word index in [w, limit) whose summary bit is set (its word may hold dirty
 * bits), else limit (limit <= WEFT__DIRTY_WORDS(cap)). */
static inline uint32_t weft__change_dirty_next(const weft__pool_t *pool, uint32_t w,
                                               uint32_t limit) {
    while (w < limit) {
        uint32_t s = weft_atomic_load_relaxed(&pool->dirty_sum[w >> 5u]) >> (w & 31u);
        if (s != 0) {
            w += (uint32_t)__builtin_ctz(s);
            return w < limit ? w : limit;
        }
        w = (w | 31u) + 1u;
    }
    return limit;
}

static inline bool weft__change_dirty_get(const weft__pool_t *pool, uint32_t row) {
    return (weft_atomic_load_relaxed(&pool->tick_dirty[row >> 5u]) >> (row & 31u)) & 1u;
}

/* Record the add of `row` at `tick` (pool tracked; main thread). The add's tick is at least
 * the open epoch's, so the row's dirty bit is dropped. */
static inline void weft__change_mark_added(weft__pool_t *pool, uint32_t row, uint32_t tick) {
    weft__change_log_drain(pool);
    pool->tick_added[row] = tick;
    weft_atomic_store_relaxed(&pool->tick_changed[row], tick);
    weft__change_dirty_put(pool, row, false);
    weft__change_raise(pool, row, tick);
}

/* weft__change_copy with the log already drained. */
static inline void weft__change_copy_drained(weft__pool_t *pool, uint32_t from, uint32_t to) {
    uint32_t c = weft__change_row_tick(pool, from);
    pool->tick_added[to] = pool->tick_added[from];
    weft_atomic_store_relaxed(&pool->tick_changed[to], c);
    weft__change_dirty_put(pool, to, weft__change_dirty_get(pool, from));
    weft__change_raise(pool, to, c);
}

/* Copy row `from`'s ticks and dirty bit to row `to` (a row move; pool tracked; main thread). */
static inline void weft__change_copy(weft__pool_t *pool, uint32_t from, uint32_t to) {
    weft__change_log_drain(pool);
    weft__change_copy_drained(pool, from, to);
}

/* Swap rows a and b's ticks and dirty bits (pool tracked; main thread). */
static inline void weft__change_swap(weft__pool_t *pool, uint32_t a, uint32_t b) {
    weft__change_log_drain(pool);
    uint32_t added = pool->tick_added[a], changed = weft__change_row_tick(pool, a);
    bool dirty = weft__change_dirty_get(pool, a);
    weft__change_copy_drained(pool, b, a);
    pool->tick_added[b] = added;
    weft_atomic_store_relaxed(&pool->tick_changed[b], changed);
    weft__change_dirty_put(pool, b, dirty);
    weft__change_raise(pool, b, changed);
}

/* Publish `tick` as the calling thread's write tick for `world` (a system chunk starts);
 * returns the previous publication for weft__change_leave (chunks nest when a system waits
 * on jobs that run other chunks). */
typedef struct weft__change_scope {
    const struct weft_world *world;
    uint32_t tick;
    uint32_t key; /* the thread's log key (LOG above) outside every chunk, 0 inside one */
} weft__change_scope_t;

/* The calling thread's publication (change.c); world NULL outside system chunks. Declared here
 * so that weft__change_tick_now inlines into the write paths. */
/* Initial-exec: one %fs-relative load, where -fPIC's default model calls __tls_get_addr in
 * a shared build and computes the address in a static one (4 more instructions a get_mut). */
#if defined(__GNUC__) || defined(__clang__)
#define WEFT__CHANGE_TLS __attribute__((tls_model("initial-exec")))
#else
#define WEFT__CHANGE_TLS
#endif
extern _Thread_local weft__change_scope_t weft__change_current WEFT__CHANGE_TLS;

/* The tick a write by the calling thread carries: the running system's, else `fallback`
 * (world->change_tick; weft__change_tick_now passes it, for files that include world.h). */
static inline uint32_t weft__change_tick_of(const struct weft_world *world, uint32_t fallback) {
    return weft__change_current.world == world ? weft__change_current.tick : fallback;
}
#define weft__change_tick_now(world) weft__change_tick_of((world), (world)->change_tick)

/* The slot a write by the calling thread goes to (pairs with weft__change_tick_now). */
static inline uint32_t weft__change_slot_now(const struct weft_world *world) {
    return weft__change_current.world == world ? WEFT__TICK_SLOT_SYSTEM : WEFT__TICK_SLOT_OTHER;
}

/* Inline: every system chunk pays these, filters or not. */
static inline weft__change_scope_t weft__change_enter(const struct weft_world *world,
                                                      uint32_t tick) {
    weft__change_scope_t previous = weft__change_current;
    weft__change_current.world = world;
    weft__change_current.tick = tick;
    weft__change_current.key = 0u; /* no log key matches: a chunk's writes store row ticks */
    return previous;
}

static inline void weft__change_leave(weft__change_scope_t previous) {
    weft__change_current = previous;
}

/* A write by the calling thread outside a system chunk that could not take the fast path
 * of weft__change_write (change.c): opens an epoch, closes the old one when `structural`,
 * or stores the row tick. */
void weft__change_write_slow(struct weft_world *world, weft__pool_t *pool, uint32_t row,
                             uint32_t ent, uint32_t now, bool structural);

/* The log is full: move it into the bits, then log `row` (change.c). */
void weft__change_log_full(weft__pool_t *pool, uint32_t row, uint32_t ent);

/* Record a write of `row` (pool tracked; `ent`: its entity index) by the calling thread; `now`
 * is world->change_tick (weft__change_write_now passes it). Inside a system chunk: the row tick (weft__change_mark).
 * On the tracking thread, at the open epoch's tick: the row goes to the log (LOG above).
 * Otherwise weft__change_write_slow. `structural`: the caller is a structural call (no reader runs,
 * weft/component.h), where an old epoch may be closed. */
static inline void weft__change_write(struct weft_world *world, weft__pool_t *pool, uint32_t row,
                                      uint32_t ent, uint32_t now, bool structural) {
    if (__builtin_expect(weft_atomic_load_relaxed(&pool->log_key) ==
                             ((uint64_t)now << 32u | weft__change_current.key),
                         1)) { /* LOG: the fast write */
        uint32_t *at = (uint32_t *)weft_atomic_load_relaxed(&pool->dirty_log_at);
        if (at != pool->dirty_log_end) {
            at[0] = row;
            at[1] = ent;
            weft_atomic_store_release(&pool->dirty_log_at,
                                      (void *)(at + WEFT__LOG_ENTRY)); /* publishers acquire */
        } else {
            weft__change_log_full(pool, row, ent);
        }
    } else if (weft__change_current.world == world) {
        weft__change_mark(pool, row, weft__change_current.tick, WEFT__TICK_SLOT_SYSTEM);
    } else {
        weft__change_write_slow(world, pool, row, ent, now, structural);
    }
}
#define weft__change_write_now(world, pool, row, ent, structural) \
    weft__change_write((world), (pool), (row), (ent), (world)->change_tick, (structural))

/* weft__change_write for weft_component_get_mut, returning the row's data: every path that
 * calls out returns through the callee (change.c), so nothing lives across a call and the
 * fast path saves no register (callgrind: 3 instructions a get_mut). */
void *weft__change_write_out(struct weft_world *world, weft__pool_t *pool, uint32_t row,
                             uint32_t ent);
static inline void *weft__change_write_get(struct weft_world *world, weft__pool_t *pool,
                                           uint32_t row, uint32_t ent, uint32_t now) {
    if (__builtin_expect(weft_atomic_load_relaxed(&pool->log_key) ==
                             ((uint64_t)now << 32u | weft__change_current.key),
                         1)) { /* as weft__change_write's fast write */
        uint32_t *at = (uint32_t *)weft_atomic_load_relaxed(&pool->dirty_log_at);
        if (__builtin_expect(at != pool->dirty_log_end, 1)) {
            at[0] = row;
            at[1] = ent;
            weft_atomic_store_release(&pool->dirty_log_at, (void *)(at + WEFT__LOG_ENTRY));
            return weft__pool_at(pool, row);
        }
    }
    return weft__change_write_out(world, pool, row, ent);
}
#define weft__change_write_get_now(world, pool, row, ent) \
    weft__change_write_get((world), (pool), (row), (ent), (world)->change_tick)

/* Close the pool's dirty epoch (main thread, no reader running): its rows' ticks go into
 * tick_changed unless no query filtering on the pool needs them (`world` NULL: always), and
 * the bits are cleared. No-op without an open epoch. */
void weft__change_settle(struct weft_world *world, weft__pool_t *pool);

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

/* Raise the block slots over rows [first, end) after ticks were moved in bulk (main thread). */
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
