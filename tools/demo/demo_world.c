/* tools/demo/demo_world.c: builds the demo world (components, entities, hierarchy, systems),
 * runs frames and hashes the state (see demo_world.h).
 *
 * DESIGN: creation is a fixed sequence of main-thread calls driven by one seeded generator, so
 * two worlds built from the same config are identical before the first frame — the condition
 * for comparing their hashes after N frames at different worker counts. Entities are created
 * in batches with weft_entity_create_n and filled with weft_component_set; pools are reserved
 * first so the build does not reallocate a million-row pool a dozen times. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "demo_internal.h"
#include "weft/entity.h"
#include "weft/system.h"

#define BATCH 4096u /* entities created per weft_entity_create_n call */

typedef struct rng {
    uint64_t s; /* splitmix64 state */
} rng_t;

static uint64_t rng_next(rng_t *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float rng_float(rng_t *r, float lo, float hi) {
    return lo + (hi - lo) * (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

/* ---- components ----------------------------------------------------------- >>components */

static weft_result_t reg(weft_world_t *w, const char *name, size_t size, weft_component_t *out) {
    return weft_component_register(w, &(weft_component_desc_t){.name = name, .size = size}, out);
}

static weft_result_t register_components(demo_world_t *d) {
    demo_components_t *c = &d->c;
    weft_world_t *w = d->world;
    weft_result_t r = WEFT_OK;
    r = r ? r : reg(w, "Position", sizeof(weft_vec3_t), &c->position);
    r = r ? r : reg(w, "Velocity", sizeof(weft_vec3_t), &c->velocity);
    r = r ? r : reg(w, "Radius", sizeof(float), &c->radius);
    r = r ? r : reg(w, "Bounds", sizeof(demo_bounds_t), &c->bounds);
    r = r ? r : reg(w, "Visible", sizeof(uint32_t), &c->visible);
    r = r ? r : reg(w, "Cell", sizeof(uint32_t), &c->cell);
    r = r ? r : reg(w, "Crowding", sizeof(float), &c->crowding);
    r = r ? r : reg(w, "Health", sizeof(float), &c->health);
    r = r ? r : reg(w, "State", sizeof(demo_state_c_t), &c->state);
    r = r ? r : reg(w, "Lifetime", sizeof(float), &c->lifetime);
    r = r ? r : reg(w, "Emitter", sizeof(demo_emitter_t), &c->emitter);
    r = r ? r : reg(w, "Carrier", 0, &c->carrier);
    r = r ? r : reg(w, "Mount", sizeof(demo_mount_t), &c->mount);
    r = r ? r : reg(w, "Particle", 0, &c->particle);
    r = r ? r : reg(w, "GridPartials", sizeof(demo_grid_partials_t), &c->grid_partials);
    r = r ? r : reg(w, "Density", sizeof(demo_density_t), &c->density);
    r = r ? r : reg(w, "StatsPartials", sizeof(demo_stats_partials_t), &c->stats_partials);
    r = r ? r : reg(w, "Stats", sizeof(demo_stats_partial_t), &c->stats);
    /* No group over Position and Velocity: every entity that has one gets the other in the
     * same call sequence (add_body, spawn_particle) and a destroy swap-removes both rows, so
     * the two pools stay in step and movement reads them as columns anyway (weft/query.h),
     * while a grouped one would keep every phase's command apply on the main thread (only
     * commands on components in no group may be applied placed: weft/command.h). */
    r = r ? r : weft_hier_components(w, &c->hier);
    return r;
}

/* ---- entities ------------------------------------------------------------- >>entities */

static weft_result_t set(demo_world_t *d, weft_entity_t e, weft_component_t c, const void *v) {
    return weft_component_set(d->world, e, c, v);
}

/* The body every moving thing shares: position, velocity, radius, bounds, visibility, cell. */
static weft_result_t add_body(demo_world_t *d, weft_entity_t e, weft_vec3_t p, weft_vec3_t v,
                              float radius) {
    const demo_components_t *c = &d->c;
    demo_bounds_t b = demo_sphere_bounds(p, radius);
    uint32_t zero = 0;
    weft_result_t r = set(d, e, c->position, &p);
    r = r ? r : set(d, e, c->velocity, &v);
    r = r ? r : set(d, e, c->radius, &radius);
    r = r ? r : set(d, e, c->bounds, &b);
    r = r ? r : set(d, e, c->visible, &zero);
    r = r ? r : set(d, e, c->cell, &zero);
    return r;
}

/* A carrier's mount subtree: two children at +-3 along x, each with one grandchild 2 further
 * out. Attach keeps a node where it is in the world (the link stores the parent's inverse
 * world matrix), so each local transform is given in world space at attach time: the carrier
 * sits at `at` with no rotation, and a fresh node's world matrix is its local one. */
static weft_result_t add_mounts(demo_world_t *d, weft_entity_t carrier, weft_vec3_t at, rng_t *g) {
    const demo_components_t *c = &d->c;
    weft_entity_t es[4];
    weft_result_t r = weft_entity_create_n(d->world, 4, es);
    for (uint32_t k = 0; k < 4 && r == WEFT_OK; k++) {
        bool child = k < 2;
        demo_mount_t m = {.spin = rng_float(g, -3.0f, 3.0f),
                          .radius = child ? 1.5f : 0.75f,
                          .offset = (k % 2 ? -1.0f : 1.0f) * (child ? 3.0f : 2.0f)};
        weft_transform_t local = weft_transform_identity();
        local.position = at;
        local.position.x += child ? m.offset : m.offset * 2.5f; /* grandchild: 3 + 2 out */
        uint32_t zero = 0;
        demo_bounds_t b = {{0, 0, 0}, {0, 0, 0}};
        weft_entity_t parent = child ? carrier : es[k - 2];
        r = set(d, es[k], c->mount, &m);
        r = r ? r : set(d, es[k], c->bounds, &b);
        r = r ? r : set(d, es[k], c->visible, &zero);
        r = r ? r : weft_hier_add(d->world, es[k], &local);
        r = r ? r : weft_hier_attach(d->world, es[k], parent);
    }
    return r;
}

static weft_result_t create_mobiles(demo_world_t *d, rng_t *g) {
    const demo_components_t *c = &d->c;
    const demo_config_t *cfg = &d->cfg;
    const uint32_t carrier_every = cfg->carriers ? cfg->mobiles / cfg->carriers : 0;
    const uint32_t emitter_every = cfg->emitters ? cfg->mobiles / cfg->emitters : 0;
    weft_entity_t batch[BATCH];
    weft_result_t r = WEFT_OK;
    for (uint32_t base = 0; base < cfg->mobiles && r == WEFT_OK; base += BATCH) {
        uint32_t n = cfg->mobiles - base < BATCH ? cfg->mobiles - base : BATCH;
        r = weft_entity_create_n(d->world, n, batch);
        for (uint32_t k = 0; k < n && r == WEFT_OK; k++) {
            uint32_t i = base + k;
            weft_entity_t e = batch[k];
            weft_vec3_t p = {rng_float(g, 0, DEMO_FIELD), rng_float(g, 0, 8),
                             rng_float(g, 0, DEMO_FIELD)};
            float angle = rng_float(g, 0, 6.2831853f);
            float speed = rng_float(g, 4, 12);
            weft_vec3_t v = {cosf(angle) * speed, 0, sinf(angle) * speed};
            float health = rng_float(g, 50, 100);
            float crowd = 0;
            r = add_body(d, e, p, v, 1.0f);
            r = r ? r : set(d, e, c->health, &health);
            r = r ? r : set(d, e, c->crowding, &crowd);
            if (r == WEFT_OK && i % 2 == 0) {
                demo_state_c_t s = {DEMO_WANDER, 0};
                r = set(d, e, c->state, &s);
            }
            if (r == WEFT_OK && emitter_every && i % emitter_every == 1 % emitter_every &&
                i / emitter_every < cfg->emitters) {
                demo_emitter_t em = {0, (uint32_t)(rng_next(g) | 1u)};
                r = set(d, e, c->emitter, &em);
            }
            if (r == WEFT_OK && carrier_every && i % carrier_every == 0 &&
                i / carrier_every < cfg->carriers) {
                weft_transform_t local = weft_transform_identity();
                local.position = p;
                r = weft_component_add(d->world, e, c->carrier, NULL);
                r = r ? r : weft_hier_add(d->world, e, &local);
                r = r ? r : add_mounts(d, e, p, g);
            }
        }
    }
    return r;
}

static weft_result_t create_particles(demo_world_t *d, rng_t *g) {
    const demo_components_t *c = &d->c;
    weft_entity_t batch[BATCH];
    weft_result_t r = WEFT_OK;
    for (uint32_t base = 0; base < d->cfg.particles && r == WEFT_OK; base += BATCH) {
        uint32_t n = d->cfg.particles - base < BATCH ? d->cfg.particles - base : BATCH;
        r = weft_entity_create_n(d->world, n, batch);
        for (uint32_t k = 0; k < n && r == WEFT_OK; k++) {
            weft_vec3_t p = {rng_float(g, 0, DEMO_FIELD), rng_float(g, 0, 8),
                             rng_float(g, 0, DEMO_FIELD)};
            float angle = rng_float(g, 0, 6.2831853f);
            float speed = rng_float(g, 10, 30);
            weft_vec3_t v = {cosf(angle) * speed, 0, sinf(angle) * speed};
            float life = rng_float(g, 0.0f, 2.0f * DEMO_PARTICLE_LIFE);
            r = add_body(d, batch[k], p, v, 0.5f);
            r = r ? r : set(d, batch[k], c->lifetime, &life);
            r = r ? r : weft_component_add(d->world, batch[k], c->particle, NULL);
        }
    }
    return r;
}

static weft_result_t reserve_pools(demo_world_t *d) {
    const demo_components_t *c = &d->c;
    const demo_config_t *cfg = &d->cfg;
    uint32_t movers = cfg->mobiles + cfg->particles + cfg->particles / 4; /* room to churn */
    uint32_t mounts = cfg->carriers * 4;
    weft_component_t all_movers[] = {c->position, c->velocity, c->radius, c->cell};
    weft_result_t r = weft_entity_reserve(d->world, movers + mounts + 16);
    for (size_t i = 0; i < 4 && r == WEFT_OK; i++) {
        r = weft_component_reserve(d->world, all_movers[i], movers);
    }
    r = r ? r : weft_component_reserve(d->world, c->bounds, movers + mounts);
    r = r ? r : weft_component_reserve(d->world, c->visible, movers + mounts);
    r = r ? r : weft_component_reserve(d->world, c->health, cfg->mobiles);
    r = r ? r : weft_component_reserve(d->world, c->crowding, cfg->mobiles);
    r = r ? r : weft_component_reserve(d->world, c->lifetime, movers - cfg->mobiles);
    return r;
}

/* ---- lifecycle ------------------------------------------------------------ >>lifecycle */

static demo_config_t resolve(const demo_config_t *in) {
    demo_config_t c = in ? *in : (demo_config_t){0};
    c.mobiles = c.mobiles ? c.mobiles : 1000000;
    c.particles = c.particles ? c.particles : c.mobiles / 5;
    c.carriers = c.carriers ? c.carriers : c.mobiles / 20;
    c.emitters = c.emitters ? c.emitters : (c.mobiles >= 1000 ? 1000 : c.mobiles);
    c.carriers = c.carriers > c.mobiles ? c.mobiles : c.carriers;
    c.emitters = c.emitters > c.mobiles ? c.mobiles : c.emitters;
    c.seed = c.seed ? c.seed : 1;
    if (c.workers == 0) {
        c.workers = weft_world_desc_resolved(NULL).worker_count;
    }
    return c;
}

weft_result_t demo_world_create(const demo_config_t *cfg, demo_world_t **out) {
    *out = NULL;
    demo_world_t *d = calloc(1, sizeof *d);
    if (d == NULL) {
        return WEFT_ENOMEM;
    }
    d->cfg = resolve(cfg);
    uint32_t total = d->cfg.mobiles + d->cfg.particles * 2 + d->cfg.carriers * 4 + 64;
    weft_result_t r = weft_world_create(
        &(weft_world_desc_t){.worker_count = d->cfg.workers, .entity_capacity = total}, &d->world);
    if (r != WEFT_OK) {
        free(d);
        return r;
    }
    rng_t g = {d->cfg.seed};
    /* grid_count keeps one partial histogram per chunk: size its chunks so that even a
     * particle population twice the configured one stays within the partial slots. */
    uint32_t cell_rows = d->cfg.mobiles + 2 * d->cfg.particles;
    uint32_t rows = (cell_rows + DEMO_MAX_GRID_CHUNKS - 1) / DEMO_MAX_GRID_CHUNKS;
    d->grid_chunk_rows = rows < 65536 ? 65536 : (rows + 4095) / 4096 * 4096;
    rows = (cell_rows + DEMO_MAX_STATS_CHUNKS - 1) / DEMO_MAX_STATS_CHUNKS; /* stats: the same */
    d->stats_chunk_rows = (rows + 4095) / 4096 * 4096;
    d->spawn_rate = (float)d->cfg.particles / DEMO_PARTICLE_LIFE / (float)d->cfg.emitters;
    r = register_components(d);
    r = r ? r : reserve_pools(d);
    r = r ? r : weft_entity_create(d->world, &d->singleton);
    r = r ? r : weft_component_add(d->world, d->singleton, d->c.grid_partials, NULL);
    r = r ? r : weft_component_add(d->world, d->singleton, d->c.density, NULL);
    r = r ? r : weft_component_add(d->world, d->singleton, d->c.stats_partials, NULL);
    r = r ? r : weft_component_add(d->world, d->singleton, d->c.stats, NULL);
    r = r ? r : create_mobiles(d, &g);
    r = r ? r : create_particles(d, &g);
    r = r ? r : demo_register_systems(d);
    if (r != WEFT_OK) {
        demo_world_destroy(d);
        return r;
    }
    *out = d;
    return WEFT_OK;
}

void demo_world_destroy(demo_world_t *d) {
    if (d != NULL) {
        weft_world_destroy(d->world);
        free(d);
    }
}

weft_world_t *demo_world_weft(demo_world_t *d) { return d->world; }

const demo_config_t *demo_world_config(const demo_world_t *d) { return &d->cfg; }

weft_result_t demo_world_frame(demo_world_t *d) {
    weft_result_t r = weft_world_progress(d->world, DEMO_DT);
    d->frame++; /* between frames: no job is running, systems read it next frame */
    return r;
}

const demo_system_info_t *demo_world_systems(const demo_world_t *d, uint32_t *count) {
    *count = d->system_count;
    return d->systems;
}

/* ---- hashing and statistics ------------------------------------------------ >>hash */

uint64_t demo_world_hash(demo_world_t *d) {
    return weft_world_hash(d->world); /* the hierarchy's nodes included (its module part) */
}

void demo_world_summary(demo_world_t *d, demo_summary_t *out) {
    const demo_stats_partial_t *s = weft_component_get(d->world, d->singleton, d->c.stats);
    *out = (demo_summary_t){0};
    if (s != NULL) {
        out->moving = s->moving;
        out->visible = s->visible;
        out->near = s->near;
        out->mean_speed = s->moving ? s->speed_sum / (double)s->moving : 0.0;
    }
    out->entities = weft_entity_count(d->world);
    out->particles = weft_component_rows(d->world, d->c.particle);
    out->hierarchy = weft_hier_count(d->world);
}
