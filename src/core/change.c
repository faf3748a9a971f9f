/* change.c: change ticks — tracking a pool, growing and clamping its tick arrays, the
 * thread's write tick (see change.h). */
#include "change.h"

#include <string.h>

#include "query.h"
#include "world.h"

_Thread_local weft__change_scope_t weft__change_current WEFT__CHANGE_TLS;

/* ---- arrays ------------------------------------------------------------------ >>arrays */

/* Block slots of cap rows: two per block, for whole groups of 8 blocks. */
static uint32_t slot_count(uint32_t cap) { return ((WEFT__TICK_BLOCKS(cap) + 7u) & ~7u) * 2u; }

static size_t slot_bytes(uint32_t cap) { return (size_t)slot_count(cap) * sizeof(uint32_t); }

/* The dirty bits and, after them, their summary, the log and the write list (change.h). */
static size_t dirty_bytes(uint32_t cap) {
    return (size_t)(WEFT__DIRTY_WORDS(cap) + WEFT__DIRTY_SUM_WORDS(cap) +
                    (WEFT__LOG_ENTRY + 2u) * WEFT__DIRTY_LOG_CAP(cap)) *
           sizeof(uint32_t);
}

size_t weft__change_bytes(const weft__pool_t *pool, uint32_t cap) {
    if (pool->tick_added == NULL) {
        return 0;
    }
    return (size_t)cap * 2u * sizeof(uint32_t) + slot_bytes(cap) + dirty_bytes(cap);
}

typedef struct arrays {
    uint32_t *added;
    weft_atomic_u32 *changed;
    weft_atomic_u32 *blocks; /* two slots per block */
    weft_atomic_u32 *dirty;  /* a bit per row, then the summary */
} arrays_t;

static void set_arrays(weft__pool_t *pool, const arrays_t *a, uint32_t cap) {
    pool->tick_added = a->added;
    pool->tick_changed = a->changed;
    pool->tick_blocks = a->blocks;
    pool->tick_dirty = a->dirty;
    pool->dirty_sum = a->dirty == NULL ? NULL : a->dirty + WEFT__DIRTY_WORDS(cap);
    pool->dirty_log = a->dirty == NULL
                          ? NULL
                          : (uint32_t *)(void *)(pool->dirty_sum + WEFT__DIRTY_SUM_WORDS(cap));
    pool->dirty_log_end =
        a->dirty == NULL ? NULL : pool->dirty_log + WEFT__LOG_ENTRY * WEFT__DIRTY_LOG_CAP(cap);
    pool->list_rows = pool->dirty_log_end;
    pool->list_ents = a->dirty == NULL ? NULL : pool->list_rows + WEFT__DIRTY_LOG_CAP(cap);
    weft_atomic_store_relaxed(&pool->dirty_log_at, (void *)pool->dirty_log); /* empty */
    weft_atomic_store_relaxed(&pool->list_len, 0u);
    weft_atomic_store_relaxed(&pool->list_ok, 0u); /* until an epoch opens */
    weft_atomic_store_relaxed(&pool->sum_built, 1u);
}

static void free_arrays(weft_world_t *world, arrays_t *a, uint32_t cap) {
    weft__free(world, a->added, (size_t)cap * sizeof(uint32_t));
    weft__free(world, (void *)a->changed, (size_t)cap * sizeof(uint32_t));
    weft__free(world, (void *)a->blocks, slot_bytes(cap));
    weft__free(world, (void *)a->dirty, dirty_bytes(cap));
}

static bool alloc_arrays(weft_world_t *world, arrays_t *a, uint32_t cap) {
    /* 64-byte aligned: a block's 16 row ticks, and 8 blocks' slots, are one cache line for
     * the filters (which read them with aligned vector loads, change.h). The slots are
     * allocated for whole groups of 8 blocks. */
    a->added = weft__alloc(world, (size_t)cap * sizeof(uint32_t), 64);
    a->changed = weft__alloc(world, (size_t)cap * sizeof(uint32_t), 64);
    a->blocks = weft__alloc(world, slot_bytes(cap), 64);
    a->dirty = weft__alloc(world, dirty_bytes(cap), 64);
    if (a->added == NULL || a->changed == NULL || a->blocks == NULL || a->dirty == NULL) {
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
    weft__change_log_drain(pool); /* the log's rows into the bits, which are copied */
    /* Nobody iterates while a pool grows (main thread, outside frames): plain copies. */
    memcpy(a.added, pool->tick_added, (size_t)pool->count * sizeof(uint32_t));
    memcpy((void *)a.changed, (void *)pool->tick_changed, (size_t)pool->count * sizeof(uint32_t));
    memcpy((void *)a.blocks, (void *)pool->tick_blocks, slot_bytes(old_cap));
    /* The bits and the summary each keep their words, the new ones empty. */
    memset((void *)a.dirty, 0, dirty_bytes(cap));
    memcpy((void *)a.dirty, (void *)pool->tick_dirty,
           WEFT__DIRTY_WORDS(old_cap) * sizeof(uint32_t));
    memcpy((void *)(a.dirty + WEFT__DIRTY_WORDS(cap)), (void *)pool->dirty_sum,
           WEFT__DIRTY_SUM_WORDS(old_cap) * sizeof(uint32_t));
    arrays_t old = {pool->tick_added, pool->tick_changed, pool->tick_blocks, pool->tick_dirty};
    free_arrays(world, &old, old_cap);
    set_arrays(pool, &a, cap);
    /* Blocks past the old capacity hold 0, which may read as newer than a last run after the
     * counter wraps: give them the oldest value in reach. */
    uint32_t oldest = world->change_tick - WEFT__TICK_MAX_AGE;
    for (uint32_t b = slot_count(old_cap); b < slot_count(cap); b++) {
        weft_atomic_store_relaxed(&pool->tick_blocks[b], oldest);
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
    for (uint32_t b = 0; b < slot_count(cap); b++) {
        weft_atomic_store_relaxed(&a.blocks[b], now);
    }
    memset((void *)a.dirty, 0, dirty_bytes(cap));
    set_arrays(pool, &a, cap);
    weft_atomic_store_relaxed(&pool->tick_dirty_at, now - WEFT__TICK_MAX_AGE);
    weft_atomic_store_relaxed(&pool->tick_newest[0], now);
    weft_atomic_store_relaxed(&pool->tick_newest[1], now);
    pool->dirty_open = false;
    pool->dirty_tick = 0;
    weft_atomic_store_relaxed(&pool->log_key, WEFT__LOG_CLOSED);
    weft_atomic_store_relaxed(&pool->dirty_pending, 0u);
    pool->tick_owner = (const void *)&weft__change_current;
    return WEFT_OK;
}

void weft__change_stamp_added(weft__pool_t *pool, uint32_t first, uint32_t end, uint32_t tick) {
    if (pool->tick_added == NULL) {
        return;
    }
    for (uint32_t r = first; r < end; r++) {
        weft__change_mark_added(pool, r, tick);
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

void weft__change_mark_run(weft__pool_t *pool, uint32_t first, uint32_t end, uint32_t tick,
                           uint32_t slot) {
    for (uint32_t r = first; r < end; r++) {
        weft_atomic_store_relaxed(&pool->tick_changed[r], tick);
    }
    if (first < end) {
        for (uint32_t b = first >> WEFT__TICK_BLOCK_SHIFT;
             b <= (end - 1u) >> WEFT__TICK_BLOCK_SHIFT; b++) {
            weft__change_raise_slot(pool, b, slot, tick);
        }
    }
}

void weft__change_fini(weft_world_t *world, weft__pool_t *pool, uint32_t cap) {
    if (pool->tick_added == NULL) {
        return;
    }
    arrays_t a = {pool->tick_added, pool->tick_changed, pool->tick_blocks, pool->tick_dirty};
    free_arrays(world, &a, cap);
    arrays_t none = {NULL, NULL, NULL, NULL};
    set_arrays(pool, &none, cap);
    pool->dirty_open = false;
    weft_atomic_store_relaxed(&pool->log_key, WEFT__LOG_CLOSED);
}

/* ---- dirty epochs ------------------------------------------------------------ >>dirty */

/* Rows the log moves into the bits ahead of the row it sets: each is a read-modify-write of a
 * random line, so their misses overlap only when fetched ahead. */
#define LOG_AHEAD 16u

static inline void prefetch_write(const void *p) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p, 1);
#else
    (void)p;
#endif
}

/* Set the summary bit of every listed row (the summary catches up with the write list,
 * change.h). The caller owns the list: the main thread, or a publisher that claimed it. */
static void summary_from_list(weft__pool_t *pool) {
    if (weft_atomic_load_relaxed(&pool->sum_built)) {
        return;
    }
    weft_atomic_u32 *sum = pool->dirty_sum;
    const uint32_t *rows = pool->list_rows;
    for (uint32_t k = 0, n = weft_atomic_load_relaxed(&pool->list_len); k < n; k++) {
        weft_atomic_u32 *s = &sum[rows[k] >> 10u];
        weft_atomic_store_relaxed(s, weft_atomic_load_relaxed(s) | 1u << ((rows[k] >> 5u) & 31u));
    }
    weft_atomic_store_release(&pool->sum_built, 1u);
}

void weft__change_list_stop(weft__pool_t *pool) {
    if (weft_atomic_load_relaxed(&pool->list_ok)) {
        summary_from_list(pool); /* kept up to date from here on */
        weft_atomic_store_relaxed(&pool->list_ok, 0u);
    }
}

/* Set row `row`'s bit; a row whose bit was clear joins the write list while it serves (its
 * summary bit waits: summary_from_list), else sets its summary bit (a full list serves no
 * more). */
static void list_put(weft__pool_t *pool, uint32_t row, uint32_t ent) {
    weft_atomic_u32 *w = &pool->tick_dirty[row >> 5u];
    uint32_t bit = 1u << (row & 31u), v = weft_atomic_load_relaxed(w);
    if (v & bit) {
        return; /* written before in this epoch: listed (or not) already */
    }
    weft_atomic_store_relaxed(w, v | bit);
    uint32_t k = weft_atomic_load_relaxed(&pool->list_len);
    if (weft_atomic_load_relaxed(&pool->list_ok) && k < WEFT__DIRTY_LOG_CAP(pool->cap)) {
        pool->list_rows[k] = row;
        pool->list_ents[k] = ent;
        weft_atomic_store_relaxed(&pool->list_len, k + 1u);
        weft_atomic_store_relaxed(&pool->sum_built, 0u);
        return;
    }
    weft__change_list_stop(pool);
    weft__change_dirty_set(pool, row);
}

/* One entry of list_fast: set the row's bit, store the row and entity at the list's end,
 * which moves on when the bit was clear (no branch on the data). */
static inline uint32_t list_one(const uint32_t *entry, weft_atomic_u32 *bits, uint32_t *rows,
                                uint32_t *ents, uint32_t k) {
    uint32_t row = entry[0], bit = 1u << (row & 31u);
    weft_atomic_u32 *w = &bits[row >> 5u];
    uint32_t v = weft_atomic_load_relaxed(w);
    weft_atomic_store_relaxed(w, v | bit);
    rows[k] = row;
    ents[k] = entry[1];
    return k + ((v & bit) == 0u);
}

/* The log's n entries into the bits and onto the list, which has room for all of them, each
 * row's bit word fetched LOG_AHEAD entries ahead; no summary (summary_from_list). Returns the
 * rows listed. */
static uint32_t list_fast(const uint32_t *log, uint32_t n, weft_atomic_u32 *bits, uint32_t *rows,
                          uint32_t *ents) {
    uint32_t k = 0, i = 0;
    for (uint32_t a = 0; a < n && a < LOG_AHEAD; a++) {
        prefetch_write(&bits[log[a * WEFT__LOG_ENTRY] >> 5u]);
    }
    for (; i + LOG_AHEAD < n; i++) { /* no bound test on the fetch ahead */
        prefetch_write(&bits[log[(i + LOG_AHEAD) * WEFT__LOG_ENTRY] >> 5u]);
        k = list_one(log + i * WEFT__LOG_ENTRY, bits, rows, ents, k);
    }
    for (; i < n; i++) {
        k = list_one(log + i * WEFT__LOG_ENTRY, bits, rows, ents, k);
    }
    return k;
}

void weft__change_log_flush(weft__pool_t *pool) {
    const uint32_t *log = pool->dirty_log;
    uint32_t n = weft__change_log_len(pool);
    uint32_t len = weft_atomic_load_relaxed(&pool->list_len);
    if (weft_atomic_load_relaxed(&pool->list_ok) && n <= WEFT__DIRTY_LOG_CAP(pool->cap) - len) {
        uint32_t k =
            list_fast(log, n, pool->tick_dirty, pool->list_rows + len, pool->list_ents + len);
        weft_atomic_store_relaxed(&pool->list_len, len + k);
        if (k != 0) {
            weft_atomic_store_relaxed(&pool->sum_built, 0u);
        }
    } else if (weft_atomic_load_relaxed(&pool->list_ok)) { /* the list may fill up */
        for (uint32_t i = 0; i < n; i++) {
            list_put(pool, log[i * WEFT__LOG_ENTRY], log[i * WEFT__LOG_ENTRY + 1u]);
        }
    } else { /* the bits and summary only, each row's word fetched ahead */
        weft_atomic_u32 *bits = pool->tick_dirty, *sum = pool->dirty_sum; /* the stores alias */
        uint32_t i = 0;
        for (uint32_t k = 0; k < n && k < LOG_AHEAD; k++) {
            prefetch_write(&bits[log[k * WEFT__LOG_ENTRY] >> 5u]);
        }
        for (; i + LOG_AHEAD < n; i++) { /* no bound test on the fetch ahead */
            prefetch_write(&bits[log[(i + LOG_AHEAD) * WEFT__LOG_ENTRY] >> 5u]);
            weft__change_dirty_set_in(bits, sum, log[i * WEFT__LOG_ENTRY]);
        }
        for (; i < n; i++) {
            weft__change_dirty_set_in(bits, sum, log[i * WEFT__LOG_ENTRY]);
        }
    }
    /* The bits and the list, then empty: publishers acquire. */
    weft_atomic_store_release(&pool->dirty_log_at, (void *)pool->dirty_log);
}

void *weft__change_write_out(weft_world_t *world, weft__pool_t *pool, uint32_t row, uint32_t ent) {
    weft__change_write_now(world, pool, row, ent, false);
    return weft__pool_at(pool, row);
}

void weft__change_log_full(weft__pool_t *pool, uint32_t row, uint32_t ent) {
    weft__change_log_flush(pool);
    pool->dirty_log[0] = row;
    pool->dirty_log[1] = ent;
    weft_atomic_store_release(&pool->dirty_log_at, (void *)(pool->dirty_log + WEFT__LOG_ENTRY));
}

void weft__change_publish_slow(weft__pool_t *pool, bool whole) {
    /* The claim: one publisher moves the log (and builds the summary a reader of part of the
     * pool needs); the others wait until nothing is due, whose acquire makes the bits, list
     * and summary it wrote visible to them. A claimer that finds nothing left to do (done by
     * an earlier claimer) releases the claim at once. */
    while (weft__change_publish_due(pool, whole)) {
        uint32_t idle = 0u;
        if (weft_atomic_cas_strong_acq_rel(&pool->dirty_pending, &idle, 1u)) {
            if (weft_atomic_load_acquire(&pool->dirty_log_at) != (void *)pool->dirty_log) {
                weft__change_log_flush(pool);
            }
            if (!whole) {
                summary_from_list(pool);
            }
            weft_atomic_store_release(&pool->dirty_pending, 0u);
            return;
        }
        weft_cpu_relax(); /* another reader is moving the log (a few microseconds) */
    }
}

/* Copy the epoch's tick into row `row`'s tick (a row of the epoch). */
static void settle_row(weft__pool_t *pool, uint32_t row, uint32_t tick) {
    if (row >= pool->count) {
        return; /* left by a removed row */
    }
    weft_atomic_u32 *t = &pool->tick_changed[row];
    if (weft__tick_newer(tick, weft_atomic_load_relaxed(t))) {
        weft_atomic_store_relaxed(t, tick); /* the newest tick stays */
    }
    weft__change_raise(pool, row, tick);
}

/* Copy dirty word w's rows' tick into tick_changed and clear the word. */
static void settle_word(weft__pool_t *pool, uint32_t w, uint32_t tick) {
    uint32_t bits = weft_atomic_load_relaxed(&pool->tick_dirty[w]);
    if (bits == 0) {
        return; /* emptied by row moves after its summary bit was set */
    }
    weft_atomic_store_relaxed(&pool->tick_dirty[w], 0u);
    for (; bits != 0; bits &= bits - 1u) {
        settle_row(pool, w * 32u + (uint32_t)__builtin_ctz(bits), tick);
    }
}

void weft__change_settle(weft_world_t *world, weft__pool_t *pool) {
    if (pool->tick_added == NULL || !pool->dirty_open) {
        return;
    }
    uint32_t tick = pool->dirty_tick;
    bool keep = world == NULL || weft__query_window_before(world, pool, tick);
    if (keep) { /* the log's rows straight into their ticks (no bits set on the way) */
        uint32_t n = weft__change_log_len(pool);
        for (uint32_t i = 0; i < n; i++) {
            settle_row(pool, weft__change_log_row(pool, i), tick);
        }
    } /* else no query needs the epoch's rows: the log goes unread */
    weft_atomic_store_relaxed(&pool->dirty_log_at, (void *)pool->dirty_log);
    weft_atomic_store_relaxed(&pool->log_key, WEFT__LOG_CLOSED);
    bool by_list =
        weft_atomic_load_relaxed(&pool->list_ok) && !weft_atomic_load_relaxed(&pool->sum_built);
    weft_atomic_store_relaxed(&pool->list_ok, 0u);
    weft_atomic_store_relaxed(&pool->sum_built, 1u);
    if (by_list) { /* the list names every row with a bit, the summary none: clear by the list */
        const uint32_t *rows = pool->list_rows;
        uint32_t n = weft_atomic_load_relaxed(&pool->list_len);
        uint32_t words = WEFT__DIRTY_WORDS(pool->cap);
        /* A listed row's clear is a store to a random line (about 5 instructions and a miss);
         * a memset clears 8 words per vector store: past a row per 16 words, clear them all. */
        bool all = n > words / 16u;
        for (uint32_t k = 0; k < n && (keep || !all); k++) {
            if (keep) {
                settle_row(pool, rows[k], tick);
            }
            if (!all) {
                weft_atomic_store_relaxed(&pool->tick_dirty[rows[k] >> 5u], 0u);
            }
        }
        if (all) {
            memset((void *)pool->tick_dirty, 0, words * sizeof(uint32_t));
        }
        weft_atomic_store_relaxed(&pool->list_len, 0u);
        pool->dirty_open = false;
        weft_atomic_store_relaxed(&pool->tick_dirty_at, tick - WEFT__TICK_MAX_AGE);
        return;
    }
    weft_atomic_store_relaxed(&pool->list_len, 0u);
    /* Only the words the summary names (change.h): the cost follows the epoch's rows. */
    uint32_t sums = WEFT__DIRTY_SUM_WORDS(pool->cap), words = WEFT__DIRTY_WORDS(pool->cap);
    for (uint32_t s = 0; s < sums; s++) {
        uint32_t named = weft_atomic_load_relaxed(&pool->dirty_sum[s]);
        if (named == 0) {
            continue;
        }
        weft_atomic_store_relaxed(&pool->dirty_sum[s], 0u);
        if (!keep) { /* the bits go: clear the summary word's 32 words (128 bytes) at once */
            uint32_t first = s * 32u, n = words - first < 32u ? words - first : 32u;
            memset((void *)(pool->tick_dirty + first), 0, n * sizeof(uint32_t));
            continue;
        }
        for (; named != 0; named &= named - 1u) {
            settle_word(pool, s * 32u + (uint32_t)__builtin_ctz(named), tick);
        }
    }
    pool->dirty_open = false;
    /* Old enough that no window sees it (as the clamp's floor). */
    weft_atomic_store_relaxed(&pool->tick_dirty_at, tick - WEFT__TICK_MAX_AGE);
}

/* Thread keys handed out so far (change.h, THE FAST WRITE'S KEY). */
static weft_atomic_u32 keys_given;

void weft__change_write_slow(weft_world_t *world, weft__pool_t *pool, uint32_t row, uint32_t ent,
                             uint32_t now, bool structural) {
    bool owner = pool->tick_owner == (const void *)&weft__change_current;
    if (owner && pool->dirty_open && pool->dirty_tick != now && structural && !world->in_systems) {
        weft__change_settle(world, pool);
    }
    if (owner && !pool->dirty_open) { /* open an epoch at the world's tick */
        pool->dirty_open = true;
        pool->dirty_tick = now;
        weft_atomic_store_relaxed(&pool->tick_dirty_at, now);
        weft_atomic_store_relaxed(&pool->list_len, 0u); /* a fresh write list (THE WRITE LIST) */
        weft_atomic_store_relaxed(&pool->list_ok, 1u);
        weft_atomic_store_relaxed(&pool->sum_built, 1u); /* bits and summary empty */
        pool->list_layout = pool->layout;
    }
    if (owner && pool->dirty_tick == now) {
        /* The log's rows first, so the list keeps the order of the writes. */
        if (weft_atomic_load_relaxed(&pool->dirty_log_at) != (void *)pool->dirty_log) {
            weft__change_log_flush(pool);
        }
        list_put(pool, row, ent);
        if (weft__change_current.world == NULL) { /* outside every chunk: arm the fast write */
            while (weft__change_current.key == 0u ||
                   (uint64_t)weft__change_current.key == (WEFT__LOG_CLOSED & 0xFFFFFFFFu)) {
                weft__change_current.key = weft_atomic_fetch_add_relaxed(&keys_given, 1u) + 1u;
            }
            weft_atomic_store_relaxed(&pool->log_key,
                                      (uint64_t)now << 32u | weft__change_current.key);
        }
        return;
    }
    weft__change_mark(pool, row, now, WEFT__TICK_SLOT_OTHER);
}

/* ---- wrap-around ------------------------------------------------------------- >>clamp */

static uint32_t clamp(uint32_t t, uint32_t floor) { return weft__tick_newer(floor, t) ? floor : t; }

void weft__change_clamp(weft_world_t *world) {
    if (world->change_tick - world->tick_clamped < WEFT__TICK_CLAMP_EVERY) {
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
        for (uint32_t b = 0; b < slot_count(pool->cap); b++) {
            weft_atomic_store_relaxed(
                &pool->tick_blocks[b],
                clamp(weft_atomic_load_relaxed(&pool->tick_blocks[b]), floor));
        }
        for (uint32_t s = 0; s < 2u; s++) {
            weft_atomic_store_relaxed(
                &pool->tick_newest[s],
                clamp(weft_atomic_load_relaxed(&pool->tick_newest[s]), floor));
        }
        weft_atomic_store_relaxed(&pool->tick_dirty_at,
                                  clamp(weft_atomic_load_relaxed(&pool->tick_dirty_at), floor));
        pool->dirty_tick = clamp(pool->dirty_tick, floor);
        weft_atomic_store_relaxed(&pool->log_key, WEFT__LOG_CLOSED); /* the next write re-arms */
    }
    /* A last run older than the floor goes just below it, so rows clamped to the floor still
     * count as changed for it (conservative). */
    weft__query_clamp_since(world, floor - 1u);
    world->tick_clamped = world->change_tick;
}
