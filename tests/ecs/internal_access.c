/* internal_access.c: the debug access check (system declarations enforced on component calls)
 * and the world's module-finaliser slots. Includes private headers to play the scheduler. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <signal.h>

#include "ecs_fixture.h"
#include "src/core/access.h"
#include "src/core/world.h"

static test_alloc_t alloc;
static weft_world_t *world;
static weft_component_t pos, vel;
static weft_entity_t ent;
static weft__access_set_t set;

static void setup(void) {
    memset(&alloc, 0, sizeof alloc);
    world = test_world(&alloc);
    pos = test_register(world, "Position", sizeof(vec3_t));
    vel = test_register(world, "Velocity", sizeof(vec3_t));
    ent = test_entity(world);
    weft_component_add(world, ent, pos, NULL);
    weft_component_add(world, ent, vel, NULL);
    memset(&set, 0, sizeof set);
    set.world = world;
    set.system = "move";
    weft__access_add(&set, pos.id, true);
    weft__access_add(&set, vel.id, false);
}

static void teardown(void) {
    weft__access_leave(NULL);
    weft_world_destroy(world);
}

TestSuite(access, .init = setup, .fini = teardown, .timeout = 10);

Test(access, declared_reads_and_writes_are_allowed) {
    const weft__access_set_t *prev = weft__access_enter(&set);
    cr_expect(prev == NULL);
    cr_expect(weft_component_get_mut(world, ent, pos) != NULL);
    cr_expect(weft_component_get(world, ent, pos) != NULL, "write implies read");
    cr_expect(weft_component_get(world, ent, vel) != NULL);
    weft_query_t *q = NULL;
    weft__access_leave(prev);
    weft_query_desc_t d = {.terms = {{.component = pos, .access = WEFT_ACCESS_WRITE},
                                     {.component = vel, .access = WEFT_ACCESS_READ}}};
    cr_assert(eq(int, weft_query_create(world, &d, &q), WEFT_OK));
    weft__access_enter(&set);
    weft_iter_t it;
    cr_expect(eq(int, weft_query_iter(q, 0, 0, &it), WEFT_OK));
    cr_expect(weft__access_current() == &set);
}

Test(access, another_worlds_system_does_not_restrict_this_world) {
    set.world = (const weft_world_t *)&set; /* any other world */
    weft__access_enter(&set);
    cr_expect(eq(int, weft_component_remove(world, ent, vel), WEFT_OK));
}

#if WEFT_DEBUG >= 1
Test(access, writing_a_component_declared_read_aborts, .signal = SIGABRT) {
    weft__access_enter(&set);
    (void)weft_component_get_mut(world, ent, vel);
}

Test(access, reading_an_undeclared_component_aborts, .signal = SIGABRT) {
    weft__access_add(&set, 0, false); /* unrelated bit */
    memset(set.read, 0, sizeof set.read);
    weft__access_enter(&set);
    (void)weft_component_get(world, ent, vel);
}

Test(access, a_structural_change_inside_a_system_returns_estate_and_changes_nothing) {
    weft__access_enter(&set);
    weft_entity_t e = 1;
    cr_expect(eq(int, weft_entity_create(world, &e), WEFT_ESTATE));
    cr_expect(eq(u64, e, WEFT_ENTITY_NULL));
    cr_expect(eq(int, weft_component_remove(world, ent, vel), WEFT_ESTATE));
    cr_expect(eq(int, weft_entity_destroy(world, ent), WEFT_ESTATE));
    cr_expect(strstr(weft_last_error(), "inside system 'move'") != NULL, "%s", weft_last_error());
    weft__access_leave(NULL);
    cr_expect(eq(u32, weft_entity_count(world), 1));
    cr_expect(weft_component_has(world, ent, vel));
}

Test(access, iterating_a_query_beyond_the_declaration_returns_eaccess) {
    weft_query_t *q = NULL;
    weft_query_desc_t d = {.terms = {{.component = pos, .access = WEFT_ACCESS_READ},
                                     {.component = vel, .access = WEFT_ACCESS_WRITE}}};
    cr_assert(eq(int, weft_query_create(world, &d, &q), WEFT_OK));
    weft__access_enter(&set);
    weft_iter_t it;
    cr_expect(eq(int, weft_query_iter(q, 0, 0, &it), WEFT_EACCESS));
    cr_expect(strstr(weft_last_error(), "writes component 'Velocity'") != NULL, "%s",
              weft_last_error());
}
#endif /* WEFT_DEBUG */

/* ---- module finalisers ---- */

static int fini_log[4];
static int fini_n;
static void fini_a(weft_world_t *w) {
    cr_assert(eq(u32, weft_component_rows(w, pos), 1), "pools still exist in finalisers");
    fini_log[fini_n++] = 1;
}
static void fini_b(weft_world_t *w) {
    (void)w;
    fini_log[fini_n++] = 2;
}

Test(access, module_finalisers_run_in_reverse_order_before_pools_go) {
    weft_world_t *w = test_world(&alloc);
    weft_component_t p = test_register(w, "Position", sizeof(vec3_t));
    weft_component_add(w, test_entity(w), p, NULL);
    cr_assert(eq(int, weft__world_add_module_fini(w, fini_a), WEFT_OK));
    cr_assert(eq(int, weft__world_add_module_fini(w, fini_b), WEFT_OK));
    cr_expect(w->sched == NULL && w->module_part_count == 0);
    weft_world_destroy(w);
    cr_assert(eq(int, fini_n, 2));
    cr_expect(eq(int, fini_log[0], 2));
    cr_expect(eq(int, fini_log[1], 1));
}
