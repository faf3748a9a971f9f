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

#if defined(WEFT_MODEL_CHECK) || defined(WEFT_CHAOS)
/* Test builds only (never the shipped library). WEFT_MODEL_CHECK: every operation and fence
 * below is a scheduling point of the interleaving checker in tests/interleavings/ (it
 * defines these hooks), which also chooses what a relaxed or acquire load reads.
 * WEFT_CHAOS: the operations are the real ones, preceded by a seeded random yield, spin or
 * delay (tests/chaos/ defines weft__chaos_point). Values cross the hooks as uint64_t. */
enum {
    WEFT__MO_RELAXED = 0,
    WEFT__MO_ACQUIRE = 1,
    WEFT__MO_RELEASE = 2,
    WEFT__MO_ACQ_REL = 3,
    WEFT__MO_SEQ_CST = 4,
};
enum { WEFT__RMW_XCHG, WEFT__RMW_ADD, WEFT__RMW_SUB, WEFT__RMW_AND, WEFT__RMW_OR };
typedef struct weft__mc_site {
    const char *file; /* __FILE__ of the call site */
    const char *func; /* __func__ */
    int line;         /* __LINE__ */
    const char *op;   /* the wrapper's name, e.g. "load_acquire" */
} weft__mc_site_t;
#define WEFT__MC_SITE(opname) (&(const weft__mc_site_t){__FILE__, __func__, __LINE__, opname})
#endif

#if defined(WEFT_MODEL_CHECK)
void weft__mc_atomic_init(volatile void *p, size_t size, uint64_t v);
uint64_t weft__mc_load(const volatile void *p, size_t size, int mo, const weft__mc_site_t *site);
void weft__mc_store(volatile void *p, size_t size, uint64_t v, int mo, const weft__mc_site_t *site);
uint64_t weft__mc_rmw(volatile void *p, size_t size, int op, uint64_t v, int mo,
                      const weft__mc_site_t *site);
bool weft__mc_cas(volatile void *p, size_t size, void *expected, uint64_t desired, int mo_ok,
                  int mo_fail, const weft__mc_site_t *site);
void weft__mc_fence(int mo, const weft__mc_site_t *site);
void weft__mc_yield(const weft__mc_site_t *site);

/* The value type of an atomic object: the comma drops _Atomic (as GCC's stdatomic.h does). */
#define WEFT__MC_T(p) __typeof__((void)0, *(p))
#define WEFT__MC_V(v) ((uint64_t)(uintptr_t)(v))
#define WEFT__MC_LOAD(p, mo, name) \
    ((WEFT__MC_T(p))(uintptr_t)weft__mc_load((p), sizeof *(p), (mo), WEFT__MC_SITE(name)))
#define WEFT__MC_STORE(p, v, mo, name) \
    weft__mc_store((p), sizeof *(p), WEFT__MC_V(v), (mo), WEFT__MC_SITE(name))
#define WEFT__MC_RMW(p, op, v, mo, name)                                                 \
    ((WEFT__MC_T(p))(uintptr_t)weft__mc_rmw((p), sizeof *(p), (op), WEFT__MC_V(v), (mo), \
                                            WEFT__MC_SITE(name)))
#define WEFT__MC_CAS(p, e, d, ok, fail, name) \
    weft__mc_cas((p), sizeof *(p), (e), WEFT__MC_V(d), (ok), (fail), WEFT__MC_SITE(name))

#define weft_atomic_init(p, v) weft__mc_atomic_init((p), sizeof *(p), WEFT__MC_V(v))
#define weft_atomic_load_relaxed(p) WEFT__MC_LOAD(p, WEFT__MO_RELAXED, "load_relaxed")
#define weft_atomic_load_acquire(p) WEFT__MC_LOAD(p, WEFT__MO_ACQUIRE, "load_acquire")
#define weft_atomic_load_seq_cst(p) WEFT__MC_LOAD(p, WEFT__MO_SEQ_CST, "load_seq_cst")
#define weft_atomic_store_relaxed(p, v) WEFT__MC_STORE(p, v, WEFT__MO_RELAXED, "store_relaxed")
#define weft_atomic_store_release(p, v) WEFT__MC_STORE(p, v, WEFT__MO_RELEASE, "store_release")
#define weft_atomic_store_seq_cst(p, v) WEFT__MC_STORE(p, v, WEFT__MO_SEQ_CST, "store_seq_cst")
#define weft_atomic_exchange_acq_rel(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_XCHG, v, WEFT__MO_ACQ_REL, "exchange_acq_rel")
#define weft_atomic_exchange_seq_cst(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_XCHG, v, WEFT__MO_SEQ_CST, "exchange_seq_cst")
#define weft_atomic_exchange_acquire(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_XCHG, v, WEFT__MO_ACQUIRE, "exchange_acquire")
#define weft_atomic_fetch_add_relaxed(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_ADD, v, WEFT__MO_RELAXED, "fetch_add_relaxed")
#define weft_atomic_fetch_add_acq_rel(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_ADD, v, WEFT__MO_ACQ_REL, "fetch_add_acq_rel")
#define weft_atomic_fetch_add_release(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_ADD, v, WEFT__MO_RELEASE, "fetch_add_release")
#define weft_atomic_fetch_add_seq_cst(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_ADD, v, WEFT__MO_SEQ_CST, "fetch_add_seq_cst")
#define weft_atomic_fetch_sub_relaxed(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_SUB, v, WEFT__MO_RELAXED, "fetch_sub_relaxed")
#define weft_atomic_fetch_sub_acq_rel(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_SUB, v, WEFT__MO_ACQ_REL, "fetch_sub_acq_rel")
#define weft_atomic_fetch_sub_release(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_SUB, v, WEFT__MO_RELEASE, "fetch_sub_release")
#define weft_atomic_fetch_sub_seq_cst(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_SUB, v, WEFT__MO_SEQ_CST, "fetch_sub_seq_cst")
#define weft_atomic_fetch_or_acq_rel(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_OR, v, WEFT__MO_ACQ_REL, "fetch_or_acq_rel")
#define weft_atomic_fetch_and_acq_rel(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_AND, v, WEFT__MO_ACQ_REL, "fetch_and_acq_rel")
#define weft_atomic_fetch_and_release(p, v) \
    WEFT__MC_RMW(p, WEFT__RMW_AND, v, WEFT__MO_RELEASE, "fetch_and_release")
#define weft_atomic_cas_weak_acq_rel(p, e, d) \
    WEFT__MC_CAS(p, e, d, WEFT__MO_ACQ_REL, WEFT__MO_ACQUIRE, "cas_weak_acq_rel")
#define weft_atomic_cas_strong_acq_rel(p, e, d) \
    WEFT__MC_CAS(p, e, d, WEFT__MO_ACQ_REL, WEFT__MO_ACQUIRE, "cas_strong_acq_rel")
#define weft_atomic_cas_strong_seq_cst(p, e, d) \
    WEFT__MC_CAS(p, e, d, WEFT__MO_SEQ_CST, WEFT__MO_RELAXED, "cas_strong_seq_cst")
#define weft_atomic_cas_weak_release(p, e, d) \
    WEFT__MC_CAS(p, e, d, WEFT__MO_RELEASE, WEFT__MO_RELAXED, "cas_weak_release")
#define weft_atomic_cas_weak_relaxed(p, e, d) \
    WEFT__MC_CAS(p, e, d, WEFT__MO_RELAXED, WEFT__MO_RELAXED, "cas_weak_relaxed")
#define weft_atomic_cas_weak_seq_cst(p, e, d) \
    WEFT__MC_CAS(p, e, d, WEFT__MO_SEQ_CST, WEFT__MO_SEQ_CST, "cas_weak_seq_cst")
#define weft_atomic_fence_seq_cst() weft__mc_fence(WEFT__MO_SEQ_CST, WEFT__MC_SITE("fence_seq_cst"))
#define weft_atomic_fence_acquire() weft__mc_fence(WEFT__MO_ACQUIRE, WEFT__MC_SITE("fence_acquire"))
#define weft_atomic_fence_release() weft__mc_fence(WEFT__MO_RELEASE, WEFT__MC_SITE("fence_release"))

/* A bug planted on purpose, named at one line of jobs/: true only when a checker test
 * asks for it (tests/interleavings), so the test can show the checker catches it. */
bool weft__mc_planted(const char *name);
#define WEFT__PLANT(name) weft__mc_planted(name)

/* A spin-wait pause is a yield to the checker: another thread runs (no pre-emption). */
#define weft_cpu_relax() weft__mc_yield(WEFT__MC_SITE("cpu_relax"))

#else /* !WEFT_MODEL_CHECK */

/* Planted bugs exist only in the model-checked build; everywhere else this is false and
 * the branch it guards compiles away. */
#define WEFT__PLANT(name) false

#if defined(WEFT_CHAOS)
/* A seeded random yield, spin or delay before the operation (tests/chaos/chaos.c). */
void weft__chaos_point(void);
#define WEFT__CHAOS(expr) (weft__chaos_point(), (expr))
#else
#define WEFT__CHAOS(expr) (expr)
#endif

/* Generic over the weft_atomic_* types above (C11 atomic generics). */
#define weft_atomic_init(p, v) atomic_init((p), (v))
#define weft_atomic_load_relaxed(p) WEFT__CHAOS(atomic_load_explicit((p), memory_order_relaxed))
#define weft_atomic_load_acquire(p) WEFT__CHAOS(atomic_load_explicit((p), memory_order_acquire))
#define weft_atomic_load_seq_cst(p) WEFT__CHAOS(atomic_load_explicit((p), memory_order_seq_cst))
#define weft_atomic_store_relaxed(p, v) \
    WEFT__CHAOS(atomic_store_explicit((p), (v), memory_order_relaxed))
#define weft_atomic_store_release(p, v) \
    WEFT__CHAOS(atomic_store_explicit((p), (v), memory_order_release))
#define weft_atomic_store_seq_cst(p, v) \
    WEFT__CHAOS(atomic_store_explicit((p), (v), memory_order_seq_cst))
#define weft_atomic_exchange_acq_rel(p, v) \
    WEFT__CHAOS(atomic_exchange_explicit((p), (v), memory_order_acq_rel))
#define weft_atomic_exchange_seq_cst(p, v) \
    WEFT__CHAOS(atomic_exchange_explicit((p), (v), memory_order_seq_cst))
#define weft_atomic_fetch_add_relaxed(p, v) \
    WEFT__CHAOS(atomic_fetch_add_explicit((p), (v), memory_order_relaxed))
#define weft_atomic_fetch_add_acq_rel(p, v) \
    WEFT__CHAOS(atomic_fetch_add_explicit((p), (v), memory_order_acq_rel))
#define weft_atomic_fetch_add_release(p, v) \
    WEFT__CHAOS(atomic_fetch_add_explicit((p), (v), memory_order_release))
#define weft_atomic_fetch_sub_relaxed(p, v) \
    WEFT__CHAOS(atomic_fetch_sub_explicit((p), (v), memory_order_relaxed))
#define weft_atomic_fetch_sub_acq_rel(p, v) \
    WEFT__CHAOS(atomic_fetch_sub_explicit((p), (v), memory_order_acq_rel))
#define weft_atomic_fetch_sub_release(p, v) \
    WEFT__CHAOS(atomic_fetch_sub_explicit((p), (v), memory_order_release))
#define weft_atomic_fetch_or_acq_rel(p, v) \
    WEFT__CHAOS(atomic_fetch_or_explicit((p), (v), memory_order_acq_rel))
#define weft_atomic_fetch_and_acq_rel(p, v) \
    WEFT__CHAOS(atomic_fetch_and_explicit((p), (v), memory_order_acq_rel))

/* seq_cst read-modify-writes: for Dekker-style handshakes (a publisher's write followed by a
 * read of a "sleepers" count, against a sleeper's increment followed by a read of the
 * published state). Justify each use at its call site. */
#define weft_atomic_fetch_add_seq_cst(p, v) \
    WEFT__CHAOS(atomic_fetch_add_explicit((p), (v), memory_order_seq_cst))
#define weft_atomic_fetch_sub_seq_cst(p, v) \
    WEFT__CHAOS(atomic_fetch_sub_explicit((p), (v), memory_order_seq_cst))
#define weft_atomic_exchange_acquire(p, v) \
    WEFT__CHAOS(atomic_exchange_explicit((p), (v), memory_order_acquire))
#define weft_atomic_fetch_and_release(p, v) \
    WEFT__CHAOS(atomic_fetch_and_explicit((p), (v), memory_order_release))

/* Compare-and-swap; `expected` is updated on failure. */
#define weft_atomic_cas_weak_acq_rel(p, expected, desired)                        \
    WEFT__CHAOS(atomic_compare_exchange_weak_explicit((p), (expected), (desired), \
                                                      memory_order_acq_rel, memory_order_acquire))
#define weft_atomic_cas_strong_acq_rel(p, expected, desired) \
    WEFT__CHAOS(atomic_compare_exchange_strong_explicit(     \
        (p), (expected), (desired), memory_order_acq_rel, memory_order_acquire))
/* seq_cst CAS: needed where a Chase-Lev steal/pop race must be totally ordered with the
 * seq_cst fence in pop (Lê et al. 2013). Justify each use. */
#define weft_atomic_cas_strong_seq_cst(p, expected, desired) \
    WEFT__CHAOS(atomic_compare_exchange_strong_explicit(     \
        (p), (expected), (desired), memory_order_seq_cst, memory_order_relaxed))

/* Relaxed on both paths: a CAS that orders nothing (raising a monotonic summary value whose
 * readers are ordered by other means, src/core/change.h). */
#define weft_atomic_cas_weak_relaxed(p, expected, desired)                                  \
    atomic_compare_exchange_weak_explicit((p), (expected), (desired), memory_order_relaxed, \
                                          memory_order_relaxed)

/* Release on success, relaxed on failure: pushing onto a lock-free list (the node's fields
 * are published by the successful CAS; a failed CAS publishes nothing). */
#define weft_atomic_cas_weak_release(p, expected, desired)                        \
    WEFT__CHAOS(atomic_compare_exchange_weak_explicit((p), (expected), (desired), \
                                                      memory_order_release, memory_order_relaxed))
/* seq_cst on both paths: the counter's zero transition and sleeper flag (jobs/counter.c). */
#define weft_atomic_cas_weak_seq_cst(p, expected, desired)                        \
    WEFT__CHAOS(atomic_compare_exchange_weak_explicit((p), (expected), (desired), \
                                                      memory_order_seq_cst, memory_order_seq_cst))

/* Fences. ThreadSanitizer does not model standalone fences well; prefer ordered
 * operations and justify every fence at its call site. */
#define weft_atomic_fence_seq_cst() WEFT__CHAOS(atomic_thread_fence(memory_order_seq_cst))
#define weft_atomic_fence_acquire() WEFT__CHAOS(atomic_thread_fence(memory_order_acquire))
#define weft_atomic_fence_release() WEFT__CHAOS(atomic_thread_fence(memory_order_release))

/* Hint to the CPU that we are spinning. */
static inline void weft_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif /* WEFT_MODEL_CHECK */

#endif /* WEFT_PLATFORM_ATOMIC_H */
