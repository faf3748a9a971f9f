/* atomic.h: the only door to <stdatomic.h>. Every operation names its memory order, so a
 * reader sees the ordering intent at the call site (mimalloc style). Private to the build:
 * jobs/ and src/ include it; it is not installed.
 *
 * Each acquire/release at a call site carries a comment naming its partner. */
#ifndef WEFT_PLATFORM_ATOMIC_H
#define WEFT_PLATFORM_ATOMIC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WEFT_CACHE_LINE 64

typedef _Atomic(uint32_t) weft_atomic_u32;
typedef _Atomic(uint64_t) weft_atomic_u64;
typedef _Atomic(int64_t) weft_atomic_i64;
typedef _Atomic(void *) weft_atomic_ptr;
typedef _Atomic(size_t) weft_atomic_size;
typedef atomic_bool weft_atomic_bool;

/* Generic over the weft_atomic_* types above (C11 atomic generics). */
#define weft_atomic_init(p, v) atomic_init((p), (v))
#define weft_atomic_load_relaxed(p) atomic_load_explicit((p), memory_order_relaxed)
#define weft_atomic_load_acquire(p) atomic_load_explicit((p), memory_order_acquire)
#define weft_atomic_load_seq_cst(p) atomic_load_explicit((p), memory_order_seq_cst)
#define weft_atomic_store_relaxed(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define weft_atomic_store_release(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define weft_atomic_store_seq_cst(p, v) atomic_store_explicit((p), (v), memory_order_seq_cst)
#define weft_atomic_exchange_acq_rel(p, v) atomic_exchange_explicit((p), (v), memory_order_acq_rel)
#define weft_atomic_exchange_seq_cst(p, v) atomic_exchange_explicit((p), (v), memory_order_seq_cst)
#define weft_atomic_fetch_add_relaxed(p, v) \
    atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define weft_atomic_fetch_add_acq_rel(p, v) \
    atomic_fetch_add_explicit((p), (v), memory_order_acq_rel)
#define weft_atomic_fetch_add_release(p, v) \
    atomic_fetch_add_explicit((p), (v), memory_order_release)
#define weft_atomic_fetch_sub_relaxed(p, v) \
    atomic_fetch_sub_explicit((p), (v), memory_order_relaxed)
#define weft_atomic_fetch_sub_acq_rel(p, v) \
    atomic_fetch_sub_explicit((p), (v), memory_order_acq_rel)
#define weft_atomic_fetch_sub_release(p, v) \
    atomic_fetch_sub_explicit((p), (v), memory_order_release)
#define weft_atomic_fetch_or_acq_rel(p, v) atomic_fetch_or_explicit((p), (v), memory_order_acq_rel)
#define weft_atomic_fetch_and_acq_rel(p, v) \
    atomic_fetch_and_explicit((p), (v), memory_order_acq_rel)

/* seq_cst read-modify-writes: for Dekker-style handshakes (a publisher's write followed by a
 * read of a "sleepers" count, against a sleeper's increment followed by a read of the
 * published state). Justify each use at its call site. */
#define weft_atomic_fetch_add_seq_cst(p, v) \
    atomic_fetch_add_explicit((p), (v), memory_order_seq_cst)
#define weft_atomic_fetch_sub_seq_cst(p, v) \
    atomic_fetch_sub_explicit((p), (v), memory_order_seq_cst)
#define weft_atomic_exchange_acquire(p, v) atomic_exchange_explicit((p), (v), memory_order_acquire)
#define weft_atomic_fetch_and_release(p, v) \
    atomic_fetch_and_explicit((p), (v), memory_order_release)

/* Compare-and-swap; `expected` is updated on failure. */
#define weft_atomic_cas_weak_acq_rel(p, expected, desired)                                  \
    atomic_compare_exchange_weak_explicit((p), (expected), (desired), memory_order_acq_rel, \
                                          memory_order_acquire)
#define weft_atomic_cas_strong_acq_rel(p, expected, desired)                                  \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_acq_rel, \
                                            memory_order_acquire)
/* seq_cst CAS: needed where a Chase-Lev steal/pop race must be totally ordered with the
 * seq_cst fence in pop (Lê et al. 2013). Justify each use. */
#define weft_atomic_cas_strong_seq_cst(p, expected, desired)                                  \
    atomic_compare_exchange_strong_explicit((p), (expected), (desired), memory_order_seq_cst, \
                                            memory_order_relaxed)

/* Relaxed on both paths: a CAS that orders nothing (raising a monotonic summary value whose
 * readers are ordered by other means, src/core/change.h). */
#define weft_atomic_cas_weak_relaxed(p, expected, desired)                                  \
    atomic_compare_exchange_weak_explicit((p), (expected), (desired), memory_order_relaxed, \
                                          memory_order_relaxed)

/* Release on success, relaxed on failure: pushing onto a lock-free list (the node's fields
 * are published by the successful CAS; a failed CAS publishes nothing). */
#define weft_atomic_cas_weak_release(p, expected, desired)                                  \
    atomic_compare_exchange_weak_explicit((p), (expected), (desired), memory_order_release, \
                                          memory_order_relaxed)
/* seq_cst on both paths: the counter's zero transition and sleeper flag (jobs/counter.c). */
#define weft_atomic_cas_weak_seq_cst(p, expected, desired)                                  \
    atomic_compare_exchange_weak_explicit((p), (expected), (desired), memory_order_seq_cst, \
                                          memory_order_seq_cst)

/* Fences. ThreadSanitizer does not model standalone fences well; prefer ordered
 * operations and justify every fence at its call site. */
#define weft_atomic_fence_seq_cst() atomic_thread_fence(memory_order_seq_cst)
#define weft_atomic_fence_acquire() atomic_thread_fence(memory_order_acquire)
#define weft_atomic_fence_release() atomic_thread_fence(memory_order_release)

/* Hint to the CPU that we are spinning. */
static inline void weft_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif /* WEFT_PLATFORM_ATOMIC_H */
