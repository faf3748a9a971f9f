/* test_fault.c: fault injection — a scripted scenario over every subsystem runs once to count
 * its allocations K, then once per k in 1..K with the k-th allocation failing.
 *
 * DESIGN
 * The scenario is straight-line code where every library call goes through CALL(), which
 * records the world's digest (world_check.h) and the allocator's counters before the call and
 * judges the result after it:
 * - no fault injected during the call: it must succeed (the script only makes valid calls);
 * - a fault injected and the call failed: the code must be WEFT_ENOMEM, weft_last_error() must
 *   be non-empty, the logger hook must have received the failure, the digest must be
 *   unchanged and every invariant must hold; then the call is retried (transient mode) or the
 *   scenario tears down (persistent mode);
 * - a fault injected and the call succeeded anyway: allowed (the library absorbed it), counted.
 * Transient mode fails exactly allocation k, so after the retry the scenario must end with the
 * same digest as the fault-free run: a failed call left no trace. Persistent mode fails every
 * allocation from k on, so the first failing call ends the script: the world is destroyed
 * while allocations still fail, and the allocator must end with zero live bytes and no bad
 * free. Command-buffer calls inside systems get the same treatment (retried in the system).
 * Execution is inline, so "the k-th allocation" is the same allocation in every run.
 *
 * Each k runs in a forked child (both modes, then LeakSanitizer's check in ASan builds), which
 * sends back its figures and violations; a crash is recorded with the script line it happened
 * in, and the sweep goes on. Violations are collected by kind (checking site and script line)
 * and printed once with the first k that showed them, so one run lists every distinct problem.
 * Environment: WT_FAULT_FIRST / WT_FAULT_LAST restrict k, WT_CHECK_EVERY=1 checks invariants
 * after every call, WT_FAULT_HIER_ARCHIVE=0 skips archiving hierarchy nodes. */
#define _GNU_SOURCE /* MAP_ANONYMOUS */

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <stdarg.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define WT_HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WT_HAVE_LSAN 1
#endif
#endif
#ifndef WT_HAVE_LSAN
#define WT_HAVE_LSAN 0
#endif
#if WT_HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#include "weft/hierarchy.h"
#include "weft_test.h"

#define NE 40 /* entities created in bulk */

typedef struct vec3 {
    float x, y, z;
} vec3_t;

typedef struct ref {
    weft_entity_t target; /* entity field (offset 0) */
    uint32_t value;
    uint32_t pad;
} ref_t;

typedef struct scen {
    wt_fault_alloc_t fa; /* the world's allocator */
    wt_log_count_t log;  /* the world's logger */
    bool persistent;     /* fail every allocation from k on (else only the k-th) */
    bool stop;           /* persistent mode: a call failed, tear down */
    bool check_every;    /* check invariants after every call ($WT_CHECK_EVERY) */
    uint32_t workers;    /* > 1: threaded world (random faults only) */
    weft_world_t *w;
    weft_component_t pos, vel, hp, tag, ref, mass;
    weft_entity_t e[NE];
    weft_entity_t extra[8];
    weft_entity_t nodes[7]; /* hierarchy nodes */
    weft_query_t *q1, *q2;
    weft_snapshot_t *snap;
    weft_membuf_t buf;
    /* per-call state */
    uint64_t digest;      /* before the call */
    bool frame_call;      /* the current call runs a frame (see CALL_FRAME) */
    int64_t live;         /* live bytes before the call (for calls without a world) */
    uint64_t fail0, log0; /* fault and logger counters before the call */
    uint32_t retries;     /* of the current call */
    int leak_line;        /* script line of the last call that failed */
    /* figures */
    uint64_t calls;                  /* CALLs made */
    uint64_t failed_calls;           /* calls that failed under an injected fault (all checked) */
    uint64_t absorbed;               /* calls that succeeded although a fault hit them */
    _Atomic uint64_t cmd_failures;   /* command-buffer calls that failed inside systems */
    _Atomic uint64_t cmd_violations; /* ... without a message, or with another code */
    uint32_t frames;                 /* frames run */
    const char *covered[16];         /* subsystems the script reached */
    uint32_t ncovered;
} scen_t;

/* ---- violations ------------------------------------------------------------ >>violations */

/* Violations are collected, not asserted at once, so one sweep reports every distinct problem
 * (keyed by the checking site and the script line), each with the first k that showed it. */
#define MAX_KINDS 64

typedef struct kind {
    int site;         /* line of the check in this file */
    int line;         /* script line of the call (0: none) */
    uint64_t first_k; /* first k that showed it */
    uint64_t count;   /* occurrences */
    char msg[320];    /* the first message */
} kind_t;

static kind_t kinds[MAX_KINDS];
static uint32_t nkinds;
static uint64_t violations;
static uint64_t current_k;
static volatile int *shared_line; /* MAP_SHARED: the script line a child is in (for crashes) */

/* Count one occurrence of `k` (merged with a known kind, else printed and kept). */
static void add_kind(const kind_t *k, const char *msg) {
    violations += k->count;
    for (uint32_t i = 0; i < nkinds; i++) {
        if (kinds[i].site == k->site && kinds[i].line == k->line) {
            kinds[i].count += k->count;
            return;
        }
    }
    if (nkinds < MAX_KINDS) {
        kinds[nkinds] = *k;
        snprintf(kinds[nkinds].msg, sizeof kinds[nkinds].msg, "%s", msg);
        nkinds++;
    }
    fprintf(stderr, "fault VIOLATION (k=%llu, script line %d): %s\n",
            (unsigned long long)k->first_k, k->line, msg);
}

static void violation(int site, int line, const char *fmt, ...) WEFT_PRINTF(3, 4);
static void violation(int site, int line, const char *fmt, ...) {
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    add_kind(&(kind_t){.site = site, .line = line, .first_k = current_k, .count = 1}, msg);
}

#define VIOLATION(line, ...) violation(__LINE__, (line), __VA_ARGS__)

/* ---- the judge -------------------------------------------------------------- >>judge */

static void check_world(scen_t *sc, const char *what, int line) {
    if (sc->w == NULL) {
        return;
    }
    char err[256];
    uint64_t calls = wt_fault_calls(&sc->fa);
    if (!wt_world_check(sc->w, err, sizeof err)) {
        VIOLATION(line, "after %s: invariant broken: %s", what, err);
    }
    if (wt_fault_calls(&sc->fa) != calls) {
        VIOLATION(line, "a read-only call allocated while checking invariants");
    }
}

static void call_begin(scen_t *sc, int line) {
    if (shared_line != NULL) {
        *shared_line = line;
    }
    uint64_t calls = wt_fault_calls(&sc->fa);
    sc->digest = sc->w ? wt_world_digest(sc->w) : 0;
    if (wt_fault_calls(&sc->fa) != calls) {
        VIOLATION(0, "computing the digest allocated");
    }
    sc->live = wt_fault_live_bytes(&sc->fa);
    sc->fail0 = wt_fault_failures(&sc->fa);
    sc->log0 = sc->log.errors;
}

/* Judge a finished call; true when the script may go on, false to retry it. */
static bool call_end(scen_t *sc, weft_result_t r, const char *expr, int line) {
    uint64_t injected = wt_fault_failures(&sc->fa) - sc->fail0;
    sc->calls++;
    if (r == WEFT_OK) {
        if (injected > 0 || sc->check_every) {
            if (injected > 0) {
                sc->absorbed++;
            }
            check_world(sc, expr, line);
        }
        sc->retries = 0;
        return true;
    }
    if (injected == 0) {
        VIOLATION(line, "%s failed with %s without an injected fault: %s", expr,
                  weft_result_name(r), weft_last_error());
        sc->stop = true; /* the script cannot go on meaningfully */
        return true;
    }
    if (r != WEFT_ENOMEM) {
        VIOLATION(line, "%s failed under a fault with %s, not WEFT_ENOMEM (%s)", expr,
                  weft_result_name(r), weft_last_error());
    }
    if (weft_last_error()[0] == '\0') {
        VIOLATION(line, "%s failed but weft_last_error() is empty", expr);
    }
    if (sc->log.errors == sc->log0) {
        VIOLATION(line, "%s failed but the logger hook was not called", expr);
    }
    if (sc->w != NULL && sc->frame_call) {
        /* weft/system.h: a frame that fails after its systems ran is suspended: their in-place
         * writes and earlier phases' applies stay, the failed step applied nothing, and the
         * retry resumes the frame there. So the digest may differ here; the end-of-script
         * digest (equal to the fault-free run's) proves that no command was lost or applied
         * twice and no system ran twice, and test_fault_focus.c checks "the failed step
         * applied nothing" phase by phase. */
    } else if (sc->w != NULL) {
        if (wt_world_digest(sc->w) != sc->digest) {
            VIOLATION(line, "%s failed (%s) but changed the world", expr, weft_last_error());
        }
    } else if (wt_fault_live_bytes(&sc->fa) != sc->live) {
        VIOLATION(line, "%s failed but left %lld bytes allocated", expr,
                  (long long)(wt_fault_live_bytes(&sc->fa) - sc->live));
    }
    check_world(sc, expr, line);
    sc->failed_calls++;
    sc->leak_line = line;
    if (sc->persistent || sc->retries++ >= (sc->workers > 1 ? 50u : 3u)) {
        sc->stop = true;
        return true;
    }
    return false;
}

/* Run `expr` (a weft_result_t) under the judge; in persistent mode, leave the script
 * function (which must return void) after the first failure. CALL_FRAME is CALL for
 * weft_world_progress, judged by its own contract (see call_end). */
#define CALL(sc, expr) CALL_JUDGED(sc, false, expr)
#define CALL_FRAME(sc, expr) CALL_JUDGED(sc, true, expr)
#define CALL_JUDGED(sc, frame, expr)                      \
    do {                                                  \
        if ((sc)->stop)                                   \
            return;                                       \
        (sc)->frame_call = (frame);                       \
        for (;;) {                                        \
            call_begin((sc), __LINE__);                   \
            weft_result_t call_r_ = (expr);               \
            if (call_end((sc), call_r_, #expr, __LINE__)) \
                break;                                    \
        }                                                 \
        (sc)->frame_call = false;                         \
        if ((sc)->stop)                                   \
            return;                                       \
    } while (0)

static void covered(scen_t *sc, const char *what) {
    for (uint32_t i = 0; i < sc->ncovered; i++) {
        if (strcmp(sc->covered[i], what) == 0) {
            return;
        }
    }
    if (sc->ncovered < 16) {
        sc->covered[sc->ncovered++] = what;
    }
}

/* ---- systems (command buffers under faults) ------------------------------------ >>systems */

/* A command that failed inside a system: it must be ENOMEM with a message. Returns true to
 * retry (transient mode), false to give up on this command (persistent mode). */
static bool cmd_failed(scen_t *sc, weft_result_t r) {
    ++sc->cmd_failures;
    if (r != WEFT_ENOMEM || weft_last_error()[0] == '\0') {
        ++sc->cmd_violations;
    }
    return !sc->persistent && r == WEFT_ENOMEM;
}

#define CMD(sc, expr)                                                      \
    do {                                                                   \
        weft_result_t cmd_r_;                                              \
        while ((cmd_r_ = (expr)) != WEFT_OK && cmd_failed((sc), cmd_r_)) { \
        }                                                                  \
    } while (0)

static void sys_integrate(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        vec3_t *p = it->columns[0] ? it->columns[0] : NULL;
        for (uint32_t i = 0; i < it->rows; i++) {
            vec3_t *pi = p ? &p[i] : weft_iter_get(it, 0, i);
            const vec3_t *v = weft_iter_get(it, 1, i);
            pi->x += v->x * ctx->dt;
            pi->y += v->y * ctx->dt;
            pi->z += v->z * ctx->dt;
        }
    }
}

/* Spawns two entities per frame (one with Position, one tagged), and destroys the first
 * entity with Health below 3. */
static void sys_spawner(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    scen_t *sc = ctx->user;
    for (int k = 0; k < 2; k++) {
        weft_entity_t p = 0;
        while ((p = weft_cmd_create(ctx->cmd)) == 0 && cmd_failed(sc, WEFT_ENOMEM)) {
        }
        if (p == 0) {
            return;
        }
        vec3_t v = {(float)k, 1.0f, 2.0f};
        CMD(sc, weft_cmd_set(ctx->cmd, p, sc->pos, &v));
        if (k == 1) {
            CMD(sc, weft_cmd_add(ctx->cmd, p, sc->tag));
        }
    }
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            const int32_t *h = weft_iter_get(it, 0, i);
            if (*h < 3) {
                CMD(sc, weft_cmd_destroy(ctx->cmd, weft_iter_entity(it, i)));
                return;
            }
        }
    }
}

/* Decrements Health; at zero, removes it and sets Mass. */
static void sys_aging(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    scen_t *sc = ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            int32_t *h = weft_iter_get(it, 0, i);
            if (--*h <= 0) {
                float m = 1.5f;
                weft_entity_t e = weft_iter_entity(it, i);
                CMD(sc, weft_cmd_remove(ctx->cmd, e, sc->hp));
                CMD(sc, weft_cmd_set(ctx->cmd, e, sc->mass, &m));
            }
        }
    }
}

static int cmp_hp(weft_entity_t ea, const void *a, weft_entity_t eb, const void *b, void *u) {
    (void)ea;
    (void)eb;
    (void)u;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* ---- the script ----------------------------------------------------------------- >>script */

static weft_result_t reg(scen_t *sc, const char *name, size_t size, weft_component_t *out) {
    weft_component_desc_t d = {.name = name, .size = size};
    if (size == sizeof(ref_t) && strcmp(name, "Ref") == 0) {
        d.entity_field_count = 1;
        d.entity_fields[0] = 0;
    }
    return weft_component_register(sc->w, &d, out);
}

static void script_core(scen_t *sc) {
    weft_world_desc_t d = {.execution =
                               sc->workers > 1 ? WEFT_EXECUTION_THREADED : WEFT_EXECUTION_INLINE,
                           .worker_count = sc->workers > 1 ? sc->workers : 1,
                           .entity_capacity = 16,
                           .allocator = wt_fault_allocator(&sc->fa),
                           .logger = wt_log_counter(&sc->log)};
    CALL(sc, weft_world_create(&d, &sc->w));
    covered(sc, "world");
    CALL(sc, reg(sc, "Position", sizeof(vec3_t), &sc->pos));
    CALL(sc, reg(sc, "Velocity", sizeof(vec3_t), &sc->vel));
    CALL(sc, reg(sc, "Health", sizeof(int32_t), &sc->hp));
    CALL(sc, reg(sc, "Tag", 0, &sc->tag));
    CALL(sc, reg(sc, "Ref", sizeof(ref_t), &sc->ref));
    CALL(sc, reg(sc, "Mass", sizeof(float), &sc->mass));
    covered(sc, "components");
    weft_group_t g;
    weft_group_desc_t gd = {.components = {sc->pos, sc->vel}};
    CALL(sc, weft_group_create(sc->w, &gd, &g));
    covered(sc, "groups");
    CALL(sc, weft_entity_create_n(sc->w, NE, sc->e));
    for (uint32_t i = 0; i < NE; i++) {
        vec3_t p = {(float)i, 0.0f, 1.0f}, v = {1.0f, (float)i, 0.5f};
        int32_t h = (int32_t)(i % 7);
        ref_t r = {.target = sc->e[(i + 1) % NE], .value = i};
        CALL(sc, weft_component_set(sc->w, sc->e[i], sc->pos, &p));
        if (i % 2 == 0) {
            CALL(sc, weft_component_set(sc->w, sc->e[i], sc->vel, &v));
        }
        if (i % 3 != 0) {
            CALL(sc, weft_component_set(sc->w, sc->e[i], sc->hp, &h));
        }
        if (i % 5 == 0) {
            CALL(sc, weft_component_add(sc->w, sc->e[i], sc->tag, NULL));
        }
        if (i % 4 == 1) {
            CALL(sc, weft_component_set(sc->w, sc->e[i], sc->ref, &r));
        }
    }
    for (uint32_t i = 0; i < 8; i++) {
        CALL(sc, weft_entity_create(sc->w, &sc->extra[i]));
    }
    covered(sc, "entities");
    CALL(sc, weft_component_remove(sc->w, sc->e[4], sc->vel));
    CALL(sc, weft_component_remove(sc->w, sc->e[5], sc->pos));
    CALL(sc, weft_component_remove_ordered(sc->w, sc->e[7], sc->hp));
    CALL(sc, weft_entity_destroy(sc->w, sc->e[10]));
    CALL(sc, weft_entity_destroy(sc->w, sc->extra[3]));
    CALL(sc, weft_entity_destroy_n(sc->w, &sc->e[20], 3));
    CALL(sc, weft_entity_create(sc->w, &sc->e[10])); /* recycles a slot */
    CALL(sc, weft_entity_reserve(sc->w, 200));
    CALL(sc, weft_component_sort(sc->w, sc->hp, cmp_hp, NULL));
    CALL(sc, weft_component_move_row(sc->w, sc->hp, 0, weft_component_rows(sc->w, sc->hp) - 1));
    CALL(sc, weft_component_reserve(sc->w, sc->mass, 64));
    weft_query_desc_t q1 = {.terms = {{.component = sc->pos, .access = WEFT_ACCESS_WRITE},
                                      {.component = sc->vel, .access = WEFT_ACCESS_READ}},
                            .exclude = {sc->tag}};
    CALL(sc, weft_query_create(sc->w, &q1, &sc->q1));
    weft_query_desc_t q2 = {.terms = {{.component = sc->hp, .access = WEFT_ACCESS_READ},
                                      {.component = sc->ref, .access = WEFT_ACCESS_READ}}};
    CALL(sc, weft_query_create(sc->w, &q2, &sc->q2));
    if (weft_query_entity_count(sc->q1) == 0 || weft_query_entity_count(sc->q2) == 0) {
        VIOLATION(__LINE__, "a query matches nothing");
    }
    weft_query_destroy(sc->q2);
    sc->q2 = NULL;
    covered(sc, "queries");
}

/* Tracing on; on failure it must stay off ("tracing stays as it was"). */
static weft_result_t trace_on(scen_t *sc) {
    weft_result_t r = weft_trace_enable(sc->w, &(weft_trace_desc_t){.capacity = 256});
    if (r != WEFT_OK && weft_trace_is_enabled(sc->w)) {
        VIOLATION(0, "weft_trace_enable failed (%s) but tracing is on", weft_result_name(r));
    }
    return r;
}

/* The schedule's introspection calls return a result code and their count separately. */
static weft_result_t introspect(scen_t *sc) {
    char dot[4096];
    weft_schedule_edge_t edges[16];
    weft_system_t order[8];
    size_t len = 0;
    uint32_t n = 0;
    weft_result_t r = weft_schedule_dot(sc->w, dot, sizeof dot, &len);
    r = r ? r : weft_schedule_edges(sc->w, edges, 16, &n);
    r = r ? r : weft_schedule_order(sc->w, order, 8, &n);
    if (r != WEFT_OK) {
        return r;
    }
    if (n != weft_system_count(sc->w)) {
        VIOLATION(0, "the run order holds %u systems of %u", n, weft_system_count(sc->w));
    }
    weft_trace_event_t ev[8];
    if (weft_trace_events(sc->w, ev, 8) == 0) {
        VIOLATION(0, "tracing was on for two frames but recorded nothing");
    }
    return WEFT_OK;
}

static void script_frames(scen_t *sc) {
    weft_system_desc_t integ = {.name = "integrate",
                                .fn = sys_integrate,
                                .parallel = true,
                                .chunk_size = 8,
                                .terms = {{.component = sc->pos, .access = WEFT_ACCESS_WRITE},
                                          {.component = sc->vel, .access = WEFT_ACCESS_READ}}};
    weft_system_desc_t spawn = {.name = "spawner",
                                .fn = sys_spawner,
                                .user = sc,
                                .terms = {{.component = sc->hp, .access = WEFT_ACCESS_READ}}};
    weft_system_desc_t aging = {.name = "aging",
                                .fn = sys_aging,
                                .user = sc,
                                .phase = 1,
                                .terms = {{.component = sc->hp, .access = WEFT_ACCESS_WRITE}}};
    weft_system_t s;
    CALL(sc, weft_system_register(sc->w, &integ, &s));
    CALL(sc, weft_system_register(sc->w, &spawn, &s));
    CALL(sc, weft_system_register(sc->w, &aging, &s));
    covered(sc, "systems");
    for (int f = 0; f < 4; f++) {
        if (f == 2) {
            CALL(sc, trace_on(sc));
            covered(sc, "tracing");
        }
        CALL_FRAME(sc, weft_world_progress(sc->w, 0.5f));
        sc->frames++;
    }
    covered(sc, "frames+command buffers");
    CALL(sc, introspect(sc));
    covered(sc, "schedule introspection");
    weft_trace_disable(sc->w);
}

static void script_snapshot(scen_t *sc) {
    CALL(sc, weft_snapshot_create(sc->w, &sc->snap));
    CALL(sc, weft_snapshot_capture(sc->w, sc->snap));
    uint64_t at_capture = wt_world_digest(sc->w);
    CALL_FRAME(sc, weft_world_progress(sc->w, 0.25f));
    sc->frames++;
    weft_entity_t e;
    CALL(sc, weft_entity_create(sc->w, &e));
    CALL(sc, weft_component_set(sc->w, e, sc->mass, &(float){3.0f}));
    CALL(sc, weft_snapshot_restore(sc->w, sc->snap));
    if (wt_world_digest(sc->w) != at_capture) {
        VIOLATION(__LINE__, "weft_snapshot_restore did not rewind the world");
    }
    CALL(sc, weft_snapshot_capture(sc->w, sc->snap)); /* reuses its memory */
    covered(sc, "snapshots");
}

static weft_result_t save_all(scen_t *sc, const weft_archive_save_desc_t *d) {
    weft_membuf_free(&sc->buf); /* a retried save starts from an empty buffer */
    weft_writer_t wr = weft_membuf_writer(&sc->buf);
    return weft_archive_save(sc->w, d, &wr);
}

static void script_archive(scen_t *sc, bool subtree) {
    sc->buf.allocator = wt_fault_allocator(&sc->fa);
    if (subtree) {
        weft_archive_save_desc_t d = {
            .entities = &sc->nodes[0], .entity_count = 2, .with_descendants = true};
        CALL(sc, save_all(sc, &d));
    } else {
        CALL(sc, save_all(sc, NULL));
    }
    weft_archive_info_t info;
    CALL(sc, weft_archive_load_memory(sc->w, sc->buf.data, sc->buf.size, NULL, &info));
    CALL(sc, weft_archive_load_memory(sc->w, sc->buf.data, sc->buf.size, NULL, &info));
    weft_membuf_free(&sc->buf);
    covered(sc, "archives");
}

static void script_hierarchy(scen_t *sc) {
    weft_hier_components_t hc;
    CALL(sc, weft_hier_components(sc->w, &hc));
    weft_entity_t *n = sc->nodes;
    CALL(sc, weft_entity_create_n(sc->w, 7, n));
    weft_transform_t t = weft_transform_identity();
    for (uint32_t i = 0; i < 7; i++) {
        t.position.x = (float)i;
        t.scale.y = 1.0f + (float)i * 0.25f;
        CALL(sc, weft_hier_add(sc->w, n[i], &t));
        CALL(sc, weft_component_set(sc->w, n[i], sc->ref,
                                    &(ref_t){.target = n[(i + 3) % 7], .value = i}));
    }
    /* The counter-example to append-only ordering: attach(E4,E3); attach(E2,E1); attach(E3,E2). */
    CALL(sc, weft_hier_attach(sc->w, n[3], n[2]));
    CALL(sc, weft_hier_attach(sc->w, n[1], n[0]));
    CALL(sc, weft_hier_attach(sc->w, n[2], n[1]));
    CALL(sc, weft_hier_attach(sc->w, n[5], n[4]));
    CALL(sc, weft_hier_attach(sc->w, n[4], n[3])); /* a subtree moves behind its new parent */
    CALL(sc, weft_hier_update(sc->w, WEFT_HIER_PASS_SEQUENTIAL));
    CALL(sc, weft_hier_detach(sc->w, n[2]));
    CALL(sc, weft_hier_attach(sc->w, n[6], n[5]));
    weft_system_t s;
    CALL(sc, weft_hier_register_system(sc->w, NULL, &s));
    CALL_FRAME(sc, weft_world_progress(sc->w, 0.5f));
    sc->frames++;
    CALL(sc, weft_hier_update(sc->w, WEFT_HIER_PASS_LEVELS));
    covered(sc, "hierarchy");
    /* Snapshots hold the hierarchy too: capture, change the tree, rewind. */
    CALL(sc, weft_snapshot_capture(sc->w, sc->snap));
    uint64_t at_capture = wt_world_digest(sc->w);
    CALL(sc, weft_hier_detach(sc->w, n[4]));
    CALL(sc, weft_hier_attach(sc->w, n[4], n[0]));
    CALL(sc, weft_snapshot_restore(sc->w, sc->snap));
    if (wt_world_digest(sc->w) != at_capture) {
        VIOLATION(__LINE__, "weft_snapshot_restore did not rewind the hierarchy");
    }
    covered(sc, "snapshots of hierarchies");
}

static void script_hierarchy_teardown(scen_t *sc) {
    /* n0 <- n1 (n2 detached); n2 <- n3 <- n4 <- n5 <- n6; archive loads added copies */
    weft_entity_t *n = sc->nodes;
    CALL(sc, weft_hier_destroy(sc->w, n[3], WEFT_HIER_DESTROY_SUBTREE));
    CALL(sc, weft_hier_destroy(sc->w, n[0], WEFT_HIER_DESTROY_DETACH));
    CALL(sc, weft_hier_destroy(sc->w, n[1], WEFT_HIER_DESTROY_DETACH));
    CALL(sc, weft_hier_destroy(sc->w, n[2], WEFT_HIER_DESTROY_SUBTREE));
    /* Nodes that came from the archive loads go too (roots first, whole subtrees). */
    weft_entity_t rest[64];
    uint32_t left = weft_hier_order(sc->w, rest, 64);
    if (left > 64) {
        left = 64; /* more would be a bug the count check below reports */
    }
    for (uint32_t i = 0; i < left; i++) {
        if (weft_entity_is_alive(sc->w, rest[i]) && weft_hier_parent(sc->w, rest[i]) == 0) {
            CALL(sc, weft_hier_destroy(sc->w, rest[i], WEFT_HIER_DESTROY_SUBTREE));
        }
    }
    if (weft_hier_count(sc->w) != 0) {
        VIOLATION(__LINE__, "%u hierarchy nodes left after destroying them all",
                  weft_hier_count(sc->w));
        return;
    }
    CALL(sc, weft_snapshot_capture(sc->w, sc->snap));
}

static void script(scen_t *sc) {
    script_core(sc);
    if (sc->stop) {
        return;
    }
    script_frames(sc);
    if (sc->stop) {
        return;
    }
    script_snapshot(sc);
    if (sc->stop) {
        return;
    }
    script_archive(sc, false);
    if (sc->stop) {
        return;
    }
    script_hierarchy(sc);
    if (sc->stop) {
        return;
    }
    /* $WT_FAULT_HIER_ARCHIVE=0 skips saving/loading hierarchy nodes (to isolate other
     * failures while that part of the archive module is incomplete). */
    if (wt_env_u64("WT_FAULT_HIER_ARCHIVE", 1) != 0) {
        script_archive(sc, true);
    }
    if (sc->stop) {
        return;
    }
    script_hierarchy_teardown(sc);
}

/* Run the whole script with faults armed at k (0: none); returns the final digest and tears
 * everything down, checking that nothing leaked. */
static uint64_t finish(scen_t *sc, bool persistent);

static uint64_t run(scen_t *sc, uint64_t k, bool persistent) {
    memset(sc, 0, sizeof *sc);
    sc->persistent = persistent;
    sc->check_every = wt_env_u64("WT_CHECK_EVERY", k == 0) != 0;
    wt_fault_arm(&sc->fa, k, persistent ? UINT64_MAX : 1);
    script(sc);
    return finish(sc, persistent);
}

/* Random faults (1 in `one_in`) on a threaded world with `workers` workers. */
static uint64_t run_random(scen_t *sc, uint32_t workers, uint32_t one_in, uint64_t seed) {
    memset(sc, 0, sizeof *sc);
    sc->workers = workers;
    wt_fault_arm_random(&sc->fa, one_in, seed);
    script(sc);
    return finish(sc, false);
}

/* Check the end state, tear everything down and check that nothing leaked. */
static uint64_t finish(scen_t *sc, bool persistent) {
    uint64_t digest = 0;
    if (sc->w != NULL) {
        check_world(sc, "end of script", __LINE__);
        digest = wt_world_digest(sc->w);
    }
    weft_membuf_free(&sc->buf);
    weft_snapshot_destroy(sc->snap);
    weft_query_destroy(sc->q1);
    weft_world_destroy(sc->w); /* frees q2 if the script stopped before destroying it */
    sc->w = NULL;
    if (wt_fault_live_bytes(&sc->fa) != 0) {
        VIOLATION(sc->leak_line,
                  "%s%lld bytes in %lld blocks leaked after world destroy (last "
                  "failed call: script line %d)",
                  persistent ? "persistent: " : "", (long long)wt_fault_live_bytes(&sc->fa),
                  (long long)wt_fault_live_blocks(&sc->fa), sc->leak_line);
    }
    if (wt_fault_bad_frees(&sc->fa) != 0) {
        VIOLATION(sc->leak_line, "%llu frees with a wrong size or pointer",
                  (unsigned long long)wt_fault_bad_frees(&sc->fa));
    }
    if (sc->cmd_violations != 0) {
        VIOLATION(0, "a command-buffer call inside a system failed without ENOMEM and a message");
    }
    return digest;
}

/* ---- the sweep --------------------------------------------------------------- >>sweep */

/* Figures one child sends back (then its kinds follow). */
typedef struct child_report {
    uint64_t injected, failed, absorbed, cmd_failed;
    uint32_t nkinds;
} child_report_t;

static void write_all(int fd, const void *p, size_t n) {
    const char *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w <= 0) {
            _exit(3);
        }
        b += w;
        n -= (size_t)w;
    }
}

static bool read_all(int fd, void *p, size_t n) {
    char *b = p;
    while (n > 0) {
        ssize_t r = read(fd, b, n);
        if (r <= 0) {
            return false;
        }
        b += r;
        n -= (size_t)r;
    }
    return true;
}

/* The child's side of one k: both modes, the LeakSanitizer check, the report. */
static void child_run(scen_t *sc, uint64_t reference, uint64_t k, int fd) {
    nkinds = 0;
    violations = 0;
    child_report_t rep = {0};
    uint64_t got = run(sc, k, false);
    if (wt_fault_failures(&sc->fa) != 1) {
        VIOLATION(0, "the fault was not injected (the allocation order is not deterministic)");
    }
    if (!sc->stop && got != reference) {
        VIOLATION(0, "after the failed call was retried the world differs from the fault-free "
                     "run");
    }
    rep.injected += wt_fault_failures(&sc->fa);
    rep.failed += sc->failed_calls;
    rep.absorbed += sc->absorbed;
    rep.cmd_failed += sc->cmd_failures;
    run(sc, k, true);
    rep.injected += wt_fault_failures(&sc->fa);
    rep.failed += sc->failed_calls;
#if WT_HAVE_LSAN
    if (__lsan_do_recoverable_leak_check() != 0) {
        VIOLATION(0, "LeakSanitizer found leaks (report above)");
    }
#endif
    rep.nkinds = nkinds;
    write_all(fd, &rep, sizeof rep);
    write_all(fd, kinds, nkinds * sizeof kinds[0]);
}

TestSuite(reliability_fault, .timeout = 1100);

Test(reliability_fault,
     every_failed_allocation_is_reported_leaves_the_world_unchanged_and_leaks_nothing) {
    wt_watchdog_arm(1000, "fault injection");
    static scen_t sc;
    current_k = 0;
    uint64_t reference = run(&sc, 0, false);
    uint64_t total = wt_fault_calls(&sc.fa);
    cr_assert(total > 0 && violations == 0, "the fault-free run must pass");
    fprintf(stderr,
            "fault: the scenario makes %llu allocations, %llu checked calls, %u frames; "
            "covers:",
            (unsigned long long)total, (unsigned long long)sc.calls, sc.frames);
    for (uint32_t i = 0; i < sc.ncovered; i++) {
        fprintf(stderr, " %s", sc.covered[i]);
    }
    fprintf(stderr, "\n");
    shared_line = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert(shared_line != MAP_FAILED);
    uint64_t first = wt_env_u64("WT_FAULT_FIRST", 1), last = wt_env_u64("WT_FAULT_LAST", total);
    if (last > total) {
        last = total;
    }
    uint64_t injected = 0, failed = 0, absorbed = 0, cmd_failed = 0, runs = 0, crashes = 0;
    for (uint64_t k = first; k <= last; k++) {
        /* Each k runs in its own process, so a crash is one finding, not the end of the sweep. */
        current_k = k;
        *shared_line = 0;
        int fds[2];
        cr_assert(pipe(fds) == 0);
        fflush(stderr);
        pid_t pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            child_run(&sc, reference, k, fds[1]);
            _exit(0);
        }
        close(fds[1]);
        child_report_t rep;
        bool got = read_all(fds[0], &rep, sizeof rep);
        for (uint32_t i = 0; got && i < rep.nkinds; i++) {
            kind_t kd;
            if (!read_all(fds[0], &kd, sizeof kd)) {
                break;
            }
            add_kind(&kd, kd.msg);
        }
        close(fds[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        runs += 2;
        if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            crashes++;
            kind_t kd = {.site = __LINE__, .line = *shared_line, .first_k = k, .count = 1};
            char msg[128];
            snprintf(msg, sizeof msg, "the run crashed (%s %d) in the call at script line %d",
                     WIFSIGNALED(status) ? "signal" : "exit status",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), kd.line);
            add_kind(&kd, msg);
            continue;
        }
        injected += rep.injected;
        failed += rep.failed;
        absorbed += rep.absorbed;
        cmd_failed += rep.cmd_failed;
    }
    fprintf(stderr,
            "fault: k = %llu..%llu, %llu runs: %llu faults injected, %llu calls failed "
            "under a fault and were checked, %llu faults absorbed, %llu command-buffer "
            "failures inside systems, %llu crashed k; %llu violations of %u kinds\n",
            (unsigned long long)first, (unsigned long long)last, (unsigned long long)runs,
            (unsigned long long)injected, (unsigned long long)failed, (unsigned long long)absorbed,
            (unsigned long long)cmd_failed, (unsigned long long)crashes,
            (unsigned long long)violations, nkinds);
    for (uint32_t i = 0; i < nkinds; i++) {
        fprintf(stderr, "fault:   kind %u: first k=%llu, %llu times, script line %d: %s\n", i + 1,
                (unsigned long long)kinds[i].first_k, (unsigned long long)kinds[i].count,
                kinds[i].line, kinds[i].msg);
    }
    munmap((void *)shared_line, 4096);
    shared_line = NULL;
    wt_watchdog_disarm();
    cr_assert(eq(u64, violations, 0), "%llu violations (see above)",
              (unsigned long long)violations);
}

/* The same script on a threaded world (4 workers), where command buffers grow on worker
 * threads: allocations fail at random (1 in 12), every failed call is judged as above and
 * retried, and the final world must equal the fault-free run's. Under ThreadSanitizer this is
 * the failure paths' race check. */
Test(reliability_fault, random_failures_on_4_workers_are_reported_and_harmless) {
    wt_watchdog_arm(250, "threaded fault injection");
    static scen_t sc;
    uint64_t reference = run_random(&sc, 4, 0, 0);
    cr_assert(eq(u64, violations, 0), "the fault-free threaded run must pass");
    uint64_t seed = wt_seed("fault threaded"), runs = wt_env_u64("WT_FAULT_RANDOM_RUNS", 40);
    uint64_t injected = 0, failed = 0, absorbed = 0, cmd_failed = 0;
    for (uint64_t i = 0; i < runs; i++) {
        current_k = seed + i;
        uint64_t got = run_random(&sc, 4, 12, seed + i);
        if (!sc.stop && got != reference) {
            VIOLATION(0, "after retrying the failed calls the world differs from the fault-free "
                         "run");
        }
        injected += wt_fault_failures(&sc.fa);
        failed += sc.failed_calls;
        absorbed += sc.absorbed;
        cmd_failed += sc.cmd_failures;
    }
    fprintf(stderr,
            "fault threaded: %llu runs on 4 workers (seeds %llu..): %llu faults injected, "
            "%llu calls failed and were checked, %llu absorbed, %llu command-buffer "
            "failures in systems; %llu violations of %u kinds\n",
            (unsigned long long)runs, (unsigned long long)seed, (unsigned long long)injected,
            (unsigned long long)failed, (unsigned long long)absorbed,
            (unsigned long long)cmd_failed, (unsigned long long)violations, nkinds);
    for (uint32_t i = 0; i < nkinds; i++) {
        fprintf(stderr,
                "fault threaded:   kind %u: first seed %llu, %llu times, script line %d: "
                "%s\n",
                i + 1, (unsigned long long)kinds[i].first_k, (unsigned long long)kinds[i].count,
                kinds[i].line, kinds[i].msg);
    }
    wt_watchdog_disarm();
    cr_assert(eq(u64, violations, 0), "%llu violations (see above)",
              (unsigned long long)violations);
}
