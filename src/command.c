/* command.c: recording commands into a job's buffer and replaying a buffer onto the world
 * (see command.h for the format). Recording runs on worker threads; replay on the main
 * thread at the end of a phase. */
#include "command.h"

#include <string.h>

#include "report.h"
#include "schedule.h"
#include "world.h"

#define CMD_MIN_ARENA 1024u /* first arena size: a few dozen commands */

/* ---- recording -------------------------------------------------------------- >>record */

static size_t pad8(size_t n) { return (n + 7u) & ~(size_t)7u; }

/* Grow the arena to hold `extra` more bytes. Runs on the job's worker: the allocator hook is
 * thread-safe by contract (weft/base.h). The old arena is copied, not realloc'd, because the
 * hook has no realloc. */
static bool reserve(weft_cmd_t *cmd, size_t extra) {
    if (cmd->cap - cmd->len >= extra)
        return true;
    size_t cap = cmd->cap ? cmd->cap : CMD_MIN_ARENA;
    while (cap - cmd->len < extra)
        cap *= 2;
    unsigned char *data = weft__sched_alloc(cmd->alloc, cap);
    if (!data)
        return false;
    if (cmd->len)
        memcpy(data, cmd->data, cmd->len);
    weft__sched_free(cmd->alloc, cmd->data, cmd->cap);
    cmd->data = data;
    cmd->cap = cap;
    return true;
}

/* Append one record with `size` payload bytes copied from `payload` (zeroed when NULL). */
static weft_result_t push(weft_cmd_t *cmd, weft__cmd_op_t op, uint64_t e, uint32_t component,
                          const void *payload, uint32_t size) {
    size_t need = sizeof(weft__cmd_rec_t) + pad8(size);
    if (!reserve(cmd, need))
        return WEFT__FAIL(cmd->log, WEFT_ENOMEM, "command buffer of system %u: out of memory",
                          cmd->system);
    weft__cmd_rec_t rec = {.op = (uint8_t)op,
                           .component = component,
                           .entity = e,
                           .size = size,
                           .next = (uint32_t)need};
    memcpy(cmd->data + cmd->len, &rec, sizeof rec);
    if (size) {
        unsigned char *dst = cmd->data + cmd->len + sizeof rec;
        if (payload)
            memcpy(dst, payload, size);
        else
            memset(dst, 0, size);
    }
    cmd->len += need;
    return WEFT_OK;
}

/* A handle is usable in this buffer when real and non-null, or a placeholder it issued. */
/* Handles are checked when recorded (on the job's thread) so a bad one is reported against
 * the system that wrote it, not at apply time on the main thread. Liveness is not checked:
 * another command may legitimately destroy the entity first. */
static weft_result_t check_entity(const weft_cmd_t *cmd, weft_entity_t e, const char *fn) {
    WEFT__CONTRACT(e != WEFT_ENTITY_NULL, cmd->log, WEFT_EINVAL, "%s: null entity", fn);
    WEFT__CONTRACT(!weft__cmd_is_placeholder(e) || weft_entity_generation(e) <= cmd->created,
                   cmd->log, WEFT_EINVAL,
                   "%s: placeholder 0x%llx was not created by this command buffer (system %u)", fn,
                   (unsigned long long)e, cmd->system);
    return WEFT_OK;
}

static weft_result_t check_component(const weft_cmd_t *cmd, weft_component_t c, const char *fn) {
    WEFT__CONTRACT(weft__component(cmd->world, c.id) != NULL, cmd->log, WEFT_EINVAL,
                   "%s: unknown component id %u (system %u)", fn, c.id, cmd->system);
    return WEFT_OK;
}

/* The placeholder encodes the create's ordinal, so resolving it at apply time is one array
 * index into the buffer's map and needs no hashing. */
weft_entity_t weft_cmd_create(weft_cmd_t *cmd) {
    WEFT_ASSERT(cmd != NULL, "weft_cmd_create: cmd is NULL");
    if (cmd->created == UINT32_MAX - 1) {
        (void)WEFT__FAIL(cmd->log, WEFT_ECAPACITY, "weft_cmd_create: too many creates");
        return WEFT_ENTITY_NULL;
    }
    weft_entity_t ph = weft_entity_make(0, cmd->created + 1);
    if (push(cmd, WEFT__CMD_CREATE, ph, 0, NULL, 0) != WEFT_OK)
        return WEFT_ENTITY_NULL;
    cmd->created++;
    return ph;
}

weft_result_t weft_cmd_destroy(weft_cmd_t *cmd, weft_entity_t e) {
    weft_result_t r = check_entity(cmd, e, "weft_cmd_destroy");
    return r != WEFT_OK ? r : push(cmd, WEFT__CMD_DESTROY, e, 0, NULL, 0);
}

weft_result_t weft_cmd_add(weft_cmd_t *cmd, weft_entity_t e, weft_component_t c) {
    weft_result_t r = check_entity(cmd, e, "weft_cmd_add");
    if (r == WEFT_OK)
        r = check_component(cmd, c, "weft_cmd_add");
    return r != WEFT_OK ? r : push(cmd, WEFT__CMD_ADD, e, c.id, NULL, 0);
}

weft_result_t weft_cmd_set(weft_cmd_t *cmd, weft_entity_t e, weft_component_t c, const void *data) {
    weft_result_t r = check_entity(cmd, e, "weft_cmd_set");
    if (r == WEFT_OK)
        r = check_component(cmd, c, "weft_cmd_set");
    if (r != WEFT_OK)
        return r;
    uint32_t size = weft__component(cmd->world, c.id)->pool.size;
    WEFT__CONTRACT(data != NULL || size == 0, cmd->log, WEFT_EINVAL,
                   "weft_cmd_set: data is NULL for component '%s'",
                   weft__component(cmd->world, c.id)->name);
    return push(cmd, WEFT__CMD_SET, e, c.id, data, size);
}

weft_result_t weft_cmd_remove(weft_cmd_t *cmd, weft_entity_t e, weft_component_t c) {
    weft_result_t r = check_entity(cmd, e, "weft_cmd_remove");
    if (r == WEFT_OK)
        r = check_component(cmd, c, "weft_cmd_remove");
    return r != WEFT_OK ? r : push(cmd, WEFT__CMD_REMOVE, e, c.id, NULL, 0);
}

/* Walks the records (rarely called; the buffer keeps no separate counter to stay small). */
uint32_t weft_cmd_count(const weft_cmd_t *cmd) {
    uint32_t n = 0;
    for (size_t at = 0; at < cmd->len; n++) {
        weft__cmd_rec_t rec;
        memcpy(&rec, cmd->data + at, sizeof rec);
        at += rec.next;
    }
    return n;
}

void weft__cmd_fini(weft_cmd_t *cmd) {
    weft__sched_free(cmd->alloc, cmd->data, cmd->cap);
    cmd->data = NULL;
    cmd->cap = 0;
    cmd->len = 0;
}

/* ---- replay ------------------------------------------------------------------- >>apply */

/* Outcomes that are not failures under the lenient apply rules (see weft/command.h). */
static bool benign(weft_result_t r) {
    return r == WEFT_OK || r == WEFT_ESTALE || r == WEFT_EEXIST || r == WEFT_ENOENT;
}

/* Each record becomes the public main-thread call that does the same thing, so hooks,
 * signatures and groups behave exactly as for direct calls. The payload is read in place:
 * weft_component_set copies it, so the arena's 8-byte alignment is enough. */
weft_result_t weft__cmd_apply(weft_world_t *world, const weft_cmd_t *cmd, uint64_t *map) {
    weft_result_t first = WEFT_OK;
    for (size_t at = 0; at < cmd->len;) {
        weft__cmd_rec_t rec;
        memcpy(&rec, cmd->data + at, sizeof rec);
        const void *payload = cmd->data + at + sizeof rec;
        at += rec.next;
        weft_entity_t e = rec.entity;
        weft_component_t c = {rec.component};
        if (rec.op == WEFT__CMD_CREATE) {
            weft_entity_t real = WEFT_ENTITY_NULL;
            weft_result_t r = weft_entity_create(world, &real);
            map[weft_entity_generation(e) - 1] = real;
            if (r != WEFT_OK && first == WEFT_OK)
                first = r;
            continue;
        }
        if (weft__cmd_is_placeholder(e))
            e = map[weft_entity_generation(e) - 1]; /* 0 when its create failed: skipped */
        if (e == WEFT_ENTITY_NULL)
            continue;
        weft_result_t r = WEFT_OK;
        switch ((weft__cmd_op_t)rec.op) {
        case WEFT__CMD_DESTROY:
            r = weft_entity_destroy(world, e);
            break;
        case WEFT__CMD_ADD:
            r = weft_component_add(world, e, c, NULL);
            break;
        case WEFT__CMD_SET:
            r = weft_component_set(world, e, c, payload);
            break;
        case WEFT__CMD_REMOVE:
            r = weft_component_remove(world, e, c);
            break;
        case WEFT__CMD_CREATE:
            break;
        }
        if (!benign(r) && first == WEFT_OK)
            first = r;
    }
    return first;
}
