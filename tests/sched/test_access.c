/* test_access.c: access declarations are enforced in debug builds (undeclared reads and
 * writes to read-only components abort naming the system, since getters have no code to
 * return; structural changes from a system or from another thread mid-frame return
 * WEFT_ESTATE; widening a view is WEFT_EACCESS in every build), and narrowed views behave as
 * declared. */
#include <pthread.h>
#include <string.h>

#include "sched_fixture.h"

static fixture_t f;
static weft_entity_t target;

static void setup(void) {
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    cr_assert(eq(int, weft_entity_create(f.world, &target), WEFT_OK));
    vec3_t v = {1, 2, 3};
    weft_component_set(f.world, target, f.pos, &v);
    weft_component_set(f.world, target, f.vel, &v);
    int32_t hp = 7;
    weft_component_set(f.world, target, f.hp, &hp);
}

static void teardown(void) { fixture_fini(&f); }

TestSuite(access, .init = setup, .fini = teardown, .timeout = 20);

static void register_and_run(weft_system_fn_t fn) {
    must_register(
        f.world,
        &(weft_system_desc_t){
            .name = "mover", .fn = fn, .terms = {R(f.pos)}, .reads = {f.hp}, .writes = {f.mass}});
    (void)weft_world_progress(f.world, 0.0f);
}

/* ---- declared access works --------------------------------------------------------- */

static void declared_only(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            weft_entity_t e = weft_iter_entity(it, i);
            CHECK(weft_component_get(ctx->world, e, f.hp) != NULL);       /* declared read */
            CHECK(weft_component_get(ctx->world, e, f.pos) != NULL);      /* iterated read */
            CHECK(weft_component_get_mut(ctx->world, e, f.mass) == NULL); /* write, absent */
        }
    }
    CHECK(weft_view_can_read(ctx->view, f.pos) && weft_view_can_read(ctx->view, f.hp));
    CHECK(weft_view_can_write(ctx->view, f.mass) && weft_view_can_read(ctx->view, f.mass));
    CHECK(!weft_view_can_write(ctx->view, f.pos) && !weft_view_can_read(ctx->view, f.vel));
}

Test(access, declared_reads_and_writes_are_allowed) {
    register_and_run(declared_only);
    CHECKED();
}

typedef struct helper_arg {
    weft_world_t *world;
    int32_t hp;
} helper_arg_t;

static void read_hp(const weft_view_t *view, void *arg) {
    helper_arg_t *a = arg;
    CHECK(weft_view_can_read(view, f.hp) && !weft_view_can_read(view, f.pos));
    a->hp = *(const int32_t *)weft_component_get(a->world, target, f.hp);
}

static void narrow_and_call(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    weft_view_t sub;
    CHECK(weft_view_narrow(ctx->view, &f.hp, 1, NULL, 0, &sub) == WEFT_OK);
    helper_arg_t arg = {ctx->world, 0};
    weft_view_run(&sub, read_hp, &arg);
    CHECK(arg.hp == 7);
}

Test(access, a_narrowed_view_lets_a_helper_read_what_it_was_given) {
    register_and_run(narrow_and_call);
    CHECKED();
}

/* ---- violations abort in debug builds ------------------------------------------------ */

#if WEFT_DEBUG >= 1

static void undeclared_read(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    (void)weft_component_get(ctx->world, target, f.vel);
}

Test(access, reading_an_undeclared_component_aborts, .signal = SIGABRT) {
    register_and_run(undeclared_read);
}

static void write_read_only(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    (void)weft_component_get_mut(ctx->world, target, f.pos);
}

Test(access, writing_a_read_only_component_aborts, .signal = SIGABRT) {
    register_and_run(write_read_only);
}

static _Atomic int structural_result;

static void structural(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    weft_entity_t e;
    atomic_store(&structural_result, (int)weft_entity_create(ctx->world, &e));
}

Test(access, a_structural_change_inside_a_system_returns_estate) {
    uint32_t before = weft_entity_count(f.world);
    register_and_run(structural);
    cr_expect(eq(int, atomic_load(&structural_result), WEFT_ESTATE));
    cr_expect(eq(u32, weft_entity_count(f.world), before));
}

static void read_pos(const weft_view_t *view, void *arg) {
    (void)view;
    (void)weft_component_get(arg, target, f.pos);
}

static void helper_outside_view(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    weft_view_t sub;
    (void)weft_view_narrow(ctx->view, &f.hp, 1, NULL, 0, &sub);
    weft_view_run(&sub, read_pos, ctx->world);
}

Test(access, a_helper_reading_outside_its_narrowed_view_aborts, .signal = SIGABRT) {
    register_and_run(helper_outside_view);
}

static _Atomic int intruder_result;

static void *add_from_elsewhere(void *world) {
    atomic_store(&intruder_result, (int)weft_component_add(world, target, f.tag, NULL));
    return NULL;
}

/* A thread of the program's own (not a worker, not the main thread) changing the world while
 * a frame runs: the system starts it and waits for it, so the call lands mid-frame. */
static void start_intruder(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    pthread_t t;
    if (pthread_create(&t, NULL, add_from_elsewhere, ctx->world) == 0) {
        pthread_join(t, NULL);
    }
}

Test(access, another_thread_adding_a_component_during_a_frame_gets_estate) {
    atomic_store(&intruder_result, -1);
    register_and_run(start_intruder);
    cr_expect(eq(int, atomic_load(&intruder_result), WEFT_ESTATE));
    cr_expect(weft_component_has(f.world, target, f.tag) == false, "the world is unchanged");
}

#endif /* WEFT_DEBUG */

static _Atomic int widen_result;

static void widen(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    weft_view_t sub;
    atomic_store(&widen_result, (int)weft_view_narrow(ctx->view, NULL, 0, &f.pos, 1, &sub));
}

Test(access, narrowing_to_more_than_the_system_declared_is_refused) {
    register_and_run(widen);
    cr_expect(eq(int, atomic_load(&widen_result), WEFT_EACCESS));
}
