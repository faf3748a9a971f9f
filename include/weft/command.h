/* weft/command.h: command buffers — how a system makes structural changes (create, destroy,
 * add, set, remove) while the frame runs.
 *
 * Every system job receives its own buffer (weft_system_ctx_t.cmd). Commands are recorded, not
 * executed; at the end of the system's phase the scheduler applies all buffers on the main
 * thread in a fixed order — system registration order, then chunk index, then the order the
 * commands were written — so the resulting world never depends on the worker count or on
 * timing. Component hooks fire during that apply. The apply is staged: the memory all of a
 * phase's commands need is reserved before the first one is applied, so running out of
 * memory applies none of them (weft_world_progress in weft/system.h says what happens next).
 *
 * Where the apply runs: on the thread that called weft_world_progress, except that with more
 * than one worker a phase whose commands reach only plain components (no on_add/on_remove/
 * on_set hook, no observer, not in a group, not multi-instance, no query filtering on changes
 * to it; a destroy reaches every component the entity has) and make at least 512 row changes may be applied placed: the
 * calling thread walks the commands in apply order settling entity ids, generations,
 * signatures and skips, then the row changes are replayed pool by pool on every worker, each
 * pool's in apply order. Which of the two ways runs is measured, not assumed: each is timed
 * per row change, the cheaper one is used and the other re-timed every 16th time. Likewise,
 * with more than one worker and at least 512 commands, the check and reservation before the
 * apply may be split over the workers (buffer by buffer; commands on entities that commands of
 * other buffers also reach are checked on the calling thread), again timed against the serial
 * way. The world is bit-identical either way (weft_world_hash). If any command of the phase
 * reaches a component with a hook or observer, the whole phase is applied serially, so hooks
 * and observers always fire in command order on the calling thread and see every earlier
 * command of the phase applied and no later one.
 *
 * Ownership: the scheduler owns every buffer; a buffer pointer is valid only inside the run
 * call that received it: recording through it afterwards returns WEFT_ESTATE (every build) and
 * records nothing. Thread: a buffer belongs to the job it was handed to; never share it
 * between threads (debug builds return WEFT_ESTATE from another thread). A NULL buffer is
 * WEFT_EINVAL (weft_cmd_create: WEFT_ENTITY_NULL). Apply semantics are lenient on purpose (other systems' commands may have
 * changed the target first): commands on an entity that is no longer alive are skipped, add
 * of a component the entity already has is skipped, remove of a missing one is skipped. Each
 * skip is reported at WEFT_LOG_DEBUG (weft_logger_t.level), which the default level does not
 * deliver: a skip is an expected outcome, not an error. */
#ifndef WEFT_COMMAND_H
#define WEFT_COMMAND_H

#include "weft/base.h"
#include "weft/component.h"
#include "weft/entity.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_cmd weft_cmd_t; /* opaque; owned by the scheduler */

/* Record the creation of an entity and return a placeholder handle for it. The placeholder
 * is usable only in later commands of the same buffer: as their target, and as the value of
 * a component's declared entity field (weft_component_desc_t.entity_fields) in weft_cmd_set,
 * where apply replaces it by the real entity (WEFT_ENTITY_NULL if that create failed), as
 * archive loading remaps entity fields. At apply it becomes a real entity, placeholders
 * getting ids in apply order. A placeholder is never alive and never equals a real handle
 * (its index is 0); anywhere else it is an error (weft_component_set refuses one in an entity
 * field with WEFT_EINVAL). Returns 0 when out of memory or outside the run call (see above;
 * weft_last_error() says which). */
WEFT_API weft_entity_t weft_cmd_create(weft_cmd_t *cmd);

/* Record destroying `e` (a real handle or a placeholder of this buffer).
 * Errors: WEFT_EINVAL (null handle, or a placeholder this buffer did not make), WEFT_ENOMEM. */
WEFT_API weft_result_t weft_cmd_destroy(weft_cmd_t *cmd, weft_entity_t e);

/* Record adding component `c`, zero-initialised, to `e` (skipped at apply if present).
 * Errors: WEFT_EINVAL (bad handle or unknown component), WEFT_ENOMEM. */
WEFT_API weft_result_t weft_cmd_add(weft_cmd_t *cmd, weft_entity_t e, weft_component_t c);

/* Record setting component `c` of `e` to a copy of the component's size bytes at `data`
 * (copied now), adding it first if missing. For a zero-size tag `data` may be NULL.
 * Placeholders of this buffer in c's entity fields are resolved at apply (weft_cmd_create).
 * Errors: WEFT_EINVAL (bad handle, unknown component, NULL data, an entity field holding a
 * placeholder this buffer did not make), WEFT_ENOMEM, WEFT_ESTATE (see the top). */
WEFT_API weft_result_t weft_cmd_set(weft_cmd_t *cmd, weft_entity_t e, weft_component_t c,
                                    const void *data);

/* Record removing component `c` from `e` (skipped at apply if absent).
 * Errors: WEFT_EINVAL (bad handle or unknown component), WEFT_ENOMEM. */
WEFT_API weft_result_t weft_cmd_remove(weft_cmd_t *cmd, weft_entity_t e, weft_component_t c);

/* A deferred call, how a module outside the core offers its own commands (the hierarchy's
 * weft_hier_cmd_attach, for one): fn(world, copy of data, size) runs on the main thread
 * during the apply, at this record's place in the command order (registration, chunk, write
 * order), where it may make any main-thread call. `size` bytes at `data` are copied now.
 * Entity handles inside data are passed as recorded: placeholders are not resolved (pass
 * real handles). fn reports its own failures and returns WEFT_OK for outcomes the lenient
 * apply skips; another result becomes the apply's result as a failed command's does. The
 * staged apply reserves nothing for it, so fn must leave the world unchanged when it fails.
 * Errors: WEFT_EINVAL (NULL fn, NULL data with size > 0, size over 65,536),
 * WEFT_ENOMEM, WEFT_ESTATE (see the top). */
typedef weft_result_t (*weft_cmd_call_fn)(weft_world_t *world, const void *data, uint32_t size);
WEFT_API weft_result_t weft_cmd_call(weft_cmd_t *cmd, weft_cmd_call_fn fn, const void *data,
                                     uint32_t size);

/* Commands recorded in this buffer so far this frame. */
WEFT_API uint32_t weft_cmd_count(const weft_cmd_t *cmd);

/* True for a placeholder handle returned by weft_cmd_create() (index 0, generation != 0). */
static inline bool weft_cmd_is_placeholder(weft_entity_t e) { return (uint32_t)e == 0 && e != 0; }

#ifdef __cplusplus
}
#endif
#endif /* WEFT_COMMAND_H */
