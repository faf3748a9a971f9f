/* observer.c: observers and user events (weft/observer.h).
 *
 * DESIGN
 * Component observers ride on the core's hook slots: a component watched by any observer (or
 * every component, once an observer of every component exists) gets the dispatch functions
 * below as its on_add/on_remove/on_set; each calls the component's own hook first (kept in
 * desc_hook) and then the matching observers in registration order. So every place the core
 * fires a hook — direct calls, the command apply, archive loads, multi-instance components —
 * reaches observers with no change of its own, and a component nobody watches pays nothing.
 * Observers record structural changes in one of two world-owned buffers: one records while
 * the other is applied (its apply fires observers, which must not write into the buffer being
 * walked). User events are command records (command.c) delivered after their buffer's apply.
 * Everything here runs on the main thread. */
#include <string.h>

#include "jobs/platform/report.h"
#include "src/core/world.h"
#include "system.h"

/* ---- dispatch ------------------------------------------------------------------ >>dispatch */

static void notify(weft_world_t *world, const weft_observation_t *proto) {
    struct weft_sched *s = world->sched;
    weft_cmd_t *cmd = &s->obs_cmd[s->obs_rec];
    for (uint32_t i = 0; i < s->nobservers; i++) {
        const weft__observer_t *o = &s->observers[i];
        if (o->removed || o->desc.kind != proto->kind) {
            continue;
        }
        if (proto->kind == WEFT_OBSERVE_EVENT
                ? o->desc.event.id != proto->event.id
                : o->desc.component.id != 0 && o->desc.component.id != proto->component.id) {
            continue;
        }
        weft_observation_t ob = *proto;
        ob.cmd = cmd;
        weft__cmd_open(cmd, weft__thread_token());
        o->desc.fn(world, &ob, o->desc.user);
        weft__cmd_close(cmd);
    }
}

static void dispatch(weft_world_t *world, weft_observe_t kind, weft_entity_t e, weft_component_t c,
                     void *ptr, void *hook_user) {
    const weft__component_t *comp = weft__component_any(world, c.id);
    weft_component_hook_t own = comp->desc_hook[kind - 1];
    if (own) {
        own(world, e, c, ptr, hook_user);
    }
    weft_observation_t ob = {.kind = kind,
                             .entity = e,
                             .component = c,
                             .data = comp->pool.size ? ptr : NULL,
                             .size = comp->pool.size};
    notify(world, &ob);
}

static void on_add(weft_world_t *world, weft_entity_t e, weft_component_t c, void *ptr,
                   void *user) {
    dispatch(world, WEFT_OBSERVE_ADD, e, c, ptr, user);
}
static void on_remove(weft_world_t *world, weft_entity_t e, weft_component_t c, void *ptr,
                      void *user) {
    dispatch(world, WEFT_OBSERVE_REMOVE, e, c, ptr, user);
}
static void on_set(weft_world_t *world, weft_entity_t e, weft_component_t c, void *ptr,
                   void *user) {
    dispatch(world, WEFT_OBSERVE_SET, e, c, ptr, user);
}

static void watch(weft__component_t *comp) {
    if (!comp->resource) { /* no entity carries a resource: nothing to observe */
        comp->on_add = on_add;
        comp->on_remove = on_remove;
        comp->on_set = on_set;
    }
}

void weft__sched_deliver(void *ctx, uint32_t event, weft_entity_t target, const void *payload,
                         uint32_t size) {
    struct weft_sched *s = ctx;
    weft_observation_t ob = {.kind = WEFT_OBSERVE_EVENT,
                             .entity = target,
                             .event = {event},
                             .data = payload,
                             .size = size};
    s->world->hook_depth++; /* observers make no structural change directly */
    notify(s->world, &ob);
    s->world->hook_depth--;
}

/* ---- registration ---------------------------------------------------------------- >>register */

static bool grow(struct weft_sched *s, void **arr, uint32_t *cap, uint32_t n, size_t item) {
    if (n < *cap) {
        return true;
    }
    uint32_t nc = *cap ? *cap * 2u : 8u;
    void *a = weft__sched_alloc(s->alloc, nc * item);
    if (!a) {
        return false;
    }
    if (n) {
        memcpy(a, *arr, n * item);
    }
    weft__sched_free(s->alloc, *arr, *cap * item);
    *arr = a;
    *cap = nc;
    return true;
}

/* The scheduler of a world between frames, for registration-like call `fn`. */
static struct weft_sched *between_frames(weft_world_t *world, const char *fn, weft_result_t *r) {
    struct weft_sched *s = weft__sched_get(world);
    if (!s) {
        *r = WEFT_ENOMEM;
        return NULL;
    }
    if (s->running) {
        *r = WEFT__FAIL(s->log, WEFT_ESTATE, "%s: called during weft_world_progress", fn);
        return NULL;
    }
    *r = WEFT_OK;
    return s;
}

static void watch_new(weft_world_t *world, weft__component_t *comp) {
    (void)world;
    watch(comp);
}

weft_result_t weft_observer_register(weft_world_t *world, const weft_observer_desc_t *desc,
                                     weft_observer_t *out) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(desc != NULL && desc->_canary == 0 && desc->fn != NULL, world->log, WEFT_EINVAL,
                   "weft_observer_register: desc is NULL, not zero-initialised or has no fn");
    WEFT__CONTRACT(desc->kind >= WEFT_OBSERVE_ADD && desc->kind <= WEFT_OBSERVE_EVENT, world->log,
                   WEFT_EINVAL, "weft_observer_register: bad kind %d", (int)desc->kind);
    weft_result_t r;
    struct weft_sched *s = between_frames(world, "weft_observer_register", &r);
    if (!s) {
        return r;
    }
    if (desc->kind == WEFT_OBSERVE_EVENT) {
        WEFT__CONTRACT(desc->event.id >= 1 && desc->event.id <= s->nevents, world->log, WEFT_EINVAL,
                       "weft_observer_register: unknown event id %u", desc->event.id);
    } else {
        WEFT__CONTRACT(desc->component.id == 0 || weft__component(world, desc->component.id),
                       world->log, WEFT_EINVAL,
                       "weft_observer_register: id %u is no component (unknown, or a resource)",
                       desc->component.id);
    }
    if (!grow(s, (void **)&s->observers, &s->observers_cap, s->nobservers,
              sizeof(weft__observer_t))) {
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "weft_observer_register: out of memory");
    }
    s->observers[s->nobservers++] = (weft__observer_t){.desc = *desc};
    if (desc->kind == WEFT_OBSERVE_EVENT) {
        s->event_observers++;
    } else if (desc->component.id != 0) {
        watch(world->components[desc->component.id]);
    } else { /* every component, those registered later too */
        for (uint32_t c = 1; c <= world->component_count; c++) {
            watch(world->components[c]);
        }
        world->on_component_registered = watch_new;
    }
    if (out) {
        *out = (weft_observer_t){s->nobservers};
    }
    return WEFT_OK;
}

weft_result_t weft_observer_unregister(weft_world_t *world, weft_observer_t obs) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    WEFT__MAIN_CALL(world);
    weft_result_t r;
    struct weft_sched *s = between_frames(world, "weft_observer_unregister", &r);
    if (!s) {
        return r;
    }
    if (obs.id < 1 || obs.id > s->nobservers || s->observers[obs.id - 1].removed) {
        return WEFT__FAIL(s->log, WEFT_ESTALE,
                          "weft_observer_unregister: %u is not a registered observer", obs.id);
    }
    weft__observer_t *o = &s->observers[obs.id - 1];
    o->removed = true;
    s->event_observers -= o->desc.kind == WEFT_OBSERVE_EVENT;
    return WEFT_OK;
}

weft_result_t weft_event_register(weft_world_t *world, const weft_event_desc_t *desc,
                                  weft_event_t *out) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(desc != NULL && desc->_canary == 0 && out != NULL, world->log, WEFT_EINVAL,
                   "weft_event_register: desc or out is NULL, or desc not zero-initialised");
    WEFT__CONTRACT(desc->name && desc->name[0] && strlen(desc->name) <= WEFT_EVENT_NAME_MAX,
                   world->log, WEFT_EINVAL, "weft_event_register: name must be 1..%d bytes",
                   WEFT_EVENT_NAME_MAX);
    WEFT__CONTRACT(desc->payload_size <= WEFT_EVENT_PAYLOAD_MAX, world->log, WEFT_EINVAL,
                   "weft_event_register: '%s': payload of %zu bytes (max %d)", desc->name,
                   desc->payload_size, WEFT_EVENT_PAYLOAD_MAX);
    weft_result_t r;
    struct weft_sched *s = between_frames(world, "weft_event_register", &r);
    if (!s) {
        return r;
    }
    for (uint32_t i = 0; i < s->nevents; i++) {
        if (strcmp(s->events[i].name, desc->name) == 0) {
            return WEFT__FAIL(s->log, WEFT_EEXIST, "weft_event_register: '%s' exists", desc->name);
        }
    }
    if (!grow(s, (void **)&s->events, &s->events_cap, s->nevents, sizeof(weft__event_def_t))) {
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "weft_event_register: out of memory");
    }
    weft__event_def_t *d = &s->events[s->nevents++];
    memset(d, 0, sizeof *d);
    memcpy(d->name, desc->name, strlen(desc->name));
    d->size = (uint32_t)desc->payload_size;
    *out = (weft_event_t){s->nevents};
    return WEFT_OK;
}

/* ---- emitting -------------------------------------------------------------------- >>emit */

/* The event type `event` of the world behind `s`, or NULL (reported as `fn`'s EINVAL). */
static const weft__event_def_t *event_def(const struct weft_sched *s, const weft_logger_t *log,
                                          weft_event_t event, const void *payload, const char *fn) {
    if (!s || event.id < 1 || event.id > s->nevents) {
        (void)WEFT__FAIL(log, WEFT_EINVAL, "%s: unknown event id %u", fn, event.id);
        return NULL;
    }
    const weft__event_def_t *d = &s->events[event.id - 1];
    if (d->size && !payload) {
        (void)WEFT__FAIL(log, WEFT_EINVAL, "%s: event '%s' needs a %u-byte payload", fn, d->name,
                         d->size);
        return NULL;
    }
    return d;
}

weft_result_t weft_cmd_emit(weft_cmd_t *cmd, weft_event_t event, weft_entity_t target,
                            const void *payload) {
    WEFT__NONNULL(cmd, WEFT_EINVAL);
    const weft__event_def_t *d =
        event_def(weft__sched_peek(cmd->world), cmd->log, event, payload, "weft_cmd_emit");
    if (!d) {
        return WEFT_EINVAL;
    }
    return weft__cmd_push_emit(cmd, event.id, target, payload, d->size);
}

weft_result_t weft_event_emit(weft_world_t *world, weft_event_t event, weft_entity_t target,
                              const void *payload) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    WEFT__MAIN_CALL(world);
    weft_result_t r;
    struct weft_sched *s = between_frames(world, "weft_event_emit", &r);
    if (!s) {
        return r;
    }
    const weft__event_def_t *d = event_def(s, s->log, event, payload, "weft_event_emit");
    if (!d) {
        return WEFT_EINVAL;
    }
    weft__sched_deliver(s, event.id, target, payload, d->size);
    return weft__sched_flush_observers(s);
}

/* ---- the observer buffers ------------------------------------------------------ >>flush */

weft_result_t weft__sched_flush_observers(struct weft_sched *s) {
    for (uint32_t round = 0; round < WEFT_OBSERVER_ROUNDS; round++) {
        weft_cmd_t *cmd = &s->obs_cmd[s->obs_rec];
        if (cmd->len == 0) {
            return WEFT_OK;
        }
        s->obs_rec ^= 1u; /* observers fired by this apply record into the other buffer */
        bool applied = false;
        weft_result_t r = weft__sched_apply_buffer(s, cmd, &applied);
        if (!applied) {
            s->obs_rec ^= 1u; /* kept: nothing was recorded into the other one meanwhile */
            return r;
        }
        if (r != WEFT_OK) {
            return r;
        }
    }
    return s->obs_cmd[s->obs_rec].len == 0
               ? WEFT_OK
               : WEFT__FAIL(s->log, WEFT_ECAPACITY,
                            "observers: still recording after %d rounds (an observer cascade); "
                            "the rest waits for the next apply point",
                            WEFT_OBSERVER_ROUNDS);
}

weft_result_t weft_world_flush(weft_world_t *world) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    WEFT__MAIN_CALL(world);
    weft_result_t r;
    struct weft_sched *s = between_frames(world, "weft_world_flush", &r);
    return s ? weft__sched_flush_observers(s) : r;
}

void weft__sched_observers_fini(struct weft_sched *s) {
    weft_world_t *world = s->world;
    for (uint32_t c = 1; c <= world->component_count; c++) { /* the hooks are theirs again */
        weft__component_t *comp = world->components[c];
        comp->on_add = comp->desc_hook[0];
        comp->on_remove = comp->desc_hook[1];
        comp->on_set = comp->desc_hook[2];
    }
    world->on_component_registered = NULL;
    weft__cmd_fini(&s->obs_cmd[0]);
    weft__cmd_fini(&s->obs_cmd[1]);
    weft__sched_free(s->alloc, s->observers, s->observers_cap * sizeof *s->observers);
    weft__sched_free(s->alloc, s->events, s->events_cap * sizeof *s->events);
}
