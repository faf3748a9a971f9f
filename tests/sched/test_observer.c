/* test_observer.c: observers and events — firing order, every-component observers, events
 * delivered after the apply in command order, observer commands and their cascades, the
 * same world at every worker count, misuse. */
#include <stdio.h>
#include <string.h>
#include <time.h>

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

/* ---- a random churn with every control feature at once -------------------------------- */

/* Systems chosen from a seed make random structural changes through their buffers, emit
 * events, read and write a resource and run under run conditions that read it, while
 * observers keep a model of every entity's component set from what they are told. At the end
 * of every frame the model must equal the world (every change observed exactly once, in an
 * order that makes sense), and the world hash and the whole observation log must be the same
 * at every worker count as inline. */

enum { RC_COMPS = 4, RC_ENTITIES = 400, RC_DEFS = 8, RC_FRAMES = 24, RC_IDX = 4096 };

typedef struct rc_def {
    uint32_t w, r;        /* written and read component (r == w: no read term) */
    uint32_t mod;         /* runs when (clock + k) % mod != 0 */
    bool parallel, ticks; /* ticks: a one-job system that writes the clock resource */
    uint32_t phase;
} rc_def_t;

typedef struct rc_world {
    weft_world_t *w;
    weft_component_t c[RC_COMPS], clock;
    weft_event_t ping;
    const rc_def_t *defs;
    uint64_t seed;
    weft_entity_t handle[RC_IDX];   /* the entity last seen at each index */
    uint8_t has[RC_IDX][RC_COMPS];  /* the model, kept by the observers */
    uint32_t unexpected;            /* observations the model says cannot happen */
    uint64_t log;                   /* every observation folded in, in order */
    uint32_t adds, any_adds, pings; /* per-component ADDs, every-component ADDs, events */
    weft_system_t ids[RC_DEFS];
    uint32_t k[RC_DEFS]; /* k of each def (its index), for run_if */
} rc_world_t;

static rc_world_t *rc_cur;

static uint64_t rc_rand(uint64_t *s) { /* xorshift64 */
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
} /* the world the run conditions and bodies belong to */

static void rc_note(rc_world_t *rw, uint32_t kind, uint32_t idx, uint32_t what) {
    rw->log = fixture_mix(rw->log ^ ((uint64_t)kind << 56 | (uint64_t)idx << 24 | what));
}

static uint32_t rc_comp(const rc_world_t *rw, weft_component_t c) {
    for (uint32_t i = 0; i < RC_COMPS; i++) {
        if (rw->c[i].id == c.id) {
            return i;
        }
    }
    return RC_COMPS;
}

static void rc_observe(weft_world_t *w, const weft_observation_t *ob, void *user) {
    (void)w;
    rc_world_t *rw = user;
    uint32_t idx = weft_entity_index(ob->entity), c = rc_comp(rw, ob->component);
    if (idx >= RC_IDX || c >= RC_COMPS) {
        rw->unexpected++;
        return;
    }
    rw->handle[idx] = ob->entity;
    rc_note(rw, (uint32_t)ob->kind, idx, c);
    switch (ob->kind) {
    case WEFT_OBSERVE_ADD:
        rw->unexpected += rw->has[idx][c];
        rw->has[idx][c] = 1;
        rw->adds++;
        if (c == 2) { /* a cascade: C brings B along, through the observer buffer */
            rw->unexpected += weft_cmd_add(ob->cmd, ob->entity, rw->c[1]) != WEFT_OK;
        }
        break;
    case WEFT_OBSERVE_REMOVE:
        rw->unexpected += !rw->has[idx][c];
        rw->has[idx][c] = 0;
        break;
    default: /* SET: the value is there */
        rw->unexpected += !rw->has[idx][c] || ob->size != sizeof(uint32_t);
        rc_note(rw, 9, idx, *(const uint32_t *)ob->data);
        break;
    }
}

static void rc_any_add(weft_world_t *w, const weft_observation_t *ob, void *user) {
    (void)w, (void)ob;
    ((rc_world_t *)user)->any_adds++;
}

/* A ping at an entity: logged; odd payloads give it D, payloads divisible by 5 take A. */
static void rc_on_ping(weft_world_t *w, const weft_observation_t *ob, void *user) {
    rc_world_t *rw = user;
    uint32_t payload;
    memcpy(&payload, ob->data, sizeof payload);
    rw->pings++;
    rc_note(rw, 7, weft_entity_index(ob->entity), payload);
    if (!weft_entity_is_alive(w, ob->entity)) {
        return;
    }
    if (payload & 1u) {
        rw->unexpected += weft_cmd_add(ob->cmd, ob->entity, rw->c[3]) != WEFT_OK;
    }
    if (payload % 5u == 0) {
        rw->unexpected += weft_cmd_remove(ob->cmd, ob->entity, rw->c[0]) != WEFT_OK;
    }
}

static uint64_t rc_clock(const rc_world_t *rw) {
    return *(const uint64_t *)weft_resource_get(rw->w, rw->clock);
}

static bool rc_cond(weft_world_t *w, float dt, void *user) {
    (void)w, (void)dt;
    uint32_t k = *(const uint32_t *)user;
    return (rc_clock(rc_cur) + k) % rc_cur->defs[k].mod != 0;
}

static void rc_tick(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    rc_world_t *rw = ctx->user;
    uint64_t *clk = weft_resource_get_mut(ctx->world, rw->clock);
    CHECK(clk != NULL);
    if (clk) {
        *clk += 1u + ctx->system.id;
    }
}

/* Each row: fold the read column and the clock into the written one, then, by a hash of
 * (seed, entity, clock, system), maybe remove or add a component, emit a ping, destroy the
 * entity or create one. */
static void rc_body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    rc_world_t *rw = ctx->user;
    uint32_t k = UINT32_MAX;
    for (uint32_t i = 0; i < RC_DEFS; i++) {
        k = rw->ids[i].id == ctx->system.id ? i : k;
    }
    CHECK(k < RC_DEFS);
    if (k >= RC_DEFS) {
        return;
    }
    const rc_def_t *d = &rw->defs[k];
    uint64_t clk = rc_clock(rw);
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            weft_entity_t e = weft_iter_entity(it, i);
            uint32_t *w = weft_iter_get(it, 0, i); /* columns may be NULL for a join */
            uint32_t r = d->r != d->w ? *(const uint32_t *)weft_iter_get(it, 1, i) : 7u;
            *w = *w * 31u + r + (uint32_t)clk;
            uint64_t h = fixture_mix(rw->seed ^ fixture_mix(e ^ (clk << 20) ^ ctx->system.id));
            uint32_t roll = (uint32_t)(h % 100u), c = (uint32_t)(h >> 32) % RC_COMPS;
            if (roll < 4) {
                CHECK(weft_cmd_remove(ctx->cmd, e, rw->c[c]) == WEFT_OK);
            } else if (roll < 8) {
                CHECK(weft_cmd_add(ctx->cmd, e, rw->c[c]) == WEFT_OK);
            } else if (roll < 11) {
                uint32_t payload = (uint32_t)(h >> 40);
                CHECK(weft_cmd_emit(ctx->cmd, rw->ping, e, &payload) == WEFT_OK);
            } else if (roll < 12) {
                CHECK(weft_cmd_destroy(ctx->cmd, e) == WEFT_OK);
            } else if (roll < 13) {
                weft_entity_t p = weft_cmd_create(ctx->cmd);
                uint32_t v = (uint32_t)h;
                CHECK(p != 0);
                CHECK(weft_cmd_set(ctx->cmd, p, rw->c[c], &v) == WEFT_OK);
            }
        }
    }
}

/* The model must be the world: every component's rows are the entities the model says have
 * it, no more. */
static void rc_expect_model(const rc_world_t *rw, uint32_t workers, uint32_t frame) {
    for (uint32_t c = 0; c < RC_COMPS; c++) {
        uint32_t n = 0;
        for (uint32_t idx = 1; idx < RC_IDX; idx++) {
            if (!rw->has[idx][c]) {
                continue;
            }
            n++;
            cr_assert(weft_component_has(rw->w, rw->handle[idx], rw->c[c]),
                      "seed %llu, %u workers, frame %u: entity %u lost component %u unobserved",
                      (unsigned long long)rw->seed, workers, frame, idx, c);
        }
        cr_assert(eq(u32, weft_component_rows(rw->w, rw->c[c]), n),
                  "seed %llu, %u workers, frame %u: component %u has rows no observer saw added",
                  (unsigned long long)rw->seed, workers, frame, c);
    }
    cr_assert(eq(u32, rw->unexpected, 0), "seed %llu, %u workers, frame %u",
              (unsigned long long)rw->seed, workers, frame);
    cr_assert(eq(u32, rw->any_adds, rw->adds), "seed %llu, %u workers: every-component observer",
              (unsigned long long)rw->seed, workers);
}

static void rc_run(rc_world_t *rw, const rc_def_t *defs, uint64_t seed, uint32_t workers,
                   uint64_t *hashes) {
    memset(rw, 0, sizeof *rw);
    rw->defs = defs;
    rw->seed = seed;
    rc_cur = rw;
    weft_world_desc_t wd = {.worker_count = workers};
    if (workers == 0) {
        wd = (weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE};
    }
    cr_assert(eq(int, weft_world_create(&wd, &rw->w), WEFT_OK), "%s", weft_last_error());
    static const char *const names[RC_COMPS] = {"A", "B", "C", "D"};
    for (uint32_t c = 0; c < RC_COMPS; c++) {
        weft_component_desc_t cd = {.name = names[c], .size = sizeof(uint32_t)};
        cr_assert(eq(int, weft_component_register(rw->w, &cd, &rw->c[c]), WEFT_OK));
        observe(rw->w, WEFT_OBSERVE_ADD, rw->c[c], rc_observe, rw);
        observe(rw->w, WEFT_OBSERVE_REMOVE, rw->c[c], rc_observe, rw);
        observe(rw->w, WEFT_OBSERVE_SET, rw->c[c], rc_observe, rw);
    }
    observe(rw->w, WEFT_OBSERVE_ADD, (weft_component_t){0}, rc_any_add, rw);
    uint64_t zero = 0;
    weft_resource_desc_t rd = {.name = "Clock", .size = sizeof zero, .initial = &zero};
    cr_assert(eq(int, weft_resource_register(rw->w, &rd, &rw->clock), WEFT_OK));
    weft_event_desc_t ed = {.name = "ping", .payload_size = sizeof(uint32_t)};
    cr_assert(eq(int, weft_event_register(rw->w, &ed, &rw->ping), WEFT_OK));
    weft_observer_desc_t od = {
        .kind = WEFT_OBSERVE_EVENT, .event = rw->ping, .fn = rc_on_ping, .user = rw};
    cr_assert(eq(int, weft_observer_register(rw->w, &od, NULL), WEFT_OK));
    for (uint32_t i = 0; i < RC_ENTITIES; i++) {
        weft_entity_t e;
        cr_assert(eq(int, weft_entity_create(rw->w, &e), WEFT_OK));
        for (uint32_t c = 0; c < RC_COMPS; c++) {
            uint32_t v = i * 7u + c;
            if ((i >> c) & 1u || c == 0) {
                cr_assert(eq(int, weft_component_set(rw->w, e, rw->c[c], &v), WEFT_OK));
            }
        }
    }
    char name[16];
    for (uint32_t k = 0; k < RC_DEFS; k++) {
        const rc_def_t *d = &defs[k];
        rw->k[k] = k;
        snprintf(name, sizeof name, "s%u", k);
        weft_system_desc_t sd = {.name = name,
                                 .fn = d->ticks ? rc_tick : rc_body,
                                 .user = rw,
                                 .phase = d->phase,
                                 .parallel = d->parallel,
                                 .chunk_size = 64,
                                 .run_if = rc_cond,
                                 .run_if_user = &rw->k[k]};
        if (d->ticks) {
            sd.writes[0] = rw->clock;
        } else {
            sd.terms[0] = (weft_query_term_t)W(rw->c[d->w]);
            if (d->r != d->w) {
                sd.terms[1] = (weft_query_term_t)R(rw->c[d->r]);
            }
            sd.reads[0] = rw->clock;
        }
        rw->ids[k] = must_register(rw->w, &sd);
    }
    uint64_t s = seed;
    for (uint32_t f = 0; f < RC_FRAMES; f++) {
        uint32_t k = (uint32_t)(rc_rand(&s) % RC_DEFS);
        if (rc_rand(&s) % 4u == 0) { /* toggle one system now and then */
            bool on = weft_system_is_enabled(rw->w, rw->ids[k]);
            cr_assert(eq(int, weft_system_enable(rw->w, rw->ids[k], !on), WEFT_OK));
        }
        cr_assert(eq(int, weft_world_progress(rw->w, 0.016f), WEFT_OK), "%s", weft_last_error());
        CHECKED();
        rc_expect_model(rw, workers, f);
        hashes[f] = weft_world_hash(rw->w) ^ rw->log;
    }
    cr_expect(gt(u32, rw->pings, 0), "the seed's systems emitted events");
    weft_world_destroy(rw->w);
    rc_cur = NULL;
}

Test(observer, a_random_churn_is_observed_exactly_once_and_in_order_at_every_worker_count) {
    uint64_t seed = fixture_seed("observer random churn") | 1u;
    uint64_t s = seed;
    rc_def_t defs[RC_DEFS];
    for (uint32_t k = 0; k < RC_DEFS; k++) {
        defs[k] = (rc_def_t){.w = (uint32_t)(rc_rand(&s) % RC_COMPS),
                             .r = (uint32_t)(rc_rand(&s) % RC_COMPS),
                             .mod = 2u + (uint32_t)(rc_rand(&s) % 4u),
                             .parallel = rc_rand(&s) % 2u == 0,
                             .ticks = k % 4u == 3u,
                             .phase = (uint32_t)(rc_rand(&s) % 2u)};
    }
    static rc_world_t rw;
    static uint64_t ref[RC_FRAMES], got[RC_FRAMES];
    static const uint32_t workers[] = {0, 1, 2, 3, 4, 8};
    rc_run(&rw, defs, seed, 0, ref);
    for (size_t v = 1; v < sizeof workers / sizeof workers[0]; v++) {
        rc_run(&rw, defs, seed, workers[v], got);
        for (uint32_t f = 0; f < RC_FRAMES; f++) {
            cr_assert(eq(u64, got[f], ref[f]), "seed %llu, %u workers: frame %u differs",
                      (unsigned long long)seed, workers[v], f);
        }
    }
}
