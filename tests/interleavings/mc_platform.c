/* mc_platform.c: jobs/platform/thread.h for the WEFT_MODEL_CHECK build. Threads, mutexes
 * and condition variables are the checker's modelled ones (mc.c); the clock is a counter
 * per thread that moves 20 µs per reading, so a spin of desc.spin_us ends after a few polls, the same
 * number in every execution.
 *
 * DESIGN: this file replaces jobs/platform/thread.c in the model-checked copy of the job
 * system (tests/CMakeLists.txt, weft_mc_jobs); the pthread types in thread.h are only
 * storage whose address names the object. */
#define _GNU_SOURCE 1 /* MAP_ANONYMOUS */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "jobs/platform/atomic.h"
#include "jobs/platform/thread.h"
#include "mc.h"
#include "mc_platform.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MC_PLATFORM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(MC_PLATFORM_ASAN)
#include <sanitizer/asan_interface.h>
#define MC_POISON(p, n) __asan_poison_memory_region((p), (n))
#define MC_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define MC_POISON(p, n) ((void)(p), (void)(n))
#define MC_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

typedef struct start_rec {
    weft_thread_fn_t fn;
    void *arg;
} start_rec_t;

static void run_start(void *p) {
    start_rec_t s = *(start_rec_t *)p;
    free(p);
    s.fn(s.arg);
}

bool weft__thread_create(weft_thread_t *t, weft_thread_fn_t fn, void *arg, const char *name) {
    (void)name;
    start_rec_t *s = malloc(sizeof *s);
    if (!s) {
        return false;
    }
    s->fn = fn;
    s->arg = arg;
    int id = mc_thread_start(run_start, s);
    /* the handle only has to name the modelled thread for join */
    t->handle = (pthread_t)(uintptr_t)id;
    return true;
}

void weft__thread_join(weft_thread_t *t) { mc_thread_join((int)(uintptr_t)t->handle); }

void weft__thread_yield(void) { weft_cpu_relax(); }

void weft__mutex_init(weft_mutex_t *m) { mc_mutex_init(m); }
void weft__mutex_fini(weft_mutex_t *m) { (void)m; }
void weft__mutex_lock(weft_mutex_t *m) { mc_mutex_lock(m); }
void weft__mutex_unlock(weft_mutex_t *m) { mc_mutex_unlock(m); }

void weft__cond_init(weft_cond_t *c) { (void)c; }
void weft__cond_fini(weft_cond_t *c) { (void)c; }
void weft__cond_wait(weft_cond_t *c, weft_mutex_t *m) { mc_cond_wait(c, m); }
/* The checker chooses: signalled (as weft__cond_wait: a real timed wait that is never signalled
 * times out instead, but a wake-up the protocol loses blocks an untimed waiter, so the
 * deadlock it shows is a real bug) or timed out, the clock then at the deadline (below). */
static uint64_t fake_now[MC_MAX_THREADS];

bool weft__cond_timedwait(weft_cond_t *c, weft_mutex_t *m, uint64_t deadline_ns) {
    if (mc_choose(2) == 0) {
        mc_cond_wait(c, m);
        return true;
    }
    mc_mutex_unlock(m);
    mc_mutex_lock(m);
    int t = mc_thread_id();
    t = t >= 0 && t < MC_MAX_THREADS ? t : 0;
    fake_now[t] = fake_now[t] > deadline_ns ? fake_now[t] : deadline_ns;
    return false;
}
void weft__cond_signal(weft_cond_t *c) { mc_cond_signal(c); }
void weft__cond_broadcast(weft_cond_t *c) { mc_cond_broadcast(c); }

/* One clock per modelled thread (fake_now, above): a reading is then no shared state, so two
 * threads' steps that read the clock still commute (the sleep sets in mc.c rely on it). The
 * job system measures its own spins' durations with it, and a worker's timed wait compares
 * it with a predicted frame start; every execution starts it at 0 (mc_arena_reset). */

uint64_t weft__time_ns(void) {
    /* Only the running modelled thread reads it, under the checker's turn-taking. */
    int t = mc_thread_id();
    t = t >= 0 && t < MC_MAX_THREADS ? t : 0;
    fake_now[t] += 20000u;
    return fake_now[t];
}

uint32_t weft__thread_hardware_count(void) { return 8; }

/* The job system's memory comes from an arena that every execution starts empty, so an
 * object's address depends only on the execution's choices: the sleep sets in mc.c compare
 * the addresses one execution touched with those of its siblings, which must therefore
 * name the same objects. A block is never handed out twice in one execution, so a freed
 * block stays retired; AddressSanitizer sees the gaps between blocks and every freed block
 * as poisoned. */
#define ARENA_SIZE (16u << 20)
#define ARENA_GAP 64u

static unsigned char *arena;
static size_t arena_used;

void mc_arena_reset(void) {
    if (!arena) {
        arena = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (arena == MAP_FAILED) {
            perror("mc: arena");
            abort();
        }
        MC_POISON(arena, ARENA_SIZE);
    }
    MC_POISON(arena, arena_used); /* the rest was never handed out */
    arena_used = 0;
    memset(fake_now, 0, sizeof fake_now); /* a new execution: clocks start over too */
}

static void *mc_alloc(size_t size, size_t align, void *user) {
    (void)user;
    if (!arena) {
        mc_arena_reset();
    }
    size_t at = (arena_used + ARENA_GAP + align - 1) / align * align;
    if (at + size > ARENA_SIZE) {
        return NULL;
    }
    arena_used = at + size;
    void *p = arena + at;
    MC_UNPOISON(p, size);
    return p;
}

static void mc_free(void *p, size_t size, void *user) {
    (void)user;
    mc_retire(p, size, "memory the job system freed");
    MC_POISON(p, size);
}

const weft_allocator_t mc_allocator = {mc_alloc, mc_free, NULL};
