/* test_observer.c: observers and events — firing order, every-component observers, events
 * delivered after the apply in command order, observer commands and their cascades, the
 * same world at every worker count, misuse. */
#include <stdio.h>
#include <string.h>

#include "sched_fixture.h"

TestSuite(observer, .timeout = 120);

/* ---- firing order -------------------------------------------------------------------- */

static char trail[64];
static size_t trail_len;

static void mark(char c) {
    if (trail_len + 1 < sizeof trail) {
        trail[trail_len++] = c;
        trail[trail_len] = '\0';
    }
}

static void own_hook(weft_world_t *w, weft_entity_t e, weft_component_t c, void *ptr, void *u) {
    (void)w, (void)e, (void)c, (void)ptr, (void)u;
    mark('H');
}

typedef struct letter {
    char c;
    int32_t seen; /* the value an observer read */
} letter_t;

static void letter_observer(weft_world_t *w, const weft_observation_t *ob, void *user) {
    (void)w;
    letter_t *l = user;
    mark(l->c);
    if (ob->data && ob->size == sizeof(int32_t)) {
        memcpy(&l->seen, ob->data, sizeof l->seen);
    }
}

static weft_observer_t observe(weft_world_t *w, weft_observe_t kind, weft_component_t c,
                               weft_observer_fn_t fn, void *user) {
    weft_observer_t o = {0};
    weft_observer_desc_t d = {.kind = kind, .component = c, .fn = fn, .user = user};
    cr_assert(eq(int, weft_observer_register(w, &d, &o), WEFT_OK), "%s", weft_last_error());
    return o;
}

Test(observer, observers_run_in_registration_order_after_the_component_hook) {
    fixture_t f;
    fixture_init(&f, 1, WEFT_EXECUTION_INLINE);
    weft_component_t hp;
    weft_component_desc_t cd = {.name = "Hooked",
                                .size = sizeof(int32_t),
                                .on_add = own_hook,
                                .on_set = own_hook,
                                .on_remove = own_hook};
    cr_assert(eq(int, weft_component_register(f.world, &cd, &hp), WEFT_OK));
    letter_t a = {.c = 'a'}, b = {.c = 'b'}, s = {.c = 's'}, r = {.c = 'r'};
    observe(f.world, WEFT_OBSERVE_ADD, hp, letter_observer, &a);
    observe(f.world, WEFT_OBSERVE_ADD, hp, letter_observer, &b);
    observe(f.world, WEFT_OBSERVE_SET, hp, letter_observer, &s);
    observe(f.world, WEFT_OBSERVE_REMOVE, hp, letter_observer, &r);
    weft_entity_t e;
    cr_assert(eq(int, weft_entity_create(f.world, &e), WEFT_OK));
    trail_len = 0;
    cr_assert(eq(int, weft_component_add(f.world, e, hp, NULL), WEFT_OK));
    cr_expect(eq(str, trail, "Hab"));
    trail_len = 0;
    int32_t v = 42;
    cr_assert(eq(int, weft_component_set(f.world, e, hp, &v), WEFT_OK));
    cr_expect(eq(str, trail, "Hs"));
    cr_expect(eq(i32, s.seen, 42), "SET sees the new value");
    trail_len = 0;
    cr_assert(eq(int, weft_component_remove(f.world, e, hp), WEFT_OK));
    cr_expect(eq(str, trail, "Hr"));
    cr_expect(eq(i32, r.seen, 42), "REMOVE sees the value before it goes");
    /* describe still reports the component's own hooks */
    weft_component_desc_t got;
    cr_assert(eq(int, weft_component_describe(f.world, hp, &got), WEFT_OK));
    cr_expect(got.on_add == own_hook);
    fixture_fini(&f);
}

static uint32_t changes[2]; /* adds, removes seen by the every-component observer */

static void count_changes(weft_world_t *w, const weft_observation_t *ob, void *user) {
    (void)w, (void)user;
    changes[ob->kind == WEFT_OBSERVE_REMOVE]++;
}

Test(observer, an_observer_of_every_component_sees_each_change_of_a_component_set) {
    fixture_t f;
    fixture_init(&f, 1, WEFT_EXECUTION_INLINE);
    memset(changes, 0, sizeof changes);
    weft_observer_t adds =
        observe(f.world, WEFT_OBSERVE_ADD, (weft_component_t){0}, count_changes, NULL);
    observe(f.world, WEFT_OBSERVE_REMOVE, (weft_component_t){0}, count_changes, NULL);
    weft_component_t late; /* registered after the observers */
    cr_assert(eq(int,
                 weft_component_register(f.world, &(weft_component_desc_t){.name = "Late"}, &late),
                 WEFT_OK));
    weft_entity_t e;
    cr_assert(eq(int, weft_entity_create(f.world, &e), WEFT_OK));
    cr_assert(eq(int, weft_component_add(f.world, e, f.pos, NULL), WEFT_OK));
    cr_assert(eq(int, weft_component_add(f.world, e, f.tag, NULL), WEFT_OK));
    cr_assert(eq(int, weft_component_add(f.world, e, late, NULL), WEFT_OK));
    cr_expect(eq(u32, changes[0], 3));
    cr_assert(eq(int, weft_entity_destroy(f.world, e), WEFT_OK));
    cr_expect(eq(u32, changes[1], 3), "destroy removes each component");
    cr_assert(eq(int, weft_observer_unregister(f.world, adds), WEFT_OK));
    cr_expect(eq(int, weft_observer_unregister(f.world, adds), WEFT_ESTALE));
    cr_assert(eq(int, weft_entity_create(f.world, &e), WEFT_OK));
    cr_assert(eq(int, weft_component_add(f.world, e, f.pos, NULL), WEFT_OK));
    cr_expect(eq(u32, changes[0], 3), "an unregistered observer sees nothing more");
    fixture_fini(&f);
}

/* ---- events from systems ------------------------------------------------------------- */

enum { ROWS = 700, LOG_MAX = 4096 };

typedef struct hit {
    uint32_t system, row; /* the emitting system's id and its row index in the batch */
} hit_t;

typedef struct ev_world {
    weft_world_t *w;
    weft_component_t val, marked[2], echoed;
    weft_event_t hit;
    hit_t log[LOG_MAX];
    uint32_t n;
    uint32_t unmarked; /* deliveries whose target lacked a marker (of either system) */
} ev_world_t;

/* Each row: mark the entity with this system's marker (command) and emit a hit at it. */
static void emitter(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    ev_world_t *ew = ctx->user;
    uint32_t row = ctx->chunk * 128u;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++, row++) {
            weft_entity_t e = weft_iter_entity(it, i);
            hit_t h = {ctx->system.id, row};
            CHECK(weft_cmd_add(ctx->cmd, e, ew->marked[ctx->system.id - 1]) == WEFT_OK);
            CHECK(weft_cmd_emit(ctx->cmd, ew->hit, e, &h) == WEFT_OK);
        }
    }
}

/* Logs each hit and answers through the observer buffer: the target gets `echoed`. */
static void on_hit(weft_world_t *w, const weft_observation_t *ob, void *user) {
    ev_world_t *ew = user;
    if (!weft_component_has(w, ob->entity, ew->marked[0]) ||
        !weft_component_has(w, ob->entity, ew->marked[1])) {
        ew->unmarked++;
    }
    if (ew->n < LOG_MAX) {
        memcpy(&ew->log[ew->n++], ob->data, sizeof(hit_t));
    }
    CHECK(weft_cmd_add(ob->cmd, ob->entity, ew->echoed) == WEFT_OK);
}

static void ev_run(ev_world_t *ew, uint32_t workers, uint64_t *hash) {
    memset(ew, 0, sizeof *ew);
    weft_world_desc_t d = {.worker_count = workers};
    if (workers == 0) {
        d = (weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE};
    }
    cr_assert(eq(int, weft_world_create(&d, &ew->w), WEFT_OK));
    weft_component_desc_t cd = {.name = "Val", .size = 4};
    cr_assert(eq(int, weft_component_register(ew->w, &cd, &ew->val), WEFT_OK));
    cd = (weft_component_desc_t){.name = "Marked1"};
    cr_assert(eq(int, weft_component_register(ew->w, &cd, &ew->marked[0]), WEFT_OK));
    cd = (weft_component_desc_t){.name = "Marked2"};
    cr_assert(eq(int, weft_component_register(ew->w, &cd, &ew->marked[1]), WEFT_OK));
    cd = (weft_component_desc_t){.name = "Echoed"};
    cr_assert(eq(int, weft_component_register(ew->w, &cd, &ew->echoed), WEFT_OK));
    weft_event_desc_t ed = {.name = "hit", .payload_size = sizeof(hit_t)};
    cr_assert(eq(int, weft_event_register(ew->w, &ed, &ew->hit), WEFT_OK));
    weft_observer_desc_t od = {
        .kind = WEFT_OBSERVE_EVENT, .event = ew->hit, .fn = on_hit, .user = ew};
    cr_assert(eq(int, weft_observer_register(ew->w, &od, NULL), WEFT_OK));
    for (uint32_t i = 0; i < ROWS; i++) {
        weft_entity_t e;
        cr_assert(eq(int, weft_entity_create(ew->w, &e), WEFT_OK));
        cr_assert(eq(int, weft_component_add(ew->w, e, ew->val, NULL), WEFT_OK));
    }
    for (int k = 0; k < 2; k++) {
        weft_system_desc_t sd = {.name = k ? "second" : "first",
                                 .fn = emitter,
                                 .user = ew,
                                 .terms = {R(ew->val)},
                                 .parallel = true,
                                 .chunk_size = 128};
        (void)must_register(ew->w, &sd);
    }
    cr_assert(eq(int, weft_world_progress(ew->w, 0.016f), WEFT_OK), "%s", weft_last_error());
    CHECKED();
    *hash = weft_world_hash(ew->w);
    cr_expect(eq(u32, weft_component_rows(ew->w, ew->echoed), ROWS),
              "the observer's commands were applied in the frame");
    weft_world_destroy(ew->w);
}

Test(observer, events_from_systems_arrive_after_the_apply_in_command_order_at_every_worker_count) {
    static ev_world_t ew;
    static hit_t ref[LOG_MAX];
    uint64_t ref_hash = 0;
    static const uint32_t workers[] = {0, 1, 2, 4};
    for (size_t v = 0; v < sizeof workers / sizeof workers[0]; v++) {
        uint64_t h;
        ev_run(&ew, workers[v], &h);
        cr_assert(eq(u32, ew.n, 2 * ROWS), "%u workers: every event delivered once", workers[v]);
        cr_expect(eq(u32, ew.unmarked, 0), "events come after the whole phase is applied");
        /* command order: system registration order, then chunk, then write order */
        for (uint32_t i = 0; i < ew.n; i++) {
            cr_assert(eq(u32, ew.log[i].system, i < ROWS ? 1u : 2u), "delivery %u", i);
            cr_assert(eq(u32, ew.log[i].row, i % ROWS), "delivery %u", i);
        }
        if (v == 0) {
            memcpy(ref, ew.log, sizeof ref);
            ref_hash = h;
        } else {
            cr_expect(eq(int, memcmp(ref, ew.log, ew.n * sizeof ref[0]), 0));
            cr_expect(eq(u64, h, ref_hash), "%u workers", workers[v]);
        }
    }
}

/* ---- observer commands ----------------------------------------------------------------- */

typedef struct chain {
    weft_component_t x, y, z;
} chain_t;

static void x_to_y(weft_world_t *w, const weft_observation_t *ob, void *user) {
    (void)w;
    const chain_t *c = user;
    CHECK(weft_cmd_add(ob->cmd, ob->entity, c->y) == WEFT_OK);
}

static void y_to_z(weft_world_t *w, const weft_observation_t *ob, void *user) {
    (void)w;
    const chain_t *c = user;
    CHECK(weft_cmd_add(ob->cmd, ob->entity, c->z) == WEFT_OK);
}

Test(observer, observer_commands_wait_for_the_next_apply_point_and_cascade) {
    fixture_t f;
    fixture_init(&f, 1, WEFT_EXECUTION_INLINE);
    chain_t c = {f.tag, f.hp, f.mass};
    observe(f.world, WEFT_OBSERVE_ADD, c.x, x_to_y, &c);
    observe(f.world, WEFT_OBSERVE_ADD, c.y, y_to_z, &c);
    weft_entity_t e;
    cr_assert(eq(int, weft_entity_create(f.world, &e), WEFT_OK));
    cr_assert(eq(int, weft_component_add(f.world, e, c.x, NULL), WEFT_OK));
    cr_expect(not(weft_component_has(f.world, e, c.y)), "not before an apply point");
    cr_assert(eq(int, weft_world_flush(f.world), WEFT_OK));
    cr_expect(weft_component_has(f.world, e, c.y));
    cr_expect(weft_component_has(f.world, e, c.z), "the cascade ran in a second round");
    CHECKED();
    fixture_fini(&f);
}

static void x_away(weft_world_t *w, const weft_observation_t *ob, void *user) {
    (void)w;
    const chain_t *c = user;
    CHECK(weft_cmd_remove(ob->cmd, ob->entity, c->x) == WEFT_OK);
}

static void x_back(weft_world_t *w, const weft_observation_t *ob, void *user) {
    (void)w;
    const chain_t *c = user;
    CHECK(weft_cmd_add(ob->cmd, ob->entity, c->x) == WEFT_OK);
}

Test(observer, an_endless_cascade_stops_after_its_rounds_and_reports_it) {
    fixture_t f;
    fixture_init(&f, 1, WEFT_EXECUTION_INLINE);
    chain_t c = {f.tag, f.hp, f.mass};
    observe(f.world, WEFT_OBSERVE_ADD, c.x, x_away, &c);
    observe(f.world, WEFT_OBSERVE_REMOVE, c.x, x_back, &c);
    weft_entity_t e;
    cr_assert(eq(int, weft_entity_create(f.world, &e), WEFT_OK));
    cr_assert(eq(int, weft_component_add(f.world, e, c.x, NULL), WEFT_OK));
    cr_expect(eq(int, weft_world_flush(f.world), WEFT_ECAPACITY), "%s", weft_last_error());
    cr_expect(weft_entity_is_alive(f.world, e));
    CHECKED();
    fixture_fini(&f);
}

/* ---- placeholders, main-thread events, misuse ----------------------------------------- */

typedef struct spawn {
    weft_event_t born;
    weft_entity_t seen;
    bool alive;
    weft_cmd_t *kept; /* a buffer kept past its run call (misuse) */
} spawn_t;

static void spawner(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    spawn_t *s = ctx->user;
    weft_entity_t ph = weft_cmd_create(ctx->cmd);
    CHECK(weft_cmd_emit(ctx->cmd, s->born, ph, NULL) == WEFT_OK);
    CHECK(weft_cmd_emit(ctx->cmd, (weft_event_t){99}, ph, NULL) == WEFT_EINVAL);
    s->kept = ctx->cmd;
}

static void on_born(weft_world_t *w, const weft_observation_t *ob, void *user) {
    spawn_t *s = user;
    s->seen = ob->entity;
    s->alive = weft_entity_is_alive(w, ob->entity);
}

Test(observer, event_targets_resolve_from_placeholders_and_misuse_is_refused) {
    fixture_t f;
    fixture_init(&f, 2, 0);
    static spawn_t sp;
    memset(&sp, 0, sizeof sp);
    weft_event_desc_t ed = {.name = "born"};
    cr_assert(eq(int, weft_event_register(f.world, &ed, &sp.born), WEFT_OK));
    cr_expect(eq(int, weft_event_register(f.world, &ed, &sp.born), WEFT_EEXIST));
    weft_observer_desc_t od = {
        .kind = WEFT_OBSERVE_EVENT, .event = sp.born, .fn = on_born, .user = &sp};
    cr_assert(eq(int, weft_observer_register(f.world, &od, NULL), WEFT_OK));
    (void)must_register(f.world,
                        &(weft_system_desc_t){.name = "spawn", .fn = spawner, .user = &sp});
    cr_assert(eq(int, weft_world_progress(f.world, 0.016f), WEFT_OK));
    CHECKED();
    cr_expect(ne(u64, sp.seen, 0), "the placeholder became the created entity");
    cr_expect(sp.alive);
    cr_expect(eq(int, weft_cmd_emit(sp.kept, sp.born, 0, NULL), WEFT_ESTATE),
              "a buffer used after its run call");
    /* main-thread events are delivered at once */
    sp.seen = 0;
    weft_entity_t e;
    cr_assert(eq(int, weft_entity_create(f.world, &e), WEFT_OK));
    cr_expect(eq(int, weft_event_emit(f.world, sp.born, e, NULL), WEFT_OK));
    cr_expect(eq(u64, sp.seen, e));
    /* bad registrations */
    weft_observer_desc_t bad = {.kind = WEFT_OBSERVE_ADD, .component = {999}, .fn = on_born};
    cr_expect(eq(int, weft_observer_register(f.world, &bad, NULL), WEFT_EINVAL));
    bad = (weft_observer_desc_t){.kind = (weft_observe_t)9, .fn = on_born};
    cr_expect(eq(int, weft_observer_register(f.world, &bad, NULL), WEFT_EINVAL));
    bad = (weft_observer_desc_t){.kind = WEFT_OBSERVE_EVENT, .event = {7}, .fn = on_born};
    cr_expect(eq(int, weft_observer_register(f.world, &bad, NULL), WEFT_EINVAL));
    bad = (weft_observer_desc_t){.kind = WEFT_OBSERVE_ADD};
    cr_expect(eq(int, weft_observer_register(f.world, &bad, NULL), WEFT_EINVAL), "no fn");
    weft_event_desc_t big = {.name = "big", .payload_size = WEFT_EVENT_PAYLOAD_MAX + 1};
    weft_event_t ev;
    cr_expect(eq(int, weft_event_register(f.world, &big, &ev), WEFT_EINVAL));
    weft_event_desc_t sized = {.name = "sized", .payload_size = 8};
    cr_assert(eq(int, weft_event_register(f.world, &sized, &ev), WEFT_OK));
    cr_expect(eq(int, weft_event_emit(f.world, ev, 0, NULL), WEFT_EINVAL), "payload missing");
    cr_expect(eq(int, weft_event_emit(NULL, ev, 0, NULL), WEFT_EINVAL));
    fixture_fini(&f);
}
