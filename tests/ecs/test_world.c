/* test_world.c: world lifecycle, desc handling, the world hash and statistics. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <signal.h>

#include "ecs_fixture.h"

TestSuite(world, .timeout = 20);

Test(world, create_with_null_desc_uses_defaults) {
    weft_world_t *w = NULL;
    cr_assert(eq(int, weft_world_create(NULL, &w), WEFT_OK));
    cr_assert(w != NULL);
    weft_entity_t e;
    cr_expect(eq(int, weft_entity_create(w, &e), WEFT_OK));
    weft_world_destroy(w);
    weft_world_destroy(NULL);
}

Test(world, desc_resolved_fills_every_default) {
    weft_world_desc_t d = weft_world_desc_resolved(NULL);
    cr_expect(ge(u32, d.worker_count, 1));
    cr_expect(eq(u32, d.entity_capacity, 4096));
    cr_expect(eq(u32, d.entity_limit, 1u << 28));
    weft_world_desc_t mine = {.entity_capacity = 10, .entity_limit = 5};
    cr_expect(eq(u32, weft_world_desc_resolved(&mine).entity_capacity, 5));
}

Test(world, every_heap_byte_goes_through_the_allocator_hook) {
    test_alloc_t a = {0};
    weft_world_t *w = test_world(&a);
    cr_assert(w != NULL);
    weft_component_t p = test_register(w, "P", 12);
    for (int i = 0; i < 5000; i++) {
        weft_entity_t e = test_entity(w);
        weft_component_add(w, e, p, NULL);
    }
    weft_world_stats_t st;
    weft_world_stats(w, &st);
    cr_expect(eq(sz, st.heap_bytes, a.live_bytes), "the world's count matches the hook's");
    cr_expect(st.vmem_bytes > 0, "st.vmem_bytes > 0 (%zu vs %zu)", (size_t)(st.vmem_bytes),
              (size_t)(0));
    cr_expect(eq(u32, st.entity_count, 5000));
    cr_expect(eq(u32, st.entity_slots, 5001));
    cr_expect(eq(u32, st.component_count, 1));
    weft_world_destroy(w);
    cr_expect(eq(sz, a.live_bytes, 0));
    cr_expect(eq(sz, a.live_blocks, 0));
}

/* Build the same world through the given call sequence. */
static weft_world_t *build(test_alloc_t *a, int variant) {
    weft_world_t *w = test_world(a);
    weft_component_t p = test_register(w, "P", sizeof(vec3_t));
    weft_component_t v = test_register(w, "V", sizeof(vec3_t));
    weft_entity_t es[100];
    weft_entity_create_n(w, 100, es);
    for (int i = 0; i < 100; i++) {
        weft_component_set(w, es[i], p, &(vec3_t){(float)i, 1, 2});
        if (i % 3 == 0) {
            weft_component_set(w, es[i], v, &(vec3_t){0, (float)i, 0});
        }
    }
    for (int i = 0; i < 100; i += 7) {
        weft_entity_destroy(w, es[i]);
    }
    if (variant == 1) {
        weft_component_set(w, es[1], p, &(vec3_t){1, 1, 3}); /* one float differs */
    }
    if (variant == 2) {
        weft_entity_t e;
        weft_entity_create(w, &e); /* one more entity, no components */
    }
    return w;
}

Test(world, hash_is_equal_for_equal_worlds_and_differs_otherwise) {
    test_alloc_t a = {0}, b = {0}, c = {0}, d = {0};
    weft_world_t *w0 = build(&a, 0), *w1 = build(&b, 0), *w2 = build(&c, 1), *w3 = build(&d, 2);
    cr_expect(eq(u64, weft_world_hash(w0), weft_world_hash(w1)));
    cr_expect(ne(u64, weft_world_hash(w0), weft_world_hash(w2)));
    cr_expect(ne(u64, weft_world_hash(w0), weft_world_hash(w3)));
    weft_world_destroy(w0);
    weft_world_destroy(w1);
    weft_world_destroy(w2);
    weft_world_destroy(w3);
}

Test(world, hash_sees_free_list_order) {
    test_alloc_t a = {0}, b = {0};
    weft_world_t *w0 = test_world(&a), *w1 = test_world(&b);
    weft_entity_t x[2], y[2];
    weft_entity_create_n(w0, 2, x);
    weft_entity_create_n(w1, 2, y);
    weft_entity_destroy(w0, x[0]);
    weft_entity_destroy(w0, x[1]);
    weft_entity_destroy(w1, y[1]);
    weft_entity_destroy(w1, y[0]);
    cr_expect(ne(u64, weft_world_hash(w0), weft_world_hash(w1)));
    weft_world_destroy(w0);
    weft_world_destroy(w1);
}

Test(world, bad_allocator_pair_is_einval) {
    weft_world_t *w = NULL;
    test_alloc_t a = {0};
    weft_world_desc_t d = {.allocator = {.alloc = test_alloc_fn, .user = &a}};
    cr_expect(eq(int, weft_world_create(&d, &w), WEFT_EINVAL));
    cr_expect(w == NULL);
}

Test(world, world_creation_failing_to_allocate_is_enomem) {
    test_alloc_t a = {.fail_at = 1};
    weft_world_t *w = NULL;
    weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE,
                           .allocator = test_allocator(&a),
                           .logger = {.fn = test_quiet_log}};
    cr_expect(eq(int, weft_world_create(&d, &w), WEFT_ENOMEM));
    cr_expect(w == NULL);
    /* fail every allocation from the k-th on, for each allocation creation makes */
    for (size_t k = 2;; k++) {
        a = (test_alloc_t){.fail_at = k, .fail_after = 1};
        weft_result_t r = weft_world_create(&d, &w);
        if (r == WEFT_OK) {
            cr_expect(k > 3, "creation makes several allocations");
            weft_world_destroy(w);
            break;
        }
        cr_expect(eq(int, r, WEFT_ENOMEM));
        cr_expect(eq(sz, a.live_bytes, 0), "nothing is left behind (k = %zu)", k);
    }
}

Test(world, nonzero_canary_is_einval) {
    weft_world_t *w = (weft_world_t *)&w;
    weft_world_desc_t d = {._canary = 7};
    cr_expect(eq(int, weft_world_create(&d, &w), WEFT_EINVAL));
    cr_expect(w == NULL);
}

Test(world, the_job_system_is_created_once_from_the_desc_and_owned_by_the_world) {
    test_alloc_t a = {0};
    weft_world_t *w = NULL;
    weft_world_desc_t d = {.worker_count = 2, .allocator = test_allocator(&a)};
    cr_assert(eq(int, weft_world_create(&d, &w), WEFT_OK));
    weft_jobs_t *jobs = weft_world_jobs(w);
    cr_assert(jobs != NULL, "%s", weft_last_error());
    cr_expect(weft_world_jobs(w) == jobs);
    cr_expect(eq(u32, weft_jobs_worker_count(jobs), 2));
    weft_world_destroy(w);
    cr_expect(eq(sz, a.live_bytes, 0), "the job system went with the world");
}
