/* deque.h: the Chase-Lev work-stealing deque, one per worker and priority (private).
 *
 * The owner pushes and takes at the bottom (LIFO, cache-warm); thieves steal at the top
 * (FIFO, oldest and usually largest work first). Elements are opaque non-NULL pointers.
 * See deque.c for the memory-order argument. */
#ifndef WEFT_JOBS_DEQUE_H
#define WEFT_JOBS_DEQUE_H

#include <stdbool.h>
#include <stdint.h>

#include "jobs/platform/atomic.h"
#include "jobs/platform/report.h"
#include "weft/base.h"

typedef struct weft__deque_buf weft__deque_buf_t;

struct weft__deque_buf {
    int64_t mask;             /* capacity - 1; capacity is a power of two */
    weft__deque_buf_t *older; /* next retired buffer (owner only) */
    weft_atomic_ptr slots[];  /* capacity element pointers */
};

typedef struct weft__deque {
    _Alignas(WEFT_CACHE_LINE) weft_atomic_i64 top;    /* next index to steal; thieves CAS it */
    _Alignas(WEFT_CACHE_LINE) weft_atomic_i64 bottom; /* next index to push; owner writes */
    weft_atomic_ptr buf;           /* current weft__deque_buf_t; owner replaces on growth */
    weft__deque_buf_t *retired;    /* older buffers kept alive until fini; owner only */
    const weft_allocator_t *alloc; /* where buffers come from (the job system's hook) */
    int64_t cap;                   /* owner only: capacity of buf */
} weft__deque_t;

/* Set up an empty deque with room for `capacity` elements (rounded up to a power of two).
 * Returns false on allocation failure. Thread: the owner, before it is shared. */
bool weft__deque_init(weft__deque_t *d, uint32_t capacity, const weft_allocator_t *alloc);

/* Free the buffers. Thread: any, once no thread uses the deque. */
void weft__deque_fini(weft__deque_t *d);

/* Make room for `n` more pushes without allocating in weft__deque_push. Returns false on
 * allocation failure (the deque is unchanged). Thread: owner. */
bool weft__deque_reserve(weft__deque_t *d, uint32_t n);

/* True when `n` more pushes fit without growing (the inlined fast path of reserve).
 * Thread: owner. */
static inline bool weft__deque_has_room(weft__deque_t *d, uint32_t n) {
    /* Owner-only reads: bottom is ours; a stale top is smaller than the real one, so the
     * size we compute can only be too large. acquire pairs with the CAS in steal/take:
     * slots below top are free again. */
    int64_t b = weft_atomic_load_relaxed(&d->bottom);
    int64_t t = weft_atomic_load_acquire(&d->top);
    return b - t + (int64_t)n <= d->cap;
}

/* True when the deque is empty. Exact for the owner (bottom is its own and a stale top is
 * never larger than the real one); lets it skip take()'s seq_cst handshake. Thread: owner. */
static inline bool weft__deque_owner_empty(weft__deque_t *d) {
    return weft_atomic_load_relaxed(&d->bottom) <= weft_atomic_load_relaxed(&d->top);
}

/* Push `n` elements at the bottom; room must have been reserved. The bottom index is
 * published with one seq_cst store (see deque.c: it pairs with sleepers). Inline: it is on
 * every submission's path. Thread: owner. */
static inline void weft__deque_push(weft__deque_t *d, void *const *items, uint32_t n) {
    int64_t b = weft_atomic_load_relaxed(&d->bottom);
    weft__deque_buf_t *buf = weft_atomic_load_relaxed(&d->buf);
    weft_assert_internal(b - weft_atomic_load_relaxed(&d->top) + (int64_t)n <= buf->mask + 1);
    for (uint32_t i = 0; i < n; ++i) {
        weft_atomic_store_relaxed(&buf->slots[(b + (int64_t)i) & buf->mask], items[i]);
    }
    /* seq_cst: release half pairs with the seq_cst loads of bottom in steal() (the slots and
     * the jobs they point to are visible); the seq_cst half orders this store before the
     * pusher's read of the sleeper count (sleep.c, no lost wake-up). */
    weft_atomic_store_seq_cst(&d->bottom, b + (int64_t)n);
}

/* Take the most recently pushed element, or NULL when empty. Thread: owner. */
void *weft__deque_take(weft__deque_t *d);

/* Steal the oldest element, or NULL when empty or when another thief won the race.
 * Thread: any. */
void *weft__deque_steal(weft__deque_t *d);

/* True when the deque looks empty. Exact for the owner between its own operations; a hint
 * for everyone else (seq_cst loads, so a sleeper's final check sees a completed push). */
bool weft__deque_is_empty(weft__deque_t *d);

#endif /* WEFT_JOBS_DEQUE_H */
