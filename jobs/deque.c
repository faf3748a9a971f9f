/* deque.c: the Chase-Lev work-stealing deque (Chase & Lev 2005) with the memory orders of
 * Lê, Pop, Cohen and Zappa Nardelli 2013, "Correct and Efficient Work-Stealing for Weak
 * Memory Models", rewritten without standalone fences so ThreadSanitizer can follow it.
 *
 * DESIGN: a circular buffer of atomic pointer slots indexed by two 64-bit counters, `top`
 * (thieves advance it with a CAS) and `bottom` (only the owner writes it). Indices never
 * wrap in practice (2^63 pushes). Growth copies the live range into a buffer twice the
 * size and publishes it with a release store; the old buffer is kept on `retired` until
 * fini, because a slow thief may still be reading from it (its CAS on `top` then decides
 * whether what it read is valid, exactly as in the paper).
 *
 * Fence-free translation of Lê et al. (their fences → our orders):
 *   push:  slot store relaxed; fence(release) + bottom store relaxed → bottom store seq_cst.
 *          Release would do for the deque itself; seq_cst is needed by the sleep protocol
 *          (sleep.c): a pusher then reads the sleeper count, a sleeper bumps the count and
 *          then reads `bottom`; seq_cst on both sides means one of them sees the other.
 *   take:  bottom store relaxed + fence(seq_cst) + top load relaxed → seq_cst store and
 *          seq_cst load. The last-element race is a seq_cst CAS on top, as in the paper.
 *   steal: top load acquire + fence(seq_cst) + bottom load acquire → both loads seq_cst.
 *          Slots are read relaxed: the acquire half of the seq_cst load of `bottom` pairs
 *          with the owner's store and makes the slot (and the job behind it) visible.
 * TSan models seq_cst operations precisely, so it sees every happens-before edge we use.
 * push is on every submission's path and lives in deque.h as an inline function.
 *
 * Lock order: no locks. */
#include "deque.h"

#include <string.h>

#include "jobs/platform/report.h"

static weft__deque_buf_t *buf_new(const weft_allocator_t *a, int64_t cap) {
    size_t size = sizeof(weft__deque_buf_t) + (size_t)cap * sizeof(weft_atomic_ptr);
    weft__deque_buf_t *b = a->alloc(size, WEFT_CACHE_LINE, a->user);
    if (!b) {
        return NULL;
    }
    b->mask = cap - 1;
    b->older = NULL;
    for (int64_t i = 0; i < cap; ++i) {
        weft_atomic_init(&b->slots[i], NULL);
    }
    return b;
}

static void buf_free(const weft_allocator_t *a, weft__deque_buf_t *b) {
    a->free(b, sizeof(weft__deque_buf_t) + (size_t)(b->mask + 1) * sizeof(weft_atomic_ptr),
            a->user);
}

bool weft__deque_init(weft__deque_t *d, uint32_t capacity, const weft_allocator_t *alloc) {
    int64_t cap = 16;
    while (cap < (int64_t)capacity) {
        cap *= 2;
    }
    d->alloc = alloc;
    d->retired = NULL;
    weft_atomic_init(&d->top, 0);
    weft_atomic_init(&d->bottom, 0);
    weft__deque_buf_t *b = buf_new(alloc, cap);
    weft_atomic_init(&d->buf, b);
    d->cap = b ? cap : 0;
    return b != NULL;
}

void weft__deque_fini(weft__deque_t *d) {
    weft__deque_buf_t *b = weft_atomic_load_relaxed(&d->buf);
    if (b) {
        buf_free(d->alloc, b);
    }
    while (d->retired) {
        weft__deque_buf_t *next = d->retired->older;
        buf_free(d->alloc, d->retired);
        d->retired = next;
    }
    weft_atomic_store_relaxed(&d->buf, NULL);
}

bool weft__deque_reserve(weft__deque_t *d, uint32_t n) {
    /* Owner-only reads: bottom is ours; a stale top is smaller than the real one, so the
     * size we compute can only be too large, which errs on the side of growing. The room
     * test is weft__deque_has_room's; hot callers inline that one before calling here. */
    int64_t b = weft_atomic_load_relaxed(&d->bottom);
    int64_t t = weft_atomic_load_acquire(&d->top); /* pairs with the CAS in steal/take:
                                                       slots below top are free again */
    weft__deque_buf_t *old = weft_atomic_load_relaxed(&d->buf);
    int64_t need = b - t + (int64_t)n;
    if (need <= old->mask + 1) {
        return true;
    }
    int64_t cap = (old->mask + 1) * 2;
    while (cap < need) {
        cap *= 2;
    }
    weft__deque_buf_t *nb = buf_new(d->alloc, cap);
    if (!nb) {
        return false;
    }
    for (int64_t i = t; i < b; ++i) {
        void *x = weft_atomic_load_relaxed(&old->slots[i & old->mask]);
        weft_atomic_store_relaxed(&nb->slots[i & nb->mask], x);
    }
    old->older = d->retired;
    d->retired = old;
    d->cap = cap;
    /* pairs with the acquire load of buf in steal(): the copied slots are visible */
    weft_atomic_store_release(&d->buf, nb);
    return true;
}

void *weft__deque_take(weft__deque_t *d) {
    /* Cheap empty test first: exact for the owner, and saves two seq_cst operations. */
    if (weft__deque_owner_empty(d)) {
        return NULL;
    }
    int64_t b = weft_atomic_load_relaxed(&d->bottom) - 1;
    weft__deque_buf_t *buf = weft_atomic_load_relaxed(&d->buf);
    /* seq_cst store then seq_cst load: replaces Lê et al.'s relaxed store + seq_cst fence;
     * a thief that read the old bottom is ordered before us and we see its CAS on top. */
    weft_atomic_store_seq_cst(&d->bottom, b);
    int64_t t = weft_atomic_load_seq_cst(&d->top);
    if (t > b) {
        /* Empty: a thief took the last element. Restore bottom. */
        weft_atomic_store_relaxed(&d->bottom, b + 1);
        return NULL;
    }
    void *x = weft_atomic_load_relaxed(&buf->slots[b & buf->mask]);
    if (t == b) {
        /* Last element: race the thieves for it with a seq_cst CAS on top (as in the paper). */
        if (!weft_atomic_cas_strong_seq_cst(&d->top, &t, t + 1)) {
            x = NULL;
        }
        weft_atomic_store_relaxed(&d->bottom, b + 1);
    }
    return x;
}

void *weft__deque_steal(weft__deque_t *d) {
    /* Both seq_cst: Lê et al.'s acquire load + seq_cst fence + acquire load. */
    int64_t t = weft_atomic_load_seq_cst(&d->top);
    int64_t b = weft_atomic_load_seq_cst(&d->bottom); /* pairs with the store in push() */
    if (t >= b) {
        return NULL;
    }
    /* pairs with the release store of buf in reserve(): the copied slots are visible */
    weft__deque_buf_t *buf = weft_atomic_load_acquire(&d->buf);
    void *x = weft_atomic_load_relaxed(&buf->slots[t & buf->mask]);
    /* seq_cst CAS: the race with take() for the last element must be totally ordered with
     * take's seq_cst store of bottom (Lê et al. use seq_cst here too). */
    if (!weft_atomic_cas_strong_seq_cst(&d->top, &t, t + 1)) {
        return NULL;
    }
    return x;
}

bool weft__deque_is_empty(weft__deque_t *d) {
    int64_t t = weft_atomic_load_seq_cst(&d->top);
    int64_t b = weft_atomic_load_seq_cst(&d->bottom); /* pairs with the store in push() */
    return t >= b;
}
