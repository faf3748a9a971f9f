/* trace.c: the optional job trace — per-worker event lanes, reading them back sorted, and the
 * Chrome Trace Event JSON writer (see trace.h for the design). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime(CLOCK_MONOTONIC) */

#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobs/platform/report.h"
#include "schedule.h"
#include "src/core/world.h"
#include "system.h"

#define TRACE_DEFAULT_CAPACITY 65536u

uint64_t weft__trace_now(void) {
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Called on the main thread before any job of the frame exists, so plain stores are safe. */
void weft__trace_frame_begin(weft__trace_t *t) {
    if (!t->accumulate) {
        for (uint32_t w = 0; w < t->workers; w++) {
            t->lanes[w].count = 0;
            t->lanes[w].dropped = 0;
        }
    }
    t->frame++;
}

void weft__trace_destroy(weft__trace_t *t, const weft_allocator_t *alloc) {
    if (!t) {
        return;
    }
    if (t->jobs) {
        (void)weft_jobs_set_range_trace(t->jobs, NULL);
    }
    for (uint32_t w = 0; w < t->workers; w++) {
        weft__sched_free(alloc, t->lanes[w].events,
                         (size_t)t->capacity * sizeof(weft_trace_event_t));
    }
    weft__sched_free(alloc, t->lanes, t->workers * sizeof(weft__trace_lane_t));
    weft__sched_free(alloc, t, sizeof *t);
}

/* ---- nested parallel-fors -------------------------------------------------------------- */

/* A loop's tag: its parent chunk's system, the loop's number in that chunk and the chunk
 * (16 bits each; past them, or outside a traced chunk, the loop is not traced: 0). Runs on
 * the loop's caller, whose lane holds the chunk it runs. */
static uint64_t trace_loop_begin(void *user, uint32_t worker) {
    weft__trace_t *t = user;
    if (worker >= t->workers) {
        return 0; /* a registered thread: no lane */
    }
    weft__trace_lane_t *lane = &t->lanes[worker];
    uint32_t loop = lane->cur_loops++;
    if (lane->cur_system == 0 || lane->cur_chunk > UINT16_MAX || loop > UINT16_MAX) {
        return 0;
    }
    return (uint64_t)lane->cur_system << 32 | (uint64_t)loop << 16 | lane->cur_chunk;
}

/* One range of a traced loop, on the thread that ran it. */
static void trace_range(void *user, uint64_t tag, uint64_t index, uint32_t worker, uint64_t begin,
                        uint64_t end) {
    weft__trace_t *t = user;
    if (worker < t->workers) {
        weft__trace_record_kind(t, worker, (uint32_t)(tag >> 32), (uint32_t)(tag & 0xffffu), begin,
                                end, WEFT_TRACE_PIECE, (uint32_t)(tag >> 16) & 0xffffu,
                                index < UINT32_MAX ? (uint32_t)index : UINT32_MAX);
    }
}

/* ---- public API ---------------------------------------------------------- >>trace_api */

/* The job system is created here if needed: the lanes are per worker, so their number must
 * be known before the first traced frame. The old trace is replaced only on success. */
weft_result_t weft_trace_enable(weft_world_t *world, const weft_trace_desc_t *desc) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    weft_trace_desc_t d = desc ? *desc : (weft_trace_desc_t){0};
    struct weft_sched *s = weft__sched_get(world);
    if (!s) {
        return WEFT_ENOMEM;
    }
    WEFT__CONTRACT(d._canary == 0, s->log, WEFT_EINVAL, "weft_trace_enable: desc._canary != 0");
    WEFT__CONTRACT(!s->running, s->log, WEFT_ESTATE,
                   "weft_trace_enable: called while a frame runs");
    weft_result_t r = weft__sched_jobs(s);
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t cap = d.capacity ? d.capacity : TRACE_DEFAULT_CAPACITY;
    uint32_t workers = s->workers;
    weft__trace_t *t = weft__sched_alloc(s->alloc, sizeof *t);
    weft__trace_lane_t *lanes = weft__sched_alloc(s->alloc, workers * sizeof *lanes);
    if (!t || !lanes) {
        goto fail_free;
    }
    memset(t, 0, sizeof *t);
    memset(lanes, 0, workers * sizeof *lanes);
    *t = (weft__trace_t){.lanes = lanes,
                         .workers = workers,
                         .capacity = cap,
                         .accumulate = d.accumulate,
                         .origin_ns = weft__trace_now()};
    /* frame_begin increments before the first frame, so the first traced frame is 0. */
    t->frame = UINT32_MAX;
    for (uint32_t w = 0; w < workers; w++) {
        lanes[w].events = weft__sched_alloc(s->alloc, (size_t)cap * sizeof(weft_trace_event_t));
        if (!lanes[w].events) {
            goto fail_free;
        }
    }
    weft__trace_destroy(s->trace, s->alloc);
    s->trace = t;
    if (s->jobs) { /* the pieces of parallel-fors started inside traced chunks */
        const weft_range_trace_t rt = {trace_loop_begin, trace_range, t};
        t->jobs = s->jobs;
        (void)weft_jobs_set_range_trace(s->jobs, &rt);
    }
    return WEFT_OK;
fail_free:
    if (t && lanes) {
        weft__trace_destroy(t, s->alloc);
    } else {
        weft__sched_free(s->alloc, t, sizeof *t);
        weft__sched_free(s->alloc, lanes, workers * sizeof *lanes);
    }
    return WEFT__FAIL(s->log, WEFT_ENOMEM, "weft_trace_enable: out of memory for %u events", cap);
}

void weft_trace_disable(weft_world_t *world) {
    WEFT__NONNULL(world, );
    struct weft_sched *s = weft__sched_peek(world);
    if (!s || !s->trace) {
        return;
    }
    weft__trace_destroy(s->trace, s->alloc);
    s->trace = NULL;
}

bool weft_trace_is_enabled(const weft_world_t *world) {
    WEFT__NONNULL(world, false);
    const struct weft_sched *s = weft__sched_peek(world);
    return s && s->trace;
}

static int cmp_event(const void *pa, const void *pb) {
    const weft_trace_event_t *a = pa, *b = pb;
    if (a->begin_ns != b->begin_ns) {
        return a->begin_ns < b->begin_ns ? -1 : 1;
    }
    if (a->worker != b->worker) {
        return a->worker < b->worker ? -1 : 1;
    }
    return 0;
}

/* Lanes are merged and sorted only here, off the hot path. */
uint32_t weft_trace_events(const weft_world_t *world, weft_trace_event_t *out, uint32_t cap) {
    WEFT__NONNULL(world, 0);
    const struct weft_sched *s = weft__sched_peek(world);
    if (!s || !s->trace) {
        return 0;
    }
    const weft__trace_t *t = s->trace;
    uint32_t total = 0, at = 0;
    for (uint32_t w = 0; w < t->workers; w++) {
        const weft__trace_lane_t *lane = &t->lanes[w];
        total += lane->count;
        for (uint32_t i = 0; i < lane->count && at < cap; i++) {
            out[at++] = lane->events[i];
        }
    }
    if (at > 0) {
        qsort(out, at, sizeof *out, cmp_event);
    }
    return total;
}

uint64_t weft_trace_dropped(const weft_world_t *world) {
    WEFT__NONNULL(world, 0);
    const struct weft_sched *s = weft__sched_peek(world);
    if (!s || !s->trace) {
        return 0;
    }
    uint64_t n = 0;
    for (uint32_t w = 0; w < s->trace->workers; w++) {
        n += s->trace->lanes[w].dropped;
    }
    return n;
}

/* ---- Chrome Trace Event JSON --------------------------------------------- >>trace_json */

/* Write a JSON string body: system names are user text, so quote and control characters are
 * escaped. */
static void write_json_string(FILE *f, const char *str) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

weft_result_t weft_trace_write_chrome(const weft_world_t *world, const char *path) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    const struct weft_sched *s = weft__sched_peek(world);
    if (!s || !s->trace) {
        return WEFT__FAIL(s       ? s->log
                          : world ? world->log
                                  : NULL,
                          WEFT_ESTATE, "weft_trace_write_chrome: tracing is off");
    }
    if (!path) {
        return WEFT__FAIL(s->log, WEFT_EINVAL, "weft_trace_write_chrome: path is NULL");
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        return WEFT__FAIL(s->log, WEFT_EIO, "weft_trace_write_chrome: cannot open '%s'", path);
    }
    const weft__trace_t *t = s->trace;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
    fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
          "\"args\":{\"name\":\"weft\"}}",
          f);
    for (uint32_t w = 0; w < t->workers; w++) {
        fprintf(f,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,"
                "\"args\":{\"name\":\"weft-worker-%u\"}}",
                w, w);
    }
    /* Lanes are written in worker order; viewers sort by timestamp themselves. Timestamps
     * are microseconds with nanosecond decimals, as the format specifies. */
    for (uint32_t w = 0; w < t->workers; w++) {
        const weft__trace_lane_t *lane = &t->lanes[w];
        for (uint32_t i = 0; i < lane->count; i++) {
            const weft_trace_event_t *e = &lane->events[i];
            static const char *const cats[] = {"system", "piece", "apply_walk", "apply_lane"};
            const char *cat = e->kind == WEFT_TRACE_JOB && e->system == 0 ? "apply"
                              : e->kind <= WEFT_TRACE_APPLY_LANE          ? cats[e->kind]
                                                                          : "other";
            const char *name = e->system ? weft__sched_system_name(s, e->system) : cat;
            fputs(",\n{\"name\":", f);
            write_json_string(f, name);
            fprintf(f,
                    ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"ts\":%llu.%03u,"
                    "\"dur\":%llu.%03u,\"args\":{\"chunk\":%u,\"frame\":%u",
                    cat, e->worker, (unsigned long long)(e->begin_ns / 1000),
                    (unsigned)(e->begin_ns % 1000),
                    (unsigned long long)((e->end_ns - e->begin_ns) / 1000),
                    (unsigned)((e->end_ns - e->begin_ns) % 1000), e->chunk, e->frame);
            if (e->kind != WEFT_TRACE_JOB) { /* nested work: which loop or lane, and detail */
                fprintf(f, ",\"loop\":%u,\"detail\":%u", e->loop, e->detail);
            }
            fputs("}}", f);
        }
    }
    fputs("\n]}\n", f);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        return WEFT__FAIL(s->log, WEFT_EIO, "weft_trace_write_chrome: write to '%s' failed", path);
    }
    return WEFT_OK;
}
