/* trace.h: per-worker job trace storage behind weft/trace.h (private to the build).
 *
 * DESIGN
 * One record array per worker, allocated at enable time; a job appends to the array of the
 * worker running it, so recording takes no lock and shares no cache line. The main thread
 * reads the arrays only between frames, after weft_counter_wait() has made every job's
 * stores visible (the job system's counter release/acquire pair orders them). */
#ifndef WEFT_SRC_TRACE_H
#define WEFT_SRC_TRACE_H

#include "weft/trace.h"

#include "jobs/platform/atomic.h"

typedef struct weft__trace_lane {
    _Alignas(WEFT_CACHE_LINE) weft_trace_event_t *events; /* [capacity], owned */
    uint32_t count;   /* events recorded; written only by this lane's worker during a frame */
    uint32_t pad;     /* keeps the layout explicit */
    uint64_t dropped; /* events that did not fit */
} weft__trace_lane_t;

typedef struct weft__trace {
    weft__trace_lane_t *lanes; /* [workers], owned */
    uint32_t workers;          /* lanes */
    uint32_t capacity;         /* events per lane */
    uint32_t frame;            /* current frame number since enable */
    bool accumulate;           /* keep events across frames */
    uint64_t origin_ns;        /* clock value at enable */
} weft__trace_t;

/* Monotonic clock in nanoseconds. Thread: any. */
uint64_t weft__trace_now(void);

/* Append one event to `worker`'s lane. Thread: the worker itself. */
static inline void weft__trace_record(weft__trace_t *t, uint32_t worker, uint32_t system,
                                      uint32_t chunk, uint64_t begin, uint64_t end) {
    weft__trace_lane_t *lane = &t->lanes[worker];
    if (lane->count == t->capacity) {
        lane->dropped++;
        return;
    }
    lane->events[lane->count++] = (weft_trace_event_t){
        .begin_ns = begin - t->origin_ns,
        .end_ns = end - t->origin_ns,
        .system = system,
        .chunk = chunk,
        .worker = worker,
        .frame = t->frame,
    };
}

/* Called by the scheduler at the start of each frame: clears the lanes unless accumulating. */
void weft__trace_frame_begin(weft__trace_t *t);

/* Free a trace (NULL is ignored). */
void weft__trace_destroy(weft__trace_t *t, const weft_allocator_t *alloc);

#endif /* WEFT_SRC_TRACE_H */
