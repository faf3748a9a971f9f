/* join_cache.c: a query's resolved join rows, kept between iterations (join_cache.h). */
#include <string.h>

#include "join_cache.h"

#define WINDOW WEFT__ITER_BLOCK
#define BAD_WORDS (WEFT__ITER_BLOCK / 64)
#define FILLING UINT64_MAX /* a window's stamp while its claimer writes it */

struct weft__join_cache {
    weft_atomic_u32 busy; /* 1 while an iterator re-keys */
    weft_atomic_u64 seq;  /* even: the key below is the epoch's (0: never keyed); odd: re-keying */
    /* The key, read under seq by any iterator (hence atomics). */
    weft_atomic_ptr drive;
    weft_atomic_u32 group;
    weft_atomic_u32 includes;
    weft_atomic_u32 windows;
    weft_atomic_u32 count;
    weft_atomic_u64 layout[WEFT__JOIN_KEY_MAX];
    /* The arrays, written only under busy while seq is odd; read after an acquire of the
     * epoch. */
    weft_atomic_u64 *stamp; /* [windows] epoch of each window's rows, or FILLING */
    uint32_t *rows;         /* [includes][cap_windows][WINDOW]: one run per include (.h) */
    uint64_t *bad;          /* [windows][BAD_WORDS] */
    uint32_t *flags;        /* [windows][includes] */
    void *block;            /* the one allocation holding the arrays */
    size_t block_bytes;     /* its size */
    uint32_t cap_windows;   /* windows the block holds ... */
    uint32_t cap_includes;  /* ... of this many includes */
};

static bool key_matches(const weft__join_cache_t *c, const weft__join_key_t *k) {
    if (weft_atomic_load_relaxed(&c->drive) != k->drive ||
        weft_atomic_load_relaxed(&c->group) != k->group ||
        weft_atomic_load_relaxed(&c->includes) != k->includes ||
        weft_atomic_load_relaxed(&c->windows) != k->windows ||
        weft_atomic_load_relaxed(&c->count) != k->count) {
        return false;
    }
    for (uint32_t i = 0; i < k->count; i++) {
        if (weft_atomic_load_relaxed(&c->layout[i]) != k->layout[i]) {
            return false;
        }
    }
    return true;
}

/* The arrays for k (under busy): reuse the block when it is large enough. False: out of
 * memory (the old block is kept). */
static bool fit_arrays(const weft_allocator_t *alloc, weft__join_cache_t *c,
                       const weft__join_key_t *k) {
    if (c->block != NULL && k->windows <= c->cap_windows && k->includes == c->cap_includes) {
        return true; /* stamps of past epochs are all below the new one */
    }
    /* A driving pool that grows frame by frame would otherwise get a new block, sized
     * exactly, every frame; a freed block of megabytes goes back to the system and the next
     * one faults in page by page (the demo's 1-worker frame: 116 ms with the heap kept,
     * ~290 ms without). So a block that must grow takes half again its old windows. */
    size_t n = k->windows, inc = k->includes;
    if (c->block != NULL && k->includes == c->cap_includes &&
        n < (size_t)c->cap_windows + c->cap_windows / 2u) {
        n = (size_t)c->cap_windows + c->cap_windows / 2u;
    }
    size_t stamp_bytes = n * sizeof(weft_atomic_u64), bad_bytes = n * BAD_WORDS * sizeof(uint64_t);
    size_t rows_bytes = n * inc * WINDOW * sizeof(uint32_t),
           flag_bytes = n * inc * sizeof(uint32_t);
    size_t bytes = stamp_bytes + bad_bytes + rows_bytes + flag_bytes;
    unsigned char *block = alloc->alloc(bytes, 64, alloc->user);
    if (block == NULL) {
        return false;
    }
    if (c->block != NULL) {
        alloc->free(c->block, c->block_bytes, alloc->user);
    }
    c->block = block;
    c->block_bytes = bytes;
    c->cap_windows = (uint32_t)n;
    c->cap_includes = k->includes;
    c->stamp = (weft_atomic_u64 *)block;
    c->bad = (uint64_t *)(block + stamp_bytes);
    c->rows = (uint32_t *)(block + stamp_bytes + bad_bytes);
    c->flags = (uint32_t *)(block + stamp_bytes + bad_bytes + rows_bytes);
    for (size_t w = 0; w < n; w++) {
        weft_atomic_init(&c->stamp[w], 0);
    }
    return true;
}

/* Re-key c for k (busy held, seq even and stale): a new epoch, or 0 out of memory. */
static uint64_t rekey(const weft_allocator_t *alloc, weft__join_cache_t *c,
                      const weft__join_key_t *k) {
    uint64_t s = weft_atomic_load_relaxed(&c->seq);
    weft_atomic_store_relaxed(&c->seq, s + 1u);
    weft_atomic_fence_release();
    bool ok = fit_arrays(alloc, c, k);
    weft_atomic_store_relaxed(&c->drive, ok ? (void *)k->drive : NULL); /* NULL matches no key */
    weft_atomic_store_relaxed(&c->group, k->group);
    weft_atomic_store_relaxed(&c->includes, k->includes);
    weft_atomic_store_relaxed(&c->windows, k->windows);
    weft_atomic_store_relaxed(&c->count, k->count);
    for (uint32_t i = 0; i < k->count; i++) {
        weft_atomic_store_relaxed(&c->layout[i], k->layout[i]);
    }
    /* The new epoch; the planted variant keeps the old one, so past windows would pass. */
    uint64_t epoch = WEFT__PLANT("join_cache_epoch_kept") && s != 0 ? s : s + 2u;
    weft_atomic_store_release(&c->seq, epoch);
    return ok ? epoch : 0;
}

uint64_t weft__join_cache_open(const weft_allocator_t *alloc, weft_atomic_ptr *slot,
                               const weft__join_key_t *key, weft__join_cache_t **out) {
    weft__join_cache_t *c = weft_atomic_load_acquire(slot);
    if (c == NULL) {
        weft__join_cache_t *fresh =
            alloc->alloc(sizeof *fresh, _Alignof(weft__join_cache_t), alloc->user);
        if (fresh == NULL) {
            return 0;
        }
        memset(fresh, 0, sizeof *fresh);
        void *expected = NULL;
        if (!weft_atomic_cas_strong_acq_rel(slot, &expected, fresh)) {
            alloc->free(fresh, sizeof *fresh, alloc->user);
            fresh = expected;
        }
        c = fresh;
    }
    uint64_t s1 = weft_atomic_load_acquire(&c->seq);
    if (s1 != 0 && (s1 & 1u) == 0 && key_matches(c, key)) {
        weft_atomic_fence_acquire();
        if (weft_atomic_load_relaxed(&c->seq) == s1) {
            *out = c;
            return s1;
        }
    }
    uint32_t idle = 0;
    if (!weft_atomic_cas_strong_acq_rel(&c->busy, &idle, 1u)) {
        return 0; /* another iterator re-keys: probe without the cache this time */
    }
    uint64_t s = weft_atomic_load_relaxed(&c->seq);
    uint64_t epoch = s != 0 && key_matches(c, key) ? s : rekey(alloc, c, key);
    weft_atomic_store_release(&c->busy, 0u);
    if (epoch != 0) {
        *out = c;
    }
    return epoch;
}

bool weft__join_window_ready(const weft__join_cache_t *cache, uint32_t win, uint64_t epoch) {
    return weft_atomic_load_acquire(&cache->stamp[win]) == epoch;
}

bool weft__join_window_claim(weft__join_cache_t *cache, uint32_t win, uint64_t epoch) {
    uint64_t seen = weft_atomic_load_relaxed(&cache->stamp[win]);
    if (seen == epoch || seen == FILLING) {
        return false;
    }
    return weft_atomic_cas_strong_acq_rel(&cache->stamp[win], &seen, FILLING);
}

void weft__join_window_publish(weft__join_cache_t *cache, uint32_t win, uint64_t epoch) {
    weft_atomic_store_release(&cache->stamp[win], epoch);
}

/* Include-major: include c's rows of consecutive windows are adjacent (join_cache.h). */
uint32_t *weft__join_window_rows(weft__join_cache_t *cache, uint32_t win, uint32_t c) {
    return cache->rows + ((size_t)c * cache->cap_windows + win) * WINDOW;
}

uint64_t *weft__join_window_bad(weft__join_cache_t *cache, uint32_t win) {
    return cache->bad + (size_t)win * BAD_WORDS;
}

uint32_t *weft__join_window_flags(weft__join_cache_t *cache, uint32_t win) {
    return cache->flags + (size_t)win * cache->cap_includes;
}

void weft__join_cache_free(const weft_allocator_t *alloc, weft_atomic_ptr *slot) {
    weft__join_cache_t *c = weft_atomic_load_relaxed(slot);
    if (c == NULL) {
        return;
    }
    if (c->block != NULL) {
        alloc->free(c->block, c->block_bytes, alloc->user);
    }
    alloc->free(c, sizeof *c, alloc->user);
    weft_atomic_store_relaxed(slot, NULL);
}
