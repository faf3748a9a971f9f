/* test_command.c: the command-buffer contract — a buffer records only inside the run call
 * that received it (and, in debug builds, only on that call's thread), placeholders written
 * into declared entity fields become the entities their creates made, other placeholder use
 * is refused, and a NULL buffer or world is an error, never a crash. */
#include <pthread.h>
#include <string.h>

#include "sched_fixture.h"

static fixture_t f;
static weft_component_t target_c; /* {weft_entity_t who; float weight} with `who` declared */

typedef struct target {
    weft_entity_t who;
    float weight;
} target_t;

static void setup(void) {
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    weft_component_desc_t d = {.name = "Target",
                               .size = sizeof(target_t),
                               .entity_field_count = 1,
                               .entity_fields = {offsetof(target_t, who)}};
    cr_assert(eq(int, weft_component_register(f.world, &d, &target_c), WEFT_OK));
}

static void teardown(void) { fixture_fini(&f); }

TestSuite(command, .init = setup, .fini = teardown, .timeout = 20);

/* One system over Position that runs `fn` once per frame (one chunk: one entity). */
static void run_once(weft_system_fn_t fn) {
    weft_entity_t e;
    cr_assert(eq(int, weft_entity_create(f.world, &e), WEFT_OK));
    cr_assert(eq(int, weft_component_add(f.world, e, f.pos, NULL), WEFT_OK));
    must_register(f.world, &(weft_system_desc_t){.name = "spawner", .fn = fn, .terms = {W(f.pos)}});
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK), "%s", weft_last_error());
}

/* ---- a buffer lives for one run call ------------------------------------------------ */

static weft_cmd_t *kept;

static void keep_buffer(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    kept = ctx->cmd;
}

Test(command, a_buffer_kept_past_its_run_call_returns_estate_and_records_nothing) {
    run_once(keep_buffer);
    uint32_t before = weft_entity_count(f.world);
    cr_expect(eq(u64, weft_cmd_create(kept), WEFT_ENTITY_NULL));
    cr_expect(strstr(weft_last_error(), "outside the run call") != NULL, "%s", weft_last_error());
    cr_expect(eq(int, weft_cmd_add(kept, weft_entity_make(1, 0), f.tag), WEFT_ESTATE));
    cr_expect(eq(int, weft_cmd_destroy(kept, weft_entity_make(1, 0)), WEFT_ESTATE));
    cr_expect(eq(int, weft_cmd_remove(kept, weft_entity_make(1, 0), f.pos), WEFT_ESTATE));
    cr_expect(
        eq(int, weft_cmd_set(kept, weft_entity_make(1, 0), f.hp, &(int32_t){1}), WEFT_ESTATE));
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    cr_expect(eq(u32, weft_entity_count(f.world), before), "no late command was applied");
}

#if WEFT_DEBUG >= 1
typedef struct borrowed {
    weft_cmd_t *cmd;
    weft_entity_t made;
    char message[256];
} borrowed_t;

static borrowed_t borrowed;

static void *record_elsewhere(void *arg) {
    borrowed_t *b = arg;
    b->made = weft_cmd_create(b->cmd);
    snprintf(b->message, sizeof b->message, "%s", weft_last_error());
    return NULL;
}

static void share_buffer(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    borrowed.cmd = ctx->cmd;
    borrowed.made = 1;
    pthread_t t;
    if (pthread_create(&t, NULL, record_elsewhere, &borrowed) == 0) {
        pthread_join(t, NULL);
    }
}

Test(command, a_buffer_used_from_another_thread_returns_estate_in_debug_builds) {
    uint32_t before = weft_entity_count(f.world);
    run_once(share_buffer);
    cr_expect(eq(u64, borrowed.made, WEFT_ENTITY_NULL));
    cr_expect(strstr(borrowed.message, "from another thread") != NULL, "%s", borrowed.message);
    cr_expect(eq(u32, weft_entity_count(f.world), before + 1), "only run_once's entity exists");
}
#endif /* WEFT_DEBUG */

/* ---- placeholders ------------------------------------------------------------------- */

static _Atomic int spawn_result;

/* Creates a child, tags it, and points a new Target at it from the iterated entity. */
static void spawn_and_point(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            weft_entity_t child = weft_cmd_create(ctx->cmd);
            int r = (int)weft_cmd_add(ctx->cmd, child, f.tag);
            target_t t = {.who = child, .weight = 2.5f};
            if (r == WEFT_OK) {
                r = (int)weft_cmd_set(ctx->cmd, weft_iter_entity(it, i), target_c, &t);
            }
            atomic_store(&spawn_result, r);
        }
    }
}

Test(command, a_placeholder_in_a_declared_entity_field_becomes_the_created_entity) {
    run_once(spawn_and_point);
    cr_assert(eq(int, atomic_load(&spawn_result), WEFT_OK), "%s", weft_last_error());
    cr_assert(eq(u32, weft_component_rows(f.world, target_c), 1));
    weft_entity_t holder = weft_component_entity_at(f.world, target_c, 0);
    const target_t *t = weft_component_get(f.world, holder, target_c);
    cr_assert(t != NULL);
    cr_expect(eq(flt, t->weight, 2.5f));
    cr_expect(weft_cmd_is_placeholder(t->who) == false, "placeholder 0x%llx was stored as is",
              (unsigned long long)t->who);
    cr_expect(weft_entity_is_alive(f.world, t->who));
    cr_expect(weft_component_has(f.world, t->who, f.tag), "it names the entity the create made");
}

static _Atomic int foreign_result;

static void foreign_placeholder(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            /* generation 5: this buffer made no placeholder at all */
            target_t t = {.who = weft_entity_make(0, 5), .weight = 1.0f};
            atomic_store(&foreign_result,
                         (int)weft_cmd_set(ctx->cmd, weft_iter_entity(it, i), target_c, &t));
        }
    }
}

Test(command, a_placeholder_this_buffer_did_not_make_is_refused_in_an_entity_field) {
    run_once(foreign_placeholder);
    cr_expect(eq(int, atomic_load(&foreign_result), WEFT_EINVAL));
    cr_expect(eq(u32, weft_component_rows(f.world, target_c), 0), "nothing was recorded");
}

Test(command, a_placeholder_written_directly_into_an_entity_field_is_einval) {
    weft_entity_t e;
    cr_assert(eq(int, weft_entity_create(f.world, &e), WEFT_OK));
    target_t t = {.who = weft_entity_make(0, 1), .weight = 1.0f};
    cr_expect(eq(int, weft_component_set(f.world, e, target_c, &t), WEFT_EINVAL));
    cr_expect(weft_component_has(f.world, e, target_c) == false, "the world is unchanged");
    t.who = e; /* a real handle is fine */
    cr_expect(eq(int, weft_component_set(f.world, e, target_c, &t), WEFT_OK));
}

/* ---- NULL handles ------------------------------------------------------------------- */

Test(command, every_call_given_a_null_buffer_returns_einval_or_its_neutral_value) {
    weft_entity_t e = weft_entity_make(1, 0);
    cr_expect(eq(u64, weft_cmd_create(NULL), WEFT_ENTITY_NULL));
    cr_expect(strstr(weft_last_error(), "weft_cmd_create: cmd is NULL") != NULL, "%s",
              weft_last_error());
    cr_expect(eq(int, weft_cmd_destroy(NULL, e), WEFT_EINVAL));
    cr_expect(eq(int, weft_cmd_add(NULL, e, f.tag), WEFT_EINVAL));
    cr_expect(eq(int, weft_cmd_set(NULL, e, f.hp, &(int32_t){1}), WEFT_EINVAL));
    cr_expect(eq(int, weft_cmd_remove(NULL, e, f.tag), WEFT_EINVAL));
    cr_expect(eq(u32, weft_cmd_count(NULL), 0));
}

Test(command, every_scheduler_call_given_a_null_world_returns_einval_or_its_neutral_value) {
    weft_system_t s = {0};
    uint32_t n = 7;
    size_t len = 7;
    uint64_t ns = 7;
    char buf[16];
    cr_expect(eq(
        int, weft_system_register(NULL, &(weft_system_desc_t){.name = "x", .fn = noop_system}, &s),
        WEFT_EINVAL));
    cr_expect(eq(u32, weft_system_lookup(NULL, "x").id, 0));
    cr_expect(weft_system_name(NULL, s) == NULL);
    cr_expect(eq(u32, weft_system_count(NULL), 0));
    cr_expect(eq(int, weft_world_progress(NULL, 0.0f), WEFT_EINVAL));
    cr_expect(eq(int, weft_schedule_edges(NULL, NULL, 0, &n), WEFT_EINVAL));
    cr_expect(eq(int, weft_schedule_order(NULL, NULL, 0, &n), WEFT_EINVAL));
    cr_expect(eq(int, weft_schedule_conflicts(NULL, NULL, 0, &n), WEFT_EINVAL));
    cr_expect(eq(int, weft_schedule_dot(NULL, buf, sizeof buf, &len), WEFT_EINVAL));
    cr_expect(eq(int, weft_schedule_critical_path(NULL, NULL, 0, &n, &ns), WEFT_EINVAL));
    cr_expect(eq(int, weft_trace_enable(NULL, NULL), WEFT_EINVAL));
    weft_trace_disable(NULL);
    cr_expect(weft_trace_is_enabled(NULL) == false);
    cr_expect(eq(u32, weft_trace_events(NULL, NULL, 0), 0));
    cr_expect(eq(u64, weft_trace_dropped(NULL), 0));
    cr_expect(eq(int, weft_trace_write_chrome(NULL, "/nonexistent/x.json"), WEFT_EINVAL));
    weft_view_t v;
    cr_expect(eq(int, weft_view_narrow(NULL, NULL, 0, NULL, 0, &v), WEFT_EINVAL));
    weft_view_run(NULL, NULL, NULL); /* does nothing */
}

/* ---- log levels: documented skips are not errors ----------------------------------- */

typedef struct log_count {
    _Atomic uint32_t at[4]; /* reports per weft_log_level_t */
} log_count_t;

static void count_log(weft_log_level_t level, weft_result_t code, const char *msg, const char *file,
                      int line, void *user) {
    (void)code, (void)msg, (void)file, (void)line;
    atomic_fetch_add(&((log_count_t *)user)->at[level & 3u], 1);
}

static weft_component_t churn_pos, churn_tag;

/* Both killers record, for every entity: add of P (which it has), remove of T (which it
 * lacks), destroy. At apply killer1's add and remove are skipped (WEFT_EEXIST, WEFT_ENOENT)
 * and its destroy runs; all three of killer2's commands are skipped (the target is dead):
 * five documented skips per entity. */
static void killer(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            weft_entity_t e = weft_iter_entity(it, i);
            (void)weft_cmd_add(ctx->cmd, e, churn_pos);
            (void)weft_cmd_remove(ctx->cmd, e, churn_tag);
            (void)weft_cmd_destroy(ctx->cmd, e);
        }
    }
}

/* A world whose logger counts, a 20-frame churn through the two killers; returns the world. */
static weft_world_t *churn(log_count_t *count, weft_log_level_t level) {
    weft_world_t *w = NULL;
    weft_world_desc_t d = {.worker_count = 2,
                           .logger = {.fn = count_log, .user = count, .level = level}};
    cr_assert(eq(int, weft_world_create(&d, &w), WEFT_OK));
    cr_assert(eq(int,
                 weft_component_register(
                     w, &(weft_component_desc_t){.name = "P", .size = sizeof(vec3_t)}, &churn_pos),
                 WEFT_OK));
    cr_assert(eq(int, weft_component_register(w, &(weft_component_desc_t){.name = "T"}, &churn_tag),
                 WEFT_OK));
    must_register(w,
                  &(weft_system_desc_t){.name = "killer1", .fn = killer, .terms = {R(churn_pos)}});
    must_register(w,
                  &(weft_system_desc_t){.name = "killer2", .fn = killer, .terms = {R(churn_pos)}});
    for (int frame = 0; frame < 20; frame++) {
        for (int i = 0; i < 50; i++) {
            weft_entity_t e;
            cr_assert(eq(int, weft_entity_create(w, &e), WEFT_OK));
            cr_assert(eq(int, weft_component_add(w, e, churn_pos, NULL), WEFT_OK));
        }
        cr_assert(eq(int, weft_world_progress(w, 0.0f), WEFT_OK), "%s", weft_last_error());
        cr_assert(eq(u32, weft_entity_count(w), 0), "every entity was destroyed");
    }
    return w;
}

Test(command, documented_skips_are_not_logged_at_the_default_level_but_errors_are) {
    log_count_t count = {0};
    weft_world_t *w = churn(&count, WEFT_LOG_ERROR);
    for (int l = 0; l < 4; l++) {
        cr_expect(eq(u32, atomic_load(&count.at[l]), 0), "%u reports at level %d",
                  atomic_load(&count.at[l]), l);
    }
    weft_entity_t e;
    cr_assert(eq(int, weft_entity_create(w, &e), WEFT_OK));
    cr_expect(eq(int, weft_component_add(w, e, (weft_component_t){200}, NULL), WEFT_EINVAL));
    cr_expect(eq(u32, atomic_load(&count.at[WEFT_LOG_ERROR]), 1), "a real error still arrives");
    weft_world_destroy(w);
}

Test(command, a_debug_level_logger_sees_every_documented_skip) {
    log_count_t count = {0};
    weft_world_t *w = churn(&count, WEFT_LOG_DEBUG);
    cr_expect(eq(u32, atomic_load(&count.at[WEFT_LOG_ERROR]), 0));
    cr_expect(eq(u32, atomic_load(&count.at[WEFT_LOG_DEBUG]), 5u * 20u * 50u),
              "five skips for each of 1,000 entities");
    weft_world_destroy(w);
}
