/* tools/json_trace.h: Chrome Trace Event JSON (as written by weft's tracer) → a flat event list.
 *
 * Accepts both container forms of the format: `{"traceEvents":[...]}` and a bare `[...]`, with
 * a missing tail tolerated. Complete events (ph "X", ts + dur) are kept directly; begin/end pairs
 * (ph "B"/"E") on the same pid/tid are matched into complete events; thread_name metadata
 * (ph "M") names the lanes. Other phases (counters, instants, flows) are counted and skipped.
 * Times stay in the format's unit, microseconds. */
#ifndef WEFT_TOOLS_JSON_TRACE_H
#define WEFT_TOOLS_JSON_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"

typedef struct wt_trace_event {
    const char *name; /* event name (the system name for weft jobs); never NULL */
    const char *cat;  /* category, "" when absent */
    const char *args; /* args rendered as "k=v, k=v", "" when absent; for tooltips */
    double ts;        /* start, microseconds */
    double dur;       /* duration, microseconds (>= 0) */
    uint64_t pid;     /* process id field */
    uint64_t tid;     /* thread id field: one lane per (pid, tid) */
} wt_trace_event_t;

typedef struct wt_trace_lane {
    uint64_t pid;     /* process id of the lane */
    uint64_t tid;     /* thread id of the lane */
    const char *name; /* thread_name metadata, or NULL */
} wt_trace_lane_t;

typedef struct wt_trace {
    wt_trace_event_t *events; /* sorted by (lane, ts); owned */
    size_t count;             /* number of events */
    wt_trace_lane_t *lanes;   /* sorted by (pid, tid); owned */
    size_t lane_count;        /* number of lanes that hold events or names */
    size_t skipped;           /* events of other phases, or malformed, that were ignored */
    wt_json_doc_t *doc;       /* owns the strings the events point into */
    char *strings;            /* owns the rendered args strings */
} wt_trace_t;

/* Parse a trace from text. Returns 0 and fills *out (free with wt_trace_free()), or -1 with a
 * message in err. An input with no usable events is not an error: count is 0. */
int wt_trace_load(const char *text, size_t len, wt_trace_t *out, char *err, size_t err_size);

/* Release everything wt_trace_load() allocated; *t is zeroed. */
void wt_trace_free(wt_trace_t *t);

/* Index into t->lanes of the lane holding event e (binary search; lanes are never missing). */
size_t wt_trace_lane_of(const wt_trace_t *t, const wt_trace_event_t *e);

#endif /* WEFT_TOOLS_JSON_TRACE_H */
