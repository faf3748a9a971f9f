/* test_component.c: registration, per-entity access, hooks and row operations of pools. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <signal.h>

#include "ecs_fixture.h"

static test_alloc_t alloc;
static weft_world_t *world;
static weft_component_t pos, vel, tag;

static void setup(void) {
    memset(&alloc, 0, sizeof alloc);
    world = test_world(&alloc);
    cr_assert(world != NULL);
    pos = test_register(world, "Position", sizeof(vec3_t));
    vel = test_register(world, "Velocity", sizeof(vec3_t));
    tag = test_register(world, "Frozen", 0);
    cr_assert(pos.id && vel.id && tag.id);
}

static void teardown(void) {
    weft_world_destroy(world);
    cr_expect(eq(sz, alloc.live_bytes, 0), "the world leaked %zu bytes", alloc.live_bytes);
}

TestSuite(component, .init = setup, .fini = teardown, .timeout = 20);

/* ---- registration ---- */

Test(component, ids_are_small_consecutive_numbers) {
    cr_expect(eq(u32, pos.id, 1));
    cr_expect(eq(u32, vel.id, 2));
    cr_expect(eq(u32, tag.id, 3));
    cr_expect(eq(u32, weft_component_type_count(world), 3));
    cr_expect(eq(u32, weft_component_lookup(world, "Velocity").id, vel.id));
    cr_expect(eq(u32, weft_component_lookup(world, "Nope").id, 0));
}

Test(component, registering_same_name_and_size_returns_same_id) {
    cr_expect(eq(u32, test_register(world, "Position", sizeof(vec3_t)).id, pos.id));
    cr_expect(eq(u32, weft_component_type_count(world), 3));
}

Test(component, registering_same_name_with_other_size_is_econflict) {
    weft_component_t c;
    weft_component_desc_t d = {.name = "Position", .size = 8};
    cr_expect(eq(int, weft_component_register(world, &d, &c), WEFT_ECONFLICT));
    cr_expect(eq(u32, c.id, 0));
}

Test(component, a_name_longer_than_the_kept_length_is_einval_in_every_build) {
    char name[WEFT_COMPONENT_NAME_MAX + 2];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0'; /* WEFT_COMPONENT_NAME_MAX + 1 bytes */
    weft_component_t c = {7};
    cr_expect(eq(
        int, weft_component_register(world, &(weft_component_desc_t){.name = name, .size = 4}, &c),
        WEFT_EINVAL));
    cr_expect(eq(u32, c.id, 0));
    name[WEFT_COMPONENT_NAME_MAX] = '\0'; /* exactly the kept length: accepted, whole */
    cr_assert(eq(
        int, weft_component_register(world, &(weft_component_desc_t){.name = name, .size = 4}, &c),
        WEFT_OK));
    weft_component_desc_t got;
    cr_assert(eq(int, weft_component_describe(world, c, &got), WEFT_OK));
    cr_expect(eq(str, (char *)got.name, name));
}

Test(component, describe_returns_the_resolved_registration) {
    weft_component_desc_t d = {
        .name = "Link", .size = 16, .entity_field_count = 1, .entity_fields = {8}, .version = 3};
    weft_component_t c;
    cr_assert(eq(int, weft_component_register(world, &d, &c), WEFT_OK));
    weft_component_desc_t out;
    cr_assert(eq(int, weft_component_describe(world, c, &out), WEFT_OK));
    cr_expect(eq(str, (char *)out.name, "Link"));
    cr_expect(eq(sz, out.size, 16));
    cr_expect(eq(sz, out.align, 16), "natural alignment of 16 bytes");
    cr_expect(eq(u32, out.entity_field_count, 1));
    cr_expect(eq(u32, out.entity_fields[0], 8));
    cr_expect(eq(u32, out.version, 3));
    cr_expect(eq(int, weft_component_describe(world, (weft_component_t){99}, &out), WEFT_EINVAL));
}

Test(component, registering_65536_types_works_and_the_next_is_ecapacity) {
    char name[32];
    weft_component_t c = {0};
    weft_result_t r = WEFT_OK;
    const uint32_t base = weft_component_type_count(world); /* the fixture's */
    uint32_t i = 0;
    for (; r == WEFT_OK && i < WEFT_MAX_COMPONENTS + 8u; i++) {
        snprintf(name, sizeof name, "C%u", i);
        weft_component_desc_t d = {.name = name, .size = 4};
        r = weft_component_register(world, &d, &c);
        if (r == WEFT_OK && c.id != base + i + 1u) {
            cr_fail("registration %u got id %u", i, c.id);
            return;
        }
    }
    cr_expect(eq(u32, base + i, 65537u), "65,536 registrations succeed, the next fails");
    cr_expect(eq(int, r, WEFT_ECAPACITY));
    cr_expect(eq(u32, weft_component_type_count(world), 65536u));
    cr_expect(eq(u32, WEFT_MAX_COMPONENTS - 1u, 65536u));
    /* Lookups by name find every type (hashed, not a walk of all types). */
    const uint32_t last = 65535u - base; /* the name of id 65536 */
    const uint32_t probe[] = {0, 1, 251, 252, 253, 65530, last};
    for (size_t k = 0; k < sizeof probe / sizeof probe[0]; k++) {
        snprintf(name, sizeof name, "C%u", probe[k]);
        cr_expect(eq(u32, weft_component_lookup(world, name).id, base + probe[k] + 1u), "%s", name);
    }
    snprintf(name, sizeof name, "C%u", last + 1u);
    cr_expect(eq(u32, weft_component_lookup(world, name).id, 0), "the refused one is absent");
    /* A registered name still returns its id at the limit. */
    snprintf(name, sizeof name, "C%u", last);
    weft_component_desc_t again = {.name = name, .size = 4};
    cr_expect(eq(int, weft_component_register(world, &again, &c), WEFT_OK));
    cr_expect(eq(u32, c.id, 65536u));
    /* The highest id is usable. */
    weft_entity_t e;
    cr_assert(eq(int, weft_entity_create(world, &e), WEFT_OK));
    uint32_t v = 7;
    cr_expect(eq(int, weft_component_set(world, e, c, &v), WEFT_OK));
    cr_expect(eq(u32, *(const uint32_t *)weft_component_get(world, e, c), 7u));
}

/* ---- add / get / has / remove ---- */

Test(component, add_returns_zeroed_data_and_get_finds_it) {
    weft_entity_t e = test_entity(world);
    vec3_t *p = NULL;
    cr_assert(eq(int, weft_component_add(world, e, pos, (void **)&p), WEFT_OK));
    cr_assert(p != NULL);
    cr_expect(eq(flt, p->x + p->y + p->z, 0.0f));
    p->x = 4.0f;
    const vec3_t *g = weft_component_get(world, e, pos);
    cr_assert(g == p);
    cr_expect(weft_component_has(world, e, pos));
    cr_expect(not(weft_component_has(world, e, vel)));
    cr_expect(weft_component_get(world, e, vel) == NULL);
    cr_expect(weft_component_get_mut(world, e, pos) == p);
}

Test(component, adding_twice_is_eexist_and_changes_nothing) {
    weft_entity_t e = test_entity(world);
    cr_assert(eq(int, weft_component_set(world, e, pos, &(vec3_t){1, 2, 3}), WEFT_OK));
    uint64_t h = weft_world_hash(world);
    cr_expect(eq(int, weft_component_add(world, e, pos, NULL), WEFT_EEXIST));
    cr_expect(eq(u64, weft_world_hash(world), h));
    cr_expect(eq(flt, ((const vec3_t *)weft_component_get(world, e, pos))->y, 2.0f));
}

Test(component, stale_and_unknown_are_errors_for_mutations_and_null_for_reads) {
    weft_entity_t e = test_entity(world);
    weft_entity_destroy(world, e);
    cr_expect(eq(int, weft_component_add(world, e, pos, NULL), WEFT_ESTALE));
    cr_expect(eq(int, weft_component_remove(world, e, pos), WEFT_ESTALE));
    cr_expect(eq(int, weft_component_set(world, e, pos, &(vec3_t){0}), WEFT_ESTALE));
    cr_expect(weft_component_get(world, e, pos) == NULL);
    cr_expect(not(weft_component_has(world, e, pos)));
    weft_entity_t live = test_entity(world);
    cr_expect(eq(int, weft_component_add(world, live, (weft_component_t){77}, NULL), WEFT_EINVAL));
    cr_expect(eq(int, weft_component_add(world, live, (weft_component_t){0}, NULL), WEFT_EINVAL));
    cr_expect(weft_component_get(world, live, (weft_component_t){77}) == NULL);
    cr_expect(eq(int, weft_component_remove(world, live, pos), WEFT_ENOENT));
}

Test(component, every_error_code_has_a_string) {
    for (int r = 0; r >= WEFT_RESULT_MIN; r--) {
        cr_expect(ne(str, (char *)weft_result_str((weft_result_t)r), "unknown result"));
        cr_expect(ne(str, (char *)weft_result_name((weft_result_t)r), "WEFT_UNKNOWN"));
    }
}

Test(component, remove_swaps_the_last_row_in) {
    weft_entity_t e[3];
    for (int i = 0; i < 3; i++) {
        e[i] = test_entity(world);
        weft_component_set(world, e[i], pos, &(vec3_t){(float)i, 0, 0});
    }
    cr_assert(eq(int, weft_component_remove(world, e[0], pos), WEFT_OK));
    cr_expect(eq(u32, weft_component_rows(world, pos), 2));
    cr_expect(eq(u64, weft_component_entity_at(world, pos, 0), e[2]));
    cr_expect(eq(u64, weft_component_entity_at(world, pos, 1), e[1]));
    cr_expect(eq(flt, ((const vec3_t *)weft_component_row(world, pos, 0))->x, 2.0f));
    cr_expect(eq(flt, ((const vec3_t *)weft_component_get(world, e[2], pos))->x, 2.0f));
    cr_expect(not(weft_component_has(world, e[0], pos)));
    cr_expect(weft_component_row(world, pos, 2) == NULL);
    cr_expect(eq(u64, weft_component_entity_at(world, pos, 2), WEFT_ENTITY_NULL));
}

Test(component, remove_ordered_keeps_the_order_of_the_others) {
    weft_entity_t e[5];
    for (int i = 0; i < 5; i++) {
        e[i] = test_entity(world);
        weft_component_set(world, e[i], pos, &(vec3_t){(float)i, 0, 0});
    }
    cr_assert(eq(int, weft_component_remove_ordered(world, e[1], pos), WEFT_OK));
    int want[] = {0, 2, 3, 4};
    for (uint32_t r = 0; r < 4; r++) {
        cr_expect(eq(u64, weft_component_entity_at(world, pos, r), e[want[r]]));
        cr_expect(eq(flt, ((const vec3_t *)weft_component_get(world, e[want[r]], pos))->x,
                     (float)want[r]));
    }
}

Test(component, move_row_shifts_rows_between_and_fixes_lookups) {
    weft_entity_t e[5];
    for (int i = 0; i < 5; i++) {
        e[i] = test_entity(world);
        weft_component_set(world, e[i], pos, &(vec3_t){(float)i, 0, 0});
    }
    cr_assert(eq(int, weft_component_move_row(world, pos, 4, 1), WEFT_OK));
    int want[] = {0, 4, 1, 2, 3};
    for (uint32_t r = 0; r < 5; r++) {
        cr_expect(eq(u64, weft_component_entity_at(world, pos, r), e[want[r]]));
        cr_expect(eq(flt, ((const vec3_t *)weft_component_get(world, e[want[r]], pos))->x,
                     (float)want[r]));
    }
    cr_assert(eq(int, weft_component_move_row(world, pos, 0, 4), WEFT_OK));
    int want2[] = {4, 1, 2, 3, 0};
    for (uint32_t r = 0; r < 5; r++) {
        cr_expect(eq(u64, weft_component_entity_at(world, pos, r), e[want2[r]]));
    }
    cr_expect(eq(int, weft_component_move_row(world, pos, 0, 5), WEFT_EINVAL));
}

static int by_x_desc(weft_entity_t ea, const void *a, weft_entity_t eb, const void *b, void *u) {
    (void)ea;
    (void)eb;
    (void)u;
    float xa = ((const vec3_t *)a)->x, xb = ((const vec3_t *)b)->x;
    return xa > xb ? -1 : xa < xb ? 1 : 0;
}

Test(component, sort_orders_rows_stably_and_fixes_lookups) {
    enum { N = 1000 };
    weft_entity_t e[N];
    for (int i = 0; i < N; i++) {
        e[i] = test_entity(world);
        weft_component_set(world, e[i], pos, &(vec3_t){(float)(i % 10), (float)i, 0});
    }
    cr_assert(eq(int, weft_component_sort(world, pos, by_x_desc, NULL), WEFT_OK));
    for (uint32_t r = 0; r < N; r++) {
        const vec3_t *p = weft_component_row(world, pos, r);
        cr_assert(eq(flt, p->x, (float)(9 - (int)r / 100)));
        if (r % 100 != 0) {
            const vec3_t *prev = weft_component_row(world, pos, r - 1);
            cr_assert(prev->y < p->y, "stable: equal keys keep insertion order");
        }
        weft_entity_t owner = weft_component_entity_at(world, pos, r);
        cr_assert(weft_component_get(world, owner, pos) == p);
    }
}

Test(component, tags_have_no_data_but_a_non_null_pointer) {
    weft_entity_t e = test_entity(world);
    void *p = NULL;
    cr_assert(eq(int, weft_component_add(world, e, tag, &p), WEFT_OK));
    cr_expect(p != NULL);
    cr_expect(weft_component_get(world, e, tag) != NULL);
    cr_expect(weft_component_has(world, e, tag));
    cr_expect(eq(int, weft_component_set(world, e, tag, NULL), WEFT_OK));
    cr_expect(eq(int, weft_component_remove(world, e, tag), WEFT_OK));
    cr_expect(weft_component_get(world, e, tag) == NULL);
}

Test(component, destroy_removes_every_component_of_the_entity) {
    weft_entity_t a = test_entity(world), b = test_entity(world);
    weft_component_set(world, a, pos, &(vec3_t){1, 1, 1});
    weft_component_set(world, a, vel, &(vec3_t){2, 2, 2});
    weft_component_add(world, a, tag, NULL);
    weft_component_set(world, b, pos, &(vec3_t){3, 3, 3});
    cr_assert(eq(int, weft_entity_destroy(world, a), WEFT_OK));
    cr_expect(eq(u32, weft_component_rows(world, pos), 1));
    cr_expect(eq(u32, weft_component_rows(world, vel), 0));
    cr_expect(eq(u32, weft_component_rows(world, tag), 0));
    cr_expect(eq(flt, ((const vec3_t *)weft_component_get(world, b, pos))->x, 3.0f));
    weft_entity_t r = test_entity(world);
    cr_expect(not(weft_component_has(world, r, pos)), "a recycled slot starts empty");
}

Test(component, reserve_avoids_reallocation) {
    cr_assert(eq(int, weft_component_reserve(world, pos, 1000), WEFT_OK));
    weft_entity_t e = test_entity(world);
    weft_component_add(world, e, pos, NULL);
    const void *first = weft_component_row(world, pos, 0);
    for (int i = 0; i < 999; i++) {
        weft_component_add(world, test_entity(world), pos, NULL);
    }
    cr_expect(weft_component_row(world, pos, 0) == first, "the data array never moved");
}

/* ---- hooks ---- */

typedef struct hook_log {
    char events[64][24];
    int n;
} hook_log_t;

static void log_hook(const char *what, weft_world_t *w, weft_entity_t e, weft_component_t c,
                     void *ptr, void *user) {
    (void)w;
    hook_log_t *log = user;
    snprintf(log->events[log->n++], sizeof log->events[0], "%s:%u:%u:%g", what,
             weft_entity_index(e), c.id, (double)((vec3_t *)ptr)->x);
}
static void on_add(weft_world_t *w, weft_entity_t e, weft_component_t c, void *p, void *u) {
    log_hook("add", w, e, c, p, u);
}
static void on_set(weft_world_t *w, weft_entity_t e, weft_component_t c, void *p, void *u) {
    log_hook("set", w, e, c, p, u);
}
static void on_remove(weft_world_t *w, weft_entity_t e, weft_component_t c, void *p, void *u) {
    log_hook("remove", w, e, c, p, u);
}

Test(component, hooks_fire_in_order_with_the_data) {
    static hook_log_t log;
    weft_component_desc_t d = {.name = "Hooked",
                               .size = sizeof(vec3_t),
                               .on_add = on_add,
                               .on_set = on_set,
                               .on_remove = on_remove,
                               .hook_user = &log};
    weft_component_t h;
    cr_assert(eq(int, weft_component_register(world, &d, &h), WEFT_OK));
    weft_entity_t e = test_entity(world);
    weft_component_set(world, e, h, &(vec3_t){5, 0, 0});
    weft_component_set(world, e, h, &(vec3_t){6, 0, 0});
    weft_component_remove(world, e, h);
    weft_component_add(world, e, h, NULL);
    weft_entity_destroy(world, e);
    const char *want[] = {"add:1:4:0",    "set:1:4:5", "set:1:4:6",
                          "remove:1:4:6", "add:1:4:0", "remove:1:4:0"};
    cr_assert(eq(int, log.n, 6));
    for (int i = 0; i < 6; i++) {
        cr_expect(eq(str, log.events[i], (char *)want[i]));
    }
}

#if WEFT_DEBUG >= 1
static weft_component_t victim;
static weft_result_t hook_result;
static void structural_hook(weft_world_t *w, weft_entity_t e, weft_component_t c, void *p,
                            void *u) {
    (void)c;
    (void)p;
    (void)u;
    hook_result = weft_component_add(w, e, victim, NULL);
}

Test(component, a_structural_change_from_a_hook_returns_estate_and_changes_nothing) {
    victim = vel;
    weft_component_desc_t d = {.name = "Bad", .size = 4, .on_add = structural_hook};
    weft_component_t bad;
    cr_assert(eq(int, weft_component_register(world, &d, &bad), WEFT_OK));
    weft_entity_t e = test_entity(world);
    cr_expect(eq(int, weft_component_add(world, e, bad, NULL), WEFT_OK));
    cr_expect(eq(int, hook_result, WEFT_ESTATE));
    cr_expect(weft_component_has(world, e, vel) == false, "the hook's add must not have happened");
    cr_expect(strstr(weft_last_error(), "inside a component hook") != NULL, "%s",
              weft_last_error());
}

#endif /* WEFT_DEBUG */

Test(component, register_with_nonzero_canary_is_einval) {
    weft_component_desc_t d = {.name = "X", .size = 4, ._canary = 1};
    weft_component_t c = {99};
    cr_expect(eq(int, weft_component_register(world, &d, &c), WEFT_EINVAL));
    cr_expect(eq(u32, weft_component_type_count(world), 3), "nothing was registered");
}
