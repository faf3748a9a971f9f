/* test_determinism.c: the world after N frames is bit-identical whatever the worker count
 * (inline, 1, 2, 3, 4, 8, 16), on a randomised simulation with structural churn made through
 * command buffers from parallel systems in two phases. The seed is printed; set WEFT_SEED to
 * replay one. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ext_pool.h"
#include "sched_fixture.h"

TestSuite(determinism, .timeout = 240);

#define FRAMES 60
#define START_ENTITIES 3000

typedef struct sim {
    fixture_t f;
    uint32_t frame; /* written by the main thread between frames only */
} sim_t;

/* pos += vel * dt */
static void sim_move(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            vec3_t *p = weft_iter_get(it, 0, i);
            const vec3_t *v = weft_iter_get(it, 1, i);
            p->x += v->x * ctx->dt;
            p->y += v->y * ctx->dt;
            p->z += v->z * ctx->dt;
        }
    }
}

/* Health drops; at zero the entity is destroyed and, every other time, replaced by a child
 * created through a placeholder with data derived from the parent. */
static void sim_age(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const sim_t *sim = ctx->user;
    const fixture_t *f = &sim->f;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            int32_t *h = weft_iter_get(it, 0, i);
            *h -= 1 + (int32_t)(it->entities[i] % 3);
            if (*h > 0) {
                continue;
            }
            weft_entity_t e = weft_iter_entity(it, i);
            CHECK(weft_cmd_destroy(ctx->cmd, e) == WEFT_OK);
            uint64_t r = fixture_mix(e ^ ((uint64_t)sim->frame << 40));
            if (r & 1) {
                weft_entity_t c = weft_cmd_create(ctx->cmd);
                vec3_t p = {(float)(r % 100), (float)((r >> 8) % 100) - 50.0f, 0};
                vec3_t v = {(float)((r >> 16) % 7) - 3.0f, (float)((r >> 24) % 5) - 2.0f, 1};
                int32_t hp = 5 + (int32_t)((r >> 32) % 40);
                CHECK(weft_cmd_set(ctx->cmd, c, f->pos, &p) == WEFT_OK);
                CHECK(weft_cmd_set(ctx->cmd, c, f->hp, &hp) == WEFT_OK);
                if (r & 2) {
                    CHECK(weft_cmd_set(ctx->cmd, c, f->vel, &v) == WEFT_OK);
                }
            }
        }
    }
}

/* Entities above y = 0 get Tag (and Mass), those below lose it. */
static void sim_tag(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const fixture_t *f = &((const sim_t *)ctx->user)->f;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            const vec3_t *p = weft_iter_get(it, 0, i);
            weft_entity_t e = weft_iter_entity(it, i);
            bool has = weft_component_has(ctx->world, e, f->tag);
            if (p->y > 0 && !has) {
                CHECK(weft_cmd_add(ctx->cmd, e, f->tag) == WEFT_OK);
                float m = p->x * 0.5f;
                CHECK(weft_cmd_set(ctx->cmd, e, f->mass, &m) == WEFT_OK);
            } else if (p->y <= 0 && has) {
                CHECK(weft_cmd_remove(ctx->cmd, e, f->tag) == WEFT_OK);
            }
        }
    }
}

/* Phase 1: tagged entities bounce (reads data applied at the end of phase 0). */
static void sim_bounce(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            vec3_t *v = weft_iter_get(it, 0, i);
            v->y = -v->y * 0.75f - 0.125f;
        }
    }
}

/* Phase 1: mass accumulates; very heavy entities shed their velocity. */
static void sim_mass(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const fixture_t *f = &((const sim_t *)ctx->user)->f;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            float *m = weft_iter_get(it, 0, i);
            *m += 1.5f;
            if (*m > 40.0f) {
                CHECK(weft_cmd_remove(ctx->cmd, weft_iter_entity(it, i), f->vel) == WEFT_OK);
            }
        }
    }
}

/* A main-thread system without terms that spawns a few entities each frame. */
static void sim_spawn(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    const sim_t *sim = ctx->user;
    CHECK(ctx->worker == 0);
    for (uint32_t k = 0; k < 1 + sim->frame % 4; k++) {
        uint64_t r = fixture_mix(((uint64_t)sim->frame << 8) | k);
        weft_entity_t e = weft_cmd_create(ctx->cmd);
        vec3_t p = {(float)(r % 64), (float)((r >> 6) % 64) - 32.0f, 0}, v = {1, 1, 0};
        int32_t hp = 3 + (int32_t)((r >> 12) % 30);
        CHECK(weft_cmd_set(ctx->cmd, e, sim->f.pos, &p) == WEFT_OK);
        CHECK(weft_cmd_set(ctx->cmd, e, sim->f.vel, &v) == WEFT_OK);
        CHECK(weft_cmd_set(ctx->cmd, e, sim->f.hp, &hp) == WEFT_OK);
    }
}

static void sim_setup(sim_t *sim, const weft_world_desc_t *desc, uint64_t seed) {
    fixture_t *f = &sim->f;
    fixture_init_desc(f, desc);
    sim->frame = 0;
    for (uint32_t i = 0; i < START_ENTITIES; i++) {
        uint64_t r = fixture_mix(seed + i);
        weft_entity_t e;
        cr_assert(eq(int, weft_entity_create(f->world, &e), WEFT_OK));
        vec3_t p = {(float)(r % 1000) * 0.1f, (float)((r >> 10) % 200) - 100.0f, 0};
        vec3_t v = {(float)((r >> 20) % 9) - 4.0f, (float)((r >> 24) % 9) - 4.0f, 0.5f};
        int32_t hp = 1 + (int32_t)((r >> 30) % 60);
        weft_component_set(f->world, e, f->pos, &p);
        if (r & (1u << 5)) {
            weft_component_set(f->world, e, f->vel, &v);
        }
        if (r & (1u << 6)) {
            weft_component_set(f->world, e, f->hp, &hp);
        }
    }
    must_register(f->world, &(weft_system_desc_t){.name = "move",
                                                  .fn = sim_move,
                                                  .user = sim,
                                                  .terms = {W(f->pos), R(f->vel)},
                                                  .parallel = true,
                                                  .chunk_size = 97});
    must_register(f->world, &(weft_system_desc_t){.name = "age",
                                                  .fn = sim_age,
                                                  .user = sim,
                                                  .terms = {W(f->hp)},
                                                  .parallel = true,
                                                  .chunk_size = 64});
    must_register(f->world, &(weft_system_desc_t){.name = "tag",
                                                  .fn = sim_tag,
                                                  .user = sim,
                                                  .terms = {R(f->pos)},
                                                  .reads = {f->tag},
                                                  .parallel = true,
                                                  .chunk_size = 128});
    must_register(
        f->world,
        &(weft_system_desc_t){.name = "spawn", .fn = sim_spawn, .user = sim, .main_thread = true});
    must_register(f->world, &(weft_system_desc_t){.name = "bounce",
                                                  .fn = sim_bounce,
                                                  .user = sim,
                                                  .terms = {W(f->vel), R(f->tag)},
                                                  .phase = 1,
                                                  .parallel = true,
                                                  .chunk_size = 50});
    must_register(f->world, &(weft_system_desc_t){.name = "mass",
                                                  .fn = sim_mass,
                                                  .user = sim,
                                                  .terms = {W(f->mass)},
                                                  .phase = 1,
                                                  .parallel = true,
                                                  .chunk_size = 33});
}

/* One frame of the simulation, checked. */
static void sim_frame(sim_t *sim, uint32_t fr) {
    sim->frame = fr;
    cr_assert(eq(int, weft_world_progress(sim->f.world, 0.016f), WEFT_OK), "%s", weft_last_error());
    CHECKED();
}

/* Run the simulation on a world made from `desc`; hashes[k] is the world hash after frame
 * 10 * (k + 1). */
static void sim_run_desc(const weft_world_desc_t *desc, uint64_t seed,
                         uint64_t hashes[FRAMES / 10]) {
    sim_t *sim = calloc(1, sizeof *sim);
    sim_setup(sim, desc, seed);
    for (uint32_t fr = 0; fr < FRAMES; fr++) {
        sim_frame(sim, fr);
        if ((fr + 1) % 10 == 0) {
            hashes[fr / 10] = weft_world_hash(sim->f.world);
        }
    }
    cr_assert(weft_entity_count(sim->f.world) > 100, "the simulation kept entities");
    fixture_fini(&sim->f);
    free(sim);
}

static void sim_run(uint32_t workers, weft_execution_t exec, uint64_t seed,
                    uint64_t hashes[FRAMES / 10]) {
    sim_run_desc(&(weft_world_desc_t){.worker_count = workers, .execution = exec}, seed, hashes);
}

Test(determinism, world_hash_is_identical_for_every_worker_count) {
    uint64_t seed = fixture_seed("determinism");
    uint64_t want[FRAMES / 10], got[FRAMES / 10];
    sim_run(1, WEFT_EXECUTION_INLINE, seed, want);
    uint32_t counts[] = {1, 2, 3, 4, 8, 16};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        sim_run(counts[k], WEFT_EXECUTION_THREADED, seed, got);
        for (int i = 0; i < FRAMES / 10; i++) {
            cr_assert(eq(u64, got[i], want[i]), "seed %llu: %u workers differ after frame %d",
                      (unsigned long long)seed, counts[k], 10 * (i + 1));
        }
    }
}

Test(determinism, repeated_threaded_runs_agree) {
    uint64_t seed = fixture_seed("determinism");
    uint64_t a[FRAMES / 10], b[FRAMES / 10];
    sim_run(2, WEFT_EXECUTION_THREADED, seed, a);
    sim_run(2, WEFT_EXECUTION_THREADED, seed, b);
    for (int i = 0; i < FRAMES / 10; i++) {
        cr_assert(eq(u64, a[i], b[i]), "seed %llu: frame %d", (unsigned long long)seed,
                  10 * (i + 1));
    }
}

/* Two worlds on one job system the test owns, progressed frame by frame in turn, end every
 * checkpoint with the hashes of a world on its own 2-worker pool; destroying the worlds leaves
 * the job system to its owner. */
static void count_range(void *arg, uint64_t begin, uint64_t end, uint32_t worker) {
    (void)worker;
    atomic_fetch_add((_Atomic uint32_t *)arg, (uint32_t)(end - begin));
}

Test(determinism, worlds_sharing_one_job_system_match_a_world_with_its_own) {
    uint64_t seed = fixture_seed("determinism");
    uint64_t want[FRAMES / 10];
    sim_run(2, WEFT_EXECUTION_THREADED, seed, want);

    weft_jobs_t *jobs = NULL;
    cr_assert(eq(int, weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 2}, &jobs), WEFT_OK));
    sim_t *sims[2];
    for (int w = 0; w < 2; w++) {
        sims[w] = calloc(1, sizeof *sims[w]);
        sim_setup(sims[w], &(weft_world_desc_t){.jobs = jobs}, seed);
        cr_assert(weft_world_jobs(sims[w]->f.world) == jobs);
    }
    for (uint32_t fr = 0; fr < FRAMES; fr++) {
        for (int w = 0; w < 2; w++) {
            sim_frame(sims[w], fr);
            if ((fr + 1) % 10 == 0) {
                cr_assert(eq(u64, weft_world_hash(sims[w]->f.world), want[fr / 10]),
                          "seed %llu: world %d differs after frame %u", (unsigned long long)seed, w,
                          fr + 1);
            }
        }
    }

    fixture_fini(&sims[0]->f); /* must not destroy the borrowed job system */
    cr_assert(eq(int, weft_world_progress(sims[1]->f.world, 0.016f), WEFT_OK), "%s",
              weft_last_error());
    fixture_fini(&sims[1]->f);
    _Atomic uint32_t covered = 0;
    cr_assert(eq(int, weft_parallel_for(jobs, 1000, 10, count_range, (void *)&covered), WEFT_OK));
    cr_expect(eq(u32, atomic_load(&covered), 1000), "the job system outlives its worlds");
    weft_jobs_destroy(jobs);
    free(sims[0]);
    free(sims[1]);
}

static void *create_world_elsewhere(void *jobs) {
    weft_world_t *w = NULL;
    weft_result_t r = weft_world_create(&(weft_world_desc_t){.jobs = jobs}, &w);
    weft_world_destroy(w);
    return (void *)(intptr_t)r;
}

Test(determinism, a_desc_that_contradicts_its_job_system_is_einval) {
    weft_jobs_t *jobs = NULL;
    cr_assert(eq(int, weft_jobs_create(&(weft_jobs_desc_t){.worker_count = 2}, &jobs), WEFT_OK));
    weft_world_t *w = NULL;
    cr_expect(eq(int, weft_world_create(&(weft_world_desc_t){.jobs = jobs, .worker_count = 3}, &w),
                 WEFT_EINVAL));
    cr_expect(w == NULL);
    cr_expect(eq(int,
                 weft_world_create(
                     &(weft_world_desc_t){.jobs = jobs, .execution = WEFT_EXECUTION_INLINE}, &w),
                 WEFT_EINVAL));
    pthread_t t;
    void *r = NULL;
    cr_assert(eq(int, pthread_create(&t, NULL, create_world_elsewhere, jobs), 0));
    cr_assert(eq(int, pthread_join(t, &r), 0));
    cr_expect(eq(int, (int)(intptr_t)r, WEFT_EINVAL), "created on another thread than worker 0");
    cr_expect(eq(int, weft_world_create(&(weft_world_desc_t){.jobs = jobs, .worker_count = 2}, &w),
                 WEFT_OK));
    cr_expect(
        eq(u32, weft_world_desc_resolved(&(weft_world_desc_t){.jobs = jobs}).worker_count, 2));
    weft_world_destroy(w);
    weft_jobs_destroy(jobs);
}

/* The same simulation on a job system whose workers 1.. are an engine's threads (a pool
 * written in the test, lent through weft_executor_t) ends bit-identical to weft's own pool. */
Test(determinism, a_world_on_an_engine_thread_pool_matches_weft_s_own_pool) {
    uint64_t seed = fixture_seed("determinism");
    uint64_t want[FRAMES / 10];
    sim_run(3, WEFT_EXECUTION_THREADED, seed, want);

    ext_pool_t pool;
    cr_assert(ext_pool_start(&pool, 2));
    weft_jobs_t *jobs = NULL;
    cr_assert(eq(int,
                 weft_jobs_create(&(weft_jobs_desc_t){.executor = ext_pool_executor(&pool)}, &jobs),
                 WEFT_OK),
              "%s", weft_last_error());
    uint64_t got[FRAMES / 10];
    sim_run_desc(&(weft_world_desc_t){.jobs = jobs}, seed, got);
    for (int i = 0; i < FRAMES / 10; i++) {
        cr_assert(eq(u64, got[i], want[i]),
                  "seed %llu: the engine pool's world differs after frame %d",
                  (unsigned long long)seed, 10 * (i + 1));
    }
    /* Whether the frames' phases were threaded is the scheduler's measured-cost decision
     * (a release build runs this small simulation's phases on the calling thread); that the
     * lent threads run weft's work is shown by the executor suite. */
    weft_jobs_destroy(jobs);
    ext_pool_stop(&pool);
}
