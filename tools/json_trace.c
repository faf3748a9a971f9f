/* tools/json_trace.c: turns a parsed Chrome Trace Event document into sorted events and lanes.
 *
 * DESIGN: the JSON document stays alive and events point at its strings, so loading copies only
 * the per-event numbers and the rendered args. "B"/"E" pairs are matched with a small stack per
 * input order (an "E" closes the latest open "B" of its lane), which is what the format defines. */
#include "json_trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct open_begin {
    size_t event; /* index of the provisional event made from a "B" */
} open_begin_t;

typedef struct strbuf {
    char *data; /* malloc'd, NUL-terminated */
    size_t len; /* bytes used, excluding the NUL */
    size_t cap; /* bytes allocated */
} strbuf_t;

static int sb_append(strbuf_t *sb, const char *s, size_t n) {
    if (sb->len + n + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 4096;
        while (sb->len + n + 1 > cap) {
            cap *= 2;
        }
        char *grown = realloc(sb->data, cap);
        if (grown == NULL) {
            return -1;
        }
        sb->data = grown;
        sb->cap = cap;
    }
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
    return 0;
}

/* pid/tid may be numbers or (in some producers) strings; strings that are not numbers are
 * hashed so that each distinct name still gets its own lane. */
static uint64_t id_of(const wt_json_t *v) {
    if (v == NULL) {
        return 0;
    }
    if (v->type == WT_JSON_NUMBER) {
        return v->number < 0 ? 0 : (uint64_t)v->number;
    }
    if (v->type == WT_JSON_STRING) {
        char *stop = NULL;
        unsigned long long n = strtoull(v->string, &stop, 10);
        if (stop != v->string && *stop == '\0') {
            return (uint64_t)n;
        }
        uint64_t h = 1469598103934665603ull; /* FNV-1a */
        for (const char *s = v->string; *s; s++) {
            h = (h ^ (unsigned char)*s) * 1099511628211ull;
        }
        return h;
    }
    return 0;
}

/* Render scalar args as "k=v, k=v" into sb; returns the offset of the text or -1 on OOM. */
static long render_args(strbuf_t *sb, const wt_json_t *args) {
    if (args == NULL || args->type != WT_JSON_OBJECT || args->child == NULL) {
        return -2; /* no args: the caller points at "" */
    }
    size_t start = sb->len;
    char tmp[64];
    for (const wt_json_t *m = args->child; m != NULL; m = m->next) {
        const char *val = "...";
        if (m->type == WT_JSON_STRING) {
            val = m->string;
        } else if (m->type == WT_JSON_NUMBER) {
            snprintf(tmp, sizeof tmp, "%.15g", m->number);
            val = tmp;
        } else if (m->type == WT_JSON_BOOL) {
            val = m->boolean ? "true" : "false";
        }
        if ((m != args->child && sb_append(sb, ", ", 2) != 0) ||
            sb_append(sb, m->key, strlen(m->key)) != 0 || sb_append(sb, "=", 1) != 0 ||
            sb_append(sb, val, strlen(val)) != 0) {
            return -1;
        }
    }
    if (sb_append(sb, "", 1) != 0) { /* keep a NUL between entries: offsets become strings */
        return -1;
    }
    return (long)start;
}

static int cmp_event(const void *a, const void *b) {
    const wt_trace_event_t *x = a;
    const wt_trace_event_t *y = b;
    if (x->pid != y->pid) {
        return x->pid < y->pid ? -1 : 1;
    }
    if (x->tid != y->tid) {
        return x->tid < y->tid ? -1 : 1;
    }
    if (x->ts != y->ts) {
        return x->ts < y->ts ? -1 : 1;
    }
    /* Same start: the longer one first, so enclosing spans precede what they contain. */
    return (x->dur > y->dur) ? -1 : (x->dur < y->dur);
}

static int cmp_lane(const void *a, const void *b) {
    const wt_trace_lane_t *x = a;
    const wt_trace_lane_t *y = b;
    if (x->pid != y->pid) {
        return x->pid < y->pid ? -1 : 1;
    }
    return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Build the sorted, unique lane list from the events and the thread_name metadata. */
static int build_lanes(wt_trace_t *t, const wt_json_t *list, size_t meta_count) {
    t->lanes = calloc(t->count + meta_count + 1, sizeof *t->lanes);
    if (t->lanes == NULL) {
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++) {
        t->lanes[n++] = (wt_trace_lane_t){t->events[i].pid, t->events[i].tid, NULL};
    }
    for (const wt_json_t *e = list->child; e != NULL; e = e->next) {
        const char *ph = wt_json_string(wt_json_get(e, "ph"), "");
        if (strcmp(ph, "M") == 0 &&
            strcmp(wt_json_string(wt_json_get(e, "name"), ""), "thread_name") == 0) {
            const char *name = wt_json_string(wt_json_get(wt_json_get(e, "args"), "name"), NULL);
            t->lanes[n++] =
                (wt_trace_lane_t){id_of(wt_json_get(e, "pid")), id_of(wt_json_get(e, "tid")), name};
        }
    }
    qsort(t->lanes, n, sizeof *t->lanes, cmp_lane);
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if (u > 0 && cmp_lane(&t->lanes[u - 1], &t->lanes[i]) == 0) {
            if (t->lanes[i].name != NULL) {
                t->lanes[u - 1].name = t->lanes[i].name;
            }
            continue;
        }
        t->lanes[u++] = t->lanes[i];
    }
    t->lane_count = u;
    return 0;
}

/* Convert one "X" or "B" event; returns 0, or 1 if it is not a usable event. */
static int convert(const wt_json_t *e, wt_trace_event_t *out, strbuf_t *sb, long *args_off) {
    const wt_json_t *ts = wt_json_get(e, "ts");
    /* Times beyond +-1e15 us (30 years) or non-finite ones are corrupt: rendering them would
     * make a time axis of absurd span. */
    if (ts == NULL || ts->type != WT_JSON_NUMBER || !(fabs(ts->number) < 1e15)) {
        return 1;
    }
    out->name = wt_json_string(wt_json_get(e, "name"), "(unnamed)");
    out->cat = wt_json_string(wt_json_get(e, "cat"), "");
    out->ts = ts->number;
    double dur = wt_json_number(wt_json_get(e, "dur"), 0.0);
    if (!(dur < 1e15)) {
        return 1; /* NaN or absurd */
    }
    out->dur = dur > 0 ? dur : 0;
    out->pid = id_of(wt_json_get(e, "pid"));
    out->tid = id_of(wt_json_get(e, "tid"));
    *args_off = render_args(sb, wt_json_get(e, "args"));
    return *args_off == -1 ? -1 : 0;
}

int wt_trace_load(const char *text, size_t len, wt_trace_t *out, char *err, size_t err_size) {
    memset(out, 0, sizeof *out);
    out->doc = wt_json_parse(text, len, WT_JSON_TOLERATE_TRUNCATION, err, err_size);
    if (out->doc == NULL) {
        return -1;
    }
    const wt_json_t *root = wt_json_root(out->doc);
    const wt_json_t *list = root->type == WT_JSON_ARRAY ? root : wt_json_get(root, "traceEvents");
    if (list == NULL || list->type != WT_JSON_ARRAY) {
        snprintf(err, err_size, "no traceEvents array: not a Chrome trace");
        wt_trace_free(out);
        return -1;
    }
    strbuf_t sb = {0};
    long *offs = calloc(list->length + 1, sizeof *offs);
    open_begin_t *open = calloc(list->length + 1, sizeof *open);
    out->events = calloc(list->length + 1, sizeof *out->events);
    size_t n = 0;
    size_t open_n = 0;
    size_t meta = 0;
    if (offs == NULL || open == NULL || out->events == NULL) {
        goto fail_oom;
    }
    for (const wt_json_t *e = list->child; e != NULL; e = e->next) {
        const char *ph = wt_json_string(wt_json_get(e, "ph"), "");
        if (strcmp(ph, "X") == 0 || strcmp(ph, "B") == 0) {
            int rc = convert(e, &out->events[n], &sb, &offs[n]);
            if (rc < 0) {
                goto fail_oom;
            }
            if (rc > 0) {
                out->skipped++;
                continue;
            }
            if (ph[0] == 'B') {
                open[open_n++].event = n;
                out->events[n].dur = -1; /* provisional until its "E" */
            }
            n++;
        } else if (strcmp(ph, "E") == 0) {
            uint64_t pid = id_of(wt_json_get(e, "pid"));
            uint64_t tid = id_of(wt_json_get(e, "tid"));
            double ts = wt_json_number(wt_json_get(e, "ts"), -1.0);
            ts = fabs(ts) < 1e15 ? ts : -1.0; /* corrupt: treated like a missing ts */
            size_t k = open_n;
            while (k > 0 && (out->events[open[k - 1].event].pid != pid ||
                             out->events[open[k - 1].event].tid != tid)) {
                k--;
            }
            if (k == 0 || ts < 0) {
                out->skipped++;
                continue;
            }
            wt_trace_event_t *b = &out->events[open[k - 1].event];
            b->dur = ts > b->ts ? ts - b->ts : 0;
            memmove(&open[k - 1], &open[k], (open_n - k) * sizeof *open);
            open_n--;
        } else if (strcmp(ph, "M") == 0) {
            meta++;
        } else {
            out->skipped++;
        }
    }
    /* Drop begins that never ended (a truncated trace), compacting in place. */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (out->events[i].dur < 0) {
            out->skipped++;
            continue;
        }
        offs[kept] = offs[i];
        out->events[kept++] = out->events[i];
    }
    out->count = kept;
    out->strings = sb.data;
    for (size_t i = 0; i < kept; i++) {
        out->events[i].args = offs[i] >= 0 ? sb.data + offs[i] : "";
    }
    qsort(out->events, out->count, sizeof *out->events, cmp_event);
    free(offs);
    free(open);
    if (build_lanes(out, list, meta) != 0) {
        snprintf(err, err_size, "out of memory");
        wt_trace_free(out);
        return -1;
    }
    return 0;

fail_oom:
    free(offs);
    free(open);
    free(sb.data);
    snprintf(err, err_size, "out of memory");
    wt_trace_free(out);
    return -1;
}

void wt_trace_free(wt_trace_t *t) {
    free(t->events);
    free(t->lanes);
    free(t->strings);
    wt_json_free(t->doc);
    memset(t, 0, sizeof *t);
}

size_t wt_trace_lane_of(const wt_trace_t *t, const wt_trace_event_t *e) {
    size_t lo = 0;
    size_t hi = t->lane_count;
    wt_trace_lane_t key = {e->pid, e->tid, NULL};
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_lane(&t->lanes[mid], &key);
        if (c == 0) {
            return mid;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return 0;
}
