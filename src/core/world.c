/* world.c: world creation and destruction, the allocation helpers, the lazily created job
 * system, module finalisers and statistics.
 *
 * DESIGN
 * The world struct itself is allocated through the desc's allocator hook like everything
 * else, so heap_bytes counts it. Creation sets up the entity table and the empty signature;
 * every other structure grows on demand. Destruction runs the registered module finalisers
 * (scheduler, hierarchy, ...) in reverse order while the world is still intact, then frees
 * queries, pools, signatures, the entity table and the job system. */
#include "world.h"

#include <stdlib.h>
#include <string.h>

#include "entity.h"
#include "jobs/platform/alloc.h"
#include "jobs/platform/vmem.h"
#include "multi.h"
#include "signature.h"
#include "weft/entity.h"

/* ---- allocation (counted) ------------------------------------------------- >>alloc */

void weft__populate(void *p, size_t size) {
    size_t page = weft__vmem_page_size();
    uintptr_t from = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t to = ((uintptr_t)p + size) & ~(uintptr_t)(page - 1);
    if (to > from + page) {
        weft__vmem_populate((void *)from, to - from);
    }
}

void *weft__alloc(weft_world_t *world, size_t size, size_t align) {
    void *p = world->alloc.alloc(size, align, world->alloc.user);
    if (p != NULL) {
        world->heap_bytes += size;
    }
    return p;
}

void weft__free(weft_world_t *world, void *p, size_t size) {
    if (p == NULL) {
        return;
    }
    world->heap_bytes -= size;
    world->alloc.free(p, size, world->alloc.user);
}

/* The `counted` allocator (world.h): thread-safe, as the hook itself must be. */
static void *counted_alloc(size_t size, size_t align, void *user) {
    weft_world_t *world = user;
    void *p = world->alloc.alloc(size, align, world->alloc.user);
    if (p != NULL) {
        weft_atomic_fetch_add_relaxed(&world->hook_bytes, size);
    }
    return p;
}

static void counted_free(void *p, size_t size, void *user) {
    weft_world_t *world = user;
    if (p != NULL) {
        weft_atomic_fetch_sub_relaxed(&world->hook_bytes, size);
        world->alloc.free(p, size, world->alloc.user);
    }
}

/* ---- desc ------------------------------------------------------------------ >>desc */

#define DEFAULT_ENTITY_CAPACITY 4096u
#define DEFAULT_ENTITY_LIMIT (1u << 28)
#define MAX_ENTITY_LIMIT (1u << 31)

weft_world_desc_t weft_world_desc_resolved(const weft_world_desc_t *desc) {
    weft_world_desc_t d;
    if (desc != NULL) {
        d = *desc;
    } else {
        memset(&d, 0, sizeof d);
    }
    if (d.worker_count == 0 && d.jobs != NULL) {
        d.worker_count = weft_jobs_worker_count(d.jobs);
    } else if (d.worker_count == 0) {
        weft_jobs_desc_t jd = {.execution = d.execution};
        d.worker_count = weft_jobs_desc_resolved(&jd).worker_count;
    }
    if (d.entity_limit == 0) {
        d.entity_limit = DEFAULT_ENTITY_LIMIT;
    }
    if (d.entity_capacity == 0) {
        d.entity_capacity = DEFAULT_ENTITY_CAPACITY;
    }
    if (d.entity_capacity > d.entity_limit) {
        d.entity_capacity = d.entity_limit;
    }
    return d;
}

static weft_result_t check_desc(const weft_world_desc_t *d) {
    if (d == NULL) {
        return WEFT_OK;
    }
    const weft_logger_t *log = &d->logger;
    WEFT__CONTRACT(d->_canary == 0, log, WEFT_EINVAL,
                   "weft_world_create: desc._canary is %u (the desc was not zero-initialised)",
                   d->_canary);
    WEFT__CONTRACT((d->allocator.alloc == NULL) == (d->allocator.free == NULL), log, WEFT_EINVAL,
                   "weft_world_create: set both allocator.alloc and allocator.free, or neither");
    WEFT__CONTRACT(d->entity_limit <= MAX_ENTITY_LIMIT, log, WEFT_EINVAL,
                   "weft_world_create: entity_limit %u exceeds 2^31", d->entity_limit);
    WEFT__CONTRACT(d->execution == WEFT_EXECUTION_THREADED || d->execution == WEFT_EXECUTION_INLINE,
                   log, WEFT_EINVAL, "weft_world_create: unknown execution mode %d",
                   (int)d->execution);
    if (d->jobs != NULL) {
        /* A borrowed job system decides the workers; a desc that says otherwise is a mistake,
         * not a request weft could honour. */
        uint32_t n = weft_jobs_worker_count(d->jobs);
        WEFT__CONTRACT(d->worker_count == 0 || d->worker_count == n, log, WEFT_EINVAL,
                       "weft_world_create: worker_count %u, but desc.jobs has %u workers (leave "
                       "it 0 with desc.jobs)",
                       d->worker_count, n);
        WEFT__CONTRACT(d->execution == 0, log, WEFT_EINVAL,
                       "weft_world_create: execution is set, but desc.jobs decides it (leave it "
                       "0 with desc.jobs)");
        /* The world's main thread waits on the job system's counters and runs its
         * main_thread jobs: it has to be that system's worker 0. */
        WEFT__CONTRACT(weft_jobs_worker_index(d->jobs) == 0, log, WEFT_EINVAL,
                       "weft_world_create: desc.jobs was created on another thread; create the "
                       "world on the job system's creating thread (its worker 0)");
    }
    return WEFT_OK;
}

/* ---- create / destroy -------------------------------------------------------- >>life */

weft_result_t weft_world_create(const weft_world_desc_t *desc, weft_world_t **out) {
    if (out == NULL) {
        return WEFT__FAIL(desc ? &desc->logger : NULL, WEFT_EINVAL,
                          "weft_world_create: out is NULL");
    }
    *out = NULL;
    weft_result_t r = check_desc(desc);
    if (r != WEFT_OK) {
        return r;
    }
    weft_world_desc_t d = weft_world_desc_resolved(desc);
    weft_allocator_t alloc = weft__allocator_resolved(&d.allocator);
    weft_world_t *world = alloc.alloc(sizeof *world, _Alignof(weft_world_t), alloc.user);
    if (world == NULL) {
        return WEFT__FAIL(&d.logger, WEFT_ENOMEM, "weft_world_create: out of memory");
    }
    memset(world, 0, sizeof *world);
    world->desc = d;
    world->alloc = alloc;
    world->counted = (weft_allocator_t){counted_alloc, counted_free, world};
    world->log = &world->desc.logger;
    world->main_thread = weft__thread_token();
    world->jobs = d.jobs; /* borrowed: jobs_owned stays false */
    world->heap_bytes = sizeof *world;

    r = weft__entity_init(world);
    if (r != WEFT_OK) {
        goto fail_free_world;
    }
    r = weft__sig_init(world);
    if (r != WEFT_OK) {
        goto fail_entity;
    }
    *out = world;
    return WEFT_OK;

fail_entity:
    weft__sig_fini(world); /* frees whatever part of the tables exists */
    weft__entity_fini(world);
fail_free_world:
    alloc.free(world, sizeof *world, alloc.user);
    return r;
}

void weft_world_destroy(weft_world_t *world) {
    if (world == NULL) {
        return;
    }
    /* Modules first, newest first, while everything they may touch still exists. */
    while (world->module_count > 0) {
        world->module_count--;
        world->module_fini[world->module_count](world);
    }
    while (world->module_part_count > 0) {
        weft__module_t *m = &world->modules[--world->module_part_count];
        if (m->desc.shutdown != NULL) {
            m->desc.shutdown(world, m->desc.user);
        }
    }
    if (world->jobs != NULL && world->jobs_owned) {
        weft_jobs_destroy(world->jobs);
    }
    world->jobs = NULL;
    weft__query_free_all(world);
    for (uint32_t c = 1; c <= world->component_count; c++) {
        if (world->components[c]->resource) { /* before pool_fini, which clears the size */
            weft__free(world, world->components[c]->resource, world->components[c]->pool.size);
        }
        weft__multi_fini(world, &world->components[c]->pool);
        weft__pool_fini(world, &world->components[c]->pool);
        weft__free(world, world->components[c], sizeof(weft__component_t));
    }
    weft__component_tables_fini(world);
    weft__sig_fini(world);
    weft__entity_fini(world);
    weft_allocator_t alloc = world->alloc;
    alloc.free(world, sizeof *world, alloc.user);
}

weft_result_t weft__world_add_module_fini(weft_world_t *world, void (*fn)(weft_world_t *world)) {
    if (world->module_count >= WEFT__WORLD_MAX_MODULES) {
        return WEFT__FAIL(world->log, WEFT_ECAPACITY,
                          "weft__world_add_module_fini: %u finalisers already registered",
                          world->module_count);
    }
    world->module_fini[world->module_count++] = fn;
    return WEFT_OK;
}

/* ---- modules (weft/module.h) ------------------------------------------------ >>modules */

weft__module_t *weft__world_module(const weft_world_t *world, const char *name) {
    for (uint32_t i = 0; i < world->module_part_count; i++) {
        if (strcmp(world->modules[i].name, name) == 0) {
            return (weft__module_t *)&world->modules[i];
        }
    }
    return NULL;
}

weft_result_t weft__world_add_module(weft_world_t *world, const weft_module_desc_t *desc) {
    const size_t len = desc->name != NULL ? strlen(desc->name) : 0;
    WEFT__CONTRACT(len >= 1 && len <= WEFT_MODULE_NAME_MAX, world->log, WEFT_EINVAL,
                   "weft_module_register: name must be 1 to %u bytes", WEFT_MODULE_NAME_MAX);
    if (weft__world_module(world, desc->name) != NULL) {
        return WEFT__FAIL(world->log, WEFT_EEXIST,
                          "weft_module_register: a module called '%s' is already registered",
                          desc->name);
    }
    if (world->module_part_count >= WEFT_MODULE_MAX) {
        return WEFT__FAIL(world->log, WEFT_ECAPACITY,
                          "weft_module_register: %u modules already registered", WEFT_MODULE_MAX);
    }
    weft__module_t *m = &world->modules[world->module_part_count++];
    m->desc = *desc;
    m->desc.name = NULL; /* use m->name: the array entry may move */
    if (m->desc.archive_version == 0) {
        m->desc.archive_version = 1;
    }
    memcpy(m->name, desc->name, len + 1u);
    return WEFT_OK;
}

weft_result_t weft_module_register(weft_world_t *world, const weft_module_desc_t *desc) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_module_register: world is NULL");
    WEFT__CONTRACT(desc != NULL, world->log, WEFT_EINVAL, "weft_module_register: desc is NULL");
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(desc->_canary == 0, world->log, WEFT_EINVAL,
                   "weft_module_register: desc._canary is %u (desc not zero-initialised)",
                   desc->_canary);
    return weft__world_add_module(world, desc);
}

void *weft_module_find(const weft_world_t *world, const char *name) {
    WEFT__NONNULL(world, NULL);
    WEFT__NONNULL(name, NULL);
    const weft__module_t *m = weft__world_module(world, name);
    return m != NULL ? m->desc.user : NULL;
}

void weft__world_drop_module(weft_world_t *world, const char *name) {
    weft__module_t *m = weft__world_module(world, name);
    if (m != NULL) {
        const size_t i = (size_t)(m - world->modules);
        memmove(m, m + 1, (world->module_part_count - i - 1u) * sizeof(*m));
        world->module_part_count--;
    }
}

weft_result_t weft__owned_refuse(const weft_world_t *world, const weft__component_t *comp,
                                 const char *fn) {
    return WEFT__FAIL(world->log, WEFT_ESTATE,
                      "%s: '%s' is owned by a module and its rows are not added or removed "
                      "directly; %s",
                      fn, comp->name, comp->owned.refuse);
}

weft_result_t weft_module_own_component(weft_world_t *world, weft_component_t c,
                                        const weft_module_component_desc_t *desc) {
    WEFT__CONTRACT(world != NULL, NULL, WEFT_EINVAL, "weft_module_own_component: world is NULL");
    WEFT__MAIN_CALL(world);
    WEFT__CONTRACT(desc != NULL && desc->get != NULL && desc->refuse != NULL && desc->_canary == 0,
                   world->log, WEFT_EINVAL,
                   "weft_module_own_component: desc is NULL, lacks get or refuse, or has "
                   "_canary set");
    weft__component_t *comp = weft__component(world, c.id);
    WEFT__CONTRACT(comp != NULL && comp->pool.multi == NULL, world->log, WEFT_EINVAL,
                   "weft_module_own_component: id %u is no single-instance component", c.id);
    if (comp->pool.count != 0 || comp->pool.group != 0 || comp->owned.refuse != NULL) {
        return WEFT__FAIL(world->log, WEFT_ESTATE,
                          "weft_module_own_component: '%s' has rows, is grouped or is owned "
                          "already",
                          comp->name);
    }
    comp->owned = *desc;
    return WEFT_OK;
}

void *weft_world_alloc(weft_world_t *world, size_t size, size_t align) {
    WEFT__NONNULL(world, NULL);
    return weft__alloc(world, size, align);
}

void weft_world_free(weft_world_t *world, void *p, size_t size) {
    WEFT__NONNULL(world, );
    weft__free(world, p, size);
}

/* ---- job system ------------------------------------------------------------- >>jobs */

weft_jobs_t *weft_world_jobs(weft_world_t *world) {
    WEFT__NONNULL(world, NULL);
    if (world->jobs != NULL) {
        return world->jobs;
    }
    weft_jobs_desc_t jd = {
        .worker_count = world->desc.worker_count,
        .execution = world->desc.execution,
        .allocator = world->counted,
        .logger = world->desc.logger,
    };
    weft_jobs_t *jobs = NULL;
    if (weft_jobs_create(&jd, &jobs) != WEFT_OK) {
        return NULL;
    }
    world->jobs = jobs;
    world->jobs_owned = true;
    return jobs;
}

/* ---- stats ------------------------------------------------------------------ >>stats */

void weft_world_stats(const weft_world_t *world, weft_world_stats_t *out) {
    WEFT__NONNULL(world, );
    WEFT__NONNULL(out, );
    memset(out, 0, sizeof *out);
    out->heap_bytes =
        world->heap_bytes + weft_atomic_load_relaxed(&((weft_world_t *)world)->hook_bytes);
    out->vmem_bytes = world->slots_committed;
    out->entity_count = world->live;
    out->entity_slots = weft_atomic_load_relaxed(&((weft_world_t *)world)->slot_count);
    out->component_count = world->component_count;
    out->group_count = world->group_count;
    out->signature_count = world->sig_count;
}
