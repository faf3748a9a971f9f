/* fault_alloc.h: a counting, leak-tracking, fault-injecting allocator hook for tests.
 *
 * DESIGN
 * wt_fault_allocator() returns a weft_allocator_t whose alloc/free go to the C library with a
 * small header in front of every block (magic, size, alignment). That lets the allocator
 * count calls, track live blocks and bytes (a leak check that does not depend on
 * LeakSanitizer), catch frees with the wrong size or of foreign/freed pointers, and fail on
 * purpose: arm it with wt_fault_arm(fa, k, n) and allocations k .. k+n-1 (1-based, counted
 * from the last wt_fault_reset) return NULL.
 *
 * Thread: the hook may be called from any thread (command buffers grow on workers), so the
 * counters are C11 _Atomic objects (plain `++` on them is an atomic read-modify-write; no
 * header needed). Arm and reset only while no other thread uses the allocator. Which
 * allocation is "the k-th" is deterministic only when the caller's allocation order is, e.g.
 * with WEFT_EXECUTION_INLINE. */
#ifndef WEFT_TESTS_FAULT_ALLOC_H
#define WEFT_TESTS_FAULT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/base.h"

#if defined(__STDC_NO_ATOMICS__)
#error "fault_alloc needs C11 _Atomic"
#endif

typedef struct wt_fault_alloc {
    _Atomic uint64_t calls;      /* allocations attempted since the last reset */
    _Atomic uint64_t failures;   /* allocations failed on purpose since the last reset */
    _Atomic uint64_t frees;      /* frees of live blocks since the last reset */
    _Atomic int64_t live_blocks; /* blocks allocated and not yet freed */
    _Atomic int64_t live_bytes;  /* bytes (as requested) allocated and not yet freed */
    _Atomic int64_t peak_bytes;  /* high-water of live_bytes */
    _Atomic uint64_t bad_frees;  /* frees with a wrong size, a foreign or a freed pointer */
    uint64_t fail_at;            /* 0: never fail; k: the k-th allocation fails */
    uint64_t fail_count;         /* allocations failing from fail_at on (0 counts as 1);
                                     UINT64_MAX: every allocation from fail_at on fails */
    uint32_t fail_one_in;        /* 0: off; n: besides fail_at, each allocation fails with
                                     probability 1/n (a hash of its number and fail_seed) */
    uint64_t fail_seed;          /* seeds fail_one_in */
    bool quiet;                  /* true: do not print bad frees to stderr */
} wt_fault_alloc_t;

/* Zero every counter and disarm. Thread: no concurrent use of `fa`. */
void wt_fault_init(wt_fault_alloc_t *fa);

/* The hook to put in a world/jobs desc or a weft_membuf_t; user points at `fa`, which must
 * outlive every block allocated through it. */
weft_allocator_t wt_fault_allocator(wt_fault_alloc_t *fa);

/* Fail allocations k .. k+n-1 counted from now on (k >= 1; n 0 means 1); k 0 disarms.
 * Resets `calls` and `failures` (not the live counters). Thread: no concurrent use. */
void wt_fault_arm(wt_fault_alloc_t *fa, uint64_t k, uint64_t n);

/* Fail each allocation with probability 1/one_in (0: off), chosen by a hash of the
 * allocation's number and `seed`; for threaded runs, where "the k-th allocation" is not
 * reproducible. Resets `calls` and `failures`. Thread: no concurrent use. */
void wt_fault_arm_random(wt_fault_alloc_t *fa, uint32_t one_in, uint64_t seed);

/* Snapshot readers (atomic loads). */
uint64_t wt_fault_calls(const wt_fault_alloc_t *fa);
uint64_t wt_fault_failures(const wt_fault_alloc_t *fa);
int64_t wt_fault_live_bytes(const wt_fault_alloc_t *fa);
int64_t wt_fault_live_blocks(const wt_fault_alloc_t *fa);
uint64_t wt_fault_bad_frees(const wt_fault_alloc_t *fa);

#endif /* WEFT_TESTS_FAULT_ALLOC_H */
