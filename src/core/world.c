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
#include "multi.h"
#include "signature.h"
#include "weft/entity.h"

/* ---- allocation (counted) ------------------------------------------------- >>alloc */

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

weft_result_t weft__world_add_module(weft_world_t *world, const weft__module_t *m) {
    if (world->module_part_count >= WEFT__WORLD_MAX_MODULES) {
        return WEFT__FAIL(world->log, WEFT_ECAPACITY,
                          "weft__world_add_module: %u modules already registered",
                          world->module_part_count);
    }
    world->modules[world->module_part_count++] = *m;
    return WEFT_OK;
}

void weft__world_drop_module(weft_world_t *world, const char *name) {
    for (uint32_t i = world->module_part_count; i-- > 0;) {
        if (strcmp(world->modules[i].name, name) == 0) {
            memmove(&world->modules[i], &world->modules[i + 1],
                    (world->module_part_count - i - 1) * sizeof(world->modules[0]));
            world->module_part_count--;
            return;
        }
    }
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
        .allocator = world->desc.allocator,
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
    out->heap_bytes = world->heap_bytes;
    out->vmem_bytes = world->slots_committed;
    out->entity_count = world->live;
    out->entity_slots = weft_atomic_load_relaxed(&((weft_world_t *)world)->slot_count);
    out->component_count = world->component_count;
    out->group_count = world->group_count;
    out->signature_count = world->sig_count;
}
