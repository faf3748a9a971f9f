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

static _Thread_local const weft__access_set_t *current_set; /* this thread's running system */

const weft__access_set_t *weft__access_enter(const weft__access_set_t *set) {
    const weft__access_set_t *previous = current_set;
    current_set = set;
    return previous;
}

void weft__access_leave(const weft__access_set_t *previous) { current_set = previous; }

const weft__access_set_t *weft__access_current(void) { return current_set; }

static const char *component_name(const weft_world_t *world, uint32_t c) {
    const weft__component_t *comp = weft__component(world, c);
    return comp ? comp->name : "<unknown>";
}

void weft__access_check(const weft_world_t *world, uint32_t component, weft__access_mode_t mode) {
    const weft__access_set_t *set = current_set;
    if (set == NULL || set->world != world) {
        return; /* outside systems (or another world's system): everything is allowed */
    }
    const char *name = set->system_name ? set->system_name : "<unnamed>";
    if (mode == WEFT__ACCESS_STRUCTURAL) {
        (void)weft__fail(world->log, WEFT_EACCESS, __FILE__, __LINE__,
                         "system '%s' made a structural change (component '%s'); use its "
                         "command buffer",
                         name, component ? component_name(world, component) : "-");
        weft_assert_fail("structural change inside a system", weft_last_error(), __FILE__, __LINE__,
                         __func__);
    }
    if (component >= WEFT_MAX_COMPONENTS) {
        return; /* unknown ids are reported by the caller */
    }
    bool ok = weft__access_bit_has(set->write, component) ||
              (mode == WEFT__ACCESS_READ && weft__access_bit_has(set->read, component));
    if (!ok) {
        (void)weft__fail(world->log, WEFT_EACCESS, __FILE__, __LINE__,
                         "system '%s' %s component '%s' without declaring it", name,
                         mode == WEFT__ACCESS_WRITE ? "writes" : "reads",
                         component_name(world, component));
        weft_assert_fail("undeclared component access", weft_last_error(), __FILE__, __LINE__,
                         __func__);
    }
}
