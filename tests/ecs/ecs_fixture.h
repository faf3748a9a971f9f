/* ecs_fixture.h: shared fixtures of the ECS core tests — a counting (and optionally failing)
 * allocator, a world per test, and the usual Position/Velocity/Mass components. */
#ifndef WEFT_TESTS_ECS_FIXTURE_H
#define WEFT_TESTS_ECS_FIXTURE_H

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "weft.h"

typedef struct vec3 {
    float x, y, z;
} vec3_t;

/* Counting allocator: tracks live bytes and allocations; fails the fail_at-th allocation
 * (1-based) and every later one when fail_after is set, or only that one otherwise. The hook
 * contract (weft/base.h) lets any thread that allocates for the world call it (a world with
 * workers allocates job records from them), so the counters are updated under a lock. */
typedef struct test_alloc {
    size_t live_bytes;  /* bytes currently allocated */
    size_t live_blocks; /* blocks currently allocated */
    size_t calls;       /* allocation calls so far */
    size_t fail_at;     /* 0: never fail */
    int fail_after;     /* non-zero: fail every call from fail_at on */
} test_alloc_t;

static pthread_mutex_t test_alloc_lock = PTHREAD_MUTEX_INITIALIZER;

static inline void *test_alloc_fn(size_t size, size_t align, void *user) {
    test_alloc_t *a = user;
    pthread_mutex_lock(&test_alloc_lock);
    size_t call = ++a->calls;
    bool fail = a->fail_at != 0 && (call == a->fail_at || (a->fail_after && call > a->fail_at));
    pthread_mutex_unlock(&test_alloc_lock);
    if (fail) {
        return NULL;
    }
    if (align < sizeof(void *)) {
        align = sizeof(void *);
    }
    void *p = NULL;
    size_t rounded = (size + align - 1) & ~(align - 1);
    p = aligned_alloc(align, rounded ? rounded : align);
    if (p != NULL) {
        pthread_mutex_lock(&test_alloc_lock);
        a->live_bytes += size;
        a->live_blocks++;
        pthread_mutex_unlock(&test_alloc_lock);
    }
    return p;
}

static inline void test_free_fn(void *p, size_t size, void *user) {
    test_alloc_t *a = user;
    pthread_mutex_lock(&test_alloc_lock);
    a->live_bytes -= size;
    a->live_blocks--;
    pthread_mutex_unlock(&test_alloc_lock);
    free(p);
}

static inline weft_allocator_t test_allocator(test_alloc_t *a) {
    return (weft_allocator_t){.alloc = test_alloc_fn, .free = test_free_fn, .user = a};
}

/* A logger that drops everything: tests provoke failures on purpose and check the codes. */
static inline void test_quiet_log(weft_log_level_t level, weft_result_t code, const char *msg,
                                  const char *file, int line, void *user) {
    (void)level, (void)code, (void)msg, (void)file, (void)line, (void)user;
}

/* Create a world in inline execution mode with the counting allocator and a quiet logger. */
static inline weft_world_t *test_world(test_alloc_t *a) {
    weft_world_t *w = NULL;
    weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE,
                           .worker_count = 1,
                           .allocator = test_allocator(a),
                           .logger = {.fn = test_quiet_log}};
    if (weft_world_create(&d, &w) != WEFT_OK) {
        return NULL;
    }
    return w;
}

static inline weft_component_t test_register(weft_world_t *w, const char *name, size_t size) {
    weft_component_t c = {0};
    weft_component_desc_t d = {.name = name, .size = size};
    (void)weft_component_register(w, &d, &c);
    return c;
}

static inline weft_entity_t test_entity(weft_world_t *w) {
    weft_entity_t e = 0;
    (void)weft_entity_create(w, &e);
    return e;
}

#endif /* WEFT_TESTS_ECS_FIXTURE_H */
