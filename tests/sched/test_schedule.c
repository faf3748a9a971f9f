/* test_schedule.c: the dependency graph of known system sets — edges, labels, run order,
 * phases, before/after constraints, registration checks, conflicts list and DOT output. */
#include <stdio.h>
#include <string.h>

#include "sched_fixture.h"

static fixture_t f;

static void setup(void) { fixture_init(&f, 1, WEFT_EXECUTION_INLINE); }
static void teardown(void) { fixture_fini(&f); }

TestSuite(schedule, .init = setup, .fini = teardown, .timeout = 10);

/* Register a system with the given terms (a zero component ends the list). */
static weft_system_t sys_terms(const char *name, weft_query_term_t t0, weft_query_term_t t1) {
    return must_register(f.world,
                         &(weft_system_desc_t){.name = name, .fn = noop_system, .terms = {t0, t1}});
}

/* True when the reduced schedule holds from -> to, labelled with component c (0: constraint). */
static bool has_edge(weft_system_t from, weft_system_t to, uint32_t c) {
    weft_schedule_edge_t e[64];
    uint32_t n = 0;
    cr_assert(eq(int, weft_schedule_edges(f.world, e, 64, &n), WEFT_OK));
    for (uint32_t i = 0; i < n && i < 64; i++) {
        if (e[i].from.id == from.id && e[i].to.id == to.id && e[i].component.id == c) {
            return true;
        }
    }
    return false;
}

static const weft_query_term_t NONE = {0};

Test(schedule, independent_systems_have_no_edges) {
    sys_terms("a", (weft_query_term_t)W(f.pos), NONE);
    sys_terms("b", (weft_query_term_t)W(f.vel), NONE);
    sys_terms("c", (weft_query_term_t)R(f.hp), NONE);
    sys_terms("d", (weft_query_term_t)R(f.hp), NONE);
    cr_expect(eq(u32, edge_count(f.world), 0));
}

Test(schedule, writers_of_one_component_chain_in_registration_order) {
    weft_system_t a = sys_terms("a", (weft_query_term_t)W(f.pos), NONE);
    weft_system_t b = sys_terms("b", (weft_query_term_t)W(f.pos), NONE);
    weft_system_t c = sys_terms("c", (weft_query_term_t)W(f.pos), NONE);
    cr_expect(eq(u32, edge_count(f.world), 2), "a->c must be reduced away");
    cr_expect(has_edge(a, b, f.pos.id));
    cr_expect(has_edge(b, c, f.pos.id));
}

Test(schedule, readers_run_together_between_writers) {
    weft_system_t a = sys_terms("write1", (weft_query_term_t)W(f.pos), NONE);
    weft_system_t b = sys_terms("read1", (weft_query_term_t)R(f.pos), NONE);
    weft_system_t c = sys_terms("read2", (weft_query_term_t)R(f.pos), NONE);
    weft_system_t d = sys_terms("write2", (weft_query_term_t)W(f.pos), NONE);
    cr_expect(eq(u32, edge_count(f.world), 4));
    cr_expect(has_edge(a, b, f.pos.id));
    cr_expect(has_edge(a, c, f.pos.id));
    cr_expect(has_edge(b, d, f.pos.id));
    cr_expect(has_edge(c, d, f.pos.id));
}

Test(schedule, known_graph_edges_are_labelled_with_the_forcing_component) {
    /* move: W pos R vel; damage: W hp; render: R pos R hp; physics: W vel; late: W pos. */
    weft_system_t move =
        sys_terms("move", (weft_query_term_t)W(f.pos), (weft_query_term_t)R(f.vel));
    weft_system_t damage = sys_terms("damage", (weft_query_term_t)W(f.hp), NONE);
    weft_system_t render =
        sys_terms("render", (weft_query_term_t)R(f.pos), (weft_query_term_t)R(f.hp));
    weft_system_t physics = sys_terms("physics", (weft_query_term_t)W(f.vel), NONE);
    weft_system_t late = sys_terms("late", (weft_query_term_t)W(f.pos), NONE);
    cr_expect(eq(u32, edge_count(f.world), 4));
    cr_expect(has_edge(move, render, f.pos.id));
    cr_expect(has_edge(damage, render, f.hp.id));
    cr_expect(has_edge(move, physics, f.vel.id));
    cr_expect(has_edge(render, late, f.pos.id));
    cr_expect(has_edge(physics, late, 0) == false);
    cr_expect(has_edge(move, late, f.pos.id) == false, "implied by move->render->late");
    weft_system_t order[8];
    uint32_t norder = 0;
    cr_assert(eq(int, weft_schedule_order(f.world, order, 8, &norder), WEFT_OK));
    cr_assert(eq(u32, norder, 5));
    for (uint32_t i = 0; i < 5; i++) {
        cr_expect(eq(u32, order[i].id, i + 1), "no constraints: registration order");
    }
    (void)physics;
}

Test(schedule, lookups_count_as_access) {
    weft_system_t a = must_register(
        f.world, &(weft_system_desc_t){
                     .name = "a", .fn = noop_system, .terms = {R(f.vel)}, .writes = {f.mass}});
    weft_system_t b = must_register(
        f.world, &(weft_system_desc_t){
                     .name = "b", .fn = noop_system, .terms = {R(f.pos)}, .reads = {f.mass}});
    cr_expect(has_edge(a, b, f.mass.id));
}

Test(schedule, excluded_components_do_not_conflict) {
    sys_terms("writer", (weft_query_term_t)W(f.pos), NONE);
    must_register(f.world, &(weft_system_desc_t){.name = "skipper",
                                                 .fn = noop_system,
                                                 .terms = {R(f.vel)},
                                                 .exclude = {f.pos}});
    cr_expect(eq(u32, edge_count(f.world), 0));
}

Test(schedule, before_constraint_reorders_a_conflicting_pair) {
    weft_system_t a = sys_terms("a", (weft_query_term_t)W(f.pos), NONE);
    weft_system_t b = must_register(
        f.world, &(weft_system_desc_t){
                     .name = "b", .fn = noop_system, .terms = {W(f.pos)}, .before = {"a"}});
    cr_expect(has_edge(b, a, f.pos.id));
    cr_expect(not(has_edge(a, b, f.pos.id)));
    weft_system_t order[2];
    uint32_t norder = 0;
    cr_assert(eq(int, weft_schedule_order(f.world, order, 2, &norder), WEFT_OK));
    cr_expect(eq(u32, order[0].id, b.id));
}

Test(schedule, after_constraint_orders_independent_systems) {
    weft_system_t a = sys_terms("a", (weft_query_term_t)W(f.pos), NONE);
    weft_system_t b = must_register(
        f.world,
        &(weft_system_desc_t){.name = "b", .fn = noop_system, .terms = {W(f.vel)}, .after = {"a"}});
    cr_expect(has_edge(a, b, 0));
}

Test(schedule, forward_references_apply_once_the_named_system_exists) {
    weft_system_t a = must_register(
        f.world, &(weft_system_desc_t){
                     .name = "a", .fn = noop_system, .terms = {W(f.pos)}, .after = {"later"}});
    cr_expect(eq(u32, edge_count(f.world), 0));
    weft_system_t later = sys_terms("later", (weft_query_term_t)W(f.vel), NONE);
    cr_expect(has_edge(later, a, 0));
}

Test(schedule, a_before_after_cycle_is_rejected_naming_the_systems) {
    must_register(f.world,
                  &(weft_system_desc_t){.name = "alpha", .fn = noop_system, .after = {"gamma"}});
    must_register(f.world,
                  &(weft_system_desc_t){.name = "beta", .fn = noop_system, .after = {"alpha"}});
    weft_system_t g = {0};
    weft_result_t r = weft_system_register(
        f.world, &(weft_system_desc_t){.name = "gamma", .fn = noop_system, .after = {"beta"}}, &g);
    cr_assert(eq(int, r, WEFT_ECYCLE));
    const char *msg = weft_last_error();
    cr_expect(strstr(msg, "alpha") && strstr(msg, "beta") && strstr(msg, "gamma"), "%s", msg);
    cr_expect(eq(u32, weft_system_count(f.world), 2), "nothing registered");
    cr_expect(eq(u32, g.id, 0));
    /* The survivors still schedule: beta after alpha only. */
    cr_expect(eq(u32, edge_count(f.world), 1));
    must_register(f.world, &(weft_system_desc_t){.name = "gamma", .fn = noop_system});
}

Test(schedule, a_constraint_against_the_phase_order_is_a_cycle) {
    must_register(f.world, &(weft_system_desc_t){.name = "late", .fn = noop_system, .phase = 2});
    weft_result_t r = weft_system_register(
        f.world,
        &(weft_system_desc_t){.name = "early", .fn = noop_system, .phase = 1, .after = {"late"}},
        NULL);
    cr_expect(eq(int, r, WEFT_ECYCLE));
    cr_expect(strstr(weft_last_error(), "early") && strstr(weft_last_error(), "late"));
}

Test(schedule, phases_run_in_ascending_order_without_cross_edges) {
    weft_system_t a = must_register(
        f.world,
        &(weft_system_desc_t){.name = "a", .fn = noop_system, .terms = {W(f.pos)}, .phase = 5});
    weft_system_t b = must_register(
        f.world,
        &(weft_system_desc_t){.name = "b", .fn = noop_system, .terms = {W(f.pos)}, .phase = 1});
    weft_system_t c = must_register(
        f.world,
        &(weft_system_desc_t){.name = "c", .fn = noop_system, .terms = {W(f.pos)}, .phase = 5});
    weft_system_t order[3];
    uint32_t norder = 0;
    cr_assert(eq(int, weft_schedule_order(f.world, order, 3, &norder), WEFT_OK));
    cr_assert(eq(u32, norder, 3));
    cr_expect(eq(u32, order[0].id, b.id));
    cr_expect(eq(u32, order[1].id, a.id));
    cr_expect(eq(u32, order[2].id, c.id));
    cr_expect(eq(u32, edge_count(f.world), 1), "the barrier is not an edge");
    cr_expect(has_edge(a, c, f.pos.id));
}

Test(schedule, unknown_components_are_rejected) {
    weft_result_t r = weft_system_register(
        f.world,
        &(weft_system_desc_t){.name = "bad", .fn = noop_system, .terms = {{.component = {200}}}},
        NULL);
    cr_expect(eq(int, r, WEFT_EINVAL));
    cr_expect(strstr(weft_last_error(), "bad") != NULL, "%s", weft_last_error());
    r = weft_system_register(
        f.world, &(weft_system_desc_t){.name = "bad2", .fn = noop_system, .reads = {{77}}}, NULL);
    cr_expect(eq(int, r, WEFT_EINVAL));
    cr_expect(eq(u32, weft_system_count(f.world), 0));
}

Test(schedule, writing_an_excluded_component_is_a_conflict) {
    weft_result_t r = weft_system_register(f.world,
                                           &(weft_system_desc_t){.name = "confused",
                                                                 .fn = noop_system,
                                                                 .terms = {R(f.vel)},
                                                                 .writes = {f.pos},
                                                                 .exclude = {f.pos}},
                                           NULL);
    cr_expect(eq(int, r, WEFT_ECONFLICT));
    cr_expect(strstr(weft_last_error(), "confused") && strstr(weft_last_error(), "Position"), "%s",
              weft_last_error());
}

Test(schedule, duplicate_names_are_rejected) {
    sys_terms("same", (weft_query_term_t)W(f.pos), NONE);
    weft_result_t r = weft_system_register(
        f.world, &(weft_system_desc_t){.name = "same", .fn = noop_system}, NULL);
    cr_expect(eq(int, r, WEFT_EEXIST));
}

Test(schedule, lookup_and_name_round_trip) {
    weft_system_t a = sys_terms("first", (weft_query_term_t)W(f.pos), NONE);
    cr_expect(eq(u32, weft_system_lookup(f.world, "first").id, a.id));
    cr_expect(eq(u32, weft_system_lookup(f.world, "missing").id, 0));
    cr_expect(eq(str, (char *)weft_system_name(f.world, a), "first"));
    cr_expect(weft_system_name(f.world, (weft_system_t){9}) == NULL);
}

Test(schedule, conflicts_are_listed_in_registration_order) {
    weft_system_t a = sys_terms("a", (weft_query_term_t)R(f.pos), NONE);
    weft_system_t b = sys_terms("b", (weft_query_term_t)W(f.vel), NONE);
    weft_system_t c = sys_terms("c", (weft_query_term_t)W(f.pos), (weft_query_term_t)R(f.vel));
    weft_system_conflict_t out[8];
    uint32_t nconf = 0;
    cr_assert(eq(int, weft_schedule_conflicts(f.world, out, 8, &nconf), WEFT_OK));
    cr_assert(eq(u32, nconf, 2));
    cr_expect(eq(u32, out[0].first.id, a.id));
    cr_expect(eq(u32, out[0].second.id, c.id));
    cr_expect(eq(u32, out[0].component.id, f.pos.id));
    cr_expect(eq(u32, out[1].first.id, b.id));
    cr_expect(eq(u32, out[1].second.id, c.id));
    cr_expect(eq(u32, out[1].component.id, f.vel.id));
}

Test(schedule, dot_shows_access_and_edge_labels) {
    sys_terms("move", (weft_query_term_t)W(f.pos), (weft_query_term_t)R(f.vel));
    sys_terms("draw", (weft_query_term_t)R(f.pos), NONE);
    must_register(f.world, &(weft_system_desc_t){.name = "still",
                                                 .fn = noop_system,
                                                 .terms = {R(f.mass)},
                                                 .exclude = {f.vel},
                                                 .parallel = true});
    size_t len = 0, len2 = 0;
    cr_assert(eq(int, weft_schedule_dot(f.world, NULL, 0, &len), WEFT_OK));
    cr_assert(len > 0, "len > 0 (%zu vs %zu)", (size_t)(len), (size_t)(0));
    char *buf = malloc(len + 1);
    cr_assert(eq(int, weft_schedule_dot(f.world, buf, len + 1, &len2), WEFT_OK));
    cr_assert(eq(sz, len2, len));
    cr_expect(strstr(buf, "digraph") != NULL);
    cr_expect(strstr(buf, "move\\nW Position\\nR Velocity") != NULL, "%s", buf);
    cr_expect(strstr(buf, "s1 -> s2 [label=\"Position\"]") != NULL, "%s", buf);
    cr_expect(strstr(buf, "still\\nR Mass\\nX Velocity\", style=bold") != NULL, "%s", buf);
    /* Truncation keeps the snprintf contract. */
    char small[16];
    cr_assert(eq(int, weft_schedule_dot(f.world, small, sizeof small, &len2), WEFT_OK));
    cr_expect(eq(sz, len2, len));
    cr_expect(eq(sz, strlen(small), sizeof small - 1));
    free(buf);
}

Test(schedule, a_rejected_registration_leaves_no_constraint_behind) {
    /* Twenty systems wait for "x" (a forward reference); "x" itself closes a cycle. */
    for (int i = 0; i < 20; i++) {
        char name[8];
        snprintf(name, sizeof name, "a%02d", i);
        must_register(f.world,
                      &(weft_system_desc_t){.name = name, .fn = noop_system, .after = {"x"}});
    }
    weft_result_t r = weft_system_register(
        f.world, &(weft_system_desc_t){.name = "x", .fn = noop_system, .after = {"a05"}}, NULL);
    cr_assert(eq(int, r, WEFT_ECYCLE));
    /* The next system takes x's slot: nobody may be left waiting for it. */
    must_register(f.world, &(weft_system_desc_t){.name = "y", .fn = noop_system});
    cr_expect(eq(u32, edge_count(f.world), 0));
    weft_system_t x = must_register(f.world, &(weft_system_desc_t){.name = "x", .fn = noop_system});
    cr_expect(eq(u32, edge_count(f.world), 20));
    cr_expect(has_edge(x, weft_system_lookup(f.world, "a19"), 0));
}

Test(schedule, a_system_name_longer_than_the_kept_length_is_einval_and_registers_nothing) {
    char name[WEFT_SYSTEM_NAME_MAX + 2];
    memset(name, 's', sizeof name - 1);
    name[sizeof name - 1] = '\0'; /* WEFT_SYSTEM_NAME_MAX + 1 bytes */
    weft_system_t s = {0};
    cr_expect(eq(
        int,
        weft_system_register(f.world, &(weft_system_desc_t){.name = name, .fn = noop_system}, &s),
        WEFT_EINVAL));
    cr_expect(strstr(weft_last_error(), "name") != NULL, "%s", weft_last_error());
    uint32_t n = 0;
    cr_assert(eq(int, weft_schedule_order(f.world, NULL, 0, &n), WEFT_OK));
    cr_expect(eq(u32, n, 0), "nothing was registered");
    name[WEFT_SYSTEM_NAME_MAX] = '\0'; /* exactly the kept length: accepted, whole */
    cr_expect(eq(
        int,
        weft_system_register(f.world, &(weft_system_desc_t){.name = name, .fn = noop_system}, &s),
        WEFT_OK));
    cr_expect(eq(str, (char *)weft_system_name(f.world, s), name));
}
