/* access.h: debug-build enforcement of system access declarations and of the main-thread
 * rule (private to the build).
 *
 * DESIGN
 * The scheduler, before it runs a system's body on a thread, publishes that system's access
 * set in a thread-local pointer (weft__access_enter) and clears it afterwards
 * (weft__access_leave). Component reads and writes of the core go through
 * WEFT__ACCESS(world, component_id, mode), which in debug builds (WEFT_DEBUG >= 1) calls
 * weft__access_check(): with no set published (outside systems) or a set of another world,
 * everything is allowed; otherwise a read needs the component in read or write, a write needs
 * it in write. Calls that return a code report a violation as WEFT_EACCESS
 * (weft__access_test); the getters, which cannot, abort naming the system and the component.
 * Structural and other main-thread-only calls start with WEFT__MAIN_CALL (world.h), which in
 * debug builds returns WEFT_ESTATE from a system, a hook or another thread
 * (weft__structural_check). In release builds the access macro compiles to nothing, so the
 * hot paths pay nothing. */
#ifndef WEFT_SRC_ACCESS_H
#define WEFT_SRC_ACCESS_H

#include "weft/component.h"
#include "weft/system.h"

typedef enum weft__access_mode {
    WEFT__ACCESS_READ = 0,  /* reading component data */
    WEFT__ACCESS_WRITE = 1, /* writing component data */
} weft__access_mode_t;

/* The declared access of one running system: the public view's shape (weft/system.h), so a
 * view is published as it is. Owned by the scheduler; must outlive the time it is published.
 * Write implies read: the checker accepts a read of a component that may be written. */
typedef weft_view_t weft__access_set_t;

/* Add component `id` to the set, for reading or (write) writing; a write wins over a read.
 * Returns false when the wide list is full (the caller bounds its ids: a system has at most
 * WEFT_VIEW_MAX_WIDE). */
bool weft__access_add(weft__access_set_t *set, uint32_t id, bool write);

/* Whether the set holds `id` at all (read or write), or for writing. */
static inline bool weft__access_has(const weft__access_set_t *set, uint32_t id) {
    return weft_view_access(set, id) != 0;
}
static inline bool weft__access_has_write(const weft__access_set_t *set, uint32_t id) {
    return weft_view_access(set, id) == 2u;
}

/* Publish `set` as the calling thread's running system; returns the previous one so nested
 * runs (a system waiting on jobs that run other systems' chunks) can restore it. */
const weft__access_set_t *weft__access_enter(const weft__access_set_t *set);

/* Restore the previous set returned by weft__access_enter (NULL: outside systems). */
void weft__access_leave(const weft__access_set_t *previous);

/* The calling thread's published set, or NULL. */
const weft__access_set_t *weft__access_current(void);

/* WEFT_EACCESS, reported naming system and component, when the calling thread's running
 * system may not access `component` of `world` in `mode` (read or write); WEFT_OK otherwise.
 * For calls that return a code (weft_query_iter). */
weft_result_t weft__access_test(const weft_world_t *world, uint32_t component,
                                weft__access_mode_t mode);

/* weft__access_test for the getters (get, get_mut, row readers), which have no error code to
 * return: a violation aborts there, naming system and component. Structural calls are
 * checked by weft__structural_check instead. */
void weft__access_check(const weft_world_t *world, uint32_t component, weft__access_mode_t mode);

/* An address unique to the calling thread while it lives (a thread-local's address): how a
 * world remembers its main thread without depending on pthread_t being comparable. */
const void *weft__thread_token(void);

/* May the calling thread make a structural change to `world` (or another main-thread-only
 * call, weft/world.h) now? Not from a thread other than the world's main thread (the one that
 * created it), not from inside one of the world's systems (they record commands instead), not
 * from inside a component hook. Otherwise reports WEFT_ESTATE naming `fn` and the thread and
 * returns it (aborting instead when weft_set_contract_abort(true)). */
weft_result_t weft__structural_check(const weft_world_t *world, const char *fn);

#if WEFT_DEBUG >= 1
#define WEFT__ACCESS(world, component, mode) weft__access_check((world), (component), (mode))
#else
#define WEFT__ACCESS(world, component, mode) ((void)0)
#endif /* WEFT_DEBUG */

#endif /* WEFT_SRC_ACCESS_H */
