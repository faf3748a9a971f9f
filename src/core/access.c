/* access.c: the thread-local "running system" pointer and the access check (see access.h).
 *
 * DESIGN
 * One _Thread_local pointer per thread; the scheduler sets it around each system body (a job
 * runs a system's chunk on whatever worker picked it up, so the pointer must be per thread,
 * not per world). The check itself is a few bit tests; on a violation it reports through the
 * world's logger and asserts with a message naming the system and the component (a broken
 * access declaration is a contract violation, weft/system.h). It is compiled in every build, but only debug builds route the
 * core's calls through it (WEFT__ACCESS). */
#include "access.h"

#include "world.h"

#include <stdio.h>
#include <string.h>

static _Thread_local const weft__access_set_t *current_set; /* this thread's running system */

const weft__access_set_t *weft__access_enter(const weft__access_set_t *set) {
    const weft__access_set_t *previous = current_set;
    current_set = set;
    return previous;
}

void weft__access_leave(const weft__access_set_t *previous) { current_set = previous; }

const weft__access_set_t *weft__access_current(void) { return current_set; }

bool weft__access_add(weft__access_set_t *set, uint32_t id, bool write) {
    if (id < WEFT_VIEW_BITSET_IDS) {
        uint64_t bit = (uint64_t)1 << (id & 63u);
        set->read[id >> 6] |= write ? 0u : bit;
        set->write[id >> 6] |= write ? bit : 0u;
        return true;
    }
    uint32_t i = 0;
    while (i < set->nwide && (set->wide[i] >> 1) < id) {
        i++;
    }
    if (i < set->nwide && (set->wide[i] >> 1) == id) {
        set->wide[i] |= write ? 1u : 0u;
        return true;
    }
    if (set->nwide >= WEFT_VIEW_MAX_WIDE) {
        return false;
    }
    memmove(set->wide + i + 1, set->wide + i, (size_t)(set->nwide - i) * sizeof set->wide[0]);
    set->wide[i] = id << 1 | (write ? 1u : 0u);
    set->nwide++;
    return true;
}

static const char *component_name(const weft_world_t *world, uint32_t c) {
    const weft__component_t *comp = weft__component_any(world, c);
    return comp ? comp->name : "<unknown>";
}

const void *weft__thread_token(void) {
    static _Thread_local char token;
    return &token;
}

weft_result_t weft__structural_check(const weft_world_t *world, const char *fn) {
    const weft__access_set_t *set = current_set;
    if (set != NULL && set->world == world) {
        (void)weft__fail(world->log, WEFT_ESTATE, __FILE__, __LINE__,
                         "%s: called from inside system '%s'; a system records structural "
                         "changes in its command buffer (weft/command.h)",
                         fn, set->system ? set->system : "<unnamed>");
    } else if (world->hook_depth > 0) {
        (void)weft__fail(world->log, WEFT_ESTATE, __FILE__, __LINE__,
                         "%s: called from inside a component hook or a system's run condition, "
                         "which may not change the world's structure",
                         fn);
    } else if (world->main_thread != weft__thread_token()) {
        uint32_t worker = world->jobs ? weft_jobs_worker_index(world->jobs) : UINT32_MAX;
        char who[48];
        if (worker != UINT32_MAX) {
            snprintf(who, sizeof who, "worker %u of the world's job system", worker);
        } else {
            snprintf(who, sizeof who, "thread %p", weft__thread_token());
        }
        (void)weft__fail(world->log, WEFT_ESTATE, __FILE__, __LINE__,
                         "%s: called from %s, which is not the world's main thread (the thread "
                         "that created it); only calls marked \"Thread: any\" may be made there",
                         fn, who);
    } else {
        return WEFT_OK;
    }
    if (weft__contract_aborts()) {
        weft_assert_fail("main-thread call", weft_last_error(), __FILE__, __LINE__, fn);
    }
    return WEFT_ESTATE;
}

weft_result_t weft__access_test(const weft_world_t *world, uint32_t component,
                                weft__access_mode_t mode) {
    const weft__access_set_t *set = current_set;
    if (set == NULL || set->world != world || component >= WEFT_MAX_COMPONENTS) {
        return WEFT_OK; /* outside systems, another world's system, or an unknown id (the
                           caller reports that) */
    }
    uint32_t has = weft_view_access(set, component);
    if (has == 2u || (mode == WEFT__ACCESS_READ && has == 1u)) {
        return WEFT_OK;
    }
    return weft__fail(world->log, WEFT_EACCESS, __FILE__, __LINE__,
                      "system '%s' %s component '%s' without declaring it",
                      set->system ? set->system : "<unnamed>",
                      mode == WEFT__ACCESS_WRITE ? "writes" : "reads",
                      component_name(world, component));
}

void weft__access_check(const weft_world_t *world, uint32_t component, weft__access_mode_t mode) {
    if (weft__access_test(world, component, mode) != WEFT_OK) {
        weft_assert_fail("undeclared component access", weft_last_error(), __FILE__, __LINE__,
                         __func__);
    }
}
