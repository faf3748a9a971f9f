/* test_multi.c: multi-instance components — several instances per entity, stable handles. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ecs_fixture.h"
#include "src/core/multi.h" /* private: weft__multi_reserve (the staged command apply uses it) */

static test_alloc_t alloc;
static weft_world_t *world;
static weft_component_t emitter, pos;
static int removed_sum; /* sum of the rate of every emitter whose on_remove fired */

typedef struct emitter_data {
    int rate;
    int pad;
} emitter_t;

static void on_remove(weft_world_t *w, weft_entity_t e, weft_component_t c, void *p, void *u) {
    (void)w, (void)e, (void)c, (void)u;
    removed_sum += ((emitter_t *)p)->rate;
}

static void setup(void) {
    memset(&alloc, 0, sizeof alloc);
    removed_sum = 0;
    world = test_world(&alloc);
    cr_assert(world != NULL);
    weft_component_desc_t d = {.name = "Emitter",
                               .size = sizeof(emitter_t),
                               .flags = WEFT_COMPONENT_MULTI,
                               .on_remove = on_remove};
    cr_assert(eq(int, weft_component_register(world, &d, &emitter), WEFT_OK));
    pos = test_register(world, "Position", sizeof(vec3_t));
}

static void teardown(void) {
    weft_world_destroy(world);
    cr_expect(eq(sz, alloc.live_bytes, 0));
}

TestSuite(multi, .init = setup, .fini = teardown, .timeout = 20);

/* Give e n emitters with rates base, base+1, ...; handles into out. */
static void give(weft_entity_t e, int n, int base, weft_instance_t *out) {
    for (int i = 0; i < n; i++) {
        emitter_t *p = NULL;
        cr_assert(
            eq(int, weft_component_add_instance(world, e, emitter, &out[i], (void **)&p), WEFT_OK));
        cr_assert(p != NULL && out[i].id != 0);
        p->rate = base + i;
    }
}

Test(multi, an_entity_holds_several_instances_with_stable_handles) {
    weft_entity_t a = test_entity(world), b = test_entity(world);
    weft_instance_t ia[3], ib[2];
    give(a, 3, 10, ia);
    give(b, 2, 20, ib);
    cr_expect(eq(u32, weft_component_rows(world, emitter), 5), "iteration sees every instance");
    cr_expect(eq(u32, weft_component_instances(world, a, emitter, NULL, 0), 3));
    weft_instance_t list[4];
    cr_assert(eq(u32, weft_component_instances(world, a, emitter, list, 4), 3));
    cr_expect(eq(u64, list[0].id, ia[2].id), "most recent first");
    cr_expect(eq(u64, list[2].id, ia[0].id));
    /* removing one moves rows; the other handles still reach their own data */
    cr_assert(eq(int, weft_instance_remove(world, ia[0]), WEFT_OK));
    cr_expect(eq(int, removed_sum, 10));
    cr_expect(weft_instance_get(world, ia[0]) == NULL, "the removed handle is stale");
    cr_expect(eq(int, weft_instance_remove(world, ia[0]), WEFT_ESTALE));
    cr_expect(eq(int, ((const emitter_t *)weft_instance_get(world, ia[1]))->rate, 11));
    cr_expect(eq(int, ((const emitter_t *)weft_instance_get(world, ia[2]))->rate, 12));
    cr_expect(eq(int, ((const emitter_t *)weft_instance_get(world, ib[0]))->rate, 20));
    cr_expect(eq(int, ((const emitter_t *)weft_instance_get(world, ib[1]))->rate, 21));
    cr_expect(eq(u64, weft_instance_entity(world, ib[1]), b));
    cr_expect(weft_component_has(world, a, emitter));
    cr_expect(eq(int, ((const emitter_t *)weft_component_get(world, a, emitter))->rate, 12),
              "get addresses the most recent instance");
}

Test(multi, removing_the_last_instance_clears_has) {
    weft_entity_t e = test_entity(world);
    weft_instance_t i[2];
    give(e, 2, 1, i);
    weft_instance_remove(world, i[1]);
    cr_expect(weft_component_has(world, e, emitter));
    weft_instance_remove(world, i[0]);
    cr_expect(not(weft_component_has(world, e, emitter)));
    cr_expect(weft_component_get(world, e, emitter) == NULL);
    give(e, 1, 7, i);
    cr_expect(eq(int, ((const emitter_t *)weft_instance_get(world, i[0]))->rate, 7));
}

Test(multi, destroy_and_remove_take_every_instance_and_fire_each_hook) {
    weft_entity_t a = test_entity(world), b = test_entity(world);
    weft_instance_t ia[4], ib[3];
    give(a, 4, 1, ia); /* 1+2+3+4 */
    give(b, 3, 100, ib);
    cr_assert(eq(int, weft_entity_destroy(world, a), WEFT_OK));
    cr_expect(eq(int, removed_sum, 10));
    cr_expect(eq(u32, weft_component_rows(world, emitter), 3));
    for (int k = 0; k < 4; k++) {
        cr_expect(weft_instance_get(world, ia[k]) == NULL);
    }
    cr_assert(eq(int, weft_component_remove(world, b, emitter), WEFT_OK));
    cr_expect(eq(int, removed_sum, 10 + 100 + 101 + 102));
    cr_expect(eq(u32, weft_component_rows(world, emitter), 0));
    cr_expect(not(weft_component_has(world, b, emitter)));
}

Test(multi, plain_add_and_set_work_on_multi_components) {
    weft_entity_t e = test_entity(world);
    cr_expect(eq(int, weft_component_set(world, e, emitter, &(emitter_t){5, 0}), WEFT_OK));
    cr_expect(eq(u32, weft_component_instances(world, e, emitter, NULL, 0), 1));
    cr_expect(eq(int, weft_component_add(world, e, emitter, NULL), WEFT_OK), "no EEXIST");
    cr_expect(eq(u32, weft_component_instances(world, e, emitter, NULL, 0), 2));
    cr_expect(eq(int, weft_component_set(world, e, emitter, &(emitter_t){9, 0}), WEFT_OK));
    cr_expect(eq(int, ((const emitter_t *)weft_component_get(world, e, emitter))->rate, 9));
    cr_expect(eq(u32, weft_component_instances(world, e, emitter, NULL, 0), 2));
}

Test(multi, refused_operations_change_nothing) {
    weft_entity_t e = test_entity(world);
    weft_instance_t i[2];
    give(e, 2, 1, i);
    weft_instance_t none;
    cr_expect(eq(int, weft_component_add_instance(world, e, pos, &none, NULL), WEFT_EINVAL));
    cr_expect(eq(u64, none.id, 0));
    cr_expect(eq(int, weft_component_remove_ordered(world, e, emitter), WEFT_ESTATE));
    cr_expect(eq(int, weft_component_move_row(world, emitter, 0, 1), WEFT_ESTATE));
    weft_group_t g;
    weft_group_desc_t gd = {.components = {emitter, pos}};
    cr_expect(eq(int, weft_group_create(world, &gd, &g), WEFT_EINVAL));
    weft_entity_t dead = test_entity(world);
    weft_entity_destroy(world, dead);
    cr_expect(eq(int, weft_component_add_instance(world, dead, emitter, NULL, NULL), WEFT_ESTALE));
    cr_expect(eq(u32, weft_component_rows(world, emitter), 2));
    cr_expect(weft_instance_get(world, (weft_instance_t){0}) == NULL);
}

Test(multi, a_query_driven_by_a_multi_component_sees_every_instance) {
    weft_component_t frozen = test_register(world, "Frozen", 0);
    int want_sum = 0, want_n = 0;
    for (int k = 0; k < 50; k++) {
        weft_entity_t e = test_entity(world);
        weft_component_add(world, e, pos, NULL);
        weft_instance_t i[3];
        give(e, k % 4, k * 10, i);
        if (k % 5 == 0) {
            weft_component_add(world, e, frozen, NULL);
        } else {
            for (int j = 0; j < k % 4; j++, want_n++) {
                want_sum += k * 10 + j;
            }
        }
    }
    weft_query_t *q = NULL;
    weft_query_desc_t d = {.terms = {{.component = pos, .access = WEFT_ACCESS_READ},
                                     {.component = emitter, .access = WEFT_ACCESS_READ}},
                           .exclude = {frozen}};
    cr_assert(eq(int, weft_query_create(world, &d, &q), WEFT_OK));
    int sum = 0, n = 0;
    for (uint32_t k = 0; k < weft_query_chunk_count(q, 8); k++) {
        weft_iter_t it;
        weft_query_iter(q, 8, k, &it);
        while (weft_iter_next(&it)) {
            for (uint32_t i = 0; i < it.rows; i++, n++) {
                sum += ((const emitter_t *)weft_iter_get(&it, 1, i))->rate;
                weft_entity_t e = weft_iter_entity(&it, i);
                cr_assert(weft_iter_get(&it, 0, i) == weft_component_get(world, e, pos));
            }
        }
    }
    cr_expect(eq(int, n, want_n));
    cr_expect(eq(int, sum, want_sum));
    weft_query_t *q2 = NULL;
    weft_component_desc_t d2 = {.name = "Other", .size = 4, .flags = WEFT_COMPONENT_MULTI};
    weft_component_t other;
    cr_assert(eq(int, weft_component_register(world, &d2, &other), WEFT_OK));
    weft_query_desc_t two = {.terms = {{.component = emitter, .access = WEFT_ACCESS_READ},
                                       {.component = other, .access = WEFT_ACCESS_READ}}};
    cr_expect(eq(int, weft_query_create(world, &two, &q2), WEFT_EINVAL));
}

/* ---- weft__multi_reserve (private; see src/core/multi.h) ---------------------------------- */

static weft__pool_t *emitter_pool(weft_world_t *w) { return &weft__component(w, emitter.id)->pool; }

/* a gets 6 instances and loses 3 (free slots), b gets 1; the same in any world. */
static void reserve_scene(weft_world_t *w, weft_entity_t *a, weft_entity_t *b) {
    cr_assert(eq(int, weft_entity_create(w, a), WEFT_OK));
    cr_assert(eq(int, weft_entity_create(w, b), WEFT_OK));
    weft_instance_t ia[6];
    for (int i = 0; i < 6; i++) {
        cr_assert(eq(int, weft_component_add_instance(w, *a, emitter, &ia[i], NULL), WEFT_OK));
    }
    cr_assert(eq(int, weft_component_add_instance(w, *b, emitter, NULL, NULL), WEFT_OK));
    for (int i = 0; i < 6; i += 2) {
        cr_assert(eq(int, weft_instance_remove(w, ia[i]), WEFT_OK));
    }
}

Test(multi, a_reserve_makes_the_next_k_adds_allocate_nothing_and_changes_no_handle) {
    enum { K = 100 };
    test_alloc_t alloc2 = {0};
    weft_world_t *twin = test_world(&alloc2); /* the same adds without the reserve */
    cr_assert(twin != NULL);
    weft_component_t e2;
    cr_assert(eq(int,
                 weft_component_register(twin,
                                         &(weft_component_desc_t){.name = "Emitter",
                                                                  .size = sizeof(emitter_t),
                                                                  .flags = WEFT_COMPONENT_MULTI},
                                         &e2),
                 WEFT_OK));
    cr_assert(eq(u32, e2.id, emitter.id));
    cr_assert(eq(u32, test_register(twin, "Position", sizeof(vec3_t)).id, pos.id));
    weft_entity_t a, b, a2, b2;
    reserve_scene(world, &a, &b);
    reserve_scene(twin, &a2, &b2);
    uint64_t hash = weft_world_hash(world);
    weft__pool_t *pool = emitter_pool(world);
    /* the pool's own rows are the caller's part (the command stage reserves them first) */
    cr_assert(eq(int, weft_component_reserve(world, emitter, pool->count + K), WEFT_OK));
    cr_assert(eq(int, weft__multi_reserve(world, pool, K), WEFT_OK));
    cr_expect(eq(u64, weft_world_hash(world), hash), "the reserve changed the world");
    cr_expect(ge(u32, pool->multi->row_cap, pool->count + K));
    cr_expect(
        ge(u32, pool->multi->slot_cap - pool->multi->slot_count + pool->multi->free_count, K));
    size_t calls = alloc.calls;
    for (int i = 0; i < K; i++) {
        weft_instance_t got, want;
        weft_entity_t on = i % 3 ? a : b, on2 = i % 3 ? a2 : b2;
        if (weft_component_add_instance(world, on, emitter, &got, NULL) != WEFT_OK ||
            weft_component_add_instance(twin, on2, emitter, &want, NULL) != WEFT_OK ||
            got.id != want.id) {
            cr_fatal("add %d: handle 0x%llx, without the reserve 0x%llx (%s)", i,
                     (unsigned long long)got.id, (unsigned long long)want.id, weft_last_error());
        }
    }
    cr_expect(eq(sz, alloc.calls, calls), "the %d reserved adds allocated %zu times", K,
              alloc.calls - calls);
    cr_expect(eq(u64, weft_world_hash(world), weft_world_hash(twin)));
    weft_world_destroy(twin);
    cr_expect(eq(sz, alloc2.live_bytes, 0));
}

Test(multi, a_failed_reserve_changes_nothing_not_even_capacity) {
    weft_entity_t a, b;
    reserve_scene(world, &a, &b);
    weft__pool_t *pool = emitter_pool(world);
    const weft__multi_t *m = pool->multi;
    uint64_t hash = weft_world_hash(world);
    uint32_t row_cap = m->row_cap, slot_cap = m->slot_cap, failures = 0;
    size_t bytes = alloc.live_bytes;
    for (size_t f = 1; f <= 4; f++) { /* row_slot, then the three slot arrays */
        alloc.fail_at = alloc.calls + f;
        weft_result_t r = weft__multi_reserve(world, pool, 1000);
        alloc.fail_at = 0;
        failures += r != WEFT_OK;
        if (r != WEFT_ENOMEM || m->row_cap != row_cap || m->slot_cap != slot_cap ||
            alloc.live_bytes != bytes || weft_world_hash(world) != hash) {
            cr_fatal("allocation %zu of the reserve failed: %s, row_cap %u -> %u, "
                     "slot_cap %u -> %u, live bytes %zu -> %zu",
                     f, weft_result_name(r), row_cap, m->row_cap, slot_cap, m->slot_cap, bytes,
                     alloc.live_bytes);
        }
    }
    cr_expect(eq(u32, failures, 4));
    cr_expect(eq(int, weft__multi_reserve(world, pool, UINT32_MAX), WEFT_ECAPACITY));
    cr_expect(eq(u32, m->row_cap, row_cap));
    cr_expect(eq(u32, m->slot_cap, slot_cap));
    cr_expect(eq(int, weft__multi_reserve(world, pool, 1000), WEFT_OK), "%s", weft_last_error());
    cr_expect(eq(u64, weft_world_hash(world), hash));
}
