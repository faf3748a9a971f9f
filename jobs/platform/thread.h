/* thread.h: the thin wrappers over pthreads — threads, mutexes, condition variables — plus a
 * monotonic clock and the hardware thread count (private to the build; not installed).
 *
 * DESIGN: every wrapper aborts if the OS call fails (a failed lock or unlock leaves nothing
 * to recover, as in libuv), except thread creation, which returns false so that
 * weft_jobs_create can report WEFT_ETHREAD and undo what it built. Only this file and
 * thread.c include <pthread.h>; the types are plain structs so callers can embed them. */
#ifndef WEFT_PLATFORM_THREAD_H
#define WEFT_PLATFORM_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct weft_thread {
    pthread_t handle; /* valid between a successful create and join */
} weft_thread_t;

typedef struct weft_mutex {
    pthread_mutex_t m; /* the OS mutex */
} weft_mutex_t;

typedef struct weft_cond {
    pthread_cond_t c; /* the OS condition variable (CLOCK_MONOTONIC for timed waits) */
} weft_cond_t;

typedef void (*weft_thread_fn_t)(void *arg);

/* Start `fn(arg)` on a new thread named `name` (at most 15 characters are kept by Linux).
 * Returns false if the OS refuses (nothing was started). Thread: any. */
bool weft__thread_create(weft_thread_t *t, weft_thread_fn_t fn, void *arg, const char *name);

/* Wait for `t` to finish. Aborts on failure. */
void weft__thread_join(weft_thread_t *t);

/* Initialiser for a weft_mutex_t of static storage duration: default attributes, as
 * weft__mutex_init gives; such a mutex needs no init or fini call. */
#define WEFT__MUTEX_INIT \
    { PTHREAD_MUTEX_INITIALIZER }

void weft__mutex_init(weft_mutex_t *m);
void weft__mutex_fini(weft_mutex_t *m);
void weft__mutex_lock(weft_mutex_t *m);
void weft__mutex_unlock(weft_mutex_t *m);

void weft__cond_init(weft_cond_t *c);
void weft__cond_fini(weft_cond_t *c);
/* Atomically release `m`, sleep until signalled (or spuriously), reacquire `m`. */
void weft__cond_wait(weft_cond_t *c, weft_mutex_t *m);
/* As weft__cond_wait, but returns false once CLOCK_MONOTONIC (weft__time_ns) reaches
 * `deadline_ns` without a signal; true when signalled (or spuriously). */
bool weft__cond_timedwait(weft_cond_t *c, weft_mutex_t *m, uint64_t deadline_ns);
void weft__cond_signal(weft_cond_t *c);
void weft__cond_broadcast(weft_cond_t *c);

/* Monotonic time in nanoseconds (CLOCK_MONOTONIC). Thread: any. */
uint64_t weft__time_ns(void);

/* Number of online hardware threads (at least 1). Thread: any. */
uint32_t weft__thread_hardware_count(void);

/* Give up the rest of the time slice (sched_yield). */
void weft__thread_yield(void);

#endif /* WEFT_PLATFORM_THREAD_H */
