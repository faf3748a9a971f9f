/* internal_pool.c: the pool's sparse index width — 3-byte entries below 2^24 rows, a one-way
 * switch to 4-byte entries past it (src/core/pool.h), all or nothing under allocation failure.
 * Includes private headers to see the width and the pool's own byte count. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ecs_fixture.h"
#include "src/core/pool.h"
#include "src/core/world.h"

enum { N = 5000 }; /* entities: 5 sparse pages, with holes left by removals */

static test_alloc_t alloc;
static weft_world_t *world;
static weft_component_t comp;
static weft_entity_t ents[N];

static weft__pool_t *pool_of(weft_component_t c) { return &world->components[c.id]->pool; }

/* Every third entity has no component; the others hold their own index. */
static void setup(void) {
    memset(&alloc, 0, sizeof alloc);
    world = test_world(&alloc);
    cr_assert(world != NULL);
    comp = test_register(world, "Value", sizeof(uint32_t));
    for (uint32_t i = 0; i < N; i++) {
        ents[i] = test_entity(world);
        cr_assert(eq(int, weft_component_set(world, ents[i], comp, &i), WEFT_OK));
    }
    for (uint32_t i = 0; i < N; i += 3) {
        cr_assert(eq(int, weft_component_remove(world, ents[i], comp), WEFT_OK));
    }
}

static void teardown(void) {
    weft_world_destroy(world);
    cr_expect(eq(sz, alloc.live_bytes, 0), "every byte freed");
}

/* The index agrees with the rows and with the values set in setup(). */
static void check_values(void) {
    const weft__pool_t *p = pool_of(comp);
    bool ok = true;
    for (uint32_t r = 0; r < p->count; r++) {
        ok &= weft__pool_row(p, p->dense[r]) == r;
    }
    for (uint32_t i = 0; i < N; i++) {
        const uint32_t *v = weft_component_get(world, ents[i], comp);
        ok &= i % 3 == 0 ? v == NULL : v != NULL && *v == i;
    }
    cr_assert(ok, "sparse index and values intact");
    cr_assert(eq(u32, weft_component_rows(world, comp), N - (N + 2) / 3));
}

TestSuite(sparse_width, .init = setup, .fini = teardown, .timeout = 60);

Test(sparse_width, ordinary_pools_start_narrow_and_multi_instance_pools_wide) {
    cr_assert(eq(u32, pool_of(comp)->sparse_wide, 0));
    weft_component_t multi = {0};
    weft_component_desc_t d = {.name = "Multi", .size = 4, .flags = WEFT_COMPONENT_MULTI};
    cr_assert(eq(int, weft_component_register(world, &d, &multi), WEFT_OK));
    cr_assert(eq(u32, pool_of(multi)->sparse_wide, 1));
    cr_assert(eq(sz, weft__pool_page_bytes(0), 3072));
    cr_assert(eq(sz, weft__pool_page_bytes(1), 4096));
}

Test(sparse_width, widening_keeps_every_row_and_later_changes_work) {
    size_t before = weft__pool_bytes(pool_of(comp));
    cr_assert(eq(int, weft__pool_widen(world, pool_of(comp)), WEFT_OK));
    cr_assert(eq(u32, pool_of(comp)->sparse_wide, 1));
    cr_assert(eq(sz, weft__pool_bytes(pool_of(comp)), before + 5 * (4096 - 3072)));
    check_values();
    cr_assert(eq(int, weft__pool_widen(world, pool_of(comp)), WEFT_OK), "widening is idempotent");
    /* put back the removed ones, take the others out, and back again */
    for (uint32_t i = 0; i < N; i += 3) {
        cr_assert(eq(int, weft_component_set(world, ents[i], comp, &i), WEFT_OK));
    }
    for (uint32_t i = 0; i < N; i += 3) {
        cr_assert(eq(int, weft_component_remove(world, ents[i], comp), WEFT_OK));
    }
    check_values();
}

Test(sparse_width, growing_past_the_narrow_range_widens_the_index) {
    cr_assert(eq(int, weft_component_reserve(world, comp, WEFT__SPARSE_NARROW_CAP), WEFT_OK));
    cr_assert(eq(u32, pool_of(comp)->sparse_wide, 0), "2^24 - 1 rows still fit 3 bytes");
    check_values();
    cr_assert(eq(int, weft_component_reserve(world, comp, WEFT__SPARSE_NARROW_CAP + 1u), WEFT_OK));
    cr_assert(eq(u32, pool_of(comp)->sparse_wide, 1));
    check_values();
}

/* Fail the k-th allocation of the growing reserve for every k until it succeeds: each
 * failure reports WEFT_ENOMEM and leaves the pool, its width and the heap as they were. */
Test(sparse_width, a_failed_widening_leaves_the_pool_unchanged) {
    size_t bytes = alloc.live_bytes, blocks = alloc.live_blocks;
    uint32_t cap = pool_of(comp)->cap;
    weft_result_t r = WEFT_ENOMEM;
    uint32_t failures = 0;
    for (size_t k = 1; r != WEFT_OK && k < 64; k++) {
        alloc.fail_at = alloc.calls + k;
        r = weft_component_reserve(world, comp, WEFT__SPARSE_NARROW_CAP + 1u);
        alloc.fail_at = 0;
        if (r == WEFT_OK) {
            break;
        }
        failures++;
        cr_assert(eq(int, r, WEFT_ENOMEM));
        cr_assert(eq(u32, pool_of(comp)->sparse_wide, 0));
        cr_assert(eq(u32, pool_of(comp)->cap, cap));
        cr_assert(eq(sz, alloc.live_bytes, bytes));
        cr_assert(eq(sz, alloc.live_blocks, blocks));
        check_values();
    }
    cr_assert(eq(int, r, WEFT_OK));
    /* dense, data, the scratch directory and the 5 pages: every one of them was failed once */
    cr_assert(eq(u32, failures, 8));
    cr_assert(eq(u32, pool_of(comp)->sparse_wide, 1));
    check_values();
}
