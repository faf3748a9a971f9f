/* ext_pool.h: a minimal engine-style thread pool (pthreads, one mutex and condition variable
 * over a ring of tasks), written here to stand for an engine's own job system: tests lend its
 * threads to weft through weft_executor_t. Header-only; each test file gets its own copy. */
#ifndef WEFT_TESTS_EXT_POOL_H
#define WEFT_TESTS_EXT_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "weft/jobs.h"

#define EXT_POOL_CAP 256u
#define EXT_POOL_MAX_THREADS 16u

typedef struct ext_task {
    void (*fn)(void *arg);
    void *arg;
} ext_task_t;

typedef struct ext_pool {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    ext_task_t ring[EXT_POOL_CAP]; /* guarded by lock */
    uint32_t head, count;          /* guarded by lock */
    uint32_t running;              /* tasks inside fn; guarded by lock */
    uint64_t submitted, ran;       /* guarded by lock */
    uint32_t max_outstanding;      /* most tasks queued or running at once; guarded by lock */
    uint32_t max_queued;           /* most tasks queued and not started; guarded by lock */
    bool stop;                     /* guarded by lock */
    uint32_t nthreads;
    pthread_t threads[EXT_POOL_MAX_THREADS];
} ext_pool_t;

/* weft_executor_t.submit: queue the task; never runs it here, never blocks on weft. */
static inline void ext_pool_submit(void (*fn)(void *arg), void *arg, void *user) {
    ext_pool_t *p = user;
    pthread_mutex_lock(&p->lock);
    if (p->count == EXT_POOL_CAP) {
        abort(); /* weft keeps at most thread_count tasks outstanding */
    }
    p->ring[(p->head + p->count) % EXT_POOL_CAP] = (ext_task_t){fn, arg};
    p->count += 1;
    p->submitted += 1;
    uint32_t outstanding = p->count + p->running;
    if (outstanding > p->max_outstanding) {
        p->max_outstanding = outstanding;
    }
    if (p->count > p->max_queued) {
        p->max_queued = p->count;
    }
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

static inline void *ext_pool_thread(void *arg) {
    ext_pool_t *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->count == 0 && !p->stop) {
            pthread_cond_wait(&p->cond, &p->lock);
        }
        if (p->count == 0) {
            break; /* stopping and nothing queued */
        }
        ext_task_t t = p->ring[p->head];
        p->head = (p->head + 1) % EXT_POOL_CAP;
        p->count -= 1;
        p->running += 1;
        pthread_mutex_unlock(&p->lock);
        t.fn(t.arg);
        pthread_mutex_lock(&p->lock);
        p->running -= 1;
        p->ran += 1;
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Start n threads (n <= EXT_POOL_MAX_THREADS); false if a thread could not start. */
static inline bool ext_pool_start(ext_pool_t *p, uint32_t n) {
    *p = (ext_pool_t){.nthreads = 0};
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    for (uint32_t i = 0; i < n; i++) {
        if (pthread_create(&p->threads[i], NULL, ext_pool_thread, p) != 0) {
            return false;
        }
        p->nthreads += 1;
    }
    return true;
}

/* Run what is queued, then join every thread. */
static inline void ext_pool_stop(ext_pool_t *p) {
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    for (uint32_t i = 0; i < p->nthreads; i++) {
        pthread_join(p->threads[i], NULL);
    }
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
}

/* The executor that lends all of the pool's threads to weft. */
static inline weft_executor_t ext_pool_executor(ext_pool_t *p) {
    return (weft_executor_t){.thread_count = p->nthreads, .submit = ext_pool_submit, .user = p};
}

#endif /* WEFT_TESTS_EXT_POOL_H */
