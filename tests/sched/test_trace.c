/* test_trace.c: the job trace (events per job with worker, system, chunk, times), its Chrome
 * JSON output, and the critical path computed from it. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_fixture.h"

static fixture_t f;

static void setup(void) {
    fixture_init(&f, 2, WEFT_EXECUTION_THREADED);
    for (uint32_t i = 0; i < 1000; i++) {
        weft_entity_t e;
        cr_assert(eq(int, weft_entity_create(f.world, &e), WEFT_OK));
        vec3_t v = {(float)i, 0, 0};
        weft_component_set(f.world, e, f.pos, &v);
        weft_component_set(f.world, e, f.vel, &v);
    }
}

static void teardown(void) { fixture_fini(&f); }

TestSuite(trace, .init = setup, .fini = teardown, .timeout = 20);

static void spin(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            for (int k = 0; k < 20; k++) {
                ((vec3_t *)weft_iter_get(it, 0, i))->x *= 1.0001f;
            }
        }
    }
}

Test(trace, is_off_by_default_and_records_nothing) {
    must_register(f.world, &(weft_system_desc_t){.name = "a", .fn = spin, .terms = {W(f.pos)}});
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    cr_expect(not(weft_trace_is_enabled(f.world)));
    cr_expect(eq(u32, weft_trace_events(f.world, NULL, 0), 0));
    cr_expect(eq(int, weft_trace_write_chrome(f.world, "/tmp/weft_never.json"), WEFT_ESTATE));
}

Test(trace, records_one_event_per_job_with_chunk_and_worker) {
    weft_system_t a = must_register(
        f.world,
        &(weft_system_desc_t){
            .name = "a", .fn = spin, .terms = {W(f.pos)}, .parallel = true, .chunk_size = 300});
    weft_system_t b =
        must_register(f.world, &(weft_system_desc_t){.name = "b", .fn = spin, .terms = {W(f.vel)}});
    cr_assert(eq(int, weft_trace_enable(f.world, NULL), WEFT_OK));
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    weft_trace_event_t ev[16];
    uint32_t n = weft_trace_events(f.world, ev, 16);
    cr_assert(eq(u32, n, 4 + 1 + 1), "4 chunks of a, b, one apply");
    uint32_t chunk_mask = 0, nb = 0, napply = 0;
    for (uint32_t i = 0; i < n; i++) {
        cr_expect(le(u64, ev[i].begin_ns, ev[i].end_ns));
        cr_expect(ev[i].worker < 2, "ev[i].worker < 2 (%u vs %u)", (unsigned)(ev[i].worker),
                  (unsigned)(2));
        cr_expect(eq(u32, ev[i].frame, 0));
        if (i > 0) {
            cr_expect(le(u64, ev[i - 1].begin_ns, ev[i].begin_ns), "sorted by begin");
        }
        if (ev[i].system == a.id) {
            chunk_mask |= 1u << ev[i].chunk;
        }
        nb += ev[i].system == b.id;
        napply += ev[i].system == 0;
    }
    cr_expect(eq(u32, chunk_mask, 0xF));
    cr_expect(eq(u32, nb, 1));
    cr_expect(eq(u32, napply, 1));
    /* Without accumulate, the next frame replaces the events. */
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    cr_expect(eq(u32, weft_trace_events(f.world, ev, 16), 6));
    cr_expect(eq(u32, ev[0].frame, 1));
    weft_trace_disable(f.world);
    cr_expect(not(weft_trace_is_enabled(f.world)));
}

Test(trace, accumulates_across_frames_when_asked) {
    must_register(f.world, &(weft_system_desc_t){.name = "a", .fn = spin, .terms = {W(f.pos)}});
    cr_assert(
        eq(int, weft_trace_enable(f.world, &(weft_trace_desc_t){.accumulate = true}), WEFT_OK));
    for (int i = 0; i < 3; i++) {
        cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    }
    cr_expect(eq(u32, weft_trace_events(f.world, NULL, 0), 6));
}

Test(trace, a_full_lane_drops_and_counts_events) {
    must_register(
        f.world,
        &(weft_system_desc_t){
            .name = "a", .fn = spin, .terms = {W(f.pos)}, .parallel = true, .chunk_size = 10});
    cr_assert(eq(int, weft_trace_enable(f.world, &(weft_trace_desc_t){.capacity = 8}), WEFT_OK));
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    uint32_t n = weft_trace_events(f.world, NULL, 0);
    cr_expect(le(u32, n, 16));
    cr_expect(eq(u64, n + weft_trace_dropped(f.world), 100 + 1));
}

Test(trace, writes_chrome_trace_json) {
    must_register(f.world,
                  &(weft_system_desc_t){.name = "quote\"d", .fn = spin, .terms = {W(f.pos)}});
    cr_assert(eq(int, weft_trace_enable(f.world, NULL), WEFT_OK));
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    char path[] = "/tmp/weft_trace_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert(eq(int, weft_trace_write_chrome(f.world, path), WEFT_OK));
    FILE *fp = fopen(path, "r");
    char buf[4096] = {0};
    size_t len = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    remove(path);
    cr_assert(len > 0, "len > 0 (%zu vs %zu)", (size_t)(len), (size_t)(0));
    cr_expect(strncmp(buf, "{\"displayTimeUnit\"", 18) == 0);
    cr_expect(strstr(buf, "\"traceEvents\":[") != NULL);
    cr_expect(strstr(buf, "\"name\":\"quote\\\"d\"") != NULL, "%s", buf);
    cr_expect(strstr(buf, "\"ph\":\"X\"") != NULL);
    cr_expect(strstr(buf, "weft-worker-1") != NULL);
    cr_expect(strstr(buf, "\"args\":{\"chunk\":0,\"frame\":0}") != NULL);
    cr_expect(strcmp(buf + len - 3, "]}\n") == 0);
}

Test(trace, critical_path_follows_the_longest_dependent_chain) {
    /* heavy -> heavy2 (Position) is the long chain; light (Velocity) runs beside it; a
     * phase-1 system follows everything. */
    weft_system_t h1 = must_register(
        f.world, &(weft_system_desc_t){.name = "heavy", .fn = spin, .terms = {W(f.pos)}});
    must_register(f.world,
                  &(weft_system_desc_t){.name = "light", .fn = noop_system, .terms = {W(f.vel)}});
    weft_system_t h2 = must_register(
        f.world, &(weft_system_desc_t){.name = "heavy2", .fn = spin, .terms = {W(f.pos)}});
    weft_system_t last = must_register(
        f.world,
        &(weft_system_desc_t){.name = "last", .fn = spin, .terms = {W(f.vel)}, .phase = 1});
    weft_system_t path[8];
    uint32_t n = 0;
    cr_expect(eq(int, weft_schedule_critical_path(f.world, path, 8, &n, NULL), WEFT_ESTATE),
              "no trace yet");
    cr_assert(eq(int, weft_trace_enable(f.world, NULL), WEFT_OK));
    cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    uint64_t total = 0;
    cr_assert(eq(int, weft_schedule_critical_path(f.world, path, 8, &n, &total), WEFT_OK));
    cr_assert(eq(u32, n, 3));
    cr_expect(eq(u32, path[0].id, h1.id));
    cr_expect(eq(u32, path[1].id, h2.id));
    cr_expect(eq(u32, path[2].id, last.id));
    cr_expect(total > 0, "total > 0 (%llu vs %llu)", (unsigned long long)(total),
              (unsigned long long)(0));
}

/* Tiny systems are measured first (threaded), then settle on the calling thread (the rule of
 * weft/system.h); a re-probe comes only every 128 frames, after the frames checked here. */
Test(trace, a_phase_of_tiny_systems_settles_on_the_calling_thread) {
    weft_component_t few;
    cr_assert(eq(int,
                 weft_component_register(
                     f.world, &(weft_component_desc_t){.name = "Few", .size = sizeof(float)}, &few),
                 WEFT_OK));
    for (uint32_t i = 0; i < 10; i++) {
        weft_entity_t e = weft_entity_from_index(f.world, i + 1);
        float v = 1;
        cr_assert(eq(int, weft_component_set(f.world, e, few, &v), WEFT_OK));
    }
    for (int i = 0; i < 8; i++) {
        char name[8] = {'t', (char)('0' + i), 0};
        must_register(f.world,
                      &(weft_system_desc_t){.name = name, .fn = noop_system, .terms = {R(few)}});
    }
    for (int fr = 0; fr < 16; fr++) {
        cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
    }
    cr_assert(eq(int, weft_trace_enable(f.world, NULL), WEFT_OK));
    for (int fr = 0; fr < 20; fr++) {
        cr_assert(eq(int, weft_world_progress(f.world, 0.0f), WEFT_OK));
        weft_trace_event_t ev[16];
        uint32_t n = weft_trace_events(f.world, ev, 16);
        cr_assert(eq(u32, n, 9));
        for (uint32_t i = 0; i < n; i++) {
            cr_assert(eq(u32, ev[i].worker, 0), "tiny systems stay on the main thread");
        }
    }
}
