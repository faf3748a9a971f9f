/* deque.h: the Chase-Lev work-stealing deque, one per worker and priority (private).
 *
 * The owner pushes and takes at the bottom (LIFO, cache-warm); thieves steal at the top
 * (FIFO, oldest and usually largest work first). Elements are opaque non-NULL pointers.
 * See deque.c for the memory-order argument. */
#ifndef WEFT_JOBS_DEQUE_H
#define WEFT_JOBS_DEQUE_H

#include <stdbool.h>
#include <stdint.h>

#include "atomic.h"
#include "weft/base.h"

typedef struct weft__deque_buf weft__deque_buf_t;

typedef struct weft__deque {
    _Alignas(WEFT_CACHE_LINE) weft_atomic_i64 top; /* next index to steal; thieves CAS it */
    _Alignas(WEFT_CACHE_LINE) weft_atomic_i64 bottom; /* next index to push; owner writes */
    weft_atomic_ptr buf;          /* current weft__deque_buf_t; owner replaces on growth */
    weft__deque_buf_t *retired;   /* older buffers kept alive until fini; owner only */
    const weft_allocator_t *alloc; /* where buffers come from (the job system's hook) */
} weft__deque_t;

/* Set up an empty deque with room for `capacity` elements (rounded up to a power of two).
 * Returns false on allocation failure. Thread: the owner, before it is shared. */
bool weft__deque_init(weft__deque_t *d, uint32_t capacity, const weft_allocator_t *alloc);

/* Free the buffers. Thread: any, once no thread uses the deque. */
void weft__deque_fini(weft__deque_t *d);

/* Make room for `n` more pushes without allocating in weft__deque_push. Returns false on
 * allocation failure (the deque is unchanged). Thread: owner. */
bool weft__deque_reserve(weft__deque_t *d, uint32_t n);

/* Push `n` elements at the bottom; room must have been reserved. The bottom index is
 * published with one seq_cst store (see deque.c: it pairs with sleepers). Thread: owner. */
void weft__deque_push(weft__deque_t *d, void *const *items, uint32_t n);

/* Take the most recently pushed element, or NULL when empty. Thread: owner. */
void *weft__deque_take(weft__deque_t *d);

/* Steal the oldest element, or NULL when empty or when another thief won the race.
 * Thread: any. */
void *weft__deque_steal(weft__deque_t *d);

/* True when the deque looks empty. Exact for the owner between its own operations; a hint
 * for everyone else (seq_cst loads, so a sleeper's final check sees a completed push). */
bool weft__deque_is_empty(weft__deque_t *d);

#endif /* WEFT_JOBS_DEQUE_H */
