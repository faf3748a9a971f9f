/* introspect.c: looking at the schedule — reduced edges, run order, conflicting pairs,
 * Graphviz DOT, and the critical path of the last traced frame. Main-thread only; these calls
 * may allocate scratch memory (never during a frame). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jobs/platform/report.h"
#include "src/core/world.h"
#include "system.h"

/* The start every call here shares: world and count present (the caller has zeroed its
 * count already), then the scheduler with an up-to-date graph in *out. Returns the first
 * failure, reported under the public name `fn`: WEFT_EINVAL, WEFT_ENOMEM, or the build's. */
static weft_result_t prepared(weft_world_t *world, const char *fn, bool count_given,
                              struct weft_sched **out) {
    *out = NULL;
    if (world == NULL) {
        return WEFT__FAIL(NULL, WEFT_EINVAL, "%s: world is NULL", fn);
    }
    if (!count_given) {
        return WEFT__FAIL(world->log, WEFT_EINVAL, "%s: count is NULL", fn);
    }
    struct weft_sched *s = weft__sched_get(world);
    if (s == NULL) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "%s: out of memory", fn);
    }
    weft_result_t r = weft__sched_build(s);
    if (r == WEFT_OK) {
        *out = s;
    }
    return r;
}

weft_result_t weft_schedule_edges(weft_world_t *world, weft_schedule_edge_t *out, uint32_t cap,
                                  uint32_t *count) {
    if (count) {
        *count = 0;
    }
    struct weft_sched *s;
    weft_result_t r = prepared(world, "weft_schedule_edges", count != NULL, &s);
    if (r != WEFT_OK) {
        return r;
    }
    const weft__graph_t *g = &s->graph;
    uint32_t at = 0;
    for (uint32_t p = 0; p < g->n; p++) {
        uint32_t v = g->order[p];
        for (uint32_t e = g->pred_first[v]; e < g->pred_first[v + 1]; e++, at++) {
            if (at >= cap) {
                continue;
            }
            uint32_t label = g->pred_label[e];
            out[at] = (weft_schedule_edge_t){
                .from = {g->preds[e] + 1},
                .to = {v + 1},
                .component = {label == WEFT__EDGE_CONSTRAINT ? 0 : label},
            };
        }
    }
    *count = at;
    return WEFT_OK;
}

weft_result_t weft_schedule_order(weft_world_t *world, weft_system_t *out, uint32_t cap,
                                  uint32_t *count) {
    if (count) {
        *count = 0;
    }
    struct weft_sched *s;
    weft_result_t r = prepared(world, "weft_schedule_order", count != NULL, &s);
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t at = 0; /* unregistered systems stay in the graph as inert nodes: left out */
    for (uint32_t p = 0; p < s->graph.n; p++) {
        uint32_t v = s->graph.order[p];
        if (!s->systems[v]->removed) {
            if (at < cap) {
                out[at] = (weft_system_t){v + 1};
            }
            at++;
        }
    }
    *count = at;
    return WEFT_OK;
}

/* All pairs, across phases too: this is the "who touches what" list for people tuning access
 * declarations, so it ignores what phases and constraints already order. */
weft_result_t weft_schedule_conflicts(weft_world_t *world, weft_system_conflict_t *out,
                                      uint32_t cap, uint32_t *count) {
    if (count) {
        *count = 0;
    }
    struct weft_sched *s;
    weft_result_t r = prepared(world, "weft_schedule_conflicts", count != NULL, &s);
    if (r != WEFT_OK) {
        return r;
    }
    uint32_t at = 0;
    for (uint32_t a = 0; a < s->count; a++) {
        for (uint32_t b = a + 1; b < s->count; b++) {
            uint32_t c = weft__sched_conflict(&s->gsys[a], &s->gsys[b]);
            if (c == UINT32_MAX) {
                continue;
            }
            if (at < cap) {
                out[at] =
                    (weft_system_conflict_t){.first = {a + 1}, .second = {b + 1}, .component = {c}};
            }
            at++;
        }
    }
    *count = at;
    return WEFT_OK;
}

/* ---- DOT ------------------------------------------------------------------------ >>dot */

typedef struct sbuf {
    char *buf;  /* destination, may be NULL */
    size_t cap; /* bytes available in buf */
    size_t len; /* bytes the full output needs so far */
} sbuf_t;

static void sb_printf(sbuf_t *sb, const char *fmt, ...) WEFT_PRINTF(2, 3);

/* Append with snprintf semantics: keep counting the full length once the buffer is full, so
 * one call with cap 0 sizes the output. */
static void sb_printf(sbuf_t *sb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *dst = sb->len < sb->cap ? sb->buf + sb->len : NULL;
    size_t room = sb->len < sb->cap ? sb->cap - sb->len : 0;
    int n = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (n > 0) {
        sb->len += (size_t)n;
    }
}

/* A quoted-string body for DOT: names are user text. */
static void sb_escaped(sbuf_t *sb, const char *str) {
    for (const char *p = str; *p; p++) {
        if (*p == '"' || *p == '\\') {
            sb_printf(sb, "\\%c", *p);
        } else {
            sb_printf(sb, "%c", *p);
        }
    }
}

static void dot_node(sbuf_t *sb, const struct weft_sched *s, const weft__system_t *sys) {
    sb_printf(sb, "    s%u [label=\"", sys->id);
    sb_escaped(sb, sys->name);
    for (uint32_t i = 0; i < sys->nwrites; i++) {
        sb_printf(sb, "\\nW ");
        sb_escaped(sb, weft__component_any(s->world, sys->writes[i])->name);
    }
    for (uint32_t i = 0; i < sys->nreads; i++) {
        sb_printf(sb, "\\nR ");
        sb_escaped(sb, weft__component_any(s->world, sys->reads[i])->name);
    }
    const weft_query_desc_t *qd = sys->query ? weft_query_desc(sys->query) : NULL;
    for (uint32_t i = 0; qd && i < WEFT_QUERY_MAX_EXCLUDES && qd->exclude[i].id; i++) {
        sb_printf(sb, "\\nX ");
        sb_escaped(sb, weft__component_any(s->world, qd->exclude[i].id)->name);
    }
    sb_printf(sb, "\"%s%s];\n", sys->desc.parallel ? ", style=bold" : "",
              sys->desc.main_thread ? ", color=blue" : "");
}

/* Node ids are "s<system id>" so a DOT file can be matched against trace events by id. */
weft_result_t weft_schedule_dot(weft_world_t *world, char *buf, size_t cap, size_t *len) {
    if (len) {
        *len = 0;
    }
    struct weft_sched *s;
    weft_result_t r = prepared(world, "weft_schedule_dot", len != NULL, &s);
    if (r != WEFT_OK) {
        return r;
    }
    const weft__graph_t *g = &s->graph;
    sbuf_t sb = {.buf = buf, .cap = cap};
    if (buf && cap) {
        buf[0] = '\0';
    }
    sb_printf(&sb, "digraph weft_schedule {\n  rankdir=LR;\n"
                   "  node [shape=box, fontname=\"monospace\"];\n");
    for (uint32_t ph = 0; ph < g->nphases; ph++) {
        uint32_t first = g->phase_first[ph];
        uint32_t number = s->systems[g->order[first]]->desc.phase;
        const weft__phase_def_t *def = weft__sched_phase_def(s, number);
        sb_printf(&sb, "  subgraph cluster_phase_%u {\n    label=\"phase %u", ph, number);
        if (def) {
            sb_printf(&sb, ": ");
            sb_escaped(&sb, def->name);
            if (def->step > 0.0f) {
                sb_printf(&sb, " (fixed step %g s)", (double)def->step);
            }
        }
        sb_printf(&sb, "\";\n");
        for (uint32_t p = first; p < g->phase_first[ph + 1]; p++) {
            if (!s->systems[g->order[p]]->removed) {
                dot_node(&sb, s, s->systems[g->order[p]]);
            }
        }
        sb_printf(&sb, "  }\n");
    }
    for (uint32_t p = 0; p < g->n; p++) {
        uint32_t v = g->order[p];
        for (uint32_t e = g->pred_first[v]; e < g->pred_first[v + 1]; e++) {
            sb_printf(&sb, "  s%u -> s%u [label=\"", g->preds[e] + 1, v + 1);
            if (g->pred_label[e] == WEFT__EDGE_CONSTRAINT) {
                sb_printf(&sb, "before/after");
            } else {
                sb_escaped(&sb, weft__component_any(s->world, g->pred_label[e])->name);
            }
            sb_printf(&sb, "\"];\n");
        }
    }
    /* Phase barriers: the last system of each phase to the first of the next, dashed. */
    for (uint32_t ph = 0; ph + 1 < g->nphases; ph++) {
        uint32_t last = g->order[g->phase_first[ph + 1] - 1],
                 next = g->order[g->phase_first[ph + 1]];
        if (!s->systems[last]->removed && !s->systems[next]->removed) {
            sb_printf(&sb, "  s%u -> s%u [style=dashed, label=\"apply\"];\n", last + 1, next + 1);
        }
    }
    sb_printf(&sb, "}\n");
    *len = sb.len;
    return WEFT_OK;
}

/* ---- critical path -------------------------------------------------------- >>critical */

weft_result_t weft_schedule_critical_path(weft_world_t *world, weft_system_t *out, uint32_t cap,
                                          uint32_t *count, uint64_t *total_ns) {
    if (count) {
        *count = 0;
    }
    if (total_ns) {
        *total_ns = 0;
    }
    struct weft_sched *s;
    weft_result_t r = prepared(world, "weft_schedule_critical_path", count != NULL, &s);
    if (r != WEFT_OK) {
        return r;
    }
    if (!s->trace || s->trace->frame == UINT32_MAX) {
        return WEFT__FAIL(s->log, WEFT_ESTATE,
                          "weft_schedule_critical_path: no traced frame (weft_trace_enable, then "
                          "run a frame)");
    }
    const weft__graph_t *g = &s->graph;
    uint32_t n = g->n;
    /* Per system: span begin/end, best path length ending here, and its predecessor. */
    size_t bytes = (size_t)n * (4 * sizeof(uint64_t) + sizeof(uint32_t));
    uint64_t *lo = weft__sched_alloc(s->alloc, bytes);
    if (!lo) {
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "weft_schedule_critical_path: out of memory");
    }
    uint64_t *hi = lo + n, *best = hi + n, *span = best + n;
    uint32_t *parent = (uint32_t *)(span + n);
    for (uint32_t v = 0; v < n; v++) {
        lo[v] = UINT64_MAX;
        hi[v] = 0;
    }
    const weft__trace_t *t = s->trace;
    for (uint32_t w = 0; w < t->workers; w++) {
        for (uint32_t i = 0; i < t->lanes[w].count; i++) {
            const weft_trace_event_t *e = &t->lanes[w].events[i];
            if (e->frame != t->frame || e->system == 0 || e->system > n) {
                continue;
            }
            uint32_t v = e->system - 1;
            lo[v] = e->begin_ns < lo[v] ? e->begin_ns : lo[v];
            hi[v] = e->end_ns > hi[v] ? e->end_ns : hi[v];
        }
    }
    /* Longest path in run order; a phase's sources follow the previous phase's best end. */
    uint32_t prev_best = UINT32_MAX, phase_best = UINT32_MAX;
    for (uint32_t ph = 0; ph < g->nphases; ph++) {
        for (uint32_t p = g->phase_first[ph]; p < g->phase_first[ph + 1]; p++) {
            uint32_t v = g->order[p];
            span[v] = hi[v] > lo[v] && lo[v] != UINT64_MAX ? hi[v] - lo[v] : 0;
            uint64_t base = prev_best == UINT32_MAX ? 0 : best[prev_best];
            parent[v] = prev_best;
            /* A predecessor's path already includes the previous phases, so ">=" prefers
             * the in-phase chain on ties. */
            for (uint32_t e = g->pred_first[v]; e < g->pred_first[v + 1]; e++) {
                if (best[g->preds[e]] >= base) {
                    base = best[g->preds[e]];
                    parent[v] = g->preds[e];
                }
            }
            best[v] = base + span[v];
            if (s->systems[v]->removed) {
                continue; /* an inert node ends no path */
            }
            if (phase_best == UINT32_MAX || best[v] > best[phase_best]) {
                phase_best = v;
            }
        }
        prev_best = phase_best;
    }
    uint32_t len = 0;
    for (uint32_t v = prev_best; v != UINT32_MAX; v = parent[v]) {
        len++;
    }
    uint32_t k = len;
    for (uint32_t v = prev_best; v != UINT32_MAX; v = parent[v]) {
        k--;
        if (k < cap) {
            out[k] = (weft_system_t){v + 1};
        }
    }
    if (total_ns && prev_best != UINT32_MAX) {
        *total_ns = best[prev_best];
    }
    weft__sched_free(s->alloc, lo, bytes);
    *count = len;
    return WEFT_OK;
}
