/* test_group.c: groups keep member pools aligned through adds, removes and destroys. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <signal.h>

#include "ecs_fixture.h"

static test_alloc_t alloc;
static weft_world_t *world;
static weft_component_t pos, vel, mass;

static void setup(void) {
    memset(&alloc, 0, sizeof alloc);
    world = test_world(&alloc);
    cr_assert(world != NULL);
    pos = test_register(world, "Position", sizeof(vec3_t));
    vel = test_register(world, "Velocity", sizeof(vec3_t));
    mass = test_register(world, "Mass", sizeof(float));
}

static void teardown(void) {
    weft_world_destroy(world);
    cr_expect(eq(sz, alloc.live_bytes, 0));
}

TestSuite(group, .init = setup, .fini = teardown, .timeout = 20);

static weft_group_t make_group(weft_component_t a, weft_component_t b) {
    weft_group_t g = {0};
    weft_group_desc_t d = {.components = {a, b}};
    cr_assert(eq(int, weft_group_create(world, &d, &g), WEFT_OK));
    return g;
}

/* Check the group invariant through the public API. */
static void expect_aligned(weft_group_t g, weft_component_t a, weft_component_t b) {
    uint32_t n = weft_group_rows(world, g);
    const uint32_t *ents = weft_group_entities(world, g);
    for (uint32_t r = 0; r < n; r++) {
        weft_entity_t e = weft_entity_from_index(world, ents[r]);
        cr_assert(eq(u64, weft_component_entity_at(world, a, r), e));
        cr_assert(eq(u64, weft_component_entity_at(world, b, r), e));
    }
    for (uint32_t r = n; r < weft_component_rows(world, a); r++) {
        cr_assert(not(weft_component_has(world, weft_component_entity_at(world, a, r), b)));
    }
    for (uint32_t r = n; r < weft_component_rows(world, b); r++) {
        cr_assert(not(weft_component_has(world, weft_component_entity_at(world, b, r), a)));
    }
}

Test(group, entities_with_every_member_form_the_prefix) {
    weft_group_t g = make_group(pos, vel);
    weft_entity_t e[6];
    for (int i = 0; i < 6; i++) {
        e[i] = test_entity(world);
        weft_component_set(world, e[i], pos, &(vec3_t){(float)i, 0, 0});
        if (i % 2 == 0) {
            weft_component_set(world, e[i], vel, &(vec3_t){0, (float)i, 0});
        }
    }
    cr_expect(eq(u32, weft_group_rows(world, g), 3));
    expect_aligned(g, pos, vel);
    const vec3_t *p = weft_group_column(world, g, pos);
    const vec3_t *v = weft_group_column(world, g, vel);
    for (uint32_t r = 0; r < 3; r++) {
        cr_expect(eq(flt, p[r].x, v[r].y), "row r of both columns is the same entity");
    }
    cr_expect(weft_group_column(world, g, mass) == NULL);
}

Test(group, removing_a_member_takes_the_entity_out) {
    weft_group_t g = make_group(pos, vel);
    weft_entity_t e[5];
    for (int i = 0; i < 5; i++) {
        e[i] = test_entity(world);
        weft_component_add(world, e[i], pos, NULL);
        weft_component_add(world, e[i], vel, NULL);
    }
    weft_component_remove(world, e[1], vel);
    cr_expect(eq(u32, weft_group_rows(world, g), 4));
    expect_aligned(g, pos, vel);
    weft_entity_destroy(world, e[3]);
    cr_expect(eq(u32, weft_group_rows(world, g), 3));
    expect_aligned(g, pos, vel);
    weft_component_add(world, e[1], vel, NULL);
    cr_expect(eq(u32, weft_group_rows(world, g), 4));
    expect_aligned(g, pos, vel);
}

Test(group, creating_a_group_aligns_existing_entities) {
    for (int i = 0; i < 100; i++) {
        weft_entity_t e = test_entity(world);
        if (i % 3 != 0) {
            weft_component_add(world, e, pos, NULL);
        }
        if (i % 2 != 0) {
            weft_component_add(world, e, vel, NULL);
        }
    }
    weft_group_t g = make_group(vel, pos);
    int want = 0;
    for (int i = 0; i < 100; i++) {
        want += (i % 3 != 0) && (i % 2 != 0);
    }
    cr_expect(eq(u32, weft_group_rows(world, g), (uint32_t)want));
    expect_aligned(g, pos, vel);
}

Test(group, same_member_set_returns_the_same_group) {
    weft_group_t g = make_group(pos, vel);
    weft_group_t h = make_group(vel, pos);
    cr_expect(eq(u32, g.id, h.id));
    cr_expect(eq(u32, weft_group_of(world, pos).id, g.id));
    cr_expect(eq(u32, weft_group_of(world, mass).id, 0));
}

Test(group, a_pool_in_a_group_cannot_join_another_or_be_reordered) {
    make_group(pos, vel);
    weft_group_t g;
    weft_group_desc_t d = {.components = {pos, mass}};
    cr_expect(eq(int, weft_group_create(world, &d, &g), WEFT_ECONFLICT));
    weft_entity_t e = test_entity(world);
    weft_component_add(world, e, pos, NULL);
    weft_component_add(world, test_entity(world), pos, NULL);
    cr_expect(eq(int, weft_component_remove_ordered(world, e, pos), WEFT_ESTATE));
    cr_expect(eq(int, weft_component_move_row(world, pos, 0, 1), WEFT_ESTATE));
    cr_expect(weft_component_has(world, e, pos), "a refused call changes nothing");
}

Test(group, unknown_or_repeated_members_are_einval) {
    weft_group_t g;
    weft_group_desc_t rep = {.components = {pos, pos}};
    cr_expect(eq(int, weft_group_create(world, &rep, &g), WEFT_EINVAL));
    weft_group_desc_t unk = {.components = {pos, {42}}};
    cr_expect(eq(int, weft_group_create(world, &unk, &g), WEFT_EINVAL));
}

Test(group, three_member_group_stays_aligned_under_churn) {
    weft_group_t g;
    weft_group_desc_t d = {.components = {pos, vel, mass}};
    cr_assert(eq(int, weft_group_create(world, &d, &g), WEFT_OK));
    weft_entity_t e[64];
    for (int i = 0; i < 64; i++) {
        e[i] = test_entity(world);
    }
    weft_component_t cs[3] = {pos, vel, mass};
    uint32_t x = 12345;
    for (int step = 0; step < 5000; step++) {
        x = x * 1664525u + 1013904223u;
        weft_entity_t t = e[(x >> 8) % 64];
        weft_component_t c = cs[(x >> 20) % 3];
        if (weft_component_has(world, t, c)) {
            weft_component_remove(world, t, c);
        } else {
            weft_component_add(world, t, c, NULL);
        }
        uint32_t members = 0;
        for (int i = 0; i < 64; i++) {
            members += weft_component_has(world, e[i], pos) &&
                       weft_component_has(world, e[i], vel) &&
                       weft_component_has(world, e[i], mass);
        }
        cr_assert(eq(u32, weft_group_rows(world, g), members));
    }
    const uint32_t *ents = weft_group_entities(world, g);
    for (uint32_t r = 0; r < weft_group_rows(world, g); r++) {
        for (int k = 0; k < 3; k++) {
            cr_assert(eq(u64, weft_component_entity_at(world, cs[k], r),
                         weft_entity_from_index(world, ents[r])));
        }
    }
}

/* Desc lists end at their first zero entry; a short list or an entry after the zero is
 * WEFT_EINVAL in every build, and no group is created. */
Test(group, a_group_of_one_component_or_a_gap_in_its_list_is_einval) {
    weft_group_t g = {99};
    weft_group_desc_t one = {.components = {pos}};
    cr_expect(eq(int, weft_group_create(world, &one, &g), WEFT_EINVAL));
    cr_expect(eq(u32, g.id, 0));
    weft_group_desc_t gap = {.components = {pos, vel, {0}, mass}};
    cr_expect(eq(int, weft_group_create(world, &gap, &g), WEFT_EINVAL));
    cr_expect(strstr(weft_last_error(), "components[3] is set after the list ended") != NULL, "%s",
              weft_last_error());
    cr_expect(eq(u32, weft_group_of(world, pos).id, 0), "no group was created");
}
