/* weft/observer.h: observers and events — code that runs when components are added, set or
 * removed, or when a system emits an event of its own, in an order that never depends on the
 * worker count.
 *
 * Observers. Any number of observers may watch one (component, kind); they run in
 * registration order, after the component's own hook (weft_component_desc_t), on the thread
 * making the change: the main thread for direct calls, the phase-end command apply for
 * systems' commands (so in the command order of weft/command.h). An observer with component
 * {0} watches every component: it sees each change of an entity's component set (ADD,
 * REMOVE) or each set. Like hooks, observers may read and write component data but make no
 * structural change directly (debug builds return WEFT_ESTATE); they record them in
 * `ob->cmd`, the world's observer buffer.
 *
 * Events. A user event type has a name and a fixed payload size. Systems emit events through
 * their command buffer (weft_cmd_emit); after the phase's commands are applied, the events
 * are delivered to their observers in command order (system registration order, chunk,
 * write order), so every observer sees the world with the whole phase applied.
 * weft_event_emit delivers at once from the main thread.
 *
 * The observer buffer is applied, in recording order, at the next apply point: after each
 * phase's apply and event delivery, at the start of weft_world_progress (for changes made
 * between frames), after weft_event_emit, and by weft_world_flush. Changes it makes fire
 * observers again; their commands are applied in further rounds, at most
 * WEFT_OBSERVER_ROUNDS per apply point (what is left waits for the next one). If the apply
 * runs out of memory, nothing of that round is applied and its commands stay pending (the
 * frame goes on; the error is reported through the logger and by weft_world_flush).
 *
 * Thread: registration and weft_event_emit on the main thread outside frames; observers run
 * on the main thread. */
#ifndef WEFT_OBSERVER_H
#define WEFT_OBSERVER_H

#include "weft/base.h"
#include "weft/command.h"
#include "weft/component.h"
#include "weft/world.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_OBSERVER_ROUNDS 16     /* observer-buffer rounds per apply point */
#define WEFT_EVENT_PAYLOAD_MAX 4096 /* largest event payload, bytes */
#define WEFT_EVENT_NAME_MAX 63      /* bytes of an event name */

typedef enum weft_observe {
    WEFT_OBSERVE_ADD = 1,    /* a component was added (after the row exists) */
    WEFT_OBSERVE_REMOVE = 2, /* a component is being removed (before the row goes) */
    WEFT_OBSERVE_SET = 3,    /* a component's value was set (weft_component_set, a set command) */
    WEFT_OBSERVE_EVENT = 4,  /* a user event was delivered */
} weft_observe_t;

typedef struct weft_event {
    uint32_t id; /* 1-based; {0} is invalid */
} weft_event_t;

typedef struct weft_observer {
    uint32_t id; /* 1-based; {0} is invalid */
} weft_observer_t;

/* What an observer is told. Valid only during the call. */
typedef struct weft_observation {
    weft_observe_t kind;        /* what happened */
    weft_entity_t entity;       /* the entity changed, or the event's target (may be 0) */
    weft_component_t component; /* ADD, REMOVE, SET: the component */
    weft_event_t event;         /* EVENT: the event type */
    const void *data;           /* the component's value, or the event's payload (NULL if 0 B) */
    size_t size;                /* bytes at data */
    weft_cmd_t *cmd;            /* the observer buffer: record structural changes here */
} weft_observation_t;

typedef void (*weft_observer_fn_t)(weft_world_t *world, const weft_observation_t *ob, void *user);

typedef struct weft_observer_desc {
    weft_observe_t kind;        /* required */
    weft_component_t component; /* ADD, REMOVE, SET: the component, or {0} for every one */
    weft_event_t event;         /* EVENT: the event type (required) */
    weft_observer_fn_t fn;      /* required */
    void *user;                 /* passed back unchanged */
    uint32_t _canary;           /* must stay 0 */
} weft_observer_desc_t;

/* Register an observer; it sees changes from now on. Errors: WEFT_EINVAL (NULL world, desc
 * or fn, bad kind, unknown component or event, a resource), WEFT_ESTATE (inside a frame),
 * WEFT_ENOMEM. Thread: main. */
WEFT_API weft_result_t weft_observer_register(weft_world_t *world, const weft_observer_desc_t *desc,
                                              weft_observer_t *out);

/* Stop an observer; its id is not reused. Errors: WEFT_EINVAL (NULL world), WEFT_ESTALE (not
 * a registered observer), WEFT_ESTATE (inside a frame). Thread: main. */
WEFT_API weft_result_t weft_observer_unregister(weft_world_t *world, weft_observer_t obs);

typedef struct weft_event_desc {
    const char *name;    /* required, 1..WEFT_EVENT_NAME_MAX bytes, unique; copied */
    size_t payload_size; /* bytes of every event's payload, 0..WEFT_EVENT_PAYLOAD_MAX */
    uint32_t _canary;    /* must stay 0 */
} weft_event_desc_t;

/* Register a user event type. Errors: WEFT_EINVAL (bad desc), WEFT_EEXIST (the name is taken),
 * WEFT_ESTATE (inside a frame), WEFT_ENOMEM. Thread: main. */
WEFT_API weft_result_t weft_event_register(weft_world_t *world, const weft_event_desc_t *desc,
                                           weft_event_t *out);

/* Record an event in a system's (or an observer's) command buffer: `target` may be 0, a real
 * entity or a placeholder of this buffer (resolved at apply); `payload` is the event type's
 * payload_size bytes, copied now (may be NULL when that is 0). Delivered after the buffer's
 * apply, in command order. Errors: WEFT_EINVAL (unknown event, NULL payload, a placeholder this
 * buffer did not make), WEFT_ESTATE (buffer used outside its run call), WEFT_ENOMEM. */
WEFT_API weft_result_t weft_cmd_emit(weft_cmd_t *cmd, weft_event_t event, weft_entity_t target,
                                     const void *payload);

/* Deliver an event at once to its observers, then apply the observer buffer. Errors:
 * WEFT_EINVAL (NULL world, unknown event, NULL payload), WEFT_ESTATE (inside a frame),
 * WEFT_ENOMEM (the observer buffer's apply; its commands stay pending). Thread: main. */
WEFT_API weft_result_t weft_event_emit(weft_world_t *world, weft_event_t event,
                                       weft_entity_t target, const void *payload);

/* Apply the observer buffer now (see the top). Errors: WEFT_EINVAL (NULL world), WEFT_ESTATE
 * (inside a frame), WEFT_ENOMEM or WEFT_ECAPACITY (nothing of the failed round applied; its
 * commands stay pending). Thread: main. */
WEFT_API weft_result_t weft_world_flush(weft_world_t *world);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_OBSERVER_H */
