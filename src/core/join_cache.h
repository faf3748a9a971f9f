/* join_cache.h: a query's resolved join rows, kept between iterations (private to the build).
 *
 * DESIGN
 * A join no driving range covers is resolved in windows of WEFT__ITER_BLOCK driving rows: each
 * checked pool's sparse index is probed for the window's entities (query.c, block batches).
 * While no pool of the join changes its layout, those probes give the same rows every frame,
 * so a plain query keeps them: per window, each include check's rows, the rejected entries
 * (a bit each) and the include's PROBE_* bits, 4 bytes per driving row and include check.
 *
 * Layout. Each include's rows form one array over the whole driving range (include-major:
 * window w + 1's rows follow window w's), not one record per window. A body reads a batch's
 * rows in driving order, so each include it reads is one sequential stream, and an include
 * it does not read (a follower whose rows are its lead's, PROBE_SAME: the batch hands out the
 * lead's array for both) is never brought into the cache. Measured on the 1M-entity join
 * {P, V, M} with a {P, V} group (V follows P; Mass drives): with window-major records the
 * body's stream over P's rows skipped V's 512 bytes after every 512 it read, and that
 * iteration ran slower than the same join without the group, which reads both arrays, though
 * it ran fewer instructions (query/join3_partial_group_vs_ungrouped, median 1.07 over 22
 * runs); include-major, it reads half the row bytes of the ungrouped join (median 0.99).
 *
 * Validity. Every pool counts the writes of its sparse index (weft__pool_t.layout): an entity
 * added, moved or removed. The cache is keyed by the plan's driving pool and group, and the
 * layout counts of the driving pool and of every checked pool; any other key re-keys it (a
 * new epoch), which makes every window stale at once. A window holds the epoch whose rows it
 * stores.
 *
 * Threads. Iterators of one query run concurrently, and they all see the same world (no
 * structural change while iterators run), so they all compute the same key. The key is read
 * under a sequence count (odd while one iterator re-keys, under `busy`); an iterator that
 * finds the cache busy or stale and cannot take `busy` probes without it. A window is filled
 * by the iterator that claims it (a CAS from a stale epoch to FILLING) and published with a
 * release store of the epoch; iterators that find it FILLING probe for themselves. The arrays
 * are only reallocated on a re-key, which no iterator of the previous key can overlap.
 *
 * Memory comes from the allocator the caller passes (queries: the world's counted one,
 * thread-safe and in heap_bytes). Running out is not an error: the query probes as it would
 * without the cache. The protocol runs under the interleaving checker
 * (tests/interleavings/test_join_cache.c). */
#ifndef WEFT_SRC_JOIN_CACHE_H
#define WEFT_SRC_JOIN_CACHE_H

#include "jobs/platform/atomic.h"
#include "weft/query.h"

#define WEFT__JOIN_KEY_MAX (1u + WEFT_QUERY_MAX_TERMS + WEFT_QUERY_MAX_EXCLUDES)

/* What the cached rows depend on. */
typedef struct weft__join_key {
    const void *drive;                   /* the plan's driving pool */
    uint32_t group;                      /* the plan's driving group, 0: none */
    uint32_t includes;                   /* include checks (rows kept per window) */
    uint32_t windows;                    /* windows of the driving range */
    uint32_t count;                      /* entries in layout */
    uint64_t layout[WEFT__JOIN_KEY_MAX]; /* layout counts: the driving pool, then each check */
} weft__join_key_t;

typedef struct weft__join_cache weft__join_cache_t;

/* The cache in *slot for `key`, created or re-keyed if need be; returns its epoch (0: none
 * usable now: busy, or out of memory; the caller probes). *out receives the cache when the
 * epoch is not 0. Thread: any iterator (see above). */
uint64_t weft__join_cache_open(const weft_allocator_t *alloc, weft_atomic_ptr *slot,
                               const weft__join_key_t *key, weft__join_cache_t **out);

/* True when window `win` holds the rows of `epoch` (acquire: its arrays may be read). */
bool weft__join_window_ready(const weft__join_cache_t *cache, uint32_t win, uint64_t epoch);

/* Claim stale window `win` for filling (false: ready, or another iterator fills it). After a
 * true, the caller writes the window's arrays and calls weft__join_window_publish. */
bool weft__join_window_claim(weft__join_cache_t *cache, uint32_t win, uint64_t epoch);

/* Publish a claimed window's arrays as the rows of `epoch` (release). */
void weft__join_window_publish(weft__join_cache_t *cache, uint32_t win, uint64_t epoch);

/* Window `win`'s arrays: include c's rows (WEFT__ITER_BLOCK entries, directly followed by its
 * rows of window win + 1: see Layout), the rejected-entry bits (WEFT__ITER_BLOCK / 64 words)
 * and the include PROBE_* bits (one per include). */
uint32_t *weft__join_window_rows(weft__join_cache_t *cache, uint32_t win, uint32_t c);
uint64_t *weft__join_window_bad(weft__join_cache_t *cache, uint32_t win);
uint32_t *weft__join_window_flags(weft__join_cache_t *cache, uint32_t win);

/* Free the cache in *slot (NULL: nothing) through the allocator it was opened with. Thread:
 * main, no iterator running. */
void weft__join_cache_free(const weft_allocator_t *alloc, weft_atomic_ptr *slot);

#endif /* WEFT_SRC_JOIN_CACHE_H */
