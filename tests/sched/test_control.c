/* test_control.c: system control — enable/disable, run conditions, unregister — against a
 * reference of which system may run, and identical worlds at every worker count. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fault_alloc.h"
#include "sched_fixture.h"

TestSuite(control, .timeout = 120);

/* ---- a small world of counters ------------------------------------------------ */

enum { ENTITIES = 600, DEFS = 24, MAX_IDS = 128 };

typedef struct ctl_world {
    weft_world_t *w;
    weft_component_t c[3];      /* A, B, C: uint32_t each */
    weft_entity_t first;        /* an entity with all three */
    uint32_t runs[MAX_IDS + 1]; /* by system id: frames its body ran (chunk 0 counts) */
    weft_system_t ids[DEFS];    /* registration of def k ({0}: not registered) */
    uint64_t frame;             /* frames started, as the run conditions see it */
} ctl_world_t;

/* One system kind of the random test: writes c[w], reads c[r] (r == w: no read term), runs
 * when (frame + k) % mod != 0, is parallel or not. */
typedef struct ctl_def {
    uint32_t k, w, r, mod, phase;
    bool parallel;
} ctl_def_t;

typedef struct ctl_user {
    ctl_world_t *cw;
    const ctl_def_t *def;
} ctl_user_t;

static void ctl_body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const ctl_user_t *u = ctx->user;
    if (ctx->chunk == 0) {
        u->cw->runs[ctx->system.id]++; /* one writer per system and frame */
    }
    while (weft_iter_next(it)) {
        uint32_t *w = it->columns[0];
        const uint32_t *r = u->def->r != u->def->w ? it->columns[1] : NULL;
        for (uint32_t i = 0; i < it->rows; i++) {
            w[i] = w[i] * 31u + (r ? r[i] : 7u) + ctx->system.id;
        }
    }
}

static bool ctl_cond(weft_world_t *world, float dt, void *user) {
    (void)world;
    (void)dt;
    const ctl_user_t *u = user;
    return (u->cw->frame + u->def->k) % u->def->mod != 0;
}

static void ctl_init(ctl_world_t *cw, uint32_t workers) {
    memset(cw, 0, sizeof *cw);
    weft_world_desc_t d = {.worker_count = workers};
    if (workers == 0) {
        d = (weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE};
    }
    cr_assert(eq(int, weft_world_create(&d, &cw->w), WEFT_OK), "%s", weft_last_error());
    static const char *const names[3] = {"A", "B", "C"};
    for (int i = 0; i < 3; i++) {
        weft_component_desc_t cd = {.name = names[i], .size = sizeof(uint32_t)};
        cr_assert(eq(int, weft_component_register(cw->w, &cd, &cw->c[i]), WEFT_OK));
    }
    for (uint32_t e = 0; e < ENTITIES; e++) {
        weft_entity_t h;
        cr_assert(eq(int, weft_entity_create(cw->w, &h), WEFT_OK));
        for (int i = 0; i < 3; i++) {
            uint32_t v = e * 3u + (uint32_t)i;
            cr_assert(eq(int, weft_component_set(cw->w, h, cw->c[i], &v), WEFT_OK));
        }
        cw->first = e == 0 ? h : cw->first;
    }
}

static weft_system_t ctl_register(ctl_world_t *cw, const ctl_def_t *def, ctl_user_t *user,
                                  const char *name) {
    *user = (ctl_user_t){cw, def};
    weft_system_desc_t d = {.name = name,
                            .fn = ctl_body,
                            .user = user,
                            .terms = {W(cw->c[def->w])},
                            .phase = def->phase,
                            .parallel = def->parallel,
                            .chunk_size = 128,
                            .run_if = ctl_cond,
                            .run_if_user = user};
    if (def->r != def->w) {
        d.terms[1] = (weft_query_term_t)R(cw->c[def->r]);
    }
    return must_register(cw->w, &d);
}

/* ---- the random test --------------------------------------------------------- */

enum { OP_FRAME, OP_TOGGLE, OP_UNREGISTER, OP_REGISTER, OPS };

typedef struct ctl_op {
    int kind;
    uint32_t def; /* the def it acts on */
    float dt;     /* OP_FRAME: the frame's dt */
} ctl_op_t;

/* Phase 1 of the random test is a fixed-step phase: */
#define CTL_STEP 0.25f
#define CTL_MAX_STEPS 3u

static uint64_t ctl_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* What may run, as the test tracks it: registered, enabled. */
typedef struct ctl_model {
    bool registered[DEFS], enabled[DEFS];
    uint32_t name_gen[DEFS]; /* names are "d<k>.<gen>": a re-registration gets a new one */
} ctl_model_t;

/* Apply `ops` to a world of `workers` workers (0: inline), checking every frame against the
 * model; returns the world hash after each frame in hashes[] and the run counts in runs. */
static void ctl_run(uint32_t workers, const ctl_def_t *defs, const ctl_op_t *ops, uint32_t nops,
                    uint64_t *hashes, uint32_t *runs_out) {
    static ctl_world_t cw;
    static ctl_user_t users[DEFS];
    ctl_init(&cw, workers);
    cr_assert(eq(int,
                 weft_phase_define(cw.w, &(weft_phase_desc_t){.name = "fixed",
                                                              .phase = 1,
                                                              .fixed_step = CTL_STEP,
                                                              .max_steps = CTL_MAX_STEPS}),
                 WEFT_OK));
    double acc = 0; /* the model's fixed-step clock */
    ctl_model_t m = {0};
    uint32_t frames = 0;
    char name[32];
    for (uint32_t i = 0; i < nops; i++) {
        uint32_t k = ops[i].def;
        switch (ops[i].kind) {
        case OP_REGISTER:
            if (!m.registered[k]) {
                snprintf(name, sizeof name, "d%u.%u", k, m.name_gen[k]++);
                cw.ids[k] = ctl_register(&cw, &defs[k], &users[k], name);
                cr_assert(le(u32, cw.ids[k].id, MAX_IDS));
                m.registered[k] = m.enabled[k] = true;
            }
            break;
        case OP_TOGGLE:
            if (m.registered[k]) {
                m.enabled[k] = !m.enabled[k];
                cr_assert(eq(int, weft_system_enable(cw.w, cw.ids[k], m.enabled[k]), WEFT_OK));
                cr_assert(eq(int, weft_system_is_enabled(cw.w, cw.ids[k]), m.enabled[k]));
            }
            break;
        case OP_UNREGISTER:
            if (m.registered[k]) {
                cr_assert(eq(int, weft_system_unregister(cw.w, cw.ids[k]), WEFT_OK));
                cr_assert(eq(ptr, (void *)weft_system_name(cw.w, cw.ids[k]), NULL));
                cr_assert(eq(int, weft_system_enable(cw.w, cw.ids[k], true), WEFT_ESTALE));
                m.registered[k] = m.enabled[k] = false;
            }
            break;
        default: {
            uint32_t before[MAX_IDS + 1];
            memcpy(before, cw.runs, sizeof before);
            cr_assert(eq(int, weft_world_progress(cw.w, ops[i].dt), WEFT_OK), "%s",
                      weft_last_error());
            acc += ops[i].dt;
            double due = floor(acc / CTL_STEP);
            acc -= due * CTL_STEP;
            uint32_t steps = due < CTL_MAX_STEPS ? (uint32_t)due : CTL_MAX_STEPS;
            for (uint32_t d = 0; d < DEFS; d++) {
                if (cw.ids[d].id == 0) {
                    continue;
                }
                bool cond = (cw.frame + defs[d].k) % defs[d].mod != 0;
                uint32_t ran = cw.runs[cw.ids[d].id] - before[cw.ids[d].id];
                uint32_t want =
                    (m.registered[d] && m.enabled[d] && cond) * (defs[d].phase == 1 ? steps : 1u);
                cr_assert(eq(u32, ran, want),
                          "workers %u, op %u, frame %u: def %u (id %u, registered %d, enabled "
                          "%d, condition %d) ran %u times",
                          workers, i, frames, d, cw.ids[d].id, m.registered[d], m.enabled[d], cond,
                          ran);
            }
            cw.frame++;
            hashes[frames++] = weft_world_hash(cw.w);
        }
        }
    }
    memcpy(runs_out, cw.runs, sizeof cw.runs);
    weft_world_destroy(cw.w);
}

Test(control, enable_disable_unregister_and_run_conditions_match_the_model_at_every_worker_count) {
    uint64_t seed = (uint64_t)time(NULL) | 1u;
    fprintf(stderr, "control random seed %llu\n", (unsigned long long)seed);
    uint64_t s = seed;
    ctl_def_t defs[DEFS];
    for (uint32_t k = 0; k < DEFS; k++) {
        uint32_t w = (uint32_t)(ctl_rand(&s) % 3);
        defs[k] = (ctl_def_t){.k = k,
                              .w = w,
                              .r = (uint32_t)(ctl_rand(&s) % 3),
                              .mod = 2u + (uint32_t)(ctl_rand(&s) % 4),
                              .phase = (uint32_t)(ctl_rand(&s) % 2),
                              .parallel = ctl_rand(&s) % 2 == 0};
    }
    enum { NOPS = 400 };
    static ctl_op_t ops[NOPS];
    uint32_t frames = 0;
    for (uint32_t i = 0; i < NOPS; i++) {
        uint32_t pick = (uint32_t)(ctl_rand(&s) % 20);
        int kind = pick < 8    ? OP_FRAME
                   : pick < 12 ? OP_TOGGLE
                   : pick < 14 ? OP_UNREGISTER
                               : OP_REGISTER;
        static const float dts[4] = {0.125f, 0.25f, 0.5f, 0.875f};
        ops[i] = (ctl_op_t){kind, (uint32_t)(ctl_rand(&s) % DEFS), dts[ctl_rand(&s) % 4]};
        frames += kind == OP_FRAME;
    }
    static uint64_t hashes[5][NOPS];
    static uint32_t runs[5][MAX_IDS + 1];
    static const uint32_t workers[5] = {0, 1, 2, 4, 8};
    for (int v = 0; v < 5; v++) {
        ctl_run(workers[v], defs, ops, NOPS, hashes[v], runs[v]);
    }
    for (int v = 1; v < 5; v++) {
        for (uint32_t f = 0; f < frames; f++) {
            cr_assert(eq(u64, hashes[v][f], hashes[0][f]), "seed %llu: frame %u, %u workers",
                      (unsigned long long)seed, f, workers[v]);
        }
        cr_assert(eq(int, memcmp(runs[v], runs[0], sizeof runs[0]), 0), "seed %llu: %u workers",
                  (unsigned long long)seed, workers[v]);
    }
}

/* ---- what a run condition sees ------------------------------------------------- */

typedef struct seen {
    ctl_world_t *cw;
    uint32_t values[64]; /* what the condition read, frame by frame */
    uint32_t n;
} seen_t;

static void bump_body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        uint32_t *a = it->columns[0];
        for (uint32_t i = 0; i < it->rows; i++) {
            a[i] += 1;
        }
    }
}

static bool reading_cond(weft_world_t *world, float dt, void *user) {
    (void)dt;
    seen_t *s = user;
    const uint32_t *a = weft_component_get(world, s->cw->first, s->cw->c[0]);
    s->values[s->n++] = *a;
    return *a % 2 == 0;
}

/* The condition of a system that runs after a writer in the same phase sees the value from
 * before the phase, whether the phase runs fused (1 worker), inline or threaded. */
Test(control, a_run_condition_sees_the_world_as_its_phase_starts) {
    static const uint32_t workers[3] = {0, 1, 2};
    uint32_t ref[64];
    for (int v = 0; v < 3; v++) {
        static ctl_world_t cw;
        ctl_init(&cw, workers[v]);
        uint32_t a0 = *(const uint32_t *)weft_component_get(cw.w, cw.first, cw.c[0]);
        (void)must_register(
            cw.w, &(weft_system_desc_t){.name = "bump", .fn = bump_body, .terms = {W(cw.c[0])}});
        seen_t seen = {.cw = &cw};
        ctl_def_t def = {.w = 1, .r = 0, .mod = 1};
        ctl_user_t user = {&cw, &def};
        (void)must_register(cw.w, &(weft_system_desc_t){.name = "guarded",
                                                        .fn = ctl_body,
                                                        .user = &user,
                                                        .terms = {W(cw.c[1]), R(cw.c[0])},
                                                        .run_if = reading_cond,
                                                        .run_if_user = &seen});
        weft_system_t guarded = weft_system_lookup(cw.w, "guarded");
        for (int f = 0; f < 10; f++) {
            cr_assert(eq(int, weft_world_progress(cw.w, 0.016f), WEFT_OK), "%s", weft_last_error());
        }
        cr_assert(eq(u32, seen.n, 10), "evaluated once per frame");
        for (uint32_t f = 0; f < 10; f++) {
            cr_expect(eq(u32, seen.values[f], a0 + f), "workers %u, frame %u", workers[v], f);
        }
        cr_expect(eq(u32, cw.runs[guarded.id], 5), "ran on the frames where A was even");
        if (v == 0) {
            memcpy(ref, seen.values, sizeof ref);
        } else {
            cr_expect(eq(int, memcmp(ref, seen.values, 10 * sizeof ref[0]), 0));
        }
        weft_world_destroy(cw.w);
    }
}

/* ---- unregister ------------------------------------------------------------------ */

Test(control, an_unregistered_name_is_free_and_constraints_naming_it_apply_to_its_successor) {
    fixture_t f;
    fixture_init(&f, 2, 0);
    weft_system_t a = must_register(
        f.world, &(weft_system_desc_t){.name = "a", .fn = noop_system, .before = {"b"}});
    weft_system_t b = must_register(f.world, &(weft_system_desc_t){.name = "b", .fn = noop_system});
    (void)must_register(f.world, &(weft_system_desc_t){.name = "c", .fn = noop_system});
    cr_assert(eq(int, weft_system_unregister(f.world, b), WEFT_OK));
    cr_expect(eq(int, weft_system_unregister(f.world, b), WEFT_ESTALE), "already gone");
    cr_expect(eq(u32, weft_system_lookup(f.world, "b").id, 0));
    cr_expect(eq(int, weft_system_is_enabled(f.world, b), false));
    uint32_t n = 0;
    weft_system_t order[8];
    cr_assert(eq(int, weft_schedule_order(f.world, order, 8, &n), WEFT_OK));
    cr_expect(eq(u32, n, 2), "the unregistered system is not in the run order");
    /* A new "b", registered before "a" would otherwise not be ordered, follows "a". */
    weft_system_t b2 =
        must_register(f.world, &(weft_system_desc_t){.name = "b", .fn = noop_system, .phase = 0});
    cr_expect(ne(u32, b2.id, b.id), "ids are never reused");
    cr_assert(eq(int, weft_schedule_order(f.world, order, 8, &n), WEFT_OK));
    uint32_t pa = UINT32_MAX, pb = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        pa = order[i].id == a.id ? i : pa;
        pb = order[i].id == b2.id ? i : pb;
    }
    cr_expect(lt(u32, pa, pb), "a before the new b");
    size_t len = 0;
    cr_assert(eq(int, weft_schedule_dot(f.world, NULL, 0, &len), WEFT_OK));
    char *dot = malloc(len + 1);
    cr_assert(eq(int, weft_schedule_dot(f.world, dot, len + 1, &len), WEFT_OK));
    char node[16];
    snprintf(node, sizeof node, "s%u [", b.id);
    cr_expect(strstr(dot, node) == NULL, "the DOT output has no node for the old b:\n%s", dot);
    free(dot);
    cr_assert(eq(int, weft_world_progress(f.world, 0.016f), WEFT_OK));
    fixture_fini(&f);
}

/* ---- misuse ------------------------------------------------------------------------ */

static _Atomic int inside_result;

static void toggling_body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    atomic_store(&inside_result, weft_system_enable(ctx->world, ctx->system, false));
}

Test(control, control_calls_inside_a_frame_or_on_bad_handles_fail_and_change_nothing) {
    fixture_t f;
    fixture_init(&f, 2, 0);
    weft_system_t t = must_register(
        f.world,
        &(weft_system_desc_t){.name = "toggler", .fn = toggling_body, .main_thread = true});
    atomic_store(&inside_result, 0);
    cr_assert(eq(int, weft_world_progress(f.world, 0.016f), WEFT_OK));
    cr_expect(eq(int, atomic_load(&inside_result), WEFT_ESTATE));
    cr_expect(weft_system_is_enabled(f.world, t), "still enabled");
    cr_expect(eq(int, weft_system_enable(NULL, t, false), WEFT_EINVAL));
    cr_expect(eq(int, weft_system_enable(f.world, (weft_system_t){0}, false), WEFT_ESTALE));
    cr_expect(eq(int, weft_system_enable(f.world, (weft_system_t){99}, false), WEFT_ESTALE));
    cr_expect(eq(int, weft_system_unregister(f.world, (weft_system_t){99}), WEFT_ESTALE));
    cr_expect(eq(int, weft_system_unregister(NULL, t), WEFT_EINVAL));
    cr_expect(weft_system_is_enabled(f.world, t));
    fixture_fini(&f);
}

Test(control, a_system_registered_disabled_does_not_run_until_enabled) {
    fixture_t f;
    fixture_init(&f, 2, 0);
    atomic_store(&fx_body_calls, 0);
    weft_system_t s = must_register(
        f.world, &(weft_system_desc_t){.name = "later", .fn = counting_system, .disabled = true});
    cr_assert(eq(int, weft_world_progress(f.world, 0.016f), WEFT_OK));
    cr_expect(eq(u32, atomic_load(&fx_body_calls), 0));
    cr_assert(eq(int, weft_system_enable(f.world, s, true), WEFT_OK));
    cr_assert(eq(int, weft_world_progress(f.world, 0.016f), WEFT_OK));
    cr_expect(eq(u32, atomic_load(&fx_body_calls), 1));
    fixture_fini(&f);
}

/* ---- system sets ------------------------------------------------------------------ */

/* Run position of `sys` in the schedule order. */
static uint32_t position(weft_world_t *w, weft_system_t sys) {
    weft_system_t order[16];
    uint32_t n = 0;
    cr_assert(eq(int, weft_schedule_order(w, order, 16, &n), WEFT_OK), "%s", weft_last_error());
    for (uint32_t i = 0; i < n; i++) {
        if (order[i].id == sys.id) {
            return i;
        }
    }
    cr_assert(false, "system %u is not in the run order", sys.id);
    return UINT32_MAX;
}

Test(control, a_system_set_orders_every_member_registered_before_or_after_the_constraint) {
    fixture_t f;
    fixture_init(&f, 2, 0);
    /* registration order would put render first and input last */
    weft_system_t render = must_register(
        f.world, &(weft_system_desc_t){.name = "render", .fn = noop_system, .after = {"physics"}});
    weft_system_t p1 = must_register(
        f.world, &(weft_system_desc_t){.name = "p1", .fn = noop_system, .sets = {"physics"}});
    weft_system_t p2 = must_register(
        f.world,
        &(weft_system_desc_t){.name = "p2", .fn = noop_system, .sets = {"sim", "physics"}});
    weft_system_t input = must_register(
        f.world, &(weft_system_desc_t){.name = "input", .fn = noop_system, .before = {"sim"}});
    cr_expect(lt(u32, position(f.world, p1), position(f.world, render)));
    cr_expect(lt(u32, position(f.world, p2), position(f.world, render)));
    cr_expect(lt(u32, position(f.world, input), position(f.world, p2)));
    /* the constraints are real edges of the schedule, not just an order */
    cr_expect(eq(u32, edge_count(f.world), 3), "p1->render, p2->render, input->p2");
    /* names: a system cannot take a set's name, a set cannot take a system's */
    weft_system_desc_t clash = {.name = "physics", .fn = noop_system};
    cr_expect(eq(int, weft_system_register(f.world, &clash, NULL), WEFT_EEXIST));
    clash = (weft_system_desc_t){.name = "x", .fn = noop_system, .sets = {"render"}};
    cr_expect(eq(int, weft_system_register(f.world, &clash, NULL), WEFT_EEXIST));
    /* a cycle through a set is refused like any other: input precedes every "sim" member */
    weft_system_desc_t cyc = {
        .name = "late", .fn = noop_system, .sets = {"sim"}, .before = {"input"}};
    cr_expect(eq(int, weft_system_register(f.world, &cyc, NULL), WEFT_ECYCLE), "%s",
              weft_last_error());
    cr_expect(eq(u32, weft_system_lookup(f.world, "late").id, 0));
    cr_assert(eq(int, weft_world_progress(f.world, 0.016f), WEFT_OK));
    fixture_fini(&f);
}

/* ---- named phases ------------------------------------------------------------------ */

Test(control, a_named_phase_places_its_systems_and_names_itself) {
    fixture_t f;
    fixture_init(&f, 2, 0);
    cr_assert(eq(int,
                 weft_phase_define(f.world, &(weft_phase_desc_t){.name = "render", .phase = 20}),
                 WEFT_OK));
    cr_assert(eq(int,
                 weft_phase_define(f.world, &(weft_phase_desc_t){.name = "update", .phase = 10}),
                 WEFT_OK));
    weft_system_t draw = must_register(
        f.world, &(weft_system_desc_t){.name = "draw", .fn = noop_system, .phase_name = "render"});
    weft_system_t move = must_register(
        f.world, &(weft_system_desc_t){.name = "move", .fn = noop_system, .phase_name = "update"});
    cr_expect(lt(u32, position(f.world, move), position(f.world, draw)));
    uint32_t ph = 0;
    cr_expect(eq(int, weft_phase_lookup(f.world, "render", &ph), WEFT_OK));
    cr_expect(eq(u32, ph, 20));
    cr_expect(eq(str, (char *)weft_phase_name(f.world, 10), "update"));
    cr_expect(eq(ptr, (void *)weft_phase_name(f.world, 11), NULL));
    cr_expect(eq(int, weft_phase_lookup(f.world, "nope", &ph), WEFT_ENOENT));
    /* refused: a second name for a phase, a name twice, an unknown or contradicting name */
    weft_phase_desc_t again = {.name = "draw2", .phase = 20};
    cr_expect(eq(int, weft_phase_define(f.world, &again), WEFT_EEXIST));
    again = (weft_phase_desc_t){.name = "update", .phase = 30};
    cr_expect(eq(int, weft_phase_define(f.world, &again), WEFT_EEXIST));
    again = (weft_phase_desc_t){.name = "bad", .phase = 31, .fixed_step = -1.0f};
    cr_expect(eq(int, weft_phase_define(f.world, &again), WEFT_EINVAL));
    weft_system_desc_t bad = {.name = "x", .fn = noop_system, .phase_name = "nope"};
    cr_expect(eq(int, weft_system_register(f.world, &bad, NULL), WEFT_EINVAL));
    bad = (weft_system_desc_t){.name = "x", .fn = noop_system, .phase_name = "update", .phase = 3};
    cr_expect(eq(int, weft_system_register(f.world, &bad, NULL), WEFT_EINVAL));
    size_t len = 0;
    char dot[4096];
    cr_assert(eq(int, weft_schedule_dot(f.world, dot, sizeof dot, &len), WEFT_OK));
    cr_expect(strstr(dot, "phase 20: render") != NULL, "%s", dot);
    fixture_fini(&f);
}

/* ---- fixed timestep ---------------------------------------------------------------- */

typedef struct stepper {
    weft_component_t tag;
    uint32_t runs;     /* bodies run */
    uint32_t seen[64]; /* Tag rows each run saw */
    bool dt_ok;        /* every run got the fixed step as dt */
} stepper_t;

/* Each run sees the Tag rows the previous runs created (their commands were applied
 * between the runs) and creates one more. */
static void stepping_body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    stepper_t *st = ctx->user;
    if (st->runs < 64) {
        st->seen[st->runs] = weft_component_rows(ctx->world, st->tag);
    }
    st->runs++;
    st->dt_ok = st->dt_ok && ctx->dt == 0.25f;
    weft_entity_t e = weft_cmd_create(ctx->cmd);
    (void)weft_cmd_add(ctx->cmd, e, st->tag);
}

Test(control, a_fixed_step_phase_runs_whole_steps_applies_between_them_and_carries_the_rest) {
    static const uint32_t workers[3] = {0, 1, 2};
    for (int v = 0; v < 3; v++) {
        ctl_world_t cw;
        ctl_init(&cw, workers[v]);
        weft_component_t tag;
        cr_assert(eq(int,
                     weft_component_register(cw.w, &(weft_component_desc_t){.name = "Tag"}, &tag),
                     WEFT_OK));
        cr_assert(eq(int,
                     weft_phase_define(cw.w, &(weft_phase_desc_t){.name = "physics",
                                                                  .phase = 5,
                                                                  .fixed_step = 0.25f,
                                                                  .max_steps = 3}),
                     WEFT_OK));
        stepper_t st = {.tag = tag, .dt_ok = true};
        (void)must_register(cw.w, &(weft_system_desc_t){.name = "step",
                                                        .fn = stepping_body,
                                                        .user = &st,
                                                        .reads = {tag},
                                                        .phase_name = "physics",
                                                        .main_thread = true});
        /* dt, steps due, steps run (max 3), fraction carried */
        static const struct {
            float dt;
            uint32_t steps;
            float alpha;
        } frames[] = {{0.125f, 0, 0.5f}, {0.25f, 1, 0.5f},      {0.375f, 2, 0.0f},
                      {1.0f, 3, 0.0f},   {2.0f, 3, 0.0f},       {0.0f, 0, 0.0f},
                      {-1.0f, 0, 0.0f},  {(float)NAN, 0, 0.0f}, {0.625f, 2, 0.5f}};
        uint32_t total = 0;
        for (size_t i = 0; i < sizeof frames / sizeof frames[0]; i++) {
            uint32_t before = st.runs;
            cr_assert(eq(int, weft_world_progress(cw.w, frames[i].dt), WEFT_OK), "%s",
                      weft_last_error());
            cr_expect(eq(u32, st.runs - before, frames[i].steps), "workers %u, frame %zu",
                      workers[v], i);
            cr_expect(eq(flt, weft_phase_alpha(cw.w, 5), frames[i].alpha), "workers %u, frame %zu",
                      workers[v], i);
            total += frames[i].steps;
        }
        cr_expect(st.dt_ok, "every run got dt = the fixed step");
        cr_expect(eq(u32, weft_component_rows(cw.w, tag), total));
        for (uint32_t r = 0; r < total; r++) {
            cr_expect(eq(u32, st.seen[r], r), "run %u saw the commands of every earlier run", r);
        }
        weft_world_destroy(cw.w);
    }
}

/* A frame suspended for lack of memory inside a fixed-step phase resumes at the step it
 * stopped in: no step runs twice, none is lost, and the world ends as without the fault. */
static void many_body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    stepper_t *st = ctx->user;
    st->runs++;
    for (int i = 0; i < 300; i++) {
        weft_entity_t e = weft_cmd_create(ctx->cmd);
        if (e == WEFT_ENTITY_NULL || weft_cmd_add(ctx->cmd, e, st->tag) != WEFT_OK) {
            st->dt_ok = false; /* recording ran out of memory: the command is the body's loss */
        }
    }
}

static weft_world_t *stepping_world(wt_fault_alloc_t *fa, stepper_t *st) {
    weft_world_t *w = NULL;
    weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE, .allocator = wt_fault_allocator(fa)};
    cr_assert(eq(int, weft_world_create(&d, &w), WEFT_OK));
    cr_assert(eq(int, weft_component_register(w, &(weft_component_desc_t){.name = "Tag"}, &st->tag),
                 WEFT_OK));
    weft_phase_desc_t pd = {.name = "fixed", .phase = 0, .fixed_step = 0.25f, .max_steps = 4};
    cr_assert(eq(int, weft_phase_define(w, &pd), WEFT_OK));
    (void)must_register(w, &(weft_system_desc_t){
                               .name = "many", .fn = many_body, .user = st, .phase_name = "fixed"});
    return w;
}

Test(control, a_frame_suspended_inside_a_fixed_step_resumes_at_that_step) {
    wt_fault_alloc_t fa;
    wt_fault_init(&fa);
    stepper_t ref_st = {.dt_ok = true};
    weft_world_t *ref = stepping_world(&fa, &ref_st);
    cr_assert(eq(int, weft_world_progress(ref, 1.0f), WEFT_OK));
    uint64_t want = weft_world_hash(ref);
    cr_assert(eq(u32, ref_st.runs, 4));
    weft_world_destroy(ref);
    uint32_t suspended = 0;
    for (uint64_t k = 1; k <= 200; k++) {
        wt_fault_init(&fa);
        stepper_t st = {.dt_ok = true};
        weft_world_t *w = stepping_world(&fa, &st);
        wt_fault_arm(&fa, k, 1);
        weft_result_t r = weft_world_progress(w, 1.0f);
        wt_fault_arm(&fa, 0, 0);
        if (r != WEFT_OK) {
            cr_assert(eq(int, r, WEFT_ENOMEM), "allocation %llu: %s", (unsigned long long)k,
                      weft_last_error());
            suspended += st.runs > 0;
            cr_assert(eq(int, weft_world_progress(w, 123.0f), WEFT_OK), "%s", weft_last_error());
        }
        cr_expect(eq(u32, st.runs, 4), "allocation %llu failed: %u runs", (unsigned long long)k,
                  st.runs);
        if (!st.dt_ok) { /* a recording call failed: that body lost a command, by contract */
            weft_world_destroy(w);
            continue;
        }
        cr_expect(eq(u64, weft_world_hash(w), want), "allocation %llu failed: another world",
                  (unsigned long long)k);
        cr_expect(eq(u32, weft_component_rows(w, st.tag), 1200));
        weft_world_destroy(w);
    }
    cr_expect(gt(u32, suspended, 0), "no allocation failed after a step had run");
}
