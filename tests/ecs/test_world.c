/* test_world.c: world lifecycle, desc handling, the world hash and statistics. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

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

/* ---- the contract at the API's edge ------------------------------------------------ */

Test(world, every_core_call_given_a_null_world_returns_einval_or_its_neutral_value) {
    weft_entity_t e = WEFT_ENTITY_NULL;
    weft_component_t c = {1};
    cr_expect(eq(int, weft_entity_create(NULL, &e), WEFT_EINVAL));
    cr_expect(strstr(weft_last_error(), "weft_entity_create") != NULL, "%s", weft_last_error());
    cr_expect(eq(int, weft_entity_create_n(NULL, 1, &e), WEFT_EINVAL));
    cr_expect(eq(int, weft_entity_destroy(NULL, 1), WEFT_EINVAL));
    cr_expect(eq(int, weft_entity_destroy_n(NULL, &e, 1), WEFT_EINVAL));
    cr_expect(eq(int, weft_entity_reserve(NULL, 1), WEFT_EINVAL));
    cr_expect(weft_entity_is_alive(NULL, 1) == false);
    cr_expect(eq(u64, weft_entity_from_index(NULL, 1), WEFT_ENTITY_NULL));
    cr_expect(eq(u32, weft_entity_count(NULL), 0));
    weft_component_desc_t cd = {.name = "P", .size = 4};
    cr_expect(eq(int, weft_component_register(NULL, &cd, &c), WEFT_EINVAL));
    cr_expect(eq(u32, weft_component_lookup(NULL, "P").id, 0));
    cr_expect(eq(u32, weft_component_type_count(NULL), 0));
    cr_expect(eq(int, weft_component_describe(NULL, c, &cd), WEFT_EINVAL));
    cr_expect(eq(int, weft_component_add(NULL, 1, c, NULL), WEFT_EINVAL));
    cr_expect(eq(int, weft_component_set(NULL, 1, c, &e), WEFT_EINVAL));
    cr_expect(weft_component_get(NULL, 1, c) == NULL);
    cr_expect(weft_component_get_mut(NULL, 1, c) == NULL);
    cr_expect(weft_component_has(NULL, 1, c) == false);
    cr_expect(eq(int, weft_component_remove(NULL, 1, c), WEFT_EINVAL));
    cr_expect(eq(int, weft_component_remove_ordered(NULL, 1, c), WEFT_EINVAL));
    cr_expect(eq(u32, weft_component_rows(NULL, c), 0));
    cr_expect(eq(u64, weft_component_entity_at(NULL, c, 0), WEFT_ENTITY_NULL));
    cr_expect(weft_component_row(NULL, c, 0) == NULL);
    cr_expect(weft_component_row_mut(NULL, c, 0) == NULL);
    cr_expect(eq(int, weft_component_move_row(NULL, c, 0, 1), WEFT_EINVAL));
    cr_expect(eq(int, weft_component_sort(NULL, c, NULL, NULL), WEFT_EINVAL));
    cr_expect(eq(int, weft_component_reserve(NULL, c, 8), WEFT_EINVAL));
    weft_instance_t inst = {0};
    cr_expect(eq(int, weft_component_add_instance(NULL, 1, c, &inst, NULL), WEFT_EINVAL));
    cr_expect(weft_instance_get(NULL, inst) == NULL);
    cr_expect(weft_instance_get_mut(NULL, inst) == NULL);
    cr_expect(eq(u64, weft_instance_entity(NULL, inst), WEFT_ENTITY_NULL));
    cr_expect(eq(int, weft_instance_remove(NULL, inst), WEFT_EINVAL));
    cr_expect(eq(u32, weft_component_instances(NULL, 1, c, NULL, 0), 0));
    weft_group_t g = {0};
    weft_group_desc_t gd = {.components = {c, {2}}};
    cr_expect(eq(int, weft_group_create(NULL, &gd, &g), WEFT_EINVAL));
    cr_expect(eq(u32, weft_group_of(NULL, c).id, 0));
    cr_expect(eq(u32, weft_group_rows(NULL, g), 0));
    cr_expect(weft_group_entities(NULL, g) == NULL);
    cr_expect(weft_group_column(NULL, g, c) == NULL);
    cr_expect(weft_group_column_mut(NULL, g, c) == NULL);
    weft_query_t *q = NULL;
    weft_query_desc_t qd = {.terms = {{.component = c, .access = WEFT_ACCESS_READ}}};
    cr_expect(eq(int, weft_query_create(NULL, &qd, &q), WEFT_EINVAL));
    cr_expect(eq(u64, weft_world_hash(NULL), 0));
    cr_expect(weft_world_jobs(NULL) == NULL);
    weft_world_stats_t st;
    weft_world_stats(NULL, &st); /* does nothing */
    weft_world_destroy(NULL);
}

#if WEFT_DEBUG >= 1
typedef struct intruder {
    weft_world_t *world;
    weft_component_t c;
    weft_entity_t target;
    weft_result_t create, add, destroy;
    char message[256];
} intruder_t;

static void *intrude(void *arg) {
    intruder_t *in = arg;
    weft_entity_t e = 1;
    in->create = weft_entity_create(in->world, &e);
    snprintf(in->message, sizeof in->message, "%s", weft_last_error());
    in->add = weft_component_add(in->world, in->target, in->c, NULL);
    in->destroy = weft_entity_destroy(in->world, in->target);
    return NULL;
}

Test(world, structural_calls_from_another_thread_return_estate_and_change_nothing) {
    test_alloc_t a = {0};
    weft_world_t *w = test_world(&a);
    cr_assert(w != NULL);
    intruder_t in = {.world = w, .c = test_register(w, "P", 12), .target = test_entity(w)};
    uint64_t before = weft_world_hash(w);
    pthread_t t;
    cr_assert(eq(int, pthread_create(&t, NULL, intrude, &in), 0));
    cr_assert(eq(int, pthread_join(t, NULL), 0));
    cr_expect(eq(int, in.create, WEFT_ESTATE));
    cr_expect(eq(int, in.add, WEFT_ESTATE));
    cr_expect(eq(int, in.destroy, WEFT_ESTATE));
    cr_expect(strstr(in.message, "weft_entity_create") != NULL &&
                  strstr(in.message, "not the world's main thread") != NULL,
              "%s", in.message);
    cr_expect(eq(u64, weft_world_hash(w), before), "the world is unchanged");
    cr_expect(eq(u32, weft_entity_count(w), 1));
    weft_world_destroy(w);
}
#endif /* WEFT_DEBUG */
