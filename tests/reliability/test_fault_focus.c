/* test_fault_focus.c: small fault-injection tests, one per problem the fault sweep
 * (test_fault.c) found, so each can be routed to its module and fixed on its own. Each loops
 * the failing allocation over every allocation of one call, so it does not depend on the
 * module's exact allocation order. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "weft/hierarchy.h"
#include "weft_test.h"

TestSuite(reliability_fault_focus, .timeout = 120);

typedef struct rig {
    wt_fault_alloc_t fa;
    wt_log_count_t log;
    weft_world_t *w;
} rig_t;

static void rig_world(rig_t *r) {
    memset(r, 0, sizeof *r);
    weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE, .worker_count = 1,
                           .allocator = wt_fault_allocator(&r->fa),
                           .logger = wt_log_counter(&r->log)};
    cr_assert(eq(int, weft_world_create(&d, &r->w), WEFT_OK));
}

static void rig_fini(rig_t *r) {
    weft_world_destroy(r->w);
    cr_expect(eq(i64, wt_fault_live_bytes(&r->fa), 0), "leaked %lld bytes",
              (long long)wt_fault_live_bytes(&r->fa));
}

/* src/world.c weft_world_create: when weft__sig_init fails after its first allocation, the
 * failure path (fail_entity) does not call weft__sig_fini, so the signature array leaks. */
Test(reliability_fault_focus, world_create_leaks_nothing_when_an_allocation_fails) {
    for (uint64_t k = 1; k <= 16; k++) {
        wt_fault_alloc_t fa;
        wt_fault_init(&fa);
        wt_fault_arm(&fa, k, 1);
        weft_world_t *w = NULL;
        weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE,
                               .allocator = wt_fault_allocator(&fa)};
        weft_result_t r = weft_world_create(&d, &w);
        if (r == WEFT_OK)
            weft_world_destroy(w);
        else
            cr_expect(w == NULL);
        cr_expect(eq(i64, wt_fault_live_bytes(&fa), 0),
                  "allocation %llu failed: weft_world_create returned %s and left %lld bytes",
                  (unsigned long long)k, weft_result_name(r), (long long)wt_fault_live_bytes(&fa));
    }
}

/* src/hierarchy*.c weft_hier_components: the four registrations are not all-or-nothing; when a
 * later one fails, the earlier components stay registered (the world changed). */
Test(reliability_fault_focus, hier_components_registers_nothing_when_it_fails) {
    for (uint64_t k = 1; k <= 16; k++) {
        rig_t r;
        rig_world(&r);
        uint32_t before = weft_component_registered(r.w);
        wt_fault_arm(&r.fa, k, 1);
        weft_hier_components_t hc;
        weft_result_t got = weft_hier_components(r.w, &hc);
        wt_fault_arm(&r.fa, 0, 0);
        if (got != WEFT_OK)
            cr_expect(eq(u32, weft_component_registered(r.w), before),
                      "allocation %llu failed (%s) but %u components were registered",
                      (unsigned long long)k, weft_last_error(),
                      weft_component_registered(r.w) - before);
        rig_fini(&r);
    }
}

/* base.h promises one logger call per reported failure; the scheduler (src/schedule.c), the
 * hierarchy (src/hierarchy_store.c, hierarchy_sort.c, hierarchy_update.c) and the archive
 * (src/archive_io.c, archive_parse.c, archive_secw.c) report with a NULL logger, so their
 * failures go to stderr instead of the world's hook. */
static void noop(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
    }
}

static weft_result_t do_progress(rig_t *r) { return weft_world_progress(r->w, 0.1f); }
static weft_result_t do_hier_add(rig_t *r) {
    weft_entity_t e;
    weft_result_t got = weft_entity_create(r->w, &e);
    return got != WEFT_OK ? got : weft_hier_add(r->w, e, NULL);
}
static weft_result_t do_save(rig_t *r) {
    weft_membuf_t buf = {.allocator = wt_fault_allocator(&r->fa)};
    weft_writer_t wr = weft_membuf_writer(&buf);
    weft_result_t got = weft_archive_save(r->w, NULL, &wr);
    weft_membuf_free(&buf);
    return got;
}

Test(reliability_fault_focus, every_failure_reaches_the_world_logger) {
    struct {
        const char *name;
        weft_result_t (*fn)(rig_t *r);
    } calls[] = {{"weft_world_progress (schedule build)", do_progress},
                 {"weft_hier_add", do_hier_add},
                 {"weft_archive_save", do_save}};
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        for (uint64_t k = 1; k <= 24; k++) {
            rig_t r;
            rig_world(&r);
            weft_component_t pos;
            cr_assert(eq(int, weft_component_register(r.w, &(weft_component_desc_t){
                                  .name = "P", .size = 4}, &pos), WEFT_OK));
            weft_system_t s;
            cr_assert(eq(int, weft_system_register(r.w, &(weft_system_desc_t){
                                  .name = "s", .fn = noop,
                                  .terms = {{pos, WEFT_ACCESS_WRITE}}}, &s), WEFT_OK));
            uint64_t logged = r.log.errors;
            wt_fault_arm(&r.fa, k, 1);
            weft_result_t got = calls[c].fn(&r);
            wt_fault_arm(&r.fa, 0, 0);
            if (got != WEFT_OK)
                cr_expect(r.log.errors > logged,
                          "%s failed under allocation fault %llu (%s: %s) but the logger hook "
                          "was not called", calls[c].name, (unsigned long long)k,
                          weft_result_name(got), weft_last_error());
            rig_fini(&r);
        }
    }
}

/* src/frame.c apply_phase (and the core calls it makes): when the command apply runs out of
 * memory, the commands applied so far stay applied and the systems' writes stay written, so
 * weft_world_progress returns WEFT_ENOMEM with the world changed (issue 8 asks for unchanged). */
static void spawner(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const weft_component_t *c = ctx->user;
    (void)it;
    for (uint32_t i = 0; i < 300; i++) {
        weft_entity_t p = weft_cmd_create(ctx->cmd);
        uint32_t v = i;
        if (p != 0)
            (void)weft_cmd_set(ctx->cmd, p, *c, &v);
    }
}

Test(reliability_fault_focus, a_frame_that_fails_leaves_the_world_unchanged) {
    uint32_t failures = 0;
    for (uint64_t k = 1; k <= 40; k++) {
        rig_t r;
        rig_world(&r);
        weft_component_t v;
        cr_assert(eq(int, weft_component_register(r.w, &(weft_component_desc_t){
                              .name = "V", .size = 4}, &v), WEFT_OK));
        weft_system_t s;
        cr_assert(eq(int, weft_system_register(r.w, &(weft_system_desc_t){
                              .name = "spawner", .fn = spawner, .user = &v}, &s), WEFT_OK));
        cr_assert(eq(int, weft_world_progress(r.w, 0.1f), WEFT_OK)); /* warm: tables built */
        uint64_t before = wt_world_digest(r.w);
        wt_fault_arm(&r.fa, k, 1);
        weft_result_t got = weft_world_progress(r.w, 0.1f);
        wt_fault_arm(&r.fa, 0, 0);
        if (got != WEFT_OK) {
            failures++;
            cr_expect(eq(u64, wt_world_digest(r.w), before),
                      "allocation %llu failed (%s) and the frame was partly applied: %u "
                      "entities now", (unsigned long long)k, weft_last_error(),
                      weft_entity_count(r.w));
        }
        rig_fini(&r);
    }
    cr_expect(failures > 0, "no allocation of the frame could be failed: the test lost its bite");
}
