/* auto_plan.c: the automatic grouping setting and its re-plans from the registered systems
 * (the planner is src/core/auto_group.c; the rule is in weft/group.h). */
#include "system.h"

#include "src/core/auto_group.h"
#include "src/core/world.h"

void weft__sched_auto_replan(weft_world_t *world) {
    weft__auto_plan_t plan;
    plan.count = 0;
    const struct weft_sched *s = weft__sched_peek(world);
    for (uint32_t i = 0; world->auto_groups && s != NULL && i < s->count; i++) {
        const weft__system_t *sys = s->systems[i];
        if (sys->removed) {
            continue;
        }
        uint32_t ids[WEFT_QUERY_MAX_TERMS], n = 0;
        const weft_query_desc_t *qd = sys->query ? weft_query_desc(sys->query) : NULL;
        for (uint32_t t = 0; qd && t < sys->term_count; t++) {
            if (qd->terms[t].oper == WEFT_TERM_AND) {
                ids[n++] = qd->terms[t].component.id;
            }
        }
        weft__auto_plan_add(world, &plan, ids, n);
    }
    weft__auto_plan_apply(world, &plan);
}

weft_result_t weft_world_set_auto_groups(weft_world_t *world, bool on) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    WEFT__MAIN_CALL(world);
    const struct weft_sched *s = weft__sched_peek(world);
    WEFT__CONTRACT(s == NULL || !s->running, world->log, WEFT_ESTATE,
                   "weft_world_set_auto_groups: called during weft_world_progress");
    world->auto_groups = on;
    weft__sched_auto_replan(world);
    return WEFT_OK;
}

bool weft_world_auto_groups(const weft_world_t *world) {
    WEFT__NONNULL(world, false);
    return world->auto_groups;
}
