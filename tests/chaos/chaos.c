/* chaos.c: the WEFT_CHAOS build's perturbation at every synchronisation point.
 *
 * DESIGN: jobs/platform/atomic.h calls weft__chaos_point() before every atomic operation and
 * fence of the job system when compiled with WEFT_CHAOS (tests only; the library never is).
 * Each thread draws from its own xorshift stream, seeded from the run's seed and the order
 * in which threads first reach a point, and now and then yields, spins a little or sleeps a
 * few microseconds, so the stress suites reach interleavings a quiet 2-core machine rarely
 * produces. The seed comes from WEFT_CHAOS_SEED (decimal) or the clock, and is printed once
 * per process, so a failing run's perturbation streams can be requested again (the OS
 * scheduler still adds its own timing). Rates: 1 in 64 points perturbs; of those, half
 * yield, 3/8 spin up to 256 pauses and 1/8 sleep 1-20 µs. */
#define _GNU_SOURCE 1

#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "jobs/platform/atomic.h"

static atomic_uint_fast64_t seed_state; /* 0: not yet chosen */
static atomic_uint thread_order;
static _Thread_local uint64_t rng; /* 0: this thread has no stream yet */

static uint64_t splitmix(uint64_t x) {
    x += 0x9E3779B97F4A7C15u;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
    return x ^ (x >> 31);
}

static uint64_t run_seed(void) {
    uint64_t s = atomic_load_explicit(&seed_state, memory_order_acquire);
    if (s != 0) {
        return s;
    }
    const char *env = getenv("WEFT_CHAOS_SEED");
    uint64_t want = 0;
    if (env && *env) {
        want = strtoull(env, NULL, 10);
    }
    if (want == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        want = splitmix((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32)) | 1u;
    }
    uint_fast64_t expected = 0;
    if (atomic_compare_exchange_strong(&seed_state, &expected, want)) {
        fprintf(stderr, "weft chaos: seed %" PRIu64 " (replay with WEFT_CHAOS_SEED=%" PRIu64 ")\n",
                want, want);
        return want;
    }
    return expected;
}

void weft__chaos_point(void) {
    if (rng == 0) {
        unsigned k = atomic_fetch_add_explicit(&thread_order, 1u, memory_order_relaxed);
        rng = splitmix(run_seed() + k) | 1u;
    }
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    uint64_t r = rng;
    if ((r & 63u) != 0) {
        return;
    }
    switch ((r >> 6) & 7u) {
    case 0:
    case 1:
    case 2:
    case 3:
        sched_yield();
        break;
    case 4:
    case 5:
    case 6: {
        uint32_t n = (uint32_t)(r >> 9) & 255u;
        for (uint32_t i = 0; i < n; ++i) {
            weft_cpu_relax();
        }
        break;
    }
    default: {
        struct timespec ts = {0, (long)(1000u + ((r >> 9) % 19000u))};
        nanosleep(&ts, NULL);
        break;
    }
    }
}
