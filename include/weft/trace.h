/* weft/trace.h: an optional per-frame trace of every scheduler job (worker, system, chunk,
 * begin, end), readable as records or written as Chrome Trace Event JSON (opens in Perfetto
 * and chrome://tracing).
 *
 * Cost: off by default and then free; when on, two clock reads and one store per job into a
 * per-worker buffer that is allocated once, at enable time, and as much per range of a
 * weft_parallel_for started inside a system (through weft_jobs_set_range_trace on the world's
 * job system: one world tracing per job system) and per replay batch of a placed command
 * apply's lanes. Thread: every function here is
 * main-thread only and must not be called from inside a system. */
#ifndef WEFT_TRACE_H
#define WEFT_TRACE_H

#include "weft/base.h"
#include "weft/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an event records. */
typedef enum weft_trace_kind {
    WEFT_TRACE_JOB = 0,        /* a system's chunk, or (system == 0) a phase's whole apply */
    WEFT_TRACE_PIECE = 1,      /* one piece of a parallel-for started inside a system's chunk:
                                  system and chunk name that chunk, loop the loop's number in
                                  it (from 0), detail the piece's index in the loop */
    WEFT_TRACE_APPLY_WALK = 2, /* a placed apply's serial walk (system 0, chunk: the phase) */
    WEFT_TRACE_APPLY_LANE = 3, /* one replay lane of a placed apply (system 0, chunk: the phase,
                                  loop: the lane); detail: ns it spent replaying, the rest of
                                  its span it waited for the walk */
} weft_trace_kind_t;

/* One job of a frame. A system that runs as several chunks gives one event per chunk; the
 * command-buffer apply at the end of each phase is an event with system == 0. Events of the
 * other kinds (weft_trace_kind_t) show work nested inside those: read `kind` first. */
typedef struct weft_trace_event {
    uint64_t begin_ns; /* monotonic nanoseconds since weft_trace_enable() */
    uint64_t end_ns;   /* >= begin_ns */
    uint32_t system;   /* weft_system_t id; 0: command-buffer apply of a phase */
    uint32_t chunk;    /* chunk index inside the system (0 for a single job); for an
                          apply event, the phase's index in run order */
    uint32_t worker;   /* worker index that ran the job (0: the main thread) */
    uint32_t frame;    /* frame number since weft_trace_enable(), from 0 */
    uint16_t kind;     /* weft_trace_kind_t */
    uint16_t loop;     /* PIECE: loop number inside its chunk; APPLY_LANE: lane; else 0 */
    uint32_t detail;   /* PIECE: piece index; APPLY_LANE: ns replaying; else 0 */
} weft_trace_event_t;

typedef struct weft_trace_desc {
    uint32_t capacity; /* 0: 65536 events per worker; events past it are dropped and counted */
    bool accumulate;   /* false: each frame clears the trace, so it holds the last frame */
    uint32_t _canary;  /* must stay 0 */
} weft_trace_desc_t;

/* Start tracing (or restart it, clearing everything) with `desc` (NULL: defaults). Buffers
 * are allocated here, never during a frame. Errors: WEFT_EINVAL, WEFT_ENOMEM (tracing stays
 * as it was). Thread: main, outside weft_world_progress(). */
WEFT_API weft_result_t weft_trace_enable(weft_world_t *world, const weft_trace_desc_t *desc);

/* Stop tracing and free the buffers. A no-op when tracing is off. Thread: main. */
WEFT_API void weft_trace_disable(weft_world_t *world);

/* True when tracing is on. Thread: main. */
WEFT_API bool weft_trace_is_enabled(const weft_world_t *world);

/* Copy up to `cap` recorded events into `out` (may be NULL when cap is 0), sorted by
 * begin time, then worker. Returns the number recorded (may exceed cap). Thread: main. */
WEFT_API uint32_t weft_trace_events(const weft_world_t *world, weft_trace_event_t *out,
                                    uint32_t cap);

/* Events that did not fit in the per-worker capacity since the trace was last cleared. */
WEFT_API uint64_t weft_trace_dropped(const weft_world_t *world);

/* Write the recorded events to `path` as Chrome Trace Event JSON: one complete ("X") event
 * per job named after its system, on a track per worker ("weft-worker-N"), with the chunk and
 * frame as arguments. Errors: WEFT_ESTATE (tracing is off), WEFT_EIO. Thread: main. */
WEFT_API weft_result_t weft_trace_write_chrome(const weft_world_t *world, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_TRACE_H */
