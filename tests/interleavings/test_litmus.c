/* test_litmus.c: the checker's self-tests. Classic litmus tests whose weak outcome C11
 * allows with relaxed (or release/acquire) orders and forbids with stronger ones: the checker
 * must find the outcome in the first case and explore everything without finding it in the
 * second. Plus a lost wake-up on a condition variable (found as a deadlock) and a data race
 * on plain memory. */

#include "jobs/platform/atomic.h"
#include "jobs/platform/thread.h"
#include "mc.h"
#include "mc_test.h"

static mc_options_t opts(const char *name) {
    return (mc_options_t){.name = name, .preemptions = 3, .stale_reads = 2, .history = 4};
}

/* ---- message passing ---------------------------------------------------------------- */

typedef struct mp {
    weft_atomic_u32 data, flag;
    uint32_t plain;
    bool strong;
    bool use_plain;
} mp_t;

static void mp_writer(void *p) {
    mp_t *m = p;
    if (m->use_plain) {
        m->plain = 42;
        mc_plain_write(&m->plain, "payload");
    } else {
        weft_atomic_store_relaxed(&m->data, 1u);
    }
    if (m->strong) {
        weft_atomic_store_release(&m->flag, 1u);
    } else {
        weft_atomic_store_relaxed(&m->flag, 1u);
    }
}

static void mp_reader(void *p) {
    mp_t *m = p;
    uint32_t f =
        m->strong ? weft_atomic_load_acquire(&m->flag) : weft_atomic_load_relaxed(&m->flag);
    if (f != 1u) {
        return;
    }
    if (m->use_plain) {
        mc_plain_read(&m->plain, "payload");
        mc_check(m->plain == 42, "payload");
    } else {
        uint32_t d = weft_atomic_load_relaxed(&m->data);
        mc_check(d == 1u, "saw the flag but not the data");
    }
}

static mp_t mp_state;

static void mp_main(void *arg) {
    mp_t *m = &mp_state;
    m->strong = ((uintptr_t)arg & 1u) != 0;
    m->use_plain = ((uintptr_t)arg & 2u) != 0;
    m->plain = 0;
    weft_atomic_init(&m->data, 0u);
    weft_atomic_init(&m->flag, 0u);
    mc_name(&m->data, "data");
    mc_name(&m->flag, "flag");
    int a = mc_thread_start(mp_writer, m);
    int b = mc_thread_start(mp_reader, m);
    mc_thread_join(a);
    mc_thread_join(b);
}

Test(litmus, message_passing_relaxed_finds_the_weak_outcome) {
    mc_options_t o = opts("MP relaxed");
    mc_result_t r = mc_explore(&o, mp_main, (void *)0);
    cr_assert(r.failed, "relaxed message passing must show the stale data");
    cr_assert(strstr(r.message, "saw the flag but not the data") != NULL, "%s", r.message);
}

Test(litmus, message_passing_release_acquire_is_exhaustively_clean) {
    mc_options_t o = opts("MP release/acquire");
    mc_result_t r = mc_explore(&o, mp_main, (void *)1);
    mc_assert_clean(r);
    cr_assert_gt(r.executions, 3u);
}

Test(litmus, plain_payload_behind_a_relaxed_flag_is_a_data_race) {
    mc_options_t o = opts("MP plain relaxed");
    mc_result_t r = mc_explore(&o, mp_main, (void *)2);
    cr_assert(r.failed);
    cr_assert(strstr(r.message, "data race on payload") != NULL, "%s", r.message);
}

Test(litmus, plain_payload_behind_release_acquire_is_race_free) {
    mc_options_t o = opts("MP plain release/acquire");
    mc_result_t r = mc_explore(&o, mp_main, (void *)3);
    mc_assert_clean(r);
}

/* ---- store buffering ------------------------------------------------------------------ */

typedef struct sb {
    weft_atomic_u32 x, y;
    uint32_t r1, r2;
    int order; /* 0 relaxed, 1 release/acquire, 2 seq_cst */
} sb_t;

static sb_t sb_state;

static void sb_store(sb_t *s, weft_atomic_u32 *p) {
    if (s->order == 2) {
        weft_atomic_store_seq_cst(p, 1u);
    } else if (s->order == 1) {
        weft_atomic_store_release(p, 1u);
    } else {
        weft_atomic_store_relaxed(p, 1u);
    }
}

static uint32_t sb_load(sb_t *s, weft_atomic_u32 *p) {
    if (s->order == 2) {
        return weft_atomic_load_seq_cst(p);
    }
    if (s->order == 1) {
        return weft_atomic_load_acquire(p);
    }
    return weft_atomic_load_relaxed(p);
}

static void sb_a(void *p) {
    sb_t *s = p;
    sb_store(s, &s->x);
    s->r1 = sb_load(s, &s->y);
}

static void sb_b(void *p) {
    sb_t *s = p;
    sb_store(s, &s->y);
    s->r2 = sb_load(s, &s->x);
}

static void sb_main(void *arg) {
    sb_t *s = &sb_state;
    s->order = (int)(uintptr_t)arg;
    weft_atomic_init(&s->x, 0u);
    weft_atomic_init(&s->y, 0u);
    mc_name(&s->x, "x");
    mc_name(&s->y, "y");
    int a = mc_thread_start(sb_a, s);
    int b = mc_thread_start(sb_b, s);
    mc_thread_join(a);
    mc_thread_join(b);
    mc_check(s->r1 == 1u || s->r2 == 1u, "both loads missed the other thread's store");
}

Test(litmus, store_buffering_relaxed_finds_both_zero) {
    mc_options_t o = opts("SB relaxed");
    mc_result_t r = mc_explore(&o, sb_main, (void *)0);
    cr_assert(r.failed);
}

Test(litmus, store_buffering_release_acquire_finds_both_zero) {
    mc_options_t o = opts("SB release/acquire");
    mc_result_t r = mc_explore(&o, sb_main, (void *)1);
    cr_assert(r.failed, "release/acquire does not order a store before a later load");
}

Test(litmus, store_buffering_seq_cst_is_exhaustively_clean) {
    mc_options_t o = opts("SB seq_cst");
    mc_result_t r = mc_explore(&o, sb_main, (void *)2);
    mc_assert_clean(r);
}

/* ---- condition variable: a lost wake-up is a deadlock -------------------------------- */

typedef struct cv {
    weft_mutex_t m;
    weft_cond_t c;
    weft_atomic_u32 flag;
    bool locked_publish;
} cv_t;

static cv_t cv_state;

static void cv_waiter(void *p) {
    cv_t *s = p;
    weft__mutex_lock(&s->m);
    while (weft_atomic_load_relaxed(&s->flag) == 0u) {
        weft__cond_wait(&s->c, &s->m);
    }
    weft__mutex_unlock(&s->m);
}

static void cv_publisher(void *p) {
    cv_t *s = p;
    if (s->locked_publish) {
        weft__mutex_lock(&s->m);
    }
    weft_atomic_store_relaxed(&s->flag, 1u);
    if (s->locked_publish) {
        weft__mutex_unlock(&s->m);
    }
    weft__cond_signal(&s->c);
}

static void cv_main(void *arg) {
    cv_t *s = &cv_state;
    s->locked_publish = arg != NULL;
    weft__mutex_init(&s->m);
    weft__cond_init(&s->c);
    weft_atomic_init(&s->flag, 0u);
    int a = mc_thread_start(cv_waiter, s);
    int b = mc_thread_start(cv_publisher, s);
    mc_thread_join(a);
    mc_thread_join(b);
}

Test(litmus, condition_publish_outside_the_lock_loses_the_wake_up) {
    mc_options_t o = opts("cond unlocked publish");
    mc_result_t r = mc_explore(&o, cv_main, NULL);
    cr_assert(r.failed);
    cr_assert(strstr(r.message, "deadlock") != NULL, "%s", r.message);
}

Test(litmus, condition_publish_under_the_lock_never_deadlocks) {
    mc_options_t o = opts("cond locked publish");
    mc_result_t r = mc_explore(&o, cv_main, (void *)1);
    mc_assert_clean(r);
}
