/* thread.c: pthread wrappers that abort on failure, the monotonic clock, the CPU count.
 *
 * DESIGN: nothing here is clever; the point is that the rest of jobs/ never sees an errno.
 * Thread naming uses pthread_setname_np, a GNU extension, hence _GNU_SOURCE below (the
 * library is otherwise compiled as strict C11). A name that the OS rejects is ignored:
 * names are a debugging aid, not a contract.
 *
 * Lock order: this file takes no locks of its own. */
#define _GNU_SOURCE 1

#include "thread.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Abort with the failing call's name and error: there is nothing to recover. */
static void check(int rc, const char *what) {
    if (rc != 0) {
        fprintf(stderr, "weft: %s failed: %s\n", what, strerror(rc));
        fflush(stderr);
        abort();
    }
}

/* ---- threads ------------------------------------------------------------- >>thread */

typedef struct thread_start {
    weft_thread_fn_t fn; /* the body */
    void *arg;           /* its argument */
    char name[16];       /* applied by the new thread to itself */
} thread_start_t;

static void *thread_main(void *p) {
    thread_start_t start = *(thread_start_t *)p;
    free(p);
    if (start.name[0] != '\0') {
        (void)pthread_setname_np(pthread_self(), start.name); /* best effort */
    }
    start.fn(start.arg);
    return NULL;
}

bool weft__thread_create(weft_thread_t *t, weft_thread_fn_t fn, void *arg, const char *name) {
    /* The start record is tiny and short-lived; it is the one allocation in jobs/ that does
     * not go through the instance allocator, because the new thread frees it itself. */
    thread_start_t *start = malloc(sizeof *start);
    if (!start) {
        return false;
    }
    start->fn = fn;
    start->arg = arg;
    start->name[0] = '\0';
    if (name) {
        strncpy(start->name, name, sizeof start->name - 1);
        start->name[sizeof start->name - 1] = '\0';
    }
    if (pthread_create(&t->handle, NULL, thread_main, start) != 0) {
        free(start);
        return false;
    }
    return true;
}

void weft__thread_join(weft_thread_t *t) { check(pthread_join(t->handle, NULL), "pthread_join"); }

void weft__thread_yield(void) { (void)sched_yield(); }

/* ---- mutex and condition variable ---------------------------------------- >>mutex */

void weft__mutex_init(weft_mutex_t *m) {
    check(pthread_mutex_init(&m->m, NULL), "pthread_mutex_init");
}
void weft__mutex_fini(weft_mutex_t *m) {
    check(pthread_mutex_destroy(&m->m), "pthread_mutex_destroy");
}
void weft__mutex_lock(weft_mutex_t *m) { check(pthread_mutex_lock(&m->m), "pthread_mutex_lock"); }
void weft__mutex_unlock(weft_mutex_t *m) {
    check(pthread_mutex_unlock(&m->m), "pthread_mutex_unlock");
}

void weft__cond_init(weft_cond_t *c) {
    pthread_condattr_t attr;
    check(pthread_condattr_init(&attr), "pthread_condattr_init");
    check(pthread_condattr_setclock(&attr, CLOCK_MONOTONIC), "pthread_condattr_setclock");
    check(pthread_cond_init(&c->c, &attr), "pthread_cond_init");
    check(pthread_condattr_destroy(&attr), "pthread_condattr_destroy");
}
void weft__cond_fini(weft_cond_t *c) { check(pthread_cond_destroy(&c->c), "pthread_cond_destroy"); }
void weft__cond_wait(weft_cond_t *c, weft_mutex_t *m) {
    check(pthread_cond_wait(&c->c, &m->m), "pthread_cond_wait");
}
bool weft__cond_timedwait(weft_cond_t *c, weft_mutex_t *m, uint64_t deadline_ns) {
    struct timespec ts = {(time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u)};
    int rc = pthread_cond_timedwait(&c->c, &m->m, &ts); /* the clock is CLOCK_MONOTONIC (init) */
    if (rc == ETIMEDOUT) {
        return false;
    }
    check(rc, "pthread_cond_timedwait");
    return true;
}
void weft__cond_signal(weft_cond_t *c) { check(pthread_cond_signal(&c->c), "pthread_cond_signal"); }
void weft__cond_broadcast(weft_cond_t *c) {
    check(pthread_cond_broadcast(&c->c), "pthread_cond_broadcast");
}

/* ---- clock and CPU count -------------------------------------------------- >>clock */

uint64_t weft__time_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
        abort(); /* CLOCK_MONOTONIC is mandatory on every platform we run on */
    }
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t weft__thread_hardware_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) {
        return 1;
    }
    return n > 4096 ? 4096u : (uint32_t)n;
}
