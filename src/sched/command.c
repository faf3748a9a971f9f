/* command.c: recording commands into a job's buffer and replaying a buffer onto the world
 * (see command.h for the format). Recording runs on worker threads; replay on the main
 * thread at the end of a phase. */
#include "command.h"

#include <string.h>

#include "jobs/platform/report.h"
#include "schedule.h"
#include "src/core/entity.h"
#include "src/core/multi.h"
#include "src/core/signature.h"
#include "src/core/world.h"

#define CMD_MIN_ARENA 1024u /* first arena size: a few dozen commands */

/* ---- recording -------------------------------------------------------------- >>record */

static size_t pad8(size_t n) { return (n + 7u) & ~(size_t)7u; }

/* Grow the arena to hold `extra` more bytes. Runs on the job's worker: the allocator hook is
 * thread-safe by contract (weft/base.h). The old arena is copied, not realloc'd, because the
 * hook has no realloc. */
static bool reserve(weft_cmd_t *cmd, size_t extra) {
    if (cmd->cap - cmd->len >= extra) {
        return true;
    }
    size_t cap = cmd->cap ? cmd->cap : CMD_MIN_ARENA;
    while (cap - cmd->len < extra) {
        cap *= 2;
    }
    unsigned char *data = weft__sched_alloc(cmd->alloc, cap);
    if (!data) {
        return false;
    }
    if (cmd->len) {
        memcpy(data, cmd->data, cmd->len);
    }
    weft__sched_free(cmd->alloc, cmd->data, cmd->cap);
    cmd->data = data;
    cmd->cap = cap;
    return true;
}

/* Append one record with `size` payload bytes copied from `payload` (zeroed when NULL). */
static weft_result_t push(weft_cmd_t *cmd, weft__cmd_op_t op, uint64_t e, uint32_t component,
                          const void *payload, uint32_t size) {
    size_t need = sizeof(weft__cmd_rec_t) + pad8(size);
    if (!reserve(cmd, need)) {
        return WEFT__FAIL(cmd->log, WEFT_ENOMEM, "command buffer of system %u: out of memory",
                          cmd->system);
    }
    weft__cmd_rec_t rec = {.op = (uint8_t)op,
                           .component = component,
                           .entity = e,
                           .size = size,
                           .next = (uint32_t)need};
    memcpy(cmd->data + cmd->len, &rec, sizeof rec);
    if (size) {
        unsigned char *dst = cmd->data + cmd->len + sizeof rec;
        if (payload) {
            memcpy(dst, payload, size);
        } else {
            memset(dst, 0, size);
        }
    }
    cmd->len += need;
    return WEFT_OK;
}

/* A buffer records only inside the run call that received it, on that call's thread (debug
 * builds check the thread; every build checks the call). A pointer kept past its call would
 * otherwise record into a buffer the scheduler has applied, reset or handed to another job,
 * and the command would vanish. */
static weft_result_t check_open(const weft_cmd_t *cmd, const char *fn) {
    WEFT__CONTRACT(weft_atomic_load_relaxed(&cmd->open) != 0u, cmd->log, WEFT_ESTATE,
                   "%s: the command buffer of system %u was used outside the run call that "
                   "received it (a buffer is valid only inside that call)",
                   fn, cmd->system);
#if WEFT_DEBUG >= 1
    WEFT__CONTRACT(cmd->owner == weft__thread_token(), cmd->log, WEFT_ESTATE,
                   "%s: the command buffer of system %u was used from another thread than the "
                   "one running its job (never share a buffer between threads)",
                   fn, cmd->system);
#endif /* WEFT_DEBUG */
    return WEFT_OK;
}

/* A handle is usable in this buffer when real and non-null, or a placeholder it issued. */
/* Handles are checked when recorded (on the job's thread) so a bad one is reported against
 * the system that wrote it, not at apply time on the main thread. Liveness is not checked:
 * another command may legitimately destroy the entity first. */
static weft_result_t check_entity(const weft_cmd_t *cmd, weft_entity_t e, const char *fn) {
    weft_result_t r = check_open(cmd, fn);
    if (r != WEFT_OK) {
        return r;
    }
    WEFT__CONTRACT(e != WEFT_ENTITY_NULL, cmd->log, WEFT_EINVAL, "%s: null entity", fn);
    WEFT__CONTRACT(!weft__cmd_is_placeholder(e) || weft_entity_generation(e) <= cmd->created,
                   cmd->log, WEFT_EINVAL,
                   "%s: placeholder 0x%llx was not created by this command buffer (system %u)", fn,
                   (unsigned long long)e, cmd->system);
    return WEFT_OK;
}

static weft_result_t check_component(const weft_cmd_t *cmd, weft_component_t c, const char *fn) {
    const weft__component_t *comp = weft__component(cmd->world, c.id);
    WEFT__CONTRACT(comp != NULL, cmd->log, WEFT_EINVAL, "%s: unknown component id %u (system %u)",
                   fn, c.id, cmd->system);
    if (comp->owned.refuse != NULL) { /* module-owned (weft/module.h): nothing is recorded */
        return WEFT__FAIL(cmd->log, WEFT_ESTATE,
                          "%s: '%s' is owned by a module and is not changed by commands; %s", fn,
                          comp->name, comp->owned.refuse);
    }
    return WEFT_OK;
}

/* The placeholder encodes the create's ordinal, so resolving it at apply time is one array
 * index into the buffer's map and needs no hashing. */
weft_entity_t weft_cmd_create(weft_cmd_t *cmd) {
    WEFT__NONNULL(cmd, WEFT_ENTITY_NULL);
    if (check_open(cmd, "weft_cmd_create") != WEFT_OK) {
        return WEFT_ENTITY_NULL;
    }
    if (cmd->created == UINT32_MAX - 1) {
        (void)WEFT__FAIL(cmd->log, WEFT_ECAPACITY, "weft_cmd_create: too many creates");
        return WEFT_ENTITY_NULL;
    }
    weft_entity_t ph = weft_entity_make(0, cmd->created + 1);
    if (push(cmd, WEFT__CMD_CREATE, ph, 0, NULL, 0) != WEFT_OK) {
        return WEFT_ENTITY_NULL;
    }
    cmd->created++;
    return ph;
}

weft_result_t weft_cmd_destroy(weft_cmd_t *cmd, weft_entity_t e) {
    WEFT__NONNULL(cmd, WEFT_EINVAL);
    weft_result_t r = check_entity(cmd, e, "weft_cmd_destroy");
    return r != WEFT_OK ? r : push(cmd, WEFT__CMD_DESTROY, e, 0, NULL, 0);
}

weft_result_t weft_cmd_add(weft_cmd_t *cmd, weft_entity_t e, weft_component_t c) {
    WEFT__NONNULL(cmd, WEFT_EINVAL);
    weft_result_t r = check_entity(cmd, e, "weft_cmd_add");
    if (r == WEFT_OK) {
        r = check_component(cmd, c, "weft_cmd_add");
    }
    return r != WEFT_OK ? r : push(cmd, WEFT__CMD_ADD, e, c.id, NULL, 0);
}

weft_result_t weft_cmd_set(weft_cmd_t *cmd, weft_entity_t e, weft_component_t c, const void *data) {
    WEFT__NONNULL(cmd, WEFT_EINVAL);
    weft_result_t r = check_entity(cmd, e, "weft_cmd_set");
    if (r == WEFT_OK) {
        r = check_component(cmd, c, "weft_cmd_set");
    }
    if (r != WEFT_OK) {
        return r;
    }
    const weft__component_t *comp = weft__component(cmd->world, c.id);
    uint32_t size = comp->pool.size;
    WEFT__CONTRACT(data != NULL || size == 0, cmd->log, WEFT_EINVAL,
                   "weft_cmd_set: data is NULL for component '%s'", comp->name);
    for (uint32_t i = 0; i < comp->entity_field_count; i++) {
        weft_entity_t field;
        memcpy(&field, (const unsigned char *)data + comp->entity_fields[i], sizeof field);
        WEFT__CONTRACT(!weft__cmd_is_placeholder(field) ||
                           weft_entity_generation(field) <= cmd->created,
                       cmd->log, WEFT_EINVAL,
                       "weft_cmd_set: the entity field at offset %u of component '%s' holds "
                       "placeholder 0x%llx, which this command buffer (system %u) did not create",
                       comp->entity_fields[i], comp->name, (unsigned long long)field, cmd->system);
    }
    return push(cmd, WEFT__CMD_SET, e, c.id, data, size);
}

weft_result_t weft_cmd_remove(weft_cmd_t *cmd, weft_entity_t e, weft_component_t c) {
    WEFT__NONNULL(cmd, WEFT_EINVAL);
    weft_result_t r = check_entity(cmd, e, "weft_cmd_remove");
    if (r == WEFT_OK) {
        r = check_component(cmd, c, "weft_cmd_remove");
    }
    return r != WEFT_OK ? r : push(cmd, WEFT__CMD_REMOVE, e, c.id, NULL, 0);
}

weft_result_t weft__cmd_push_emit(weft_cmd_t *cmd, uint32_t event, weft_entity_t target,
                                  const void *payload, uint32_t size) {
    weft_result_t r = check_open(cmd, "weft_cmd_emit");
    if (r != WEFT_OK) {
        return r;
    }
    WEFT__CONTRACT(!weft__cmd_is_placeholder(target) ||
                       weft_entity_generation(target) <= cmd->created,
                   cmd->log, WEFT_EINVAL,
                   "weft_cmd_emit: placeholder 0x%llx was not created by this command buffer",
                   (unsigned long long)target);
    return push(cmd, WEFT__CMD_EMIT, target, event, payload, size);
}

weft_result_t weft_cmd_call(weft_cmd_t *cmd, weft_cmd_call_fn fn, const void *data, uint32_t size) {
    weft_result_t r = check_open(cmd, "weft_cmd_call");
    if (r != WEFT_OK) {
        return r;
    }
    WEFT__CONTRACT(fn != NULL && (data != NULL || size == 0) && size <= 65536u, cmd->log,
                   WEFT_EINVAL, "weft_cmd_call: NULL fn, NULL data or size %u over 65536", size);
    r = push(cmd, WEFT__CMD_CALL, 0, 0, NULL, (uint32_t)sizeof(fn) + size);
    if (r == WEFT_OK) { /* push placed the record last: fill its payload */
        const size_t need = sizeof(weft__cmd_rec_t) + pad8(sizeof(fn) + size);
        unsigned char *dst = cmd->data + cmd->len - need + sizeof(weft__cmd_rec_t);
        memcpy(dst, &fn, sizeof(fn));
        if (size != 0) {
            memcpy(dst + sizeof(fn), data, size);
        }
    }
    return r;
}

void weft__cmd_deliver(const weft_cmd_t *cmd,
                       void (*fn)(void *ctx, uint32_t event, weft_entity_t target,
                                  const void *payload, uint32_t size),
                       void *ctx) {
    for (size_t at = 0; at < cmd->len;) {
        weft__cmd_rec_t rec;
        memcpy(&rec, cmd->data + at, sizeof rec);
        if (rec.op == WEFT__CMD_EMIT) {
            fn(ctx, rec.component, rec.entity, rec.size ? cmd->data + at + sizeof rec : NULL,
               rec.size);
        }
        at += rec.next;
    }
}

/* Walks the records (rarely called; the buffer keeps no separate counter to stay small). */
uint32_t weft_cmd_count(const weft_cmd_t *cmd) {
    WEFT__NONNULL(cmd, 0);
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

const char *weft__cmd_op_name(uint8_t op) {
    switch ((weft__cmd_op_t)op) {
    case WEFT__CMD_CREATE:
        return "create";
    case WEFT__CMD_DESTROY:
        return "destroy";
    case WEFT__CMD_ADD:
        return "add";
    case WEFT__CMD_SET:
        return "set";
    case WEFT__CMD_REMOVE:
        return "remove";
    case WEFT__CMD_EMIT:
        return "emit";
    case WEFT__CMD_CALL:
        return "call";
    }
    return "command";
}

/* Outcomes that are not failures under the lenient apply rules (see weft/command.h). */
static bool benign(weft_result_t r) {
    return r == WEFT_OK || r == WEFT_ESTALE || r == WEFT_EEXIST || r == WEFT_ENOENT;
}

/* The payload belongs to the buffer being consumed, so it is patched in place. */
void weft__cmd_remap_fields(const weft_world_t *world, weft_component_t c, unsigned char *payload,
                            const uint64_t *map) {
    const weft__component_t *comp = weft__component(world, c.id);
    for (uint32_t i = 0; comp != NULL && i < comp->entity_field_count; i++) {
        weft_entity_t field;
        memcpy(&field, payload + comp->entity_fields[i], sizeof field);
        if (weft__cmd_is_placeholder(field)) {
            field = map[weft_entity_generation(field) - 1];
            memcpy(payload + comp->entity_fields[i], &field, sizeof field);
        }
    }
}

weft_entity_t weft__cmd_target(weft_world_t *world, weft_cmd_t *cmd, size_t at,
                               weft__cmd_rec_t *rec, const uint64_t *map) {
    weft_entity_t e = rec->entity;
    if (weft__cmd_is_placeholder(e)) {
        e = map[weft_entity_generation(e) - 1]; /* 0 when its create failed */
    }
    if (rec->op == WEFT__CMD_EMIT) { /* delivered after the apply: resolve its target */
        if (e != rec->entity) {
            rec->entity = e;
            memcpy(cmd->data + at, rec, sizeof *rec);
        }
        return WEFT_ENTITY_NULL;
    }
    if (e == WEFT_ENTITY_NULL) {
        return e; /* its create failed, which was reported */
    }
    if (!weft_entity_is_alive(world, e)) {
        /* Documented as lenient (weft/command.h): another command destroyed it first. */
        (void)WEFT__NOTE(world->log, WEFT_ESTALE,
                         "command skipped: system %u's %s of entity 0x%llx, which is no "
                         "longer alive",
                         cmd->system, weft__cmd_op_name(rec->op), (unsigned long long)e);
        return WEFT_ENTITY_NULL;
    }
    return e;
}

/* Each record becomes the public main-thread call that does the same thing, so hooks,
 * signatures and groups behave exactly as for direct calls. The payload is read in place:
 * weft_component_set copies it, so the arena's 8-byte alignment is enough. */
weft_result_t weft__cmd_apply(weft_world_t *world, weft_cmd_t *cmd, uint64_t *map) {
    weft_result_t first = WEFT_OK;
    for (size_t at = 0; at < cmd->len;) {
        weft__cmd_rec_t rec;
        memcpy(&rec, cmd->data + at, sizeof rec);
        unsigned char *payload = cmd->data + at + sizeof rec;
        size_t here = at;
        at += rec.next;
        weft_component_t c = {rec.component};
        if (rec.op == WEFT__CMD_CALL) { /* a module's command (weft_cmd_call) */
            weft_cmd_call_fn fn;
            memcpy(&fn, payload, sizeof(fn));
            const weft_result_t r =
                fn(world, payload + sizeof(fn), rec.size - (uint32_t)sizeof(fn));
            if (!benign(r) && first == WEFT_OK) {
                first = r;
            }
            continue;
        }
        if (rec.op == WEFT__CMD_CREATE) {
            weft_entity_t real = WEFT_ENTITY_NULL;
            weft_result_t r = weft_entity_create(world, &real);
            map[weft_entity_generation(rec.entity) - 1] = real;
            if (r != WEFT_OK && first == WEFT_OK) {
                first = r;
            }
            continue;
        }
        weft_entity_t e = weft__cmd_target(world, cmd, here, &rec, map);
        if (e == WEFT_ENTITY_NULL) {
            continue;
        }
        weft_result_t r = WEFT_OK;
        switch ((weft__cmd_op_t)rec.op) {
        case WEFT__CMD_DESTROY:
            r = weft_entity_destroy(world, e);
            break;
        case WEFT__CMD_ADD:
            r = weft_component_add(world, e, c, NULL);
            break;
        case WEFT__CMD_SET:
            if (cmd->created != 0) {
                weft__cmd_remap_fields(world, c, payload, map);
            }
            r = weft_component_set(world, e, c, payload);
            break;
        case WEFT__CMD_REMOVE:
            r = weft_component_remove(world, e, c);
            break;
        case WEFT__CMD_CREATE:
        case WEFT__CMD_EMIT:
        case WEFT__CMD_CALL:
            break;
        }
        if (!benign(r) && first == WEFT_OK) {
            first = r;
        }
    }
    return first;
}

/* ---- staged apply ---------------------------------------------------------------- >>stage */

#define STAGE_DEAD 0xFFFFu /* simulated signature of a destroyed or stale entity */

/* Grow a uint32_t scratch array to at least `need` entries (contents kept). */
static bool grow_u32(const weft_allocator_t *alloc, uint32_t **arr, uint32_t *cap, uint32_t used,
                     uint32_t need) {
    if (need <= *cap) {
        return true;
    }
    uint32_t ncap = *cap ? *cap : 256u;
    while (ncap < need) {
        ncap = ncap > UINT32_MAX / 2u ? need : ncap * 2u;
    }
    uint32_t *a = weft__sched_alloc(alloc, (size_t)ncap * sizeof *a);
    if (!a) {
        return false;
    }
    if (used) {
        memcpy(a, *arr, (size_t)used * sizeof *a);
    }
    weft__sched_free(alloc, *arr, (size_t)*cap * sizeof **arr);
    *arr = a;
    *cap = ncap;
    return true;
}

/* Bytes of the per-component tables for `cap` ids: rows, per, first, touched, placeholder. */
static size_t tables_bytes(uint32_t cap) { return (size_t)cap * (4u * sizeof(uint32_t) + 1u); }

/* Grow the per-component tables to `need` entries (one block; contents not kept: each dry run
 * and placed apply starts them afresh). False when out of memory (nothing changed). */
static bool grow_tables(weft__cmd_stage_t *st, const weft_allocator_t *alloc, uint32_t need) {
    uint32_t cap = st->comp_cap ? st->comp_cap : 256u;
    while (cap < need) {
        cap *= 2u;
    }
    uint32_t *block = weft__sched_alloc(alloc, tables_bytes(cap));
    if (!block) {
        return false;
    }
    if (st->comp_cap) {
        weft__sched_free(alloc, st->rows, tables_bytes(st->comp_cap));
    }
    st->rows = block;
    st->per = block + cap;
    st->first = block + 2u * (size_t)cap;
    st->touched = block + 3u * (size_t)cap;
    st->placeholder = (uint8_t *)(block + 4u * (size_t)cap);
    st->comp_cap = cap;
    return true;
}

weft_result_t weft__cmd_stage_begin(weft__cmd_stage_t *st, weft_world_t *world,
                                    const weft_allocator_t *alloc) {
    st->creates = 0;
    st->destroys = 0;
    st->ndead = 0;
    st->ops = 0;
    st->hooked = false;
    uint32_t ncomp = world->component_count + 1u;
    if (ncomp > st->comp_cap && !grow_tables(st, alloc, ncomp)) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "command apply: out of memory");
    }
    st->ncomp = ncomp;
    memset(st->rows, 0, (size_t)ncomp * sizeof *st->rows);
    memset(st->placeholder, 0, (size_t)ncomp * sizeof *st->placeholder);
    /* sim is indexed by entity index; entries from older dry runs carry an older epoch, so
     * it is cleared only when the epoch wraps (or when it grows: new entries are zero). */
    uint32_t slots = weft_atomic_load_relaxed(&world->slot_count);
    uint32_t old_cap = st->sim_cap;
    if (!grow_u32(alloc, &st->sim, &st->sim_cap, old_cap, slots)) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "command apply: out of memory");
    }
    if (st->sim_cap > old_cap) {
        memset(st->sim + old_cap, 0, (size_t)(st->sim_cap - old_cap) * sizeof *st->sim);
    }
    if (++st->epoch > 0xFFFFu) {
        memset(st->sim, 0, (size_t)st->sim_cap * sizeof *st->sim);
        st->epoch = 1;
    }
    return WEFT_OK;
}

static bool sig_has(const weft_world_t *world, uint32_t sig, uint32_t c) {
    uint32_t n;
    const uint32_t *ids = weft__sig_ids(world, sig, &n);
    for (uint32_t i = 0; i < n && ids[i] <= c; i++) {
        if (ids[i] == c) {
            return true;
        }
    }
    return false;
}

/* Count one pool operation on comp for the placed apply (command_place.c). */
static void count_op(weft__cmd_stage_t *st, const weft__component_t *comp) {
    st->ops++;
    if (!weft__cmd_plain(comp)) {
        st->hooked = true;
    }
}

/* A destroy removes one row from every pool of its signature. */
static void count_destroy(weft__cmd_stage_t *st, const weft_world_t *world, uint32_t sig) {
    uint32_t n;
    const uint32_t *ids = weft__sig_ids(world, sig, &n);
    for (uint32_t i = 0; i < n; i++) {
        count_op(st, world->components[ids[i]]);
    }
}

weft_result_t weft__cmd_stage_scan(weft__cmd_stage_t *st, weft_world_t *world,
                                   const weft_allocator_t *alloc, const weft_cmd_t *cmd,
                                   uint64_t *map) {
    const uint32_t tag = st->epoch << 16;
    for (size_t at = 0; at < cmd->len;) {
        weft__cmd_rec_t rec;
        memcpy(&rec, cmd->data + at, sizeof rec);
        at += rec.next;
        if (rec.op == WEFT__CMD_EMIT) {
            continue; /* nothing to reserve: an event changes nothing */
        }
        if (rec.op == WEFT__CMD_CALL) {
            /* A call fends for itself, but it may read and change anything on the main
             * thread, so its phase is applied serially (the placed apply defers row
             * changes past the walk that would run it). */
            st->hooked = true;
            continue;
        }
        if (rec.op == WEFT__CMD_CREATE) {
            st->creates++;
            map[weft_entity_generation(rec.entity) - 1] = 0; /* the empty set */
            continue;
        }
        /* The target's simulated signature: a placeholder's lives in map, a real entity's in
         * sim (this dry run's epoch) or in its slot. */
        uint32_t sig, idx = 0, slot;
        bool ph = weft__cmd_is_placeholder(rec.entity);
        if (ph) {
            sig = (uint32_t)map[weft_entity_generation(rec.entity) - 1];
        } else if (!weft__entity_slot(world, rec.entity, &slot)) {
            continue; /* stale: the apply skips it too */
        } else {
            idx = weft_entity_index(rec.entity);
            sig =
                (st->sim[idx] & 0xFFFF0000u) == tag ? st->sim[idx] & 0xFFFFu : weft__slot_sig(slot);
        }
        if (sig == STAGE_DEAD) {
            continue;
        }
        uint32_t next = sig;
        weft_result_t r = WEFT_OK;
        weft__component_t *comp = rec.component ? weft__component(world, rec.component) : NULL;
        switch ((weft__cmd_op_t)rec.op) {
        case WEFT__CMD_DESTROY:
            next = STAGE_DEAD;
            st->destroys++;
            count_destroy(st, world, sig);
            if (!ph) {
                if (!grow_u32(alloc, &st->dead, &st->dead_cap, st->ndead, st->ndead + 1u)) {
                    return WEFT__FAIL(world->log, WEFT_ENOMEM, "command apply: out of memory");
                }
                st->dead[st->ndead++] = idx;
            }
            break;
        case WEFT__CMD_ADD:
        case WEFT__CMD_SET: {
            count_op(st, comp);
            bool has = sig_has(world, sig, rec.component);
            bool multi = comp->pool.multi != NULL;
            if (has && (rec.op == WEFT__CMD_SET || !multi)) {
                break; /* a write in place, or EEXIST */
            }
            if (!has) {
                r = weft__sig_step(world, sig, rec.component, false, &next);
            }
            st->rows[rec.component]++;
            if (ph) {
                st->placeholder[rec.component] = 1;
            } else if (r == WEFT_OK) {
                r = weft__pool_prepare(world, &comp->pool, idx); /* its sparse page */
            }
            break;
        }
        case WEFT__CMD_REMOVE:
            count_op(st, comp);
            if (sig_has(world, sig, rec.component)) {
                r = weft__sig_step(world, sig, rec.component, true, &next);
            }
            break;
        case WEFT__CMD_CREATE:
        case WEFT__CMD_EMIT:
        case WEFT__CMD_CALL:
            break;
        }
        if (r != WEFT_OK) {
            return r; /* reported by the core */
        }
        if (ph) {
            map[weft_entity_generation(rec.entity) - 1] = next;
        } else if (next != sig) {
            st->sim[idx] = tag | next; /* unchanged needs no entry: the slot still says it */
        }
    }
    return WEFT_OK;
}

/* Sparse pages of every index a created entity can receive: the top of the free list (LIFO),
 * the indices this apply frees, and fresh slots past the high-water mark. */
static weft_result_t placeholder_pages(const weft__cmd_stage_t *st, weft_world_t *world,
                                       weft__pool_t *pool) {
    weft_result_t r = WEFT_OK;
    uint32_t from = world->free_count > st->creates ? world->free_count - st->creates : 0;
    for (uint32_t i = from; i < world->free_count && r == WEFT_OK; i++) {
        r = weft__pool_prepare(world, pool, world->free_list[i]);
    }
    for (uint32_t i = 0; i < st->ndead && r == WEFT_OK; i++) {
        r = weft__pool_prepare(world, pool, st->dead[i]);
    }
    uint64_t first = weft_atomic_load_relaxed(&world->slot_count);
    uint64_t end = first + st->creates;
    for (uint64_t i = first; i < end && r == WEFT_OK; i = (i | WEFT__SPARSE_MASK) + 1u) {
        r = weft__pool_prepare(world, pool, (uint32_t)i); /* one call per page */
    }
    return r;
}

weft_result_t weft__cmd_stage_reserve(weft__cmd_stage_t *st, weft_world_t *world) {
    weft_result_t r = WEFT_OK;
    if (st->creates) {
        r = weft_entity_reserve(world, st->creates);
    }
    if (r == WEFT_OK && st->destroys) {
        r = weft__entity_reserve_free(world, st->destroys);
    }
    for (uint32_t c = 1; c < st->ncomp && r == WEFT_OK; c++) {
        if (!st->rows[c]) {
            continue;
        }
        weft__pool_t *pool = &weft__component(world, c)->pool;
        r = weft__pool_reserve_more(world, pool, st->rows[c]);
        if (r == WEFT_OK && pool->multi != NULL) { /* rows[c] bounds its instance adds */
            r = weft__multi_reserve(world, pool, st->rows[c]);
        }
        if (r == WEFT_OK && st->placeholder[c]) {
            r = placeholder_pages(st, world, pool);
        }
    }
    return r;
}

void weft__cmd_stage_fini(weft__cmd_stage_t *st, const weft_allocator_t *alloc) {
    weft__sched_free(alloc, st->sim, (size_t)st->sim_cap * sizeof *st->sim);
    weft__sched_free(alloc, st->dead, (size_t)st->dead_cap * sizeof *st->dead);
    st->sim = NULL;
    st->dead = NULL;
    st->sim_cap = st->dead_cap = 0;
    if (st->comp_cap) {
        weft__sched_free(alloc, st->rows, tables_bytes(st->comp_cap));
    }
    st->rows = st->per = st->first = st->touched = NULL;
    st->placeholder = NULL;
    st->comp_cap = st->ncomp = 0;
    weft__cmd_place_fini(st, alloc);
}
