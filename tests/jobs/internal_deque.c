/* internal_deque.c: the Chase-Lev deque on its own (includes the private jobs/deque.h):
 * LIFO for the owner, FIFO for thieves, growth, and one owner racing many thieves. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "jobs/deque.h"

TestSuite(deque, .timeout = 120);

static void *test_alloc(size_t size, size_t align, void *user) {
    (void)user;
    return aligned_alloc(align, (size + align - 1) & ~(align - 1));
}
static void test_free(void *p, size_t size, void *user) {
    (void)size;
    (void)user;
    free(p);
}
static const weft_allocator_t alloc = {test_alloc, test_free, NULL};

/* Elements are small integers disguised as pointers (never NULL). */
static void *item(uintptr_t i) { return (void *)(i + 1u); }
static uintptr_t index_of(void *p) { return (uintptr_t)p - 1u; }

Test(deque, owner_takes_newest_first_and_thieves_oldest_first) {
    weft__deque_t d;
    cr_assert(weft__deque_init(&d, 16, &alloc));
    cr_expect_null(weft__deque_take(&d));
    cr_expect_null(weft__deque_steal(&d));
    void *items[5];
    for (uintptr_t i = 0; i < 5; ++i) {
        items[i] = item(i);
    }
    cr_assert(weft__deque_reserve(&d, 5));
    weft__deque_push(&d, items, 5);
    cr_expect_not(weft__deque_is_empty(&d));
    cr_expect_eq(index_of(weft__deque_take(&d)), 4u);
    cr_expect_eq(index_of(weft__deque_steal(&d)), 0u);
    cr_expect_eq(index_of(weft__deque_steal(&d)), 1u);
    cr_expect_eq(index_of(weft__deque_take(&d)), 3u);
    cr_expect_eq(index_of(weft__deque_take(&d)), 2u);
    cr_expect_null(weft__deque_take(&d));
    cr_expect(weft__deque_is_empty(&d));
    weft__deque_fini(&d);
}

Test(deque, growing_keeps_every_element) {
    weft__deque_t d;
    cr_assert(weft__deque_init(&d, 16, &alloc));
    /* Mismatches are counted and asserted once: ctest runs Criterion with --full-stats,
     * which reports every passing assertion, so asserting per element would be slow. */
    unsigned bad = 0;
    for (uintptr_t i = 0; i < 10000; ++i) {
        void *x = item(i);
        bad += !weft__deque_reserve(&d, 1);
        weft__deque_push(&d, &x, 1);
        if (i % 3 == 0) { /* steal some from the top so the live range wraps */
            bad += index_of(weft__deque_steal(&d)) != i / 3;
        }
    }
    uintptr_t expect_top = 3334;
    for (uintptr_t i = 10000; i-- > expect_top;) {
        bad += index_of(weft__deque_take(&d)) != i;
    }
    cr_assert_eq(bad, 0u);
    cr_expect_null(weft__deque_take(&d));
    weft__deque_fini(&d);
}

enum { ITEMS = 200000, THIEVES = 4 };

typedef struct race {
    weft__deque_t d;
    atomic_uchar seen[ITEMS]; /* times each item was obtained */
    atomic_int owner_done;    /* the owner pushed everything */
    atomic_uint stolen;       /* items thieves got */
} race_t;

static void *thief(void *arg) {
    race_t *r = arg;
    for (;;) {
        void *x = weft__deque_steal(&r->d);
        if (x) {
            atomic_fetch_add(&r->seen[index_of(x)], 1u);
            atomic_fetch_add(&r->stolen, 1u);
        } else if (atomic_load(&r->owner_done) && weft__deque_is_empty(&r->d)) {
            return NULL;
        }
    }
}

Test(deque, one_owner_and_many_thieves_see_each_element_exactly_once) {
    static race_t r;
    cr_assert(weft__deque_init(&r.d, 16, &alloc)); /* small: forces growth under fire */
    for (int i = 0; i < ITEMS; ++i) {
        atomic_store(&r.seen[i], 0);
    }
    atomic_store(&r.owner_done, 0);
    atomic_store(&r.stolen, 0u);
    unsigned seed = (unsigned)time(NULL);
    printf("deque race seed: %u\n", seed);
    srand(seed);
    pthread_t t[THIEVES];
    for (int i = 0; i < THIEVES; ++i) {
        pthread_create(&t[i], NULL, thief, &r);
    }
    uintptr_t next = 0;
    unsigned taken = 0;
    while (next < ITEMS) {
        /* Push a random batch, then take a random number back. */
        uint32_t n = 1u + (uint32_t)(rand() % 8);
        void *batch[8];
        uint32_t k = 0;
        for (; k < n && next < ITEMS; ++k) {
            batch[k] = item(next++);
        }
        if (!weft__deque_reserve(&r.d, k)) {
            cr_assert_fail("reserve failed");
        }
        weft__deque_push(&r.d, batch, k);
        int takes = rand() % 6;
        for (int i = 0; i < takes; ++i) {
            void *x = weft__deque_take(&r.d);
            if (!x) {
                break;
            }
            atomic_fetch_add(&r.seen[index_of(x)], 1u);
            taken += 1;
        }
    }
    void *x;
    while ((x = weft__deque_take(&r.d)) != NULL) {
        atomic_fetch_add(&r.seen[index_of(x)], 1u);
        taken += 1;
    }
    atomic_store(&r.owner_done, 1);
    for (int i = 0; i < THIEVES; ++i) {
        pthread_join(t[i], NULL);
    }
    cr_expect_eq(taken + atomic_load(&r.stolen), (unsigned)ITEMS, "seed %u", seed);
    int first_bad = -1;
    for (int i = 0; i < ITEMS && first_bad < 0; ++i) {
        first_bad = atomic_load(&r.seen[i]) == 1u ? -1 : i;
    }
    cr_assert_eq(first_bad, -1, "item %d seen %u times (seed %u)", first_bad,
                 first_bad < 0 ? 1u : atomic_load(&r.seen[first_bad]), seed);
    weft__deque_fini(&r.d);
}
