/* test_oom.c: every mutating call that runs out of memory returns WEFT_ENOMEM and leaves the
 * world unchanged.
 *
 * A fixed scenario of calls runs once with a healthy allocator (the reference), then once per
 * k with the allocator failing the k-th allocation (and, in a second pass, every allocation
 * from the k-th on until the failing call returns). Whenever a call fails with WEFT_ENOMEM, the
 * world hash, entity count and component counts must equal their values before the call; then
 * the allocator heals and the call is retried. Each run must end in the reference world. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ecs_fixture.h"

typedef struct scenario {
    weft_world_t *w;
    test_alloc_t *a;
    weft_component_t c[4];
    weft_instance_t inst[40];
    weft_group_t g;
    weft_query_t *q;
    weft_entity_t e[600];
    int ooms; /* WEFT_ENOMEM results seen */
} scenario_t;

static uint32_t counts(const scenario_t *s) {
    return weft_entity_count(s->w) * 7u + weft_component_rows(s->w, s->c[0]) * 3u +
           weft_component_rows(s->w, s->c[1]) + weft_component_rows(s->w, s->c[2]) * 11u +
           weft_component_rows(s->w, s->c[3]) * 13u;
}

/* Run one call: on WEFT_ENOMEM check that nothing changed, heal the allocator and retry. */
#define STEP(s, call)                                                                        \
    do {                                                                                     \
        uint64_t h_ = weft_world_hash((s)->w);                                               \
        uint32_t n_ = counts(s);                                                             \
        weft_result_t r_ = (call);                                                           \
        if (r_ == WEFT_ENOMEM) {                                                             \
            (s)->ooms++;                                                                     \
            cr_assert(eq(u64, weft_world_hash((s)->w), h_), "changed by failed: %s", #call); \
            cr_assert(eq(u32, counts(s), n_), "changed by failed: %s", #call);               \
            (s)->a->fail_at = 0;                                                             \
            r_ = (call);                                                                     \
        }                                                                                    \
        cr_assert(eq(int, r_, WEFT_OK), "%s -> %s", #call, weft_result_name(r_));            \
    } while (0)

static int by_x(weft_entity_t ea, const void *a, weft_entity_t eb, const void *b, void *u) {
    (void)ea;
    (void)eb;
    (void)u;
    float xa = ((const vec3_t *)a)->x, xb = ((const vec3_t *)b)->x;
    return (xa > xb) - (xa < xb);
}

static void run(scenario_t *s) {
    weft_world_t *w = s->w;
    weft_component_desc_t dp = {.name = "P", .size = sizeof(vec3_t)};
    weft_component_desc_t dv = {.name = "V", .size = sizeof(vec3_t)};
    weft_component_desc_t dt = {.name = "T", .size = 0};
    STEP(s, weft_component_register(w, &dp, &s->c[0]));
    STEP(s, weft_component_register(w, &dv, &s->c[1]));
    STEP(s, weft_component_register(w, &dt, &s->c[2]));
    weft_component_desc_t dm = {.name = "M", .size = 8, .flags = WEFT_COMPONENT_MULTI};
    STEP(s, weft_component_register(w, &dm, &s->c[3]));
    weft_group_desc_t gd = {.components = {s->c[0], s->c[1]}};
    STEP(s, weft_group_create(w, &gd, &s->g));
    weft_query_desc_t qd = {.terms = {{.component = s->c[0], .access = WEFT_ACCESS_READ},
                                      {.component = s->c[1], .access = WEFT_ACCESS_READ}}};
    STEP(s, weft_query_create(w, &qd, &s->q));
    STEP(s, weft_entity_create_n(w, 300, s->e));
    for (int i = 300; i < 600; i++) {
        STEP(s, weft_entity_create(w, &s->e[i]));
    }
    for (int i = 0; i < 600; i++) {
        STEP(s, weft_component_set(w, s->e[i], s->c[0], &(vec3_t){(float)(i * 7 % 600), 0, 0}));
        if (i % 2) {
            STEP(s, weft_component_add(w, s->e[i], s->c[1], NULL));
        }
        if (i % 3 == 0) {
            STEP(s, weft_component_add(w, s->e[i], s->c[2], NULL));
        }
    }
    for (int i = 0; i < 600; i += 4) {
        STEP(s, weft_component_remove(w, s->e[i + 1], s->c[1]));
    }
    for (int i = 0; i < 600; i += 5) {
        STEP(s, weft_entity_destroy(w, s->e[i]));
    }
    for (int i = 0; i < 40; i++) {
        STEP(s, weft_component_add_instance(w, s->e[i * 5 + 1], s->c[3], &s->inst[i], NULL));
    }
    for (int i = 0; i < 40; i += 3) {
        STEP(s, weft_instance_remove(w, s->inst[i]));
    }
    STEP(s, weft_component_sort(w, s->c[2], by_x, NULL));
    STEP(s, weft_entity_destroy_n(w, s->e + 100, 50));
    STEP(s, weft_component_reserve(w, s->c[2], 5000));
}

static uint64_t reference_hash(void) {
    test_alloc_t a = {0};
    scenario_t s = {.a = &a};
    s.w = test_world(&a);
    run(&s);
    uint64_t h = weft_world_hash(s.w);
    cr_assert(eq(int, s.ooms, 0));
    weft_world_destroy(s.w);
    return h;
}

static void sweep(int fail_after) {
    uint64_t want = reference_hash();
    size_t calls_total;
    {
        test_alloc_t a = {0};
        scenario_t s = {.a = &a};
        s.w = test_world(&a);
        size_t base = a.calls;
        run(&s);
        calls_total = a.calls - base;
        weft_world_destroy(s.w);
    }
    int failures_seen = 0;
    for (size_t k = 1; k <= calls_total; k++) {
        test_alloc_t a = {0};
        scenario_t s = {.a = &a};
        s.w = test_world(&a);
        a.fail_at = a.calls + k;
        a.fail_after = fail_after;
        run(&s);
        cr_assert(eq(u64, weft_world_hash(s.w), want), "k = %zu ends in another world", k);
        failures_seen += s.ooms;
        weft_world_destroy(s.w);
        cr_assert(eq(sz, a.live_bytes, 0), "k = %zu leaked", k);
    }
    cr_expect(eq(int, failures_seen, (int)calls_total), "every allocation was made to fail once");
}

TestSuite(oom, .timeout = 120);

Test(oom, failing_the_kth_allocation_leaves_the_world_unchanged) { sweep(0); }

Test(oom, failing_every_allocation_from_the_kth_leaves_the_world_unchanged) { sweep(1); }
