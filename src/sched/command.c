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

void weft__cmd_note_stale(const weft_world_t *world, const weft_cmd_t *cmd, uint8_t op,
                          weft_entity_t e) {
    /* Documented as lenient (weft/command.h): another command destroyed it first. */
    (void)WEFT__NOTE(world->log, WEFT_ESTALE,
                     "command skipped: system %u's %s of entity 0x%llx, which is no "
                     "longer alive",
                     cmd->system, weft__cmd_op_name(op), (unsigned long long)e);
}

weft_entity_t weft__cmd_target(weft_world_t *world, weft_cmd_t *cmd, size_t at,
                               weft__cmd_rec_t *rec, const uint64_t *map) {
    uint32_t slot;
    return weft__cmd_target_slot(world, cmd, at, rec, map, &slot);
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

/* Bytes of the per-component tables for `cap` ids: rows, per, touched, placeholder, lane. */
static size_t tables_bytes(uint32_t cap) { return (size_t)cap * (3u * sizeof(uint32_t) + 2u); }

/* Grow the per-component tables to `need` entries (one block; contents not kept: each dry run
 * and placed apply starts them afresh, the lane weights from zero after a growth). False when
 * out of memory (nothing changed). */
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
    st->touched = block + 2u * (size_t)cap;
    st->placeholder = (uint8_t *)(block + 3u * (size_t)cap);
    st->lane = st->placeholder + cap;
    memset(st->per, 0, (size_t)cap * sizeof *st->per);
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

/* What one walk of the dry run over a buffer adds up. The serial dry run (split false) adds
 * rows and dead indices straight into the stage and may intern steps and make sparse pages;
 * a buffer's part of the split dry run (weft__cmd_stage_scan_split, on a worker) only looks
 * things up, sets `bail` at the first step or page that does not exist yet, and keeps its
 * rows and dead indices in its own slices until the main thread sums them. */
typedef struct scan_acc {
    weft__cmd_stage_t *st;
    weft_world_t *world;
    const weft_allocator_t *alloc;
    uint32_t tag; /* st->epoch << 16 */
    bool split;
    bool bail;
    bool hooked;
    uint32_t creates, destroys, ops;
    uint32_t *dead, ndead;   /* split: this buffer's destroyed indices */
    uint32_t *pairs, npairs; /* split: (id | placeholder << 31, rows) pairs */
    uint32_t *defer, ndefer; /* split: offsets of records on entities other buffers reach */
    uint32_t cache_key[8], cache_n[8]; /* split: rows not yet written as pairs */
} scan_acc_t;

#define SCAN_PH_BIT 0x80000000u /* in a pair's key: a created entity gains the component */

static void acc_flush(scan_acc_t *x, uint32_t k) {
    if (x->cache_n[k] != 0) {
        x->pairs[x->npairs++] = x->cache_key[k];
        x->pairs[x->npairs++] = x->cache_n[k];
        x->cache_n[k] = 0;
    }
}

/* One more row on component c (an upper bound: see weft__cmd_stage_t.rows). At most one pair
 * per row, so a buffer's pair slice of two entries per record cannot overflow. */
static void acc_row(scan_acc_t *x, uint32_t c, bool ph) {
    if (!x->split) {
        x->st->rows[c]++;
        x->st->placeholder[c] |= (uint8_t)ph;
        return;
    }
    uint32_t key = c | (ph ? SCAN_PH_BIT : 0u), k = (c ^ (ph ? 5u : 0u)) & 7u;
    if (x->cache_key[k] != key) {
        acc_flush(x, k);
        x->cache_key[k] = key;
    }
    x->cache_n[k]++;
}

static weft_result_t acc_dead(scan_acc_t *x, uint32_t idx) {
    if (x->split) {
        x->dead[x->ndead++] = idx;
        return WEFT_OK;
    }
    weft__cmd_stage_t *st = x->st;
    if (!grow_u32(x->alloc, &st->dead, &st->dead_cap, st->ndead, st->ndead + 1u)) {
        return WEFT__FAIL(x->world->log, WEFT_ENOMEM, "command apply: out of memory");
    }
    st->dead[st->ndead++] = idx;
    return WEFT_OK;
}

/* Count one pool operation on comp for the placed apply (command_place.c). */
static void count_op(scan_acc_t *x, const weft__component_t *comp) {
    x->ops++;
    x->hooked |= !weft__cmd_plain(comp);
}

/* A destroy removes one row from every pool of its signature. */
static void count_destroy(scan_acc_t *x, uint32_t sig) {
    uint32_t n;
    const uint32_t *ids = weft__sig_ids(x->world, sig, &n);
    for (uint32_t i = 0; i < n; i++) {
        count_op(x, x->world->components[ids[i]]);
    }
}

/* The signature step (split: only a cached one, else bail). */
static weft_result_t scan_step(scan_acc_t *x, uint32_t sig, uint32_t c, bool remove,
                               uint32_t *next) {
    if (!x->split) {
        return weft__sig_step(x->world, sig, c, remove, next);
    }
    x->bail |= !weft__sig_step_find(x->world, sig, c, remove, next);
    return WEFT_OK;
}

static bool has_page(const weft__pool_t *pool, uint32_t idx) {
    uint32_t p = idx >> WEFT__SPARSE_SHIFT;
    return p < pool->pages && pool->sparse[p] != NULL;
}

/* The sparse page of idx in pool, made when missing (its row is reserved with the others by
 * weft__cmd_stage_reserve). */
static weft_result_t make_page(weft_world_t *world, weft__pool_t *pool, uint32_t idx) {
    return has_page(pool, idx) ? WEFT_OK : weft__pool_prepare_page(world, pool, idx);
}

/* The sparse page of idx in pool (split: only an existing one, else bail). */
static weft_result_t scan_page(scan_acc_t *x, weft__pool_t *pool, uint32_t idx) {
    if (!x->split) {
        return make_page(x->world, pool, idx);
    }
    x->bail |= !has_page(pool, idx);
    return WEFT_OK;
}

/* Dry-run one record: follow its target's simulated signature and count what it needs. */
/* Inlined into each walk, so the serial one keeps its lookups and stores straight. */
__attribute__((always_inline)) static inline weft_result_t
scan_rec(scan_acc_t *x, const weft__cmd_rec_t *rec, uint64_t *map) {
    weft__cmd_stage_t *st = x->st;
    weft_world_t *world = x->world;
    if (rec->op == WEFT__CMD_EMIT) {
        return WEFT_OK; /* nothing to reserve: an event changes nothing */
    }
    if (rec->op == WEFT__CMD_CALL) {
        /* A call fends for itself, but it may read and change anything on the main thread,
         * so its phase is applied serially (the placed apply defers row changes past the walk
         * that would run it). */
        x->hooked = true;
        return WEFT_OK;
    }
    if (rec->op == WEFT__CMD_CREATE) {
        x->creates++;
        map[weft_entity_generation(rec->entity) - 1] = 0; /* the empty set */
        return WEFT_OK;
    }
    /* The target's simulated signature: a placeholder's lives in map, a real entity's in sim
     * (this dry run's epoch) or in its slot. */
    uint32_t sig, idx = 0, slot;
    bool ph = weft__cmd_is_placeholder(rec->entity);
    if (ph) {
        sig = (uint32_t)map[weft_entity_generation(rec->entity) - 1];
    } else if (!weft__entity_slot(world, rec->entity, &slot)) {
        return WEFT_OK; /* stale: the apply skips it too */
    } else {
        idx = weft_entity_index(rec->entity);
        sig =
            (st->sim[idx] & 0xFFFF0000u) == x->tag ? st->sim[idx] & 0xFFFFu : weft__slot_sig(slot);
    }
    if (sig == STAGE_DEAD) {
        return WEFT_OK;
    }
    uint32_t next = sig;
    weft_result_t r = WEFT_OK;
    weft__component_t *comp = rec->component ? weft__component(world, rec->component) : NULL;
    switch ((weft__cmd_op_t)rec->op) {
    case WEFT__CMD_DESTROY:
        next = STAGE_DEAD;
        x->destroys++;
        count_destroy(x, sig);
        if (!ph) {
            r = acc_dead(x, idx);
        }
        break;
    case WEFT__CMD_ADD:
    case WEFT__CMD_SET: {
        count_op(x, comp);
        bool has = weft__cmd_sig_has(world, sig, rec->component);
        bool multi = comp->pool.multi != NULL;
        if (has && (rec->op == WEFT__CMD_SET || !multi)) {
            break; /* a write in place, or EEXIST */
        }
        if (!has) {
            r = scan_step(x, sig, rec->component, false, &next);
        }
        acc_row(x, rec->component, ph);
        if (!ph && r == WEFT_OK) {
            r = scan_page(x, &comp->pool, idx);
        }
        break;
    }
    case WEFT__CMD_REMOVE:
        count_op(x, comp);
        if (weft__cmd_sig_has(world, sig, rec->component)) {
            r = scan_step(x, sig, rec->component, true, &next);
        }
        break;
    case WEFT__CMD_CREATE:
    case WEFT__CMD_EMIT:
    case WEFT__CMD_CALL:
        break;
    }
    if (r != WEFT_OK || x->bail) {
        return r; /* reported by the core; a bail is the caller's to see */
    }
    if (ph) {
        map[weft_entity_generation(rec->entity) - 1] = next;
    } else if (next != sig) {
        st->sim[idx] = x->tag | next; /* unchanged needs no entry: the slot still says it */
    }
    return WEFT_OK;
}

static void acc_init(scan_acc_t *x, weft__cmd_stage_t *st, weft_world_t *world,
                     const weft_allocator_t *alloc, bool split) {
    memset(x, 0, sizeof *x);
    x->st = st;
    x->world = world;
    x->alloc = alloc;
    x->tag = st->epoch << 16;
    x->split = split;
}

/* Add a walk's totals to the stage. */
static void acc_sum(weft__cmd_stage_t *st, const scan_acc_t *x) {
    st->creates += x->creates;
    st->destroys += x->destroys;
    st->ops += x->ops;
    st->hooked |= x->hooked;
}

weft_result_t weft__cmd_stage_scan(weft__cmd_stage_t *st, weft_world_t *world,
                                   const weft_allocator_t *alloc, const weft_cmd_t *cmd,
                                   uint64_t *map) {
    scan_acc_t x;
    acc_init(&x, st, world, alloc, false);
    weft_result_t r = WEFT_OK;
    for (size_t at = 0; at < cmd->len && r == WEFT_OK;) {
        weft__cmd_rec_t rec;
        memcpy(&rec, cmd->data + at, sizeof rec);
        at += rec.next;
        r = scan_rec(&x, &rec, map);
    }
    acc_sum(st, &x);
    return r;
}

/* ---- the split dry run ------------------------------------------------------------ >>split */

/* One buffer of the split dry run. Its slices of the stage's scratch: `defer` and `dead`
 * hold one entry per record at most, `pairs` two. */
typedef struct weft__cmd_scan_task {
    const weft_cmd_t *cmd;
    uint64_t *map;   /* its placeholders' simulated signatures */
    uint32_t *slice; /* 4 entries per record: defer, dead, pairs */
    uint32_t nrec;   /* records at most (len / header size) */
    scan_acc_t acc;
} scan_task_t;

#define OWNER_BITS 20u
#define OWNER_SHARED ((1u << OWNER_BITS) - 1u) /* reached by more than one buffer */

typedef struct split_ctx {
    weft__cmd_stage_t *st;
    weft_world_t *world;
    uint32_t slots; /* entity indices below this may be claimed */
} split_ctx_t;

/* The entity index a record acts on, or 0 for none (creates, events, calls, placeholders,
 * indices past the table: a stale target the dry run skips on any thread). */
static uint32_t rec_index(const weft__cmd_rec_t *rec, uint32_t slots) {
    if (rec->op < WEFT__CMD_DESTROY || rec->op > WEFT__CMD_REMOVE ||
        weft__cmd_is_placeholder(rec->entity)) {
        return 0;
    }
    uint32_t idx = weft_entity_index(rec->entity);
    return idx < slots ? idx : 0;
}

/* Pass 1: every buffer claims the entities its records reach; an entity two buffers claim
 * becomes shared. Relaxed: the parallel-for's end orders the claims before pass 2. */
static void split_claim(void *arg, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    const split_ctx_t *p = arg;
    weft__cmd_stage_t *st = p->st;
    const uint32_t tag = st->owner_epoch << OWNER_BITS;
    for (uint64_t b = begin; b < end; b++) {
        const weft_cmd_t *cmd = st->tasks[b].cmd;
        const uint32_t me = tag | (uint32_t)(b + 1u);
        for (size_t at = 0; at < cmd->len;) {
            weft__cmd_rec_t rec;
            memcpy(&rec, cmd->data + at, sizeof rec);
            at += rec.next;
            uint32_t idx = rec_index(&rec, p->slots);
            if (idx == 0) {
                continue;
            }
            weft_atomic_u32 *o = &st->owner[idx];
            uint32_t cur = weft_atomic_load_relaxed(o);
            while (cur != me && cur != (tag | OWNER_SHARED)) {
                uint32_t want = (cur >> OWNER_BITS) == st->owner_epoch ? tag | OWNER_SHARED : me;
                if (weft_atomic_cas_weak_relaxed(o, &cur, want)) {
                    break;
                }
            }
        }
    }
}

/* Pass 2: dry-run each buffer's records on entities it alone reaches (and its placeholders);
 * the others are left, in order, for the main thread. */
static void split_scan(void *arg, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    const split_ctx_t *p = arg;
    weft__cmd_stage_t *st = p->st;
    const uint32_t tag = st->owner_epoch << OWNER_BITS;
    for (uint64_t b = begin; b < end; b++) {
        scan_task_t *t = &st->tasks[b];
        scan_acc_t *x = &t->acc;
        const uint32_t me = tag | (uint32_t)(b + 1u);
        x->defer = t->slice;
        x->dead = t->slice + t->nrec;
        x->pairs = t->slice + 2u * (size_t)t->nrec;
        for (size_t at = 0; at < t->cmd->len && !x->bail;) {
            weft__cmd_rec_t rec;
            memcpy(&rec, t->cmd->data + at, sizeof rec);
            uint32_t idx = rec_index(&rec, p->slots);
            if (idx != 0 && weft_atomic_load_relaxed(&st->owner[idx]) != me) {
                x->defer[x->ndefer++] = (uint32_t)at;
            } else {
                (void)scan_rec(x, &rec, t->map); /* cannot fail: it allocates nothing */
            }
            at += rec.next;
        }
        for (uint32_t k = 0; k < 8u; k++) {
            acc_flush(x, k);
        }
    }
}

bool weft__cmd_stage_add(weft__cmd_stage_t *st, const weft_allocator_t *alloc,
                         const weft_cmd_t *cmd) {
    if (st->nbufs == st->bufs_cap) {
        uint32_t cap = st->bufs_cap ? st->bufs_cap * 2u : 64u;
        const weft_cmd_t **bufs = weft__sched_alloc(alloc, (size_t)cap * sizeof *bufs);
        if (bufs == NULL) {
            return false;
        }
        if (st->nbufs != 0) {
            memcpy(bufs, st->bufs, (size_t)st->nbufs * sizeof *bufs);
        }
        weft__sched_free(alloc, st->bufs, (size_t)st->bufs_cap * sizeof *bufs);
        st->bufs = bufs;
        st->bufs_cap = cap;
    }
    st->bufs[st->nbufs++] = cmd;
    return true;
}

/* Room for the split dry run of st->bufs; false when out of memory (then the serial dry run
 * runs: nothing was changed that it relies on). */
static bool split_reserve(weft__cmd_stage_t *st, const weft_allocator_t *alloc, uint32_t slots) {
    uint64_t recs = 0, created = 0;
    for (uint32_t b = 0; b < st->nbufs; b++) {
        recs += st->bufs[b]->len / sizeof(weft__cmd_rec_t);
        created += st->bufs[b]->created;
    }
    if (recs * 4u >= UINT32_MAX || created >= UINT32_MAX || st->nbufs >= OWNER_SHARED) {
        return false;
    }
    void *tasks = st->tasks, *slice = st->slice, *maps = st->maps, *owner = st->owner;
    uint32_t owner_cap = st->owner_cap;
    if (!weft__sched_scratch(alloc, &tasks, &st->tasks_cap, st->nbufs, sizeof(scan_task_t))) {
        return false;
    }
    st->tasks = tasks;
    if (!weft__sched_scratch(alloc, &slice, &st->slice_cap, (uint32_t)recs * 4u,
                             sizeof(uint32_t))) {
        return false;
    }
    st->slice = slice;
    if (!weft__sched_scratch(alloc, &maps, &st->maps_cap, (uint32_t)created + 1u,
                             sizeof(uint64_t))) {
        return false;
    }
    st->maps = maps;
    if (!weft__sched_scratch(alloc, &owner, &st->owner_cap, slots, sizeof(weft_atomic_u32))) {
        return false;
    }
    if (owner != (void *)st->owner || st->owner_cap != owner_cap) {
        st->owner = owner; /* fresh: no entry belongs to any epoch */
        for (uint32_t i = 0; i < st->owner_cap; i++) {
            weft_atomic_store_relaxed(&st->owner[i], 0u);
        }
    }
    return true;
}

weft_result_t weft__cmd_stage_scan_split(weft__cmd_stage_t *st, weft_world_t *world,
                                         const weft_allocator_t *alloc, weft_jobs_t *jobs,
                                         bool *split) {
    *split = false;
    uint32_t slots = weft_atomic_load_relaxed(&world->slot_count);
    if (jobs == NULL || st->nbufs == 0 || !split_reserve(st, alloc, slots)) {
        return WEFT_OK;
    }
    if (++st->owner_epoch >= (1u << (32u - OWNER_BITS))) {
        for (uint32_t i = 0; i < st->owner_cap; i++) {
            weft_atomic_store_relaxed(&st->owner[i], 0u);
        }
        st->owner_epoch = 1;
    }
    uint32_t *slice = st->slice;
    uint64_t *map = st->maps;
    for (uint32_t b = 0; b < st->nbufs; b++) {
        scan_task_t *t = &st->tasks[b];
        t->cmd = st->bufs[b];
        t->map = map;
        t->slice = slice;
        t->nrec = (uint32_t)(t->cmd->len / sizeof(weft__cmd_rec_t));
        acc_init(&t->acc, st, world, alloc, true);
        map += t->cmd->created;
        slice += 4u * (size_t)t->nrec;
    }
    /* Called on the main thread of a live job system: it cannot fail (see weft__cmd_place). */
    split_ctx_t ctx = {st, world, slots};
    weft_result_t r = weft_parallel_for(jobs, st->nbufs, 1, split_claim, &ctx);
    if (r == WEFT_OK) {
        r = weft_parallel_for(jobs, st->nbufs, 1, split_scan, &ctx);
    }
    weft_assert_internal(r == WEFT_OK);
    for (uint32_t b = 0; b < st->nbufs; b++) {
        if (st->tasks[b].acc.bail) {
            return WEFT_OK; /* a step or page to make: the caller restarts the stage serially */
        }
    }
    /* Sum the buffers in apply order, then dry-run the deferred records in apply order. */
    for (uint32_t b = 0; b < st->nbufs && r == WEFT_OK; b++) {
        const scan_acc_t *x = &st->tasks[b].acc;
        acc_sum(st, x);
        for (uint32_t i = 0; i < x->npairs; i += 2u) {
            uint32_t c = x->pairs[i] & ~SCAN_PH_BIT;
            st->rows[c] += x->pairs[i + 1u];
            st->placeholder[c] |= (uint8_t)(x->pairs[i] >> 31);
        }
        if (x->ndead != 0) {
            if (!grow_u32(alloc, &st->dead, &st->dead_cap, st->ndead, st->ndead + x->ndead)) {
                return WEFT__FAIL(world->log, WEFT_ENOMEM, "command apply: out of memory");
            }
            memcpy(st->dead + st->ndead, x->dead, (size_t)x->ndead * sizeof *st->dead);
            st->ndead += x->ndead;
        }
    }
    scan_acc_t serial;
    acc_init(&serial, st, world, alloc, false);
    st->deferred = 0;
    for (uint32_t b = 0; b < st->nbufs && r == WEFT_OK; b++) {
        const scan_task_t *t = &st->tasks[b];
        for (uint32_t i = 0; i < t->acc.ndefer && r == WEFT_OK; i++) {
            weft__cmd_rec_t rec;
            memcpy(&rec, t->cmd->data + t->acc.defer[i], sizeof rec);
            r = scan_rec(&serial, &rec, t->map);
        }
        st->deferred += t->acc.ndefer;
    }
    acc_sum(st, &serial);
    *split = true;
    return r;
}

/* Sparse pages of every index a created entity can receive: the top of the free list (LIFO),
 * the indices this apply frees, and fresh slots past the high-water mark. */
static weft_result_t placeholder_pages(const weft__cmd_stage_t *st, weft_world_t *world,
                                       weft__pool_t *pool) {
    weft_result_t r = WEFT_OK;
    uint32_t from = world->free_count > st->creates ? world->free_count - st->creates : 0;
    for (uint32_t i = from; i < world->free_count && r == WEFT_OK; i++) {
        r = make_page(world, pool, world->free_list[i]);
    }
    for (uint32_t i = 0; i < st->ndead && r == WEFT_OK; i++) {
        r = make_page(world, pool, st->dead[i]);
    }
    uint64_t first = weft_atomic_load_relaxed(&world->slot_count);
    uint64_t end = first + st->creates;
    for (uint64_t i = first; i < end && r == WEFT_OK; i = (i | WEFT__SPARSE_MASK) + 1u) {
        r = make_page(world, pool, (uint32_t)i); /* one call per page */
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
    st->rows = st->per = st->touched = NULL;
    st->placeholder = st->lane = NULL;
    st->comp_cap = st->ncomp = 0;
    weft__sched_free(alloc, st->bufs, (size_t)st->bufs_cap * sizeof *st->bufs);
    weft__sched_free(alloc, st->tasks, (size_t)st->tasks_cap * sizeof *st->tasks);
    weft__sched_free(alloc, st->slice, (size_t)st->slice_cap * sizeof *st->slice);
    weft__sched_free(alloc, st->maps, (size_t)st->maps_cap * sizeof *st->maps);
    weft__sched_free(alloc, st->owner, (size_t)st->owner_cap * sizeof *st->owner);
    st->bufs = NULL;
    st->tasks = NULL;
    st->slice = NULL;
    st->maps = NULL;
    st->owner = NULL;
    st->nbufs = st->bufs_cap = st->tasks_cap = st->slice_cap = st->maps_cap = st->owner_cap = 0;
    weft__cmd_place_fini(st, alloc);
}
