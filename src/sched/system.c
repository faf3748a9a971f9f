/* system.c: system registration (checked once), the scheduler's lifetime, the graph-derived
 * job tables, and access views for helpers. The frame itself runs in frame.c. */
#include "system.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/platform/report.h"
#include "src/core/world.h"

_Static_assert(WEFT_VIEW_MAX_WIDE >= WEFT_QUERY_MAX_TERMS + 2 * WEFT_SYSTEM_MAX_LOOKUPS,
               "a view lists every id a system may access");
_Static_assert(WEFT_SYSTEM_MAX_SETS <= WEFT_SYSTEM_MAX_ORDER,
               "system_make checks sets in its order loop");
_Static_assert(offsetof(weft__system_t, query) % 64 == 0 &&
                   offsetof(weft__system_t, tick) + sizeof(uint32_t) -
                           offsetof(weft__system_t, query) <=
                       64,
               "a system's per-frame fields share one cache line");
_Static_assert(sizeof(weft__system_t) % 64 == 0, "records in a block stay cache-line aligned");

/* ---- lifetime -------------------------------------------------------------- >>lifetime */

/* Drop the graph and everything derived from it (deps pointers, sinks, apply lists); the next
 * frame or introspection call rebuilds them. Called whenever the system list changes. */
static void free_derived(struct weft_sched *s) {
    if (!s->derived && !s->graph.block) { /* nothing built since the last drop: deps are NULL */
        s->dirty = true;
        return;
    }
    weft__graph_free(&s->graph, s->alloc);
    weft__sched_free(s->alloc, s->derived, s->derived_bytes);
    s->derived = NULL;
    s->derived_bytes = 0;
    s->gsys = NULL;
    s->dep_store = NULL;
    s->sinks = NULL;
    s->phase_sinks = NULL;
    s->apply_list = NULL;
    s->apply_first = NULL;
    s->phase_cost = NULL;
    s->flat_first = NULL;
    s->phase_steps = NULL;
    s->phase_dt = NULL;
    s->phase_flat = NULL;
    s->phase_ready = NULL;
    s->succ_store = NULL;
    s->root_store = NULL;
    s->phase_roots = NULL;
    s->phase_deferred = NULL;
    for (uint32_t i = 0; i < s->count; i++) {
        s->systems[i]->deps = NULL;
        s->systems[i]->ndeps = 0;
        s->systems[i]->succ = NULL;
        s->systems[i]->nsucc = 0;
        s->systems[i]->npreds_in = 0;
    }
    s->dirty = true;
}

/* A system's chunk tables (job descs, their arguments, command buffers; `cap` entries each)
 * live in the record while cap is 1, else share one allocation, jobs first: offset of table `t` (0, 1, 2), and the total size. */
static size_t chunk_table_at(uint32_t cap, int t) {
    size_t jobs = ((size_t)cap * sizeof(weft_job_desc_t) + 63) & ~(size_t)63;
    size_t args = ((size_t)cap * sizeof(weft__chunk_arg_t) + 63) & ~(size_t)63;
    return t == 0 ? 0 : t == 1 ? jobs : jobs + args;
}

static size_t chunk_tables_bytes(uint32_t cap) {
    return chunk_table_at(cap, 2) + (size_t)cap * sizeof(weft_cmd_t);
}

/* Free one record with its query, chunk tables and command arenas. Also the rollback path of
 * a failed registration, so every field may still be in its zeroed state. */
static void system_free(struct weft_sched *s, weft__system_t *sys) {
    if (sys->query) {
        weft__query_fini(sys->query); /* its storage stays in the block (query_slot) */
    }
    for (uint32_t c = 0; c < sys->cap; c++) {
        weft__cmd_fini(&sys->cmds[c]);
    }
    if (sys->cap > 1) {
        weft__sched_free(s->alloc, sys->jobs, chunk_tables_bytes(sys->cap));
    }
    weft__sched_free(s->alloc, sys->after, sys->after_cap * sizeof *sys->after);
    weft__sched_free(s->alloc, sys->names, sys->names ? sizeof *sys->names : 0);
    memset(sys, 0, sizeof *sys); /* the slot stays in its block for the next registration */
}

static size_t slab_bytes(uint32_t b);

/* Module finaliser: runs at world destroy while the world is still usable. */
static void sched_fini(weft_world_t *world) {
    struct weft_sched *s = world->sched;
    if (!s) {
        return;
    }
    free_derived(s);
    for (uint32_t i = 0; i < s->count; i++) {
        system_free(s, s->systems[i]);
    }
    weft__sched_free(s->alloc, s->systems, s->systems_cap * sizeof *s->systems);
    weft__sched_free(s->alloc, s->defs, s->defs_cap * sizeof *s->defs);
    weft__sched_observers_fini(s);
    weft__trace_destroy(s->trace, s->alloc);
    weft__sched_free(s->alloc, s->map, s->map_cap * sizeof *s->map);
    weft__ready_fini(s);
    weft__cmd_stage_fini(&s->stage, s->alloc);
    weft__names_fini(&s->names, s->alloc);
    for (uint32_t b = 0; b < s->nslabs; b++) {
        weft__sched_free(s->alloc, s->slabs[b], slab_bytes(b));
    }
    weft__sched_free(s->alloc, s->slabs, s->slabs_cap * sizeof *s->slabs);
    weft__sched_free(s->alloc, s->walk, s->walk_cap * sizeof *s->walk);
    weft__sched_free(s->alloc, s, sizeof *s);
    world->sched = NULL;
}

struct weft_sched *weft__sched_peek(const weft_world_t *world) {
    return world ? world->sched : NULL;
}

/* Created lazily so a world without systems pays nothing; the finaliser is registered at the
 * same time so that world destroy frees it before the pools go (our queries live there). */
struct weft_sched *weft__sched_get(weft_world_t *world) {
    if (world->sched) {
        return world->sched;
    }
    struct weft_sched *s = weft__sched_alloc(&world->counted, sizeof *s);
    if (!s) {
        (void)WEFT__FAIL(world->log, WEFT_ENOMEM, "scheduler: out of memory");
        return NULL;
    }
    memset(s, 0, sizeof *s);
    s->world = world;
    s->alloc = &world->counted; /* counted in heap_bytes (world.h) */
    s->log = world->log;
    s->workers = 1;
    s->dirty = true;
    s->resume_phase = UINT32_MAX;
    for (int k = 0; k < 2; k++) {
        s->obs_cmd[k] = (weft_cmd_t){.world = world, .alloc = s->alloc, .log = s->log};
    }
    if (weft__world_add_module_fini(world, sched_fini) != WEFT_OK) {
        weft__sched_free(&world->counted, s, sizeof *s);
        return NULL;
    }
    world->sched = s;
    return s;
}

weft_result_t weft__sched_jobs(struct weft_sched *s) {
    if (s->jobs) {
        return WEFT_OK;
    }
    s->jobs = weft_world_jobs(s->world);
    if (!s->jobs) {
        return WEFT_ENOMEM; /* reported by the world */
    }
    s->workers = weft_jobs_worker_count(s->jobs);
    return WEFT_OK;
}

const char *weft__sched_system_name(const struct weft_sched *s, uint32_t id) {
    return (s && id >= 1 && id <= s->count) ? s->systems[id - 1]->name : "?";
}

/* ---- per-chunk tables ------------------------------------------------------ >>chunks */

/* Grow the per-chunk tables of `sys` to at least n entries (doubling). Main thread only: the
 * tables are read by jobs during a frame, so they never move while one runs. Job descs are
 * complete here (fn, arg, name, tag, main_thread are fixed per chunk), so a frame only has to
 * submit them. */
weft_result_t weft__sched_reserve_chunks(struct weft_sched *s, weft__system_t *sys, uint32_t n) {
    if (n <= sys->cap) {
        return WEFT_OK;
    }
    uint32_t cap = sys->cap ? sys->cap : 1;
    while (cap < n) {
        cap *= 2;
    }
    weft_job_desc_t *jobs = &sys->job1;
    weft__chunk_arg_t *args = &sys->arg1;
    weft_cmd_t *cmds = &sys->cmd1;
    if (cap > 1) {
        uint8_t *block = weft__sched_alloc(s->alloc, chunk_tables_bytes(cap));
        if (!block) {
            return WEFT__FAIL(s->log, WEFT_ENOMEM, "system '%s': out of memory for %u chunks",
                              sys->name, n);
        }
        jobs = (weft_job_desc_t *)block;
        args = (weft__chunk_arg_t *)(block + chunk_table_at(cap, 1));
        cmds = (weft_cmd_t *)(block + chunk_table_at(cap, 2));
    }
    /* Command buffers keep their arenas: move the old ones, then set up the new ones. */
    if (sys->cap) {
        memcpy(cmds, sys->cmds, sys->cap * sizeof *cmds);
    }
    for (uint32_t c = sys->cap; c < cap; c++) {
        cmds[c] =
            (weft_cmd_t){.system = sys->id, .world = s->world, .alloc = s->alloc, .log = s->log};
    }
    for (uint32_t c = 0; c < cap; c++) {
        args[c] = (weft__chunk_arg_t){.sched = s, .sys = sys, .chunk = c};
        jobs[c] = (weft_job_desc_t){.fn = weft__sched_chunk_job,
                                    .arg = &args[c],
                                    .name = sys->name,
                                    .tag = sys->id << 16 | (c & 0xFFFFu),
                                    .main_thread = sys->desc.main_thread};
    }
    if (sys->cap > 1) {
        weft__sched_free(s->alloc, sys->jobs, chunk_tables_bytes(sys->cap));
    }
    sys->jobs = jobs;
    sys->args = args;
    sys->cmds = cmds;
    sys->cap = cap;
    return WEFT_OK;
}

/* ---- graph-derived tables --------------------------------------------------- >>derived */

/* What the graph builder reads of each system, in registration order. */
static void describe_systems(const struct weft_sched *s, weft__sched_sys_t *out) {
    for (uint32_t i = 0; i < s->count; i++) {
        const weft__system_t *sys = s->systems[i];
        out[i] = (weft__sched_sys_t){.name = sys->name,
                                     .phase = sys->desc.phase,
                                     .reads = sys->reads,
                                     .nreads = sys->nreads,
                                     .writes = sys->writes,
                                     .nwrites = sys->nwrites,
                                     .after = sys->after,
                                     .nafter = sys->nafter};
    }
}

/* Build the graph and the tables the executor reads each frame: per system the counters of its
 * reduced predecessors (so a submit is one call with a ready-made deps array), per phase its
 * sinks (what the main thread waits on) and its apply list (registration order). One block
 * holds all of it, so a rebuild is one allocation and one free. */
weft_result_t weft__sched_build(struct weft_sched *s) {
    if (!s->dirty) {
        return WEFT_OK;
    }
    free_derived(s);
    uint32_t n = s->count;
    size_t nsys_bytes = (size_t)n * sizeof(weft__sched_sys_t);
    /* deps: at most one per reduced edge; sinks: at most n; phase offsets: at most n + 1. */
    weft__sched_sys_t *gsys = weft__sched_alloc(s->alloc, nsys_bytes);
    if (!gsys) {
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "scheduler: out of memory building the graph");
    }
    weft__sched_populate(gsys, nsys_bytes); /* filled at once (registration memory, above) */
    describe_systems(s, gsys);
    weft__graph_t g;
    weft_result_t r = weft__graph_build(gsys, n, s->alloc, s->log, &g);
    weft__sched_free(s->alloc, gsys, nsys_bytes);
    if (r != WEFT_OK) {
        return r;
    }
    size_t bytes =
        nsys_bytes + (size_t)g.nedges * sizeof(weft_counter_t *) +
        2 * ((size_t)n + g.nphases + 1) * sizeof(uint32_t) +
        (size_t)g.nphases * sizeof(weft__phase_cost_t) + ((size_t)n + 1) * sizeof(uint32_t) +
        (size_t)g.nphases * (sizeof(uint32_t) + sizeof(float)) +
        (size_t)g.nedges * sizeof(uint32_t) + ((size_t)n + g.nphases + 1) * sizeof(uint32_t) +
        3 * (size_t)g.nphases * sizeof(bool);
    void *block = weft__sched_alloc(s->alloc, bytes);
    if (!block) {
        weft__graph_free(&g, s->alloc);
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "scheduler: out of memory building the graph");
    }
    weft__sched_populate(block, bytes); /* every table of it is filled below or each frame */
    s->graph = g;
    s->derived = block;
    s->derived_bytes = bytes;
    s->dep_store = block;
    s->gsys = (weft__sched_sys_t *)(s->dep_store + g.nedges);
    s->sinks = (uint32_t *)(s->gsys + n);
    s->phase_sinks = s->sinks + n;
    s->apply_list = s->phase_sinks + g.nphases + 1;
    s->apply_first = s->apply_list + n;
    /* 4-aligned like the uint32_t arrays before it; a new graph measures its phases afresh */
    s->phase_cost = (weft__phase_cost_t *)(s->apply_first + g.nphases + 1);
    memset(s->phase_cost, 0, (size_t)g.nphases * sizeof *s->phase_cost);
    s->flat_first = (uint32_t *)(s->phase_cost + g.nphases);
    s->phase_steps = s->flat_first + n + 1;
    s->phase_dt = (float *)(s->phase_steps + g.nphases);
    s->succ_store = (uint32_t *)(s->phase_dt + g.nphases);
    s->root_store = s->succ_store + g.nedges;
    s->phase_roots = s->root_store + n;
    s->phase_flat = (bool *)(s->phase_roots + g.nphases + 1);
    s->phase_ready = s->phase_flat + g.nphases;
    s->phase_deferred = s->phase_ready + g.nphases;
    describe_systems(s, s->gsys);
    for (uint32_t v = 0; v < n; v++) {
        weft__system_t *sys = s->systems[v];
        sys->deps = s->dep_store + g.pred_first[v];
        sys->ndeps = g.pred_first[v + 1] - g.pred_first[v];
        sys->nsucc = 0;
        sys->npreds_in = 0;
        for (uint32_t e = 0; e < sys->ndeps; e++) {
            sys->deps[e] = &s->systems[g.preds[g.pred_first[v] + e]]->done;
        }
    }
    /* The ready list's view (ready.h): per system its successors in its own phase, by run
     * position, and how many predecessors in its phase it waits for. */
    for (uint32_t v = 0; v < n; v++) {
        for (uint32_t e = g.pred_first[v]; e < g.pred_first[v + 1]; e++) {
            weft__system_t *u = s->systems[g.preds[e]];
            if (u->desc.phase == s->systems[v]->desc.phase) {
                u->nsucc++;
                s->systems[v]->npreds_in++;
            }
        }
    }
    uint32_t *succ = s->succ_store;
    for (uint32_t p = 0; p < n; p++) {
        weft__system_t *sys = s->systems[g.order[p]];
        sys->succ = succ;
        succ += sys->nsucc;
        sys->nsucc = 0;
    }
    for (uint32_t p = 0; p < n; p++) { /* successors in run order */
        uint32_t v = g.order[p];
        for (uint32_t e = g.pred_first[v]; e < g.pred_first[v + 1]; e++) {
            weft__system_t *u = s->systems[g.preds[e]];
            if (u->desc.phase == s->systems[v]->desc.phase) {
                u->succ[u->nsucc++] = p;
            }
        }
    }
    uint32_t at = 0;
    for (uint32_t ph = 0; ph < g.nphases; ph++) {
        s->phase_sinks[ph] = at;
        for (uint32_t p = g.phase_first[ph]; p < g.phase_first[ph + 1]; p++) {
            if (g.succ_count[g.order[p]] == 0) {
                s->sinks[at++] = p;
            }
        }
    }
    s->phase_sinks[g.nphases] = at;
    s->nsinks = at;
    /* A phase is flat when no system of it waits for another of it (edges into it from
     * earlier phases are already satisfied when it starts) and none must run on worker 0: a
     * flat phase is one parallel loop whose chunks any worker may take. */
    for (uint32_t ph = 0; ph < g.nphases; ph++) {
        bool flat = true;
        for (uint32_t p = g.phase_first[ph]; p < g.phase_first[ph + 1] && flat; p++) {
            uint32_t v = g.order[p];
            flat = !s->systems[v]->desc.main_thread;
            for (uint32_t e = g.pred_first[v]; e < g.pred_first[v + 1] && flat; e++) {
                flat = g.pos[g.preds[e]] < g.phase_first[ph];
            }
        }
        s->phase_flat[ph] = flat;
        bool pinned = false;
        for (uint32_t p = g.phase_first[ph]; p < g.phase_first[ph + 1]; p++) {
            pinned = pinned || s->systems[g.order[p]]->desc.main_thread;
        }
        s->phase_ready[ph] = !flat && !pinned;
        bool anywhere = true;
        for (uint32_t p = g.phase_first[ph]; p < g.phase_first[ph + 1]; p++) {
            anywhere = anywhere && s->systems[g.order[p]]->prep_anywhere;
        }
        s->phase_deferred[ph] = s->phase_ready[ph] && anywhere;
    }
    /* The roots of each phase (no predecessor in it), by run position: a deferred ready run
     * starts from them without reading the records (ready.h). */
    at = 0;
    for (uint32_t ph = 0; ph < g.nphases; ph++) {
        s->phase_roots[ph] = at;
        for (uint32_t p = g.phase_first[ph]; p < g.phase_first[ph + 1]; p++) {
            if (s->systems[g.order[p]]->npreds_in == 0) {
                s->root_store[at++] = p;
            }
        }
    }
    s->phase_roots[g.nphases] = at;
    /* The apply order of each phase: its systems in registration order. */
    at = 0;
    for (uint32_t ph = 0; ph < g.nphases; ph++) {
        s->apply_first[ph] = at;
        uint32_t phase = s->systems[g.order[g.phase_first[ph]]]->desc.phase;
        for (uint32_t i = 0; i < n; i++) {
            if (s->systems[i]->desc.phase == phase) {
                s->apply_list[at++] = i;
            }
        }
    }
    s->apply_first[g.nphases] = at;
    s->dirty = false;
    return WEFT_OK;
}

/* ---- registration ----------------------------------------------------------- >>register */

static const char *component_name(const weft_world_t *world, uint32_t id) {
    const weft__component_t *c = weft__component_any(world, id);
    return c ? c->name : "?";
}

/* Number of leading non-zero components in list[0..max). */
static uint32_t list_len(const weft_component_t *list, uint32_t max) {
    uint32_t n = 0;
    while (n < max && list[n].id != 0) {
        n++;
    }
    return n;
}

/* Check component ids and fill the access bitsets; the messages name system and component. */
/* Validate every component of the declaration and fill the access bitsets. Unknown ids and
 * duplicates are EINVAL; an excluded component that is also written or iterated can never be
 * seen by the system, which is always a mistake, hence ECONFLICT naming both. */
static weft_result_t check_access(weft_world_t *world, const weft_system_desc_t *d,
                                  weft__access_set_t *acc) {
    const char *who = d->name;
    uint32_t nterms;
    for (nterms = 0; nterms < WEFT_QUERY_MAX_TERMS && d->terms[nterms].component.id; nterms++) {
        uint32_t id = d->terms[nterms].component.id;
        if (!weft__component(world, id)) {
            return WEFT__FAIL(world->log, WEFT_EINVAL, "system '%s': terms[%u] names %s id %u", who,
                              nterms,
                              weft__component_any(world, id)
                                  ? "a resource (declare it in reads/writes), not a component,"
                                  : "unknown component",
                              id);
        }
        for (uint32_t j = 0; j < nterms; j++) { /* at most 16 terms: pairs are cheap */
            if (d->terms[j].component.id == id) {
                return WEFT__FAIL(world->log, WEFT_EINVAL,
                                  "system '%s': component '%s' is listed twice in terms", who,
                                  component_name(world, id));
            }
        }
        if ((unsigned)d->terms[nterms].access >= WEFT_ACCESS_COUNT) {
            return WEFT__FAIL(world->log, WEFT_EINVAL, "system '%s': terms[%u] has a bad access",
                              who, nterms);
        }
        bool added = weft__access_add(acc, id, d->terms[nterms].access == WEFT_ACCESS_WRITE);
        weft_assert_internal(added); /* terms and lookups fit WEFT_VIEW_MAX_WIDE */
        (void)added;
    }
    const weft_component_t *lists[2] = {d->reads, d->writes};
    for (int l = 0; l < 2; l++) {
        for (uint32_t i = 0; i < WEFT_SYSTEM_MAX_LOOKUPS && lists[l][i].id; i++) {
            uint32_t id = lists[l][i].id;
            if (!weft__component_any(world, id)) { /* components and resources */
                return WEFT__FAIL(world->log, WEFT_EINVAL,
                                  "system '%s': %s[%u] names unknown component id %u", who,
                                  l ? "writes" : "reads", i, id);
            }
            bool added = weft__access_add(acc, id, l == 1);
            weft_assert_internal(added);
            (void)added;
        }
    }
    for (uint32_t i = 0; i < WEFT_QUERY_MAX_EXCLUDES && d->exclude[i].id; i++) {
        uint32_t id = d->exclude[i].id;
        if (!weft__component(world, id)) {
            return WEFT__FAIL(world->log, WEFT_EINVAL,
                              "system '%s': exclude[%u] names unknown component id %u", who, i, id);
        }
        if (weft__access_has_write(acc, id)) {
            return WEFT__FAIL(world->log, WEFT_ECONFLICT,
                              "system '%s' writes component '%s' but also excludes it", who,
                              component_name(world, id));
        }
        bool iterated = false;
        for (uint32_t j = 0; j < nterms; j++) {
            iterated = iterated || d->terms[j].component.id == id;
        }
        if (iterated) {
            return WEFT__FAIL(world->log, WEFT_ECONFLICT,
                              "system '%s' iterates component '%s' but also excludes it", who,
                              component_name(world, id));
        }
    }
    return WEFT_OK;
}

static weft__system_t *find_system(const struct weft_sched *s, const char *name) {
    uint32_t n;
    const uint32_t *list = weft__names_find(&s->names, name, WEFT__NAME_MEMBER, &n);
    for (uint32_t i = 0; i < n; i++) {
        weft__system_t *t = s->systems[list[i]];
        if (!t->removed && strcmp(t->name, name) == 0) {
            return t;
        }
    }
    return NULL;
}

/* True when `name` names system t itself or a set t belongs to. */
static bool named_by(const weft__system_t *t, const char *name) {
    if (t->removed || name[0] == '\0') {
        return false;
    }
    if (strcmp(t->name, name) == 0) {
        return true;
    }
    for (uint32_t k = 0; k < WEFT_SYSTEM_MAX_SETS; k++) {
        if (strcmp(t->set_names[k], name) == 0) {
            return true;
        }
    }
    return false;
}

/* True when some registered system is a member of set `name`. */
static bool set_exists(const struct weft_sched *s, const char *name) {
    uint32_t n;
    const uint32_t *list = weft__names_find(&s->names, name, WEFT__NAME_MEMBER, &n);
    for (uint32_t i = 0; i < n; i++) {
        const weft__system_t *t = s->systems[list[i]];
        for (uint32_t k = 0; k < WEFT_SYSTEM_MAX_SETS && !t->removed; k++) {
            if (strcmp(t->set_names[k], name) == 0) {
                return true;
            }
        }
    }
    return false;
}

/* Every name of the record under its kind, in a fixed order (index, rollback and lookups
 * agree on it): own name and sets (MEMBER), before names, after names. Returns the count. */
static uint32_t record_names(weft__system_t *sys, const char **name, weft__name_kind_t *kind) {
    uint32_t n = 0;
    name[n] = sys->name;
    kind[n++] = WEFT__NAME_MEMBER;
    for (uint32_t k = 0; k < WEFT_SYSTEM_MAX_SETS; k++) {
        if (sys->set_names[k][0]) {
            name[n] = sys->set_names[k];
            kind[n++] = WEFT__NAME_MEMBER;
        }
    }
    for (uint32_t d = 0; d < 2; d++) {
        for (uint32_t i = 0; i < WEFT_SYSTEM_MAX_ORDER; i++) {
            if (sys->order_names[d][i][0]) {
                name[n] = sys->order_names[d][i];
                kind[n++] = d ? WEFT__NAME_AFTER : WEFT__NAME_BEFORE;
            }
        }
    }
    return n;
}

#define RECORD_NAMES (1 + WEFT_SYSTEM_MAX_SETS + 2 * WEFT_SYSTEM_MAX_ORDER)

/* Enter the record's names in the index; all or nothing. */
static weft_result_t index_names(struct weft_sched *s, weft__system_t *sys) {
    const char *name[RECORD_NAMES];
    weft__name_kind_t kind[RECORD_NAMES];
    uint32_t n = record_names(sys, name, kind), done = 0;
    weft_result_t r = WEFT_OK;
    for (; done < n && r == WEFT_OK; done++) {
        r = weft__names_add(&s->names, s->alloc, s->log, name[done], kind[done], sys->id - 1);
    }
    if (r != WEFT_OK) {
        for (uint32_t i = done - 1; i-- > 0;) { /* entry done - 1 failed: undo the rest */
            weft__names_drop(&s->names, name[i], kind[i], sys->id - 1);
        }
    }
    return r;
}

/* True when some before (d = 0) or after (d = 1) name of t is `name`. */
static bool lists_name(const weft__system_t *t, uint32_t d, const char *name) {
    for (uint32_t i = 0; i < WEFT_SYSTEM_MAX_ORDER; i++) {
        if (t->order_names[d][i][0] && strcmp(t->order_names[d][i], name) == 0) {
            return true;
        }
    }
    return false;
}

/* Make room for `n` entries in the registration walk stack. */
static weft_result_t walk_reserve(struct weft_sched *s, uint32_t n) {
    void *w = s->walk;
    if (!weft__sched_scratch(s->alloc, &w, &s->walk_cap, n, sizeof *s->walk)) {
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "weft_system_register: out of memory");
    }
    s->walk = w;
    return WEFT_OK;
}

/* Append idx to sys's "after" list (the caller knows it is not there yet). */
static weft_result_t add_after(struct weft_sched *s, weft__system_t *sys, uint32_t idx) {
    if (sys->nafter == sys->after_cap) {
        uint32_t cap = sys->after_cap ? sys->after_cap * 2 : 8;
        uint32_t *a = weft__sched_alloc(s->alloc, cap * sizeof *a);
        if (!a) {
            return WEFT__FAIL(s->log, WEFT_ENOMEM, "system '%s': out of memory", sys->name);
        }
        if (sys->nafter) {
            memcpy(a, sys->after, sys->nafter * sizeof *a);
        }
        weft__sched_free(s->alloc, sys->after, sys->after_cap * sizeof *sys->after);
        sys->after = a;
        sys->after_cap = cap;
    }
    sys->after[sys->nafter++] = idx;
    return WEFT_OK;
}

/* Collect into s->walk[*n..) the earlier systems the `kind` list of `name` holds that still
 * hold that name (each once: the record's visit mark is set to `mark`). */
static weft_result_t collect(struct weft_sched *s, const char *name, weft__name_kind_t kind,
                             uint32_t mark, uint32_t *n) {
    uint32_t count;
    const uint32_t *list = weft__names_find(&s->names, name, kind, &count);
    for (uint32_t i = 0; i < count; i++) {
        weft__system_t *t = s->systems[list[i]];
        bool hit = kind == WEFT__NAME_MEMBER ? named_by(t, name)
                                             : lists_name(t, kind == WEFT__NAME_AFTER, name);
        if (!hit || t->visit == mark) {
            continue;
        }
        weft_result_t r = walk_reserve(s, *n + 1);
        if (r != WEFT_OK) {
            return r;
        }
        t->visit = mark;
        s->walk[(*n)++] = list[i];
    }
    return WEFT_OK;
}

static int cmp_index(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Resolve every before/after name that involves the new system `sys` (already appended at
 * index s->count - 1, not yet in the name index): its own names against earlier systems (by
 * name or set), and earlier systems' names that name it (by name or one of its sets), through
 * the name index. Earlier systems that must run after sys get sys's index appended; sys's own
 * list gets the systems it follows in ascending index order. *nlater receives how many earlier
 * systems now follow sys (the cycle check needs only to walk when both lists are non-empty),
 * *against_phase whether one of them is in an earlier phase than sys. */
static weft_result_t resolve_order(struct weft_sched *s, weft__system_t *sys, uint32_t *nlater,
                                   bool *against_phase) {
    uint32_t me = sys->id - 1, n = 0;
    const char *own[1 + WEFT_SYSTEM_MAX_SETS];
    uint32_t nown = 0;
    own[nown++] = sys->name;
    for (uint32_t k = 0; k < WEFT_SYSTEM_MAX_SETS; k++) {
        if (sys->set_names[k][0]) {
            own[nown++] = sys->set_names[k];
        }
    }
    /* Systems that run after sys: named by its before list, or naming it in their after list. */
    uint32_t mark = ++s->walk_no;
    weft_result_t r = WEFT_OK;
    for (uint32_t i = 0; i < WEFT_SYSTEM_MAX_ORDER && r == WEFT_OK; i++) {
        if (sys->order_names[0][i][0]) {
            r = collect(s, sys->order_names[0][i], WEFT__NAME_MEMBER, mark, &n);
        }
    }
    for (uint32_t k = 0; k < nown && r == WEFT_OK; k++) {
        r = collect(s, own[k], WEFT__NAME_AFTER, mark, &n);
    }
    *against_phase = false;
    for (uint32_t i = 0; i < n && r == WEFT_OK; i++) {
        r = add_after(s, s->systems[s->walk[i]], me);
        *against_phase |= s->systems[s->walk[i]]->desc.phase < sys->desc.phase;
    }
    *nlater = n;
    if (r != WEFT_OK) {
        return r;
    }
    /* Systems sys runs after: named by its after list, or naming it in their before list. */
    n = 0;
    mark = ++s->walk_no;
    for (uint32_t i = 0; i < WEFT_SYSTEM_MAX_ORDER && r == WEFT_OK; i++) {
        if (sys->order_names[1][i][0]) {
            r = collect(s, sys->order_names[1][i], WEFT__NAME_MEMBER, mark, &n);
        }
    }
    for (uint32_t k = 0; k < nown && r == WEFT_OK; k++) {
        r = collect(s, own[k], WEFT__NAME_BEFORE, mark, &n);
    }
    if (n > 1) {
        qsort(s->walk, n, sizeof *s->walk, cmp_index);
    }
    for (uint32_t i = 0; i < n && r == WEFT_OK; i++) {
        r = add_after(s, sys, s->walk[i]);
    }
    return r;
}

/* Whether the constraints the new system `sys` brought close a cycle or go against the phase
 * order. The schedule was valid before, so a new cycle passes through sys: walk what sys
 * must run after and look for sys. O(constraints reached) instead of a check of every
 * system (`bad`: resolve_order already found a follower in an earlier phase). The rare
 * failure is then reported by the full check (weft__sched_check_cycles),
 * which names the systems the same way for every caller. */
static weft_result_t check_new_order(struct weft_sched *s, weft__system_t *sys, uint32_t nlater,
                                     bool bad) {
    uint32_t me = sys->id - 1;
    for (uint32_t i = 0; i < sys->nafter && !bad; i++) {
        bad = s->systems[sys->after[i]]->desc.phase > sys->desc.phase;
    }
    if (!bad && nlater > 0 && sys->nafter > 0) {
        uint32_t mark = ++s->walk_no, top = 0;
        weft_result_t r = walk_reserve(s, sys->nafter);
        if (r != WEFT_OK) {
            return r;
        }
        for (uint32_t i = 0; i < sys->nafter; i++) {
            s->walk[top++] = sys->after[i];
        }
        while (top > 0 && !bad) {
            uint32_t u = s->walk[--top];
            weft__system_t *t = s->systems[u];
            bad = u == me;
            if (bad || t->visit == mark) {
                continue;
            }
            t->visit = mark;
            r = walk_reserve(s, top + t->nafter);
            if (r != WEFT_OK) {
                return r;
            }
            for (uint32_t i = 0; i < t->nafter; i++) {
                s->walk[top++] = t->after[i];
            }
        }
    }
    if (!bad) {
        return WEFT_OK;
    }
    weft__sched_sys_t *tmp = weft__sched_alloc(s->alloc, s->count * sizeof *tmp);
    if (!tmp) {
        return WEFT__FAIL(s->log, WEFT_ENOMEM, "weft_system_register: out of memory");
    }
    for (uint32_t i = 0; i < s->count; i++) {
        tmp[i] = (weft__sched_sys_t){.name = s->systems[i]->name,
                                     .phase = s->systems[i]->desc.phase,
                                     .after = s->systems[i]->after,
                                     .nafter = s->systems[i]->nafter};
    }
    weft_result_t r = weft__sched_check_cycles(tmp, s->count, s->alloc, s->log);
    weft__sched_free(s->alloc, tmp, s->count * sizeof *tmp);
    return r;
}

/* Copy a name into fixed storage; false when it does not fit or is empty. */
static bool copy_name(char *dst, const char *src) {
    size_t len = strlen(src);
    if (len == 0 || len > WEFT_SYSTEM_NAME_MAX) {
        return false;
    }
    memcpy(dst, src, len + 1);
    return true;
}

static weft_result_t check_desc(weft_world_t *world, const weft_system_desc_t *d) {
    WEFT__CONTRACT(d != NULL, world->log, WEFT_EINVAL, "weft_system_register: desc is NULL");
    WEFT__CONTRACT(d->_canary == 0, world->log, WEFT_EINVAL,
                   "weft_system_register: desc._canary != 0 (desc not zero-initialised?)");
    WEFT__CONTRACT(d->name && d->name[0] && strlen(d->name) <= WEFT_SYSTEM_NAME_MAX, world->log,
                   WEFT_EINVAL, "weft_system_register: name must be 1..%d bytes",
                   WEFT_SYSTEM_NAME_MAX);
    WEFT__CONTRACT(d->fn != NULL, world->log, WEFT_EINVAL,
                   "weft_system_register: system '%s' has no fn", d->name);
    for (uint32_t k = 0; k < WEFT_SYSTEM_MAX_SETS; k++) {
        WEFT__CONTRACT(!d->sets[k] || (d->sets[k][0] && strlen(d->sets[k]) <= WEFT_SYSTEM_NAME_MAX),
                       world->log, WEFT_EINVAL,
                       "weft_system_register: system '%s': bad sets[%u] name", d->name, k);
    }
    for (uint32_t i = 0; i < WEFT_SYSTEM_MAX_ORDER; i++) {
        const char *names[2] = {d->before[i], d->after[i]};
        for (int k = 0; k < 2; k++) {
            WEFT__CONTRACT(!names[k] || (names[k][0] && strlen(names[k]) <= WEFT_SYSTEM_NAME_MAX),
                           world->log, WEFT_EINVAL,
                           "weft_system_register: system '%s': bad %s[%u] name", d->name,
                           k ? "after" : "before", i);
        }
    }
    return WEFT_OK;
}

/* The record slot of registration index `idx` (at most one past the last block), or NULL
 * when its block cannot be allocated. Blocks of records instead of one allocation each: the
 * 64-byte aligned allocations of thousands of large records fragment the allocator's free
 * lists, and registration time grew with the number of systems. */
/* Records in block b and the registration index of its first. */
static uint32_t slab_records(uint32_t b) {
    return b < 5 ? WEFT__SYSTEM_SLAB_FIRST << b : WEFT__SYSTEM_SLAB_MAX;
}

_Static_assert(WEFT__SYSTEM_SLAB_FIRST << 4 == WEFT__SYSTEM_SLAB_MAX,
               "slab_records doubles for 5 blocks");

#define SLAB_DOUBLING_RECORDS (WEFT__SYSTEM_SLAB_FIRST * 31u) /* blocks 0..4 */

static uint32_t slab_of(uint32_t idx, uint32_t *first) {
    if (idx < SLAB_DOUBLING_RECORDS) {
        uint32_t b = 31u - (uint32_t)__builtin_clz(idx / WEFT__SYSTEM_SLAB_FIRST + 1u);
        *first = WEFT__SYSTEM_SLAB_FIRST * ((1u << b) - 1u);
        return b;
    }
    uint32_t b = 5u + (idx - SLAB_DOUBLING_RECORDS) / WEFT__SYSTEM_SLAB_MAX;
    *first = SLAB_DOUBLING_RECORDS + (b - 5u) * WEFT__SYSTEM_SLAB_MAX;
    return b;
}

/* A query slot's bytes (64-aligned like the record). */
static size_t query_slot_bytes(void) { return (weft__query_bytes() + 63) & ~(size_t)63; }

static size_t slab_bytes(uint32_t b) {
    return slab_records(b) * (sizeof(weft__system_t) + query_slot_bytes());
}

/* The query slot of the record at registration index idx (its block exists). */
static void *query_slot(const struct weft_sched *s, uint32_t idx) {
    uint32_t first, b = slab_of(idx, &first);
    return (uint8_t *)s->slabs[b] + slab_records(b) * sizeof(weft__system_t) +
           (idx - first) * query_slot_bytes();
}

static weft__system_t *record_slot(struct weft_sched *s, uint32_t idx) {
    uint32_t first, b = slab_of(idx, &first);
    if (b == s->nslabs) {
        if (s->nslabs == s->slabs_cap) {
            uint32_t cap = s->slabs_cap ? s->slabs_cap * 2 : 4;
            weft__system_t **a = weft__sched_alloc(s->alloc, cap * sizeof *a);
            if (!a) {
                return NULL;
            }
            if (s->nslabs) {
                memcpy(a, s->slabs, s->nslabs * sizeof *a);
            }
            weft__sched_free(s->alloc, s->slabs, s->slabs_cap * sizeof *s->slabs);
            s->slabs = a;
            s->slabs_cap = cap;
        }
        s->slabs[b] = weft__sched_alloc(s->alloc, slab_bytes(b));
        if (!s->slabs[b]) {
            return NULL;
        }
        weft__sched_populate(s->slabs[b], slab_bytes(b));
        s->nslabs++;
    }
    return &s->slabs[b][idx - first];
}

/* Build the record (not yet linked into the scheduler). */
/* The record keeps private copies of every string of the desc (names may live on the
 * caller's stack) and creates the system's query once, so a frame never re-validates. */
static weft_result_t system_make(struct weft_sched *s, const weft_system_desc_t *d,
                                 weft__system_t **out) {
    weft_world_t *world = s->world;
    weft__system_t *sys = record_slot(s, s->count);
    if (!sys) {
        return WEFT__FAIL(world->log, WEFT_ENOMEM, "system '%s': out of memory", d->name);
    }
    memset(sys, 0, sizeof *sys);
    weft_counter_init(&sys->done);
    sys->desc = (weft__system_conf_t){.phase = d->phase,
                                      .parallel = d->parallel,
                                      .main_thread = d->main_thread,
                                      .run_if = d->run_if,
                                      .run_if_user = d->run_if_user};
    (void)copy_name(sys->name, d->name);
    static weft__system_names_t no_names; /* never written: only records with names write */
    bool named = false;
    for (uint32_t i = 0; i < WEFT_SYSTEM_MAX_ORDER; i++) {
        named = named || d->before[i] || d->after[i] || (i < WEFT_SYSTEM_MAX_SETS && d->sets[i]);
    }
    if (named) {
        sys->names = weft__sched_alloc(s->alloc, sizeof *sys->names);
        if (!sys->names) {
            return WEFT__FAIL(world->log, WEFT_ENOMEM, "system '%s': out of memory", d->name);
        }
        memset(sys->names, 0, sizeof *sys->names);
    }
    sys->order_names = named ? sys->names->order : no_names.order;
    sys->set_names = named ? sys->names->sets : no_names.sets;
    for (uint32_t i = 0; i < WEFT_SYSTEM_MAX_ORDER; i++) {
        if (d->before[i]) {
            (void)copy_name(sys->order_names[0][i], d->before[i]);
        }
        if (d->after[i]) {
            (void)copy_name(sys->order_names[1][i], d->after[i]);
        }
    }
    for (uint32_t k = 0; k < WEFT_SYSTEM_MAX_SETS; k++) {
        if (d->sets[k]) {
            (void)copy_name(sys->set_names[k], d->sets[k]);
        }
    }
    sys->fn = d->fn;
    sys->user = d->user;
    sys->id = s->count + 1;
    sys->enabled = !d->disabled;
    /* Prepared by whichever worker runs it (ready.h) only when that cannot fail nor touch
     * another system's state: one chunk, so no table to grow, and no change filter, whose
     * window moves at prepare. */
    sys->prep_anywhere = !d->parallel;
    for (uint32_t t = 0; t < WEFT_QUERY_MAX_TERMS && d->terms[t].component.id; t++) {
        sys->prep_anywhere = sys->prep_anywhere && d->terms[t].filter == WEFT_CHANGE_NONE;
    }
    sys->split_above = !d->parallel    ? UINT32_MAX
                       : d->chunk_size ? d->chunk_size
                                       : WEFT_SYSTEM_CHUNK_DEFAULT;
    sys->access.world = world;
    sys->access.system = sys->name;
    weft_result_t r = check_access(world, d, &sys->access);
    for (sys->term_count = 0;
         sys->term_count < WEFT_QUERY_MAX_TERMS && d->terms[sys->term_count].component.id;) {
        sys->term_count++;
    }
    if (r == WEFT_OK && sys->term_count > 0) {
        weft_query_desc_t qd = {0};
        memcpy(qd.terms, d->terms, (size_t)sys->term_count * sizeof qd.terms[0]);
        uint32_t nx = list_len(d->exclude, WEFT_QUERY_MAX_EXCLUDES);
        memcpy(qd.exclude, d->exclude, (size_t)nx * sizeof qd.exclude[0]);
        r = weft__query_create_at(world, &qd, query_slot(s, s->count), &sys->query);
    }
    if (r == WEFT_OK) {
        r = weft__sched_reserve_chunks(s, sys, 1);
    }
    if (r != WEFT_OK) {
        system_free(s, sys);
        return r;
    }
    /* Sorted id lists for the graph (ascending by construction): write wins over read. */
    const weft__access_set_t *acc = &sys->access;
    for (uint32_t w = 0; w < WEFT_VIEW_BITSET_IDS / 64; w++) {
        for (uint64_t bits = acc->read[w] | acc->write[w]; bits != 0; bits &= bits - 1u) {
            uint32_t id = w * 64u + (uint32_t)__builtin_ctzll(bits);
            if ((acc->write[w] >> (id & 63u)) & 1u) {
                sys->writes[sys->nwrites++] = id;
            } else {
                sys->reads[sys->nreads++] = id;
            }
        }
    }
    for (uint32_t i = 0; i < acc->nwide; i++) { /* ascending, all above the bitsets */
        if (acc->wide[i] & 1u) {
            sys->writes[sys->nwrites++] = acc->wide[i] >> 1;
        } else {
            sys->reads[sys->nreads++] = acc->wide[i] >> 1;
        }
    }
    *out = sys;
    return WEFT_OK;
}

/* Whether a system needs a decision each frame (frame.c: decide_phase). */
static bool is_gated(const weft__system_t *t) { return !t->enabled || t->desc.run_if != NULL; }

weft_result_t weft_system_register(weft_world_t *world, const weft_system_desc_t *desc,
                                   weft_system_t *out) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_system_register: world is NULL");
    weft_result_t r = check_desc(world, desc);
    if (r != WEFT_OK) {
        return r;
    }
    struct weft_sched *s = weft__sched_get(world);
    if (!s) {
        return WEFT_ENOMEM;
    }
    WEFT__CONTRACT(!s->running, s->log, WEFT_ESTATE,
                   "weft_system_register: called during weft_world_progress");
    if (find_system(s, desc->name) || set_exists(s, desc->name)) {
        return WEFT__FAIL(s->log, WEFT_EEXIST,
                          "weft_system_register: a system or system set named '%s' already "
                          "exists",
                          desc->name);
    }
    for (uint32_t k = 0; k < WEFT_SYSTEM_MAX_SETS; k++) {
        if (desc->sets[k] &&
            (find_system(s, desc->sets[k]) || !strcmp(desc->sets[k], desc->name))) {
            return WEFT__FAIL(s->log, WEFT_EEXIST,
                              "weft_system_register: system '%s': set name '%s' is a system's "
                              "name",
                              desc->name, desc->sets[k]);
        }
    }
    weft_system_desc_t resolved = *desc;
    if (desc->phase_name) {
        const weft__phase_def_t *def = NULL;
        for (uint32_t k = 0; k < s->ndefs && !def; k++) {
            def = strcmp(s->defs[k].name, desc->phase_name) == 0 ? &s->defs[k] : NULL;
        }
        if (!def || (desc->phase != 0 && desc->phase != def->phase)) {
            return WEFT__FAIL(s->log, WEFT_EINVAL,
                              "weft_system_register: system '%s': phase_name '%s' %s", desc->name,
                              desc->phase_name,
                              def ? "names another phase than desc.phase"
                                  : "is not a defined phase (weft_phase_define)");
        }
        resolved.phase = def->phase;
    }
    desc = &resolved;
    if (s->count == UINT16_MAX) {
        return WEFT__FAIL(s->log, WEFT_ECAPACITY, "weft_system_register: too many systems");
    }
    if (s->count == s->systems_cap) {
        uint32_t cap = s->systems_cap ? s->systems_cap * 2 : 16;
        weft__system_t **a = weft__sched_alloc(s->alloc, cap * sizeof *a);
        if (!a) {
            return WEFT__FAIL(s->log, WEFT_ENOMEM, "weft_system_register: out of memory");
        }
        if (s->count) {
            memcpy(a, s->systems, s->count * sizeof *a);
        }
        weft__sched_free(s->alloc, s->systems, s->systems_cap * sizeof *s->systems);
        s->systems = a;
        s->systems_cap = cap;
    }
    weft__system_t *sys = NULL;
    r = system_make(s, desc, &sys);
    if (r != WEFT_OK) {
        return r;
    }
    /* Link it, resolve names, check cycles, index its names. Earlier systems only ever gain
     * the new index in their "after" lists here, so a failure is undone by removing that
     * index again. */
    s->systems[s->count++] = sys;
    uint32_t nlater = 0;
    bool against_phase = false;
    r = resolve_order(s, sys, &nlater, &against_phase);
    if (r == WEFT_OK) {
        r = check_new_order(s, sys, nlater, against_phase);
    }
    if (r == WEFT_OK) {
        r = index_names(s, sys);
    }
    if (r != WEFT_OK) {
        uint32_t me = sys->id - 1;
        for (uint32_t j = 0; j < me; j++) {
            weft__system_t *t = s->systems[j];
            uint32_t kept = 0;
            for (uint32_t k = 0; k < t->nafter; k++) {
                if (t->after[k] != me) {
                    t->after[kept++] = t->after[k];
                }
            }
            t->nafter = kept;
        }
        s->count--;
        system_free(s, sys);
        return r;
    }
    free_derived(s);
    weft__sched_drop_suspended(s); /* its phase indices belong to the old graph */
    s->gated += is_gated(sys);
    if (out) {
        *out = (weft_system_t){sys->id};
    }
    weft__sched_auto_replan(world);
    return WEFT_OK;
}

weft_system_t weft_system_lookup(const weft_world_t *world, const char *name) {
    WEFT__NONNULL(world, (weft_system_t){0});
    const struct weft_sched *s = weft__sched_peek(world);
    const weft__system_t *sys = (s && name) ? find_system(s, name) : NULL;
    return (weft_system_t){sys ? sys->id : 0};
}

/* The registered (not unregistered) system behind `sys`, or NULL. */
static weft__system_t *registered(const struct weft_sched *s, weft_system_t sys) {
    if (!s || sys.id < 1 || sys.id > s->count || s->systems[sys.id - 1]->removed) {
        return NULL;
    }
    return s->systems[sys.id - 1];
}

const char *weft_system_name(const weft_world_t *world, weft_system_t sys) {
    WEFT__NONNULL(world, NULL);
    const weft__system_t *r = registered(weft__sched_peek(world), sys);
    return r ? r->name : NULL;
}

uint32_t weft_system_count(const weft_world_t *world) {
    WEFT__NONNULL(world, 0);
    const struct weft_sched *s = weft__sched_peek(world);
    return s ? s->count : 0;
}

/* ---- system control -------------------------------------------------------- >>control */

/* The registered system `sys` of a world between frames, for a control call named `fn`;
 * NULL with *r set otherwise. */
static weft__system_t *controlled(weft_world_t *world, weft_system_t sys, const char *fn,
                                  weft_result_t *r) {
    struct weft_sched *s = weft__sched_peek(world);
    weft__system_t *t = registered(s, sys);
    if (s && s->running) {
        *r = WEFT__FAIL(s->log, WEFT_ESTATE, "%s: called during weft_world_progress", fn);
        return NULL;
    }
    if (!t) {
        *r = WEFT__FAIL(world->log, WEFT_ESTALE, "%s: system id %u is not a registered system", fn,
                        sys.id);
        return NULL;
    }
    *r = WEFT_OK;
    return t;
}

weft_result_t weft_system_enable(weft_world_t *world, weft_system_t sys, bool enabled) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    WEFT__MAIN_CALL(world);
    weft_result_t r;
    weft__system_t *t = controlled(world, sys, "weft_system_enable", &r);
    if (t) {
        world->sched->gated -= is_gated(t);
        t->enabled = enabled;
        world->sched->gated += is_gated(t);
    }
    return r;
}

bool weft_system_is_enabled(const weft_world_t *world, weft_system_t sys) {
    WEFT__NONNULL(world, false);
    const weft__system_t *t = registered(weft__sched_peek(world), sys);
    return t && t->enabled;
}

bool weft_system_is_main_thread(const weft_world_t *world, weft_system_t sys) {
    WEFT__NONNULL(world, false);
    const weft__system_t *t = registered(weft__sched_peek(world), sys);
    return t && t->desc.main_thread;
}

/* The record stays (ids are never reused) as an inert node: no access, no constraints, no
 * query, never run; its name and the constraints naming it are released. */
weft_result_t weft_system_unregister(weft_world_t *world, weft_system_t sys) {
    WEFT__NONNULL(world, WEFT_EINVAL);
    WEFT__MAIN_CALL(world);
    weft_result_t r;
    weft__system_t *t = controlled(world, sys, "weft_system_unregister", &r);
    if (!t) {
        return r;
    }
    struct weft_sched *s = world->sched;
    uint32_t me = t->id - 1;
    for (uint32_t j = 0; j < s->count; j++) {
        weft__system_t *o = s->systems[j];
        uint32_t kept = 0;
        for (uint32_t k = 0; k < o->nafter; k++) {
            if (o->after[k] != me) {
                o->after[kept++] = o->after[k];
            }
        }
        o->nafter = kept;
    }
    s->gated -= is_gated(t);
    t->removed = true;
    t->enabled = false;
    s->gated += is_gated(t);
    t->nafter = 0;
    t->nreads = 0;
    t->nwrites = 0;
    t->desc.main_thread = false;
    if (t->names) {
        memset(t->names, 0, sizeof *t->names);
    }
    if (t->query) {
        weft__query_fini(t->query); /* it would otherwise follow every structural change */
        t->query = NULL;
    }
    free_derived(s);
    weft__sched_drop_suspended(s); /* its pending commands belong to the old schedule */
    weft__sched_auto_replan(world);
    return WEFT_OK;
}

/* ---- views ------------------------------------------------------------------- >>view */

/* Narrowing is checked against the source view, so a helper can narrow further but never
 * widen: a sub-view is always a subset of the system's declaration. */
weft_result_t weft_view_narrow(const weft_view_t *from, const weft_component_t *reads,
                               uint32_t nreads, const weft_component_t *writes, uint32_t nwrites,
                               weft_view_t *out) {
    WEFT__NONNULL(from, WEFT_EINVAL);
    WEFT__CONTRACT(from && out && (reads || !nreads) && (writes || !nwrites), NULL, WEFT_EINVAL,
                   "weft_view_narrow: NULL argument");
    weft_view_t v = {.world = from->world, .system = from->system};
    for (uint32_t i = 0; i < nreads; i++) {
        WEFT__CONTRACT(weft_view_can_read(from, reads[i]), NULL, WEFT_EACCESS,
                       "weft_view_narrow: system '%s' may not read component id %u",
                       from->system ? from->system : "?", reads[i].id);
        bool added = weft__access_add(&v, reads[i].id, false);
        weft_assert_internal(added); /* a subset of `from`, which fits */
        (void)added;
    }
    for (uint32_t i = 0; i < nwrites; i++) {
        WEFT__CONTRACT(weft_view_can_write(from, writes[i]), NULL, WEFT_EACCESS,
                       "weft_view_narrow: system '%s' may not write component id %u",
                       from->system ? from->system : "?", writes[i].id);
        bool added = weft__access_add(&v, writes[i].id, true);
        weft_assert_internal(added);
        (void)added;
    }
    *out = v;
    return WEFT_OK;
}

/* The view's access set is published for the call, so the core's debug checks (which read
 * the thread's current set) enforce the narrowed view and name the system. Release builds
 * compile the checks out, so there is nothing to publish. */
void weft_view_run(const weft_view_t *view, void (*fn)(const weft_view_t *view, void *arg),
                   void *arg) {
    WEFT__NONNULL(view, );
    WEFT__NONNULL(fn, );
#if WEFT_DEBUG >= 1
    weft__access_set_t set;
    memcpy(&set, view, sizeof set);
    const weft__access_set_t *prev = weft__access_enter(&set);
    fn(view, arg);
    weft__access_leave(prev);
#else
    fn(view, arg);
#endif /* WEFT_DEBUG */
}
