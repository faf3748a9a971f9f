/* mc_platform.c: jobs/platform/thread.h for the WEFT_MODEL_CHECK build. Threads, mutexes
 * and condition variables are the checker's modelled ones (mc.c); the clock is a counter
 * per thread that moves 20 µs per reading, so a spin of desc.spin_us ends after a few polls, the same
 * number in every execution.
 *
 * DESIGN: this file replaces jobs/platform/thread.c in the model-checked copy of the job
 * system (tests/CMakeLists.txt, weft_mc_jobs); the pthread types in thread.h are only
 * storage whose address names the object. */
#include <stdlib.h>

#include "jobs/platform/atomic.h"
#include "jobs/platform/thread.h"
#include "mc.h"
#include "mc_platform.h"

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
void weft__cond_signal(weft_cond_t *c) { mc_cond_signal(c); }
void weft__cond_broadcast(weft_cond_t *c) { mc_cond_broadcast(c); }

/* One clock per modelled thread: a reading is then no shared state, so two threads' steps
 * that read the clock still commute (the sleep sets in mc.c rely on it). The job system
 * only measures its own spins' durations with it. */
static uint64_t fake_now[MC_MAX_THREADS];

uint64_t weft__time_ns(void) {
    /* Only the running modelled thread reads it, under the checker's turn-taking. */
    int t = mc_thread_id();
    t = t >= 0 && t < MC_MAX_THREADS ? t : 0;
    fake_now[t] += 20000u;
    return fake_now[t];
}

uint32_t weft__thread_hardware_count(void) { return 8; }

static void *mc_alloc(size_t size, size_t align, void *user) {
    (void)user;
    size_t rounded = (size + align - 1) / align * align;
    void *p = aligned_alloc(align, rounded ? rounded : align);
    if (p) {
        mc_unretire(p, size);
    }
    return p;
}

static void mc_free(void *p, size_t size, void *user) {
    (void)user;
    mc_forget(p, size);
    mc_retire(p, size, "memory the job system freed");
    free(p);
}

const weft_allocator_t mc_allocator = {mc_alloc, mc_free, NULL};
