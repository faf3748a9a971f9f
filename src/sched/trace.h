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
    uint32_t count;      /* events recorded; written only by this lane's worker during a frame */
    uint32_t cur_system; /* the system chunk this worker runs (0: none): parent of its loops */
    uint32_t cur_chunk;  /* that chunk */
    uint32_t cur_loops;  /* parallel-fors it has started so far */
    uint64_t dropped;    /* events that did not fit */
} weft__trace_lane_t;

typedef struct weft__trace {
    weft__trace_lane_t *lanes; /* [workers], owned */
    uint32_t workers;          /* lanes */
    uint32_t capacity;         /* events per lane */
    uint32_t frame;            /* current frame number since enable */
    bool accumulate;           /* keep events across frames */
    uint64_t origin_ns;        /* clock value at enable */
    weft_jobs_t *jobs;         /* whose range trace points here (cleared on destroy) */
} weft__trace_t;

/* Monotonic clock in nanoseconds. Thread: any. */
uint64_t weft__trace_now(void);

/* Append one event of `kind` (weft_trace_kind_t) to `worker`'s lane. Thread: the worker
 * itself. */
static inline void weft__trace_record_kind(weft__trace_t *t, uint32_t worker, uint32_t system,
                                           uint32_t chunk, uint64_t begin, uint64_t end,
                                           uint32_t kind, uint32_t loop, uint32_t detail) {
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
        .kind = (uint16_t)kind,
        .loop = (uint16_t)(loop < UINT16_MAX ? loop : UINT16_MAX),
        .detail = detail,
    };
}

/* Append one job event (a system's chunk, or with system 0 a phase's apply). Thread: the
 * worker itself. */
static inline void weft__trace_record(weft__trace_t *t, uint32_t worker, uint32_t system,
                                      uint32_t chunk, uint64_t begin, uint64_t end) {
    weft__trace_record_kind(t, worker, system, chunk, begin, end, WEFT_TRACE_JOB, 0, 0);
}

/* What a worker's lane says it runs: the chunk whose parallel-fors are traced as its pieces. */
typedef struct weft__trace_cur {
    uint32_t system, chunk, loops;
} weft__trace_cur_t;

/* A system chunk starts on `worker`: the parallel-fors it starts until weft__trace_leave are
 * traced as its pieces (WEFT_TRACE_PIECE). Returns what the lane said before (a worker
 * waiting inside one chunk may run another). Thread: the worker itself. */
static inline weft__trace_cur_t weft__trace_enter(weft__trace_t *t, uint32_t worker,
                                                  uint32_t system, uint32_t chunk) {
    weft__trace_lane_t *lane = &t->lanes[worker];
    weft__trace_cur_t prev = {lane->cur_system, lane->cur_chunk, lane->cur_loops};
    lane->cur_system = system;
    lane->cur_chunk = chunk;
    lane->cur_loops = 0;
    return prev;
}

/* The chunk is over: the lane says `prev` again. Thread: the worker itself. */
static inline void weft__trace_leave(weft__trace_t *t, uint32_t worker, weft__trace_cur_t prev) {
    weft__trace_lane_t *lane = &t->lanes[worker];
    lane->cur_system = prev.system;
    lane->cur_chunk = prev.chunk;
    lane->cur_loops = prev.loops;
}

/* Called by the scheduler at the start of each frame: clears the lanes unless accumulating. */
void weft__trace_frame_begin(weft__trace_t *t);

/* Free a trace (NULL is ignored). */
void weft__trace_destroy(weft__trace_t *t, const weft_allocator_t *alloc);

#endif /* WEFT_SRC_TRACE_H */
