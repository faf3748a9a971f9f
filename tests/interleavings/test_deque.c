/* test_deque.c: the Chase-Lev deque (jobs/deque.c) under the interleaving checker.
 *
 * Scenario: the owner fills its deque to 15 of its 16 slots and consumes 13 of them itself,
 * so two are live; two thieves start; the owner reserves room for 15 more (the buffer grows
 * while the thieves may be reading the old one, and only the two live slots are copied),
 * pushes one and takes one; each thief steals twice. Afterwards the owner drains the rest. Every element must be taken exactly once, and whoever takes one
 * must see the payload the owner wrote before pushing it (a plain write the checker
 * race-checks). The planted variants weaken one order of the protocol to relaxed and must
 * fail. */

#include "jobs/deque.h"
#include "mc.h"
#include "mc_platform.h"
#include "mc_test.h"

#define PREFILL 15
#define CONSUMED 13
#define LATER 1
#define ITEMS (PREFILL + LATER)

typedef struct item {
    uint32_t payload; /* written by the owner before the push */
} item_t;

typedef struct dq_scn {
    weft__deque_t d;
    item_t items[ITEMS];
    uint32_t got[3][ITEMS]; /* per thread: how often it took each item */
    int steals;             /* per thief */
} dq_scn_t;

static dq_scn_t dq;

static void took(int who, void *x) {
    if (!x) {
        return;
    }
    item_t *it = x;
    mc_check(it >= dq.items && it < dq.items + ITEMS, "an element that was never pushed");
    mc_plain_read(&it->payload, "item payload");
    mc_check(it->payload == (uint32_t)(it - dq.items) + 1u, "payload not visible");
    dq.got[who][it - dq.items]++;
}

static void thief(void *arg) {
    int who = (int)(uintptr_t)arg;
    for (int i = 0; i < dq.steals; ++i) {
        took(who, weft__deque_steal(&dq.d));
    }
}

static void push_items(int from, int n) {
    void *p[ITEMS];
    for (int i = 0; i < n; ++i) {
        dq.items[from + i].payload = (uint32_t)(from + i) + 1u;
        mc_plain_write(&dq.items[from + i].payload, "item payload");
        p[i] = &dq.items[from + i];
    }
    weft__deque_push(&dq.d, p, (uint32_t)n);
}

static void dq_main(void *arg) {
    (void)arg;
    memset(dq.got, 0, sizeof dq.got);
    mc_check(weft__deque_init(&dq.d, 16, &mc_allocator), "init");
    mc_name(&dq.d.top, "top");
    mc_name(&dq.d.bottom, "bottom");
    mc_name(&dq.d.buf, "buf");
    push_items(0, PREFILL);
    for (int i = 0; i < CONSUMED; ++i) {
        took(0, weft__deque_steal(&dq.d));
    }
    int a = mc_thread_start(thief, (void *)1);
    int b = mc_thread_start(thief, (void *)2);
    mc_check(weft__deque_reserve(&dq.d, 15), "reserve"); /* grows: 2 live + 15 > 16 */
    push_items(PREFILL, LATER);
    took(0, weft__deque_take(&dq.d));
    mc_thread_join(a);
    mc_thread_join(b);
    for (void *x; (x = weft__deque_take(&dq.d)) != NULL;) {
        took(0, x);
    }
    for (int i = 0; i < ITEMS; ++i) {
        uint32_t n = dq.got[0][i] + dq.got[1][i] + dq.got[2][i];
        mc_check(n == 1u, "item %d taken %u times (owner %u, thieves %u and %u)", i, n,
                 dq.got[0][i], dq.got[1][i], dq.got[2][i]);
    }
    weft__deque_fini(&dq.d);
}

static mc_result_t run(const char *name, const char *weaken, int steals) {
    dq.steals = steals;
    mc_options_t o = {
        .name = name, .preemptions = 2, .stale_reads = 1, .history = 3, .weaken = weaken};
    return mc_explore(&o, dq_main, NULL);
}

Test(deque, owner_and_two_thieves_across_a_grow_take_each_element_once) {
    mc_result_t r = run("deque: 1 owner + 2 thieves across a grow", NULL, 2);
    mc_assert_clean(r);
}

/* Planted: steal's seq_cst loads of top and bottom made relaxed. A thief may then see the
 * new bottom without the owner's writes before it. */
Test(deque, planted_relaxed_bottom_load_in_steal_is_caught) {
    mc_result_t r = run("deque planted: steal loads relaxed", "weft__deque_steal:load_seq_cst", 2);
    mc_assert_caught(r, "the weakened steal");
}

/* Planted: steal's acquire load of the buffer pointer made relaxed. A thief that sees the
 * grown buffer may read a slot before the owner's copy into it. */
Test(deque, planted_relaxed_buffer_load_in_steal_is_caught) {
    mc_result_t r = run("deque planted: buffer load relaxed", "weft__deque_steal:load_acquire", 2);
    mc_assert_caught(r, "the weakened buffer load");
}

/* Planted: take's seq_cst store/load pair made relaxed: owner and thief can both take the
 * last element. */
Test(deque, planted_relaxed_take_handshake_is_caught) {
    mc_result_t r = run("deque planted: take load relaxed", "weft__deque_take:load_seq_cst", 2);
    mc_assert_caught(r, "the weakened take");
}
