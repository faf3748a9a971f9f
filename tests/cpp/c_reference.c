/* c_reference.c: hand-written C systems over weft_iter_t, the reference for test_cpp.cpp. */
#include "c_reference.h"

weft_result_t ref_register_components(weft_world_t *w, ref_ids_t *ids) {
    weft_result_t r = weft_component_register(
        w,
        &(weft_component_desc_t){
            .name = "Position", .size = sizeof(ref_position_t), .align = _Alignof(ref_position_t)},
        &ids->pos);
    if (r == WEFT_OK) {
        r = weft_component_register(w,
                                    &(weft_component_desc_t){.name = "Velocity",
                                                             .size = sizeof(ref_velocity_t),
                                                             .align = _Alignof(ref_velocity_t)},
                                    &ids->vel);
    }
    if (r == WEFT_OK) {
        r = weft_component_register(w,
                                    &(weft_component_desc_t){.name = "Spin",
                                                             .size = sizeof(ref_spin_t),
                                                             .align = _Alignof(ref_spin_t)},
                                    &ids->spin);
    }
    if (r == WEFT_OK) {
        r = weft_component_register(w, &(weft_component_desc_t){.name = "Frozen"}, &ids->frozen);
    }
    return r;
}

static uint64_t next_rand(uint64_t *s) {
    *s += 0x9E3779B97F4A7C15ull;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

weft_result_t ref_populate(weft_world_t *w, const ref_ids_t *ids, uint32_t n, uint64_t seed) {
    uint64_t s = seed;
    weft_entity_t spun[4096];
    uint32_t nspun = 0;
    for (uint32_t i = 0; i < n; i++) {
        weft_entity_t e;
        weft_result_t r = weft_entity_create(w, &e);
        if (r != WEFT_OK) {
            return r;
        }
        float f = (float)(next_rand(&s) % 1000u) * 0.01f;
        ref_position_t p = {f, 2.0f * f, -f};
        ref_velocity_t v = {1.0f + f, 0.5f, f * 0.25f};
        r = weft_component_set(w, e, ids->pos, &p);
        if (r == WEFT_OK) {
            r = weft_component_set(w, e, ids->vel, &v);
        }
        if (r == WEFT_OK && next_rand(&s) % 10u == 0) {
            r = weft_component_add(w, e, ids->frozen, NULL);
        }
        if (r != WEFT_OK) {
            return r;
        }
        if (next_rand(&s) % 3u == 0 && nspun < 4096u) {
            spun[nspun++] = e;
        }
    }
    /* Spin goes on in shuffled order: its pool rows do not line up with Velocity's. */
    for (uint32_t i = nspun; i > 1; i--) {
        uint32_t j = (uint32_t)(next_rand(&s) % i);
        weft_entity_t t = spun[i - 1];
        spun[i - 1] = spun[j];
        spun[j] = t;
    }
    for (uint32_t i = 0; i < nspun; i++) {
        ref_spin_t sp = {(float)(i % 7u) * 0.125f};
        weft_result_t r = weft_component_set(w, spun[i], ids->spin, &sp);
        if (r != WEFT_OK) {
            return r;
        }
    }
    return WEFT_OK;
}

static void spin_fn(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            ref_velocity_t *v = weft_iter_get(it, 0, i);
            const ref_spin_t *s = weft_iter_get(it, 1, i);
            v->x = v->x * 0.5f + s->rate;
            v->y -= s->rate;
        }
    }
}

static void move_fn(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const float dt = ctx->dt;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            ref_position_t *p = weft_iter_get(it, 0, i);
            const ref_velocity_t *v = weft_iter_get(it, 1, i);
            p->x += v->x * dt;
            p->y += v->y * dt;
            p->z += v->z * dt;
        }
    }
}

weft_result_t ref_register_systems(weft_world_t *w, const ref_ids_t *ids) {
    weft_result_t r = weft_system_register(
        w,
        &(weft_system_desc_t){.name = "spin",
                              .fn = spin_fn,
                              .terms = {{.component = ids->vel, .access = WEFT_ACCESS_WRITE},
                                        {.component = ids->spin, .access = WEFT_ACCESS_READ}}},
        NULL);
    if (r != WEFT_OK) {
        return r;
    }
    return weft_system_register(
        w,
        &(weft_system_desc_t){.name = "move",
                              .fn = move_fn,
                              .terms = {{.component = ids->pos, .access = WEFT_ACCESS_WRITE},
                                        {.component = ids->vel, .access = WEFT_ACCESS_READ}},
                              .exclude = {ids->frozen},
                              .parallel = true,
                              .chunk_size = 1000},
        NULL);
}
