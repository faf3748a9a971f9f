/* phase.c: named phases and fixed-timestep phases — definitions, and how many times each
 * phase of the graph runs in a frame (weft/system.h, "phases"). */
#include <math.h>
#include <string.h>

#include "jobs/platform/report.h"
#include "src/core/world.h"
#include "system.h"

#define MAX_STEPS_DEFAULT 8u

weft__phase_def_t *weft__sched_phase_def(const struct weft_sched *s, uint32_t phase) {
    for (uint32_t k = 0; s && k < s->ndefs; k++) {
        if (s->defs[k].phase == phase) {
            return &s->defs[k];
        }
    }
    return NULL;
}

static const weft__phase_def_t *def_named(const struct weft_sched *s, const char *name) {
    for (uint32_t k = 0; s && k < s->ndefs; k++) {
        if (strcmp(s->defs[k].name, name) == 0) {
            return &s->defs[k];
        }
    }
    return NULL;
}

weft_result_t weft_phase_define(weft_world_t *world, const weft_phase_desc_t *desc) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(desc != NULL && desc->_canary == 0, world->log, WEFT_EINVAL,
                   "weft_phase_define: desc is NULL or not zero-initialised");
    WEFT__CONTRACT(desc->name && desc->name[0] && strlen(desc->name) <= WEFT_SYSTEM_NAME_MAX,
                   world->log, WEFT_EINVAL, "weft_phase_define: name must be 1..%d bytes",
                   WEFT_SYSTEM_NAME_MAX);
    WEFT__CONTRACT(isfinite(desc->fixed_step) && desc->fixed_step >= 0.0f, world->log, WEFT_EINVAL,
                   "weft_phase_define: phase '%s': fixed_step %g is not >= 0", desc->name,
                   (double)desc->fixed_step);
    struct weft_sched *s = weft__sched_get(world);
    if (!s) {
        return WEFT_ENOMEM;
    }
    WEFT__CONTRACT(!s->running, s->log, WEFT_ESTATE,
                   "weft_phase_define: called during weft_world_progress");
    if (weft__sched_phase_def(s, desc->phase) || def_named(s, desc->name)) {
        return WEFT__FAIL(s->log, WEFT_EEXIST,
                          "weft_phase_define: phase %u or the name '%s' is already defined",
                          desc->phase, desc->name);
    }
    if (s->ndefs == s->defs_cap) {
        uint32_t cap = s->defs_cap ? s->defs_cap * 2 : 8;
        weft__phase_def_t *d = weft__sched_alloc(s->alloc, cap * sizeof *d);
        if (!d) {
            return WEFT__FAIL(s->log, WEFT_ENOMEM, "weft_phase_define: out of memory");
        }
        if (s->ndefs) {
            memcpy(d, s->defs, s->ndefs * sizeof *d);
        }
        weft__sched_free(s->alloc, s->defs, s->defs_cap * sizeof *s->defs);
        s->defs = d;
        s->defs_cap = cap;
    }
    weft__phase_def_t *d = &s->defs[s->ndefs++];
    memset(d, 0, sizeof *d);
    memcpy(d->name, desc->name, strlen(desc->name) + 1);
    d->phase = desc->phase;
    d->step = desc->fixed_step;
    d->max_steps = desc->max_steps ? desc->max_steps : MAX_STEPS_DEFAULT;
    return WEFT_OK;
}

weft_result_t weft_phase_lookup(const weft_world_t *world, const char *name, uint32_t *phase) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    WEFT__CONTRACT(name != NULL && phase != NULL, world->log, WEFT_EINVAL,
                   "weft_phase_lookup: name or phase is NULL");
    const weft__phase_def_t *d = def_named(weft__sched_peek(world), name);
    if (!d) {
        return WEFT__NOTE(world->log, WEFT_ENOENT, "weft_phase_lookup: no phase named '%s'", name);
    }
    *phase = d->phase;
    return WEFT_OK;
}

const char *weft_phase_name(const weft_world_t *world, uint32_t phase) {
    WEFT__NONNULL(world, NULL);
    const weft__phase_def_t *d = weft__sched_phase_def(weft__sched_peek(world), phase);
    return d ? d->name : NULL;
}

float weft_phase_alpha(const weft_world_t *world, uint32_t phase) {
    WEFT__NONNULL(world, 0.0f);
    const weft__phase_def_t *d = weft__sched_phase_def(weft__sched_peek(world), phase);
    return d && d->step > 0.0f ? (float)(d->acc / d->step) : 0.0f;
}

/* A new frame: each fixed phase takes in dt and decides its steps (also one without systems
 * yet, so its clock runs like the others'); every other phase runs once with dt. Called once
 * per frame (not when a suspended frame resumes). */
void weft__sched_plan_steps(struct weft_sched *s, float dt) {
    double add = isfinite(dt) && dt > 0.0f ? (double)dt : 0.0;
    for (uint32_t k = 0; k < s->ndefs; k++) {
        weft__phase_def_t *d = &s->defs[k];
        if (d->step > 0.0f) {
            d->acc += add;
            double due = floor(d->acc / d->step);
            d->acc -= due * d->step;
            d->steps = due < d->max_steps ? (uint32_t)due : d->max_steps;
        }
    }
    for (uint32_t ph = 0; ph < s->graph.nphases; ph++) {
        uint32_t number = s->systems[s->graph.order[s->graph.phase_first[ph]]]->desc.phase;
        const weft__phase_def_t *d = weft__sched_phase_def(s, number);
        bool fixed = d && d->step > 0.0f;
        s->phase_steps[ph] = fixed ? d->steps : 1u;
        s->phase_dt[ph] = fixed ? d->step : dt;
    }
}
