/* tools/demo/demo_systems.c: the demo's systems — what one frame of the simulation does.
 *
 * DESIGN: each system touches only what it declares, so the scheduler's DAG is the real
 * dependency structure: movement feeds the grid chain (bin → count → merge → neighbours →
 * state machine), the movers' chain (bounds → culling → stats) and the hierarchy chain
 * (carrier steering → sync → hierarchy → mount bounds → mount culling), while spin, the other
 * movers' steering, lifetimes and emitters fill the gaps. Work on one component is split by entity set where the sets are
 * disjoint (movers and mounts), so the movers' part need not wait for the hierarchy. Reductions that
 * would need a shared counter (grid counts, statistics) write per-chunk partial results into
 * a singleton component, each chunk its own slot, and a small single-job system sums the slots
 * in chunk order: no atomics, no locks, and the sums are the same for every worker count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_internal.h"
#include "weft/command.h"
#include "weft/hierarchy.h"
#include "weft/system.h"

#define GET(type, it, t, i) ((type *)weft_iter_get((it), (t), (i)))

static demo_world_t *demo_of(const weft_system_ctx_t *ctx) { return (demo_world_t *)ctx->user; }

static float wrap(float v) {
    if (v < 0.0f) {
        v += DEMO_FIELD;
    } else if (v >= DEMO_FIELD) {
        v -= DEMO_FIELD;
    }
    return v < 0.0f || v >= DEMO_FIELD ? 0.0f : v;
}

/* A partial-result slot past the table would be memory corruption: stop loudly instead. */
static void check_chunk(const weft_system_ctx_t *ctx, uint32_t max) {
    if (ctx->chunk >= max) {
        fprintf(stderr, "weft_demo: system chunk %u exceeds the %u partial slots\n", ctx->chunk,
                max);
        abort();
    }
}

/* ---- movement and steering --------------------------------------------------- >>move */

static void sys_movement(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const float dt = ctx->dt;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            weft_vec3_t *p = GET(weft_vec3_t, it, 0, i);
            const weft_vec3_t *v = GET(const weft_vec3_t, it, 1, i);
            p->x = wrap(p->x + v->x * dt);
            p->z = wrap(p->z + v->z * dt);
            p->y = fminf(fmaxf(p->y + v->y * dt, 0.0f), 64.0f);
        }
    }
}

/* Turn by a per-entity random angle, more in crowds; drift toward a speed set by health. */
static void sys_steering(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const uint32_t frame = demo_of(ctx)->frame;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            weft_vec3_t *v = GET(weft_vec3_t, it, 0, i);
            float health = *GET(const float, it, 1, i);
            float crowd = *GET(const float, it, 2, i);
            float r = demo_rand01(it->entities[i], frame) - 0.5f;
            float turn = r * 1.2f * (1.0f + 0.25f * crowd) * ctx->dt * 6.0f;
            float cs = cosf(turn);
            float sn = sinf(turn);
            float x = v->x * cs - v->z * sn;
            float z = v->x * sn + v->z * cs;
            float speed = sqrtf(x * x + z * z);
            float target = 4.0f + 0.08f * health - fminf(crowd, 4.0f);
            float k = speed > 1e-3f ? 1.0f + 0.05f * (target - speed) / speed : 1.0f;
            v->x = x * k;
            v->z = z * k;
            v->y = 0.9f * v->y + (demo_rand01(frame, it->entities[i]) - 0.5f);
        }
    }
}

/* ---- neighbour grid ---------------------------------------------------------- >>grid */

static uint32_t cell_of(float x, float z) {
    int cx = (int)(x * (1.0f / DEMO_CELL_SIZE));
    int cz = (int)(z * (1.0f / DEMO_CELL_SIZE));
    cx = cx < 0 ? 0 : cx >= DEMO_GRID ? DEMO_GRID - 1 : cx;
    cz = cz < 0 ? 0 : cz >= DEMO_GRID ? DEMO_GRID - 1 : cz;
    return (uint32_t)(cz * DEMO_GRID + cx);
}

static void sys_grid_bin(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            const weft_vec3_t *p = GET(const weft_vec3_t, it, 0, i);
            *GET(uint32_t, it, 1, i) = cell_of(p->x, p->z);
        }
    }
}

/* Chunk k counts its cells into row k of the partials; the last chunk clears unused rows. */
static void sys_grid_count(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    demo_world_t *d = demo_of(ctx);
    check_chunk(ctx, DEMO_MAX_GRID_CHUNKS);
    demo_grid_partials_t *gp = weft_component_get_mut(ctx->world, d->singleton, d->c.grid_partials);
    uint32_t *row = gp->counts[ctx->chunk];
    memset(row, 0, sizeof gp->counts[0]);
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            row[*GET(const uint32_t, it, 0, i)]++;
        }
    }
    if (ctx->chunk + 1 == ctx->chunk_count) {
        for (uint32_t k = ctx->chunk_count; k < DEMO_MAX_GRID_CHUNKS; k++) {
            memset(gp->counts[k], 0, sizeof gp->counts[k]);
        }
    }
}

static void sys_grid_merge(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    demo_world_t *d = demo_of(ctx);
    const demo_grid_partials_t *gp =
        weft_component_get(ctx->world, d->singleton, d->c.grid_partials);
    demo_density_t *den = weft_component_get_mut(ctx->world, d->singleton, d->c.density);
    memset(den->counts, 0, sizeof den->counts);
    for (uint32_t k = 0; k < DEMO_MAX_GRID_CHUNKS; k++) {
        for (uint32_t c = 0; c < DEMO_CELLS; c++) {
            den->counts[c] += gp->counts[k][c];
        }
    }
}

/* Crowding: own cell plus a quarter of each edge neighbour, relative to the average cell. */
static void sys_neighbours(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    demo_world_t *d = demo_of(ctx);
    const demo_density_t *den = weft_component_get(ctx->world, d->singleton, d->c.density);
    const float per_cell = (float)(d->cfg.mobiles + d->cfg.particles) / (float)DEMO_CELLS;
    const float inv = 1.0f / (per_cell * 2.0f);
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            uint32_t c = *GET(const uint32_t, it, 0, i);
            const weft_vec3_t *p = GET(const weft_vec3_t, it, 1, i);
            uint32_t cx = c % DEMO_GRID;
            uint32_t cz = c / DEMO_GRID;
            float fx = p->x / DEMO_CELL_SIZE - (float)cx; /* position inside the cell */
            float fz = p->z / DEMO_CELL_SIZE - (float)cz;
            float left = (float)den->counts[cz * DEMO_GRID + (cx + DEMO_GRID - 1) % DEMO_GRID];
            float right = (float)den->counts[cz * DEMO_GRID + (cx + 1) % DEMO_GRID];
            float down = (float)den->counts[((cz + DEMO_GRID - 1) % DEMO_GRID) * DEMO_GRID + cx];
            float up = (float)den->counts[((cz + 1) % DEMO_GRID) * DEMO_GRID + cx];
            float sum = (float)den->counts[c] + 0.5f * ((1.0f - fx) * left + fx * right) +
                        0.5f * ((1.0f - fz) * down + fz * up);
            *GET(float, it, 2, i) = sum * inv;
        }
    }
}

/* ---- state machine, lifetimes, emitters ------------------------------------- >>life */

static void sys_state_machine(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const float dt = ctx->dt;
    const uint32_t frame = demo_of(ctx)->frame;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            demo_state_c_t *s = GET(demo_state_c_t, it, 0, i);
            float *h = GET(float, it, 1, i);
            float crowd = *GET(const float, it, 2, i);
            s->timer -= dt;
            switch (s->state) {
            case DEMO_WANDER:
                *h -= 0.5f * crowd * dt;
                if (crowd > 1.6f) {
                    s->state = DEMO_FLEE;
                    s->timer = 0.5f + demo_rand01(it->entities[i], frame);
                }
                break;
            case DEMO_FLEE:
                *h -= 3.0f * dt;
                if (s->timer <= 0.0f) {
                    s->state = crowd > 1.2f ? DEMO_REGROUP : DEMO_REST;
                    s->timer = 1.0f;
                }
                break;
            case DEMO_REST:
                *h += 12.0f * dt;
                if (*h >= 100.0f) {
                    s->state = DEMO_WANDER;
                }
                break;
            default: /* DEMO_REGROUP */
                if (s->timer <= 0.0f || crowd < 0.8f) {
                    s->state = DEMO_WANDER;
                }
                break;
            }
            *h = fminf(fmaxf(*h, 0.0f), 100.0f);
            if (*h <= 0.0f) {
                s->state = DEMO_REST;
            }
        }
    }
}

/* Particles count down and despawn through the command buffer. */
static void sys_aging(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            float *life = GET(float, it, 0, i);
            *life -= ctx->dt;
            if (*life <= 0.0f && weft_cmd_destroy(ctx->cmd, weft_iter_entity(it, i)) != WEFT_OK) {
                fprintf(stderr, "weft_demo: aging: %s\n", weft_last_error());
                abort();
            }
        }
    }
}

static uint32_t xorshift32(uint32_t *s) {
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *s = x;
    return x;
}

static float rng01(uint32_t *s) { return (float)(xorshift32(s) >> 8) * (1.0f / 16777216.0f); }

/* Record one particle: placeholder handle, then its components, all in this job's buffer. */
static void spawn_particle(const weft_system_ctx_t *ctx, const demo_components_t *c, weft_vec3_t at,
                           uint32_t *rng) {
    float angle = rng01(rng) * 6.2831853f;
    float speed = 10.0f + 20.0f * rng01(rng);
    weft_vec3_t vel = {cosf(angle) * speed, 5.0f * rng01(rng), sinf(angle) * speed};
    float life = DEMO_PARTICLE_LIFE * (0.5f + rng01(rng));
    float radius = 0.5f;
    uint32_t zero = 0;
    demo_bounds_t b = demo_sphere_bounds(at, radius);
    weft_entity_t e = weft_cmd_create(ctx->cmd);
    weft_result_t r = e == 0 ? WEFT_ENOMEM : WEFT_OK;
    r = r ? r : weft_cmd_set(ctx->cmd, e, c->position, &at);
    r = r ? r : weft_cmd_set(ctx->cmd, e, c->velocity, &vel);
    r = r ? r : weft_cmd_set(ctx->cmd, e, c->lifetime, &life);
    r = r ? r : weft_cmd_set(ctx->cmd, e, c->radius, &radius);
    r = r ? r : weft_cmd_set(ctx->cmd, e, c->bounds, &b);
    r = r ? r : weft_cmd_set(ctx->cmd, e, c->visible, &zero);
    r = r ? r : weft_cmd_set(ctx->cmd, e, c->cell, &zero);
    r = r ? r : weft_cmd_add(ctx->cmd, e, c->particle);
    if (r != WEFT_OK) {
        fprintf(stderr, "weft_demo: emitters: %s\n", weft_last_error());
        abort();
    }
}

static void sys_emitters(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    demo_world_t *d = demo_of(ctx);
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            demo_emitter_t *em = GET(demo_emitter_t, it, 0, i);
            weft_vec3_t at = *GET(const weft_vec3_t, it, 1, i);
            em->accum += d->spawn_rate * ctx->dt;
            while (em->accum >= 1.0f) {
                em->accum -= 1.0f;
                spawn_particle(ctx, &d->c, at, &em->rng);
            }
        }
    }
}

/* ---- hierarchy ---------------------------------------------------------------- >>hier */

/* Carriers: the hierarchy root follows its mobile, facing along its velocity. */
static void sys_sync_transforms(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const weft_vec3_t up = {0.0f, 1.0f, 0.0f};
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            weft_transform_t *t = weft_hier_local(ctx->world, weft_iter_entity(it, i));
            const weft_vec3_t *p = GET(const weft_vec3_t, it, 1, i);
            const weft_vec3_t *v = GET(const weft_vec3_t, it, 2, i);
            t->position = *p;
            t->rotation = weft_quat_from_axis_angle(up, atan2f(v->x, v->z));
        }
    }
}

/* Mounts spin about their local y axis at their own rate. */
static void sys_spin(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const weft_vec3_t up = {0.0f, 1.0f, 0.0f};
    const float time = (float)demo_of(ctx)->frame * ctx->dt;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            const demo_mount_t *m = GET(const demo_mount_t, it, 0, i);
            weft_transform_t *t = weft_hier_local(ctx->world, weft_iter_entity(it, i));
            t->rotation = weft_quat_from_axis_angle(up, fmodf(m->spin * time, 6.2831853f));
        }
    }
}

static void sys_mount_bounds(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            const demo_mount_t *m = GET(const demo_mount_t, it, 0, i);
            const weft_mat4_t *w = weft_hier_world(ctx->world, weft_iter_entity(it, i));
            weft_vec3_t centre = {w->m[12], w->m[13], w->m[14]};
            *GET(demo_bounds_t, it, 1, i) = demo_sphere_bounds(centre, m->radius);
        }
    }
}

/* ---- bounds, culling, statistics -------------------------------------------- >>cull */

static void sys_bounds(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            const weft_vec3_t *p = GET(const weft_vec3_t, it, 0, i);
            float r = *GET(const float, it, 1, i);
            *GET(demo_bounds_t, it, 2, i) = demo_sphere_bounds(*p, r);
        }
    }
}

/* A camera at the field's centre looking along +x with a 90-degree field of view. */
static void sys_culling(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    const float cam_x = DEMO_FIELD * 0.5f;
    const float cam_z = DEMO_FIELD * 0.5f;
    const float far = 400.0f;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            const demo_bounds_t *b = GET(const demo_bounds_t, it, 0, i);
            float r = 0.5f * (b->max[0] - b->min[0]);
            float dx = 0.5f * (b->min[0] + b->max[0]) - cam_x;
            float dz = 0.5f * (b->min[2] + b->max[2]) - cam_z;
            bool visible = dx > -r && fabsf(dz) <= dx + r * 1.4142135f && dx <= far + r;
            bool near = visible && dx * dx + dz * dz < 100.0f * 100.0f;
            *GET(uint32_t, it, 1, i) = (visible ? 1u : 0u) | (near ? 2u : 0u);
        }
    }
}

static void sys_stats(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    demo_world_t *d = demo_of(ctx);
    check_chunk(ctx, DEMO_MAX_STATS_CHUNKS);
    demo_stats_partials_t *sp =
        weft_component_get_mut(ctx->world, d->singleton, d->c.stats_partials);
    demo_stats_partial_t acc = {0};
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            uint32_t vis = *GET(const uint32_t, it, 0, i);
            const weft_vec3_t *v = GET(const weft_vec3_t, it, 1, i);
            acc.moving++;
            acc.visible += vis & 1u;
            acc.near += (vis >> 1) & 1u;
            acc.speed_sum += (double)sqrtf(v->x * v->x + v->z * v->z);
        }
    }
    sp->chunk[ctx->chunk] = acc;
    if (ctx->chunk + 1 == ctx->chunk_count) {
        for (uint32_t k = ctx->chunk_count; k < DEMO_MAX_STATS_CHUNKS; k++) {
            sp->chunk[k] = (demo_stats_partial_t){0};
        }
    }
}

static void sys_stats_reduce(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    demo_world_t *d = demo_of(ctx);
    const demo_stats_partials_t *sp =
        weft_component_get(ctx->world, d->singleton, d->c.stats_partials);
    demo_stats_partial_t *total = weft_component_get_mut(ctx->world, d->singleton, d->c.stats);
    demo_stats_partial_t acc = {0};
    for (uint32_t k = 0; k < DEMO_MAX_STATS_CHUNKS; k++) { /* chunk order: same sum always */
        acc.moving += sp->chunk[k].moving;
        acc.visible += sp->chunk[k].visible;
        acc.near += sp->chunk[k].near;
        acc.speed_sum += sp->chunk[k].speed_sum;
    }
    *total = acc;
}

/* ---- registration ------------------------------------------------------------ >>register */

#define R(comp) \
    { .component = (comp), .access = WEFT_ACCESS_READ }
#define W(comp) \
    { .component = (comp), .access = WEFT_ACCESS_WRITE }

static weft_result_t add(demo_world_t *d, weft_system_desc_t desc) {
    desc.user = d;
    if (d->system_count == DEMO_MAX_SYSTEMS) {
        return WEFT_ECAPACITY;
    }
    demo_system_info_t *info = &d->systems[d->system_count];
    weft_result_t r = weft_system_register(d->world, &desc, &info->id);
    if (r == WEFT_OK) {
        info->name = desc.name;
        info->phase = desc.phase;
        info->parallel = desc.parallel;
        d->system_count++;
    }
    return r;
}

weft_result_t demo_register_systems(demo_world_t *d) {
    const demo_components_t *c = &d->c;
    /* Chunk rows: weft's default (WEFT_SYSTEM_CHUNK_DEFAULT, 4096) for the row systems.
     * Measured here (the simulator's calibration and a 1-worker traced frame), the cheapest
     * of them, grid_bin at ~2.5 ns a row, still costs ~10 us a chunk: ~300x a job (25-30
     * ns) and ~8x the ready list's hand-out cost (~1.2 us), while the 1.2M-row systems get
     * ~300 chunks, ~5 per worker at 64, and a chain of systems waits for one chunk of each
     * rather than one 16th of it. Emitters spawn ~2 particles a row (~0.4 us a row): 64 rows
     * a chunk. grid_count and stats keep one partial result per chunk, so their chunks are
     * sized from their slot tables (demo_world.c). */
    const uint32_t big = WEFT_SYSTEM_CHUNK_DEFAULT;
    /* The carriers' two systems cost 55-110 ns a row (trig, the hierarchy's entity lookup),
     * 3-10x the movers' others: at 4096 rows their chunks took 210-470 us (1-worker traced
     * frames), each a link of the hierarchy chain, so they get a quarter of that (1024 rows,
     * 55-115 us a chunk: still ~45x the ready list's hand-out). */
    const uint32_t dear = big / 4;
    /* Registration order is declaration order for systems that conflict; among systems that
     * do not, it is the run order, and so the order in which a finished system's successors
     * are released (the first runs next on the same worker, the rest are published in that
     * order). So the hierarchy chain comes first wherever that changes no edge: after
     * movement, carrier_steering (whose first chunk then runs next, its other chunks at the
     * head of the ready list) and sync_transforms, then the hierarchy update (run next when
     * sync_transforms ends, ahead of steering's 245 chunks). Where two systems write one
     * component on disjoint entities the one off the hierarchy chain comes first (same
     * values, shorter critical path): spin writes the mounts' local transforms,
     * sync_transforms the carriers', so spin runs beside movement; steering is split into
     * the carriers (before sync_transforms, which reads their velocity) and every other mover
     * (after it), both before the grid and state systems whose last frame's crowding and
     * health they read; bounds, culling and stats cover the movers (they carry a radius and a
     * velocity, mounts do neither) and run beside the hierarchy chain; mount_bounds and
     * mount_culling do the mounts after the update. */
    weft_system_desc_t s[] = {
        {.name = "spin",
         .fn = sys_spin,
         .parallel = true,
         .chunk_size = big,
         .terms = {R(c->mount)},
         .writes = {c->hier.local}},
        {.name = "movement",
         .fn = sys_movement,
         .parallel = true,
         .chunk_size = big,
         .terms = {W(c->position), R(c->velocity)}},
        {.name = "carrier_steering", /* the carriers first: sync_transforms reads them */
         .fn = sys_steering,
         .parallel = true,
         .chunk_size = dear,
         .terms = {W(c->velocity), R(c->health), R(c->crowding), R(c->carrier)}},
        {.name = "sync_transforms",
         .fn = sys_sync_transforms,
         .parallel = true,
         .chunk_size = dear,
         .terms = {R(c->carrier), R(c->position), R(c->velocity)},
         .writes = {c->hier.local}},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        weft_result_t r = add(d, s[i]);
        if (r != WEFT_OK) {
            return r;
        }
    }
    /* The hierarchy update is weft's own system: it reads local + link, writes world. */
    demo_system_info_t *info = &d->systems[d->system_count];
    weft_result_t r = weft_hier_register_system(
        d->world, &(weft_hier_system_desc_t){.name = "hierarchy"}, &info->id);
    if (r != WEFT_OK) {
        return r;
    }
    *info = (demo_system_info_t){info->id, "hierarchy", 0, false};
    d->system_count++;
    weft_system_desc_t u[] = {
        {.name = "steering", /* every other mover, beside the hierarchy chain */
         .fn = sys_steering,
         .parallel = true,
         .chunk_size = big,
         .terms = {W(c->velocity), R(c->health), R(c->crowding)},
         .exclude = {c->carrier}},
        {.name = "bounds",
         .fn = sys_bounds,
         .parallel = true,
         .chunk_size = big,
         .terms = {R(c->position), R(c->radius), W(c->bounds)}},
        {.name = "grid_bin",
         .fn = sys_grid_bin,
         .parallel = true,
         .chunk_size = big,
         .terms = {R(c->position), W(c->cell)}},
        {.name = "grid_count",
         .fn = sys_grid_count,
         .parallel = true,
         .chunk_size = d->grid_chunk_rows,
         .terms = {R(c->cell)},
         .writes = {c->grid_partials}},
        {.name = "grid_merge",
         .fn = sys_grid_merge,
         .reads = {c->grid_partials},
         .writes = {c->density}},
        {.name = "neighbours",
         .fn = sys_neighbours,
         .parallel = true,
         .chunk_size = big,
         .terms = {R(c->cell), R(c->position), W(c->crowding)},
         .reads = {c->density}},
        {.name = "state_machine",
         .fn = sys_state_machine,
         .parallel = true,
         .chunk_size = big,
         .terms = {W(c->state), W(c->health), R(c->crowding)}},
        {.name = "aging",
         .fn = sys_aging,
         .parallel = true,
         .chunk_size = big,
         .terms = {W(c->lifetime)}},
        {.name = "emitters",
         .fn = sys_emitters,
         .parallel = true,
         .chunk_size = 64,
         .terms = {W(c->emitter), R(c->position)}},
        {.name = "culling", /* the movers (they carry a radius); mount_culling the mounts */
         .fn = sys_culling,
         .parallel = true,
         .chunk_size = big,
         .terms = {R(c->bounds), W(c->visible), R(c->radius)}},
        {.name = "stats",
         .fn = sys_stats,
         .parallel = true,
         .chunk_size = d->stats_chunk_rows,
         .terms = {R(c->visible), R(c->velocity)},
         .writes = {c->stats_partials}},
    };
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
        r = add(d, u[i]);
        if (r != WEFT_OK) {
            return r;
        }
    }
    weft_system_desc_t t[] = {
        {.name = "mount_bounds",
         .fn = sys_mount_bounds,
         .parallel = true,
         .chunk_size = big,
         .terms = {R(c->mount), W(c->bounds)},
         .reads = {c->hier.world}},
        {.name = "mount_culling",
         .fn = sys_culling,
         .parallel = true,
         .chunk_size = big,
         .terms = {R(c->bounds), W(c->visible), R(c->mount)}},
        {.name = "stats_reduce",
         .fn = sys_stats_reduce,
         .phase = 1,
         .reads = {c->stats_partials},
         .writes = {c->stats}},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        r = add(d, t[i]);
        if (r != WEFT_OK) {
            return r;
        }
    }
    return WEFT_OK;
}
