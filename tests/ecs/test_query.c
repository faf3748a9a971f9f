/* test_query.c: queries — matching, driving choice, chunking, batches, concurrent iteration. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <pthread.h>
#include <signal.h>

#include "ecs_fixture.h"

static test_alloc_t alloc;
static weft_world_t *world;
static weft_component_t pos, vel, mass, frozen;

static void setup(void) {
    memset(&alloc, 0, sizeof alloc);
    world = test_world(&alloc);
    cr_assert(world != NULL);
    pos = test_register(world, "Position", sizeof(vec3_t));
    vel = test_register(world, "Velocity", sizeof(vec3_t));
    mass = test_register(world, "Mass", sizeof(float));
    frozen = test_register(world, "Frozen", 0);
}

static void teardown(void) {
    weft_world_destroy(world);
    cr_expect(eq(sz, alloc.live_bytes, 0));
}

TestSuite(query, .init = setup, .fini = teardown, .timeout = 30);

/* Entity i gets Position (x = i); Velocity (y = i) when i % 2 == 0; Mass when i % 3 == 0;
 * Frozen when i % 5 == 0. */
static void populate(int n) {
    for (int i = 0; i < n; i++) {
        weft_entity_t e = test_entity(world);
        weft_component_set(world, e, pos, &(vec3_t){(float)i, 0, 0});
        if (i % 2 == 0) {
            weft_component_set(world, e, vel, &(vec3_t){0, (float)i, 0});
        }
        if (i % 3 == 0) {
            weft_component_set(world, e, mass, &(float){(float)i});
        }
        if (i % 5 == 0) {
            weft_component_add(world, e, frozen, NULL);
        }
    }
}

static weft_query_t *make_query(const weft_query_desc_t *d) {
    weft_query_t *q = NULL;
    cr_assert(eq(int, weft_query_create(world, d, &q), WEFT_OK));
    return q;
}

/* Walk every chunk; check each entry's data against its entity and count. */
static uint32_t walk_checked(const weft_query_t *q, uint32_t chunk_rows) {
    uint32_t total = 0;
    uint32_t chunks = weft_query_chunk_count(q, chunk_rows);
    for (uint32_t k = 0; k < chunks; k++) {
        weft_iter_t it;
        cr_assert(eq(int, weft_query_iter(q, chunk_rows, k, &it), WEFT_OK));
        while (weft_iter_next(&it)) {
            for (uint32_t i = 0; i < it.rows; i++) {
                const vec3_t *p = weft_iter_get(&it, 0, i);
                const vec3_t *v = weft_iter_get(&it, 1, i);
                weft_entity_t e = weft_iter_entity(&it, i);
                cr_assert(weft_component_get(world, e, pos) == p);
                cr_assert(weft_component_get(world, e, vel) == v);
                cr_assert(eq(flt, p->x, v->y));
            }
            total += it.rows;
        }
    }
    return total;
}

Test(query, includes_and_excludes_select_the_right_entities) {
    populate(300);
    weft_query_desc_t d = {.terms = {{.component = pos, .access = WEFT_ACCESS_WRITE},
                                     {.component = vel, .access = WEFT_ACCESS_READ}},
                           .exclude = {frozen}};
    weft_query_t *q = make_query(&d);
    int want = 0;
    for (int i = 0; i < 300; i++) {
        want += i % 2 == 0 && i % 5 != 0;
    }
    cr_expect(eq(u32, weft_query_entity_count(q), (uint32_t)want));
    cr_expect(eq(u32, walk_checked(q, 0), (uint32_t)want));
    cr_expect(eq(u32, walk_checked(q, 7), (uint32_t)want));
    weft_query_destroy(q);
}

Test(query, the_smallest_pool_drives_without_a_group) {
    populate(100);
    weft_query_desc_t d = {.terms = {{.component = pos, .access = WEFT_ACCESS_READ},
                                     {.component = vel, .access = WEFT_ACCESS_READ}}};
    weft_query_t *q = make_query(&d);
    cr_expect(eq(u32, weft_query_rows(q), weft_component_rows(world, vel)));
    weft_iter_t it;
    weft_query_iter(q, 0, 0, &it);
    cr_assert(weft_iter_next(&it));
    cr_expect(it.columns[1] != NULL, "the driving term is a column");
    cr_expect(it.columns[0] == NULL, "the other term is looked up");
    cr_expect(eq(u32, it.rows, 50), "every Velocity row has Position: one batch");
    cr_expect(not(weft_iter_next(&it)));
}

Test(query, a_covering_group_drives_with_contiguous_columns) {
    weft_group_t g;
    weft_group_desc_t gd = {.components = {pos, vel}};
    cr_assert(eq(int, weft_group_create(world, &gd, &g), WEFT_OK));
    populate(1000);
    weft_query_desc_t d = {.terms = {{.component = pos, .access = WEFT_ACCESS_WRITE},
                                     {.component = vel, .access = WEFT_ACCESS_READ}}};
    weft_query_t *q = make_query(&d);
    cr_expect(eq(u32, weft_query_rows(q), weft_group_rows(world, g)));
    uint32_t chunks = weft_query_chunk_count(q, 64);
    cr_expect(eq(u32, chunks, (500 + 63) / 64));
    for (uint32_t k = 0; k < chunks; k++) {
        weft_iter_t it;
        weft_query_iter(q, 64, k, &it);
        cr_assert(weft_iter_next(&it));
        cr_expect(it.columns[0] ==
                  (char *)weft_group_column(world, g, pos) + k * 64 * sizeof(vec3_t));
        cr_expect(it.columns[1] != NULL);
        cr_expect(eq(u32, it.rows, k + 1 < chunks ? 64 : 500 - 64 * (chunks - 1)));
        cr_expect(not(weft_iter_next(&it)), "a group chunk is one batch");
    }
    cr_expect(eq(u32, walk_checked(q, 64), 500));
}

Test(query, pools_filled_in_the_same_order_give_contiguous_columns_where_they_line_up) {
    /* 200 entities with Position and Velocity added together: the pools line up. Then a few
     * removals swap rows out of step, and an exclude cuts runs short. */
    weft_entity_t e[200];
    for (int i = 0; i < 200; i++) {
        e[i] = test_entity(world);
        weft_component_set(world, e[i], pos, &(vec3_t){(float)i, 0, 0});
        weft_component_set(world, e[i], vel, &(vec3_t){0, (float)i, 0});
        if (i % 50 == 7) {
            weft_component_add(world, e[i], frozen, NULL);
        }
    }
    weft_query_desc_t d = {.terms = {{.component = pos, .access = WEFT_ACCESS_READ},
                                     {.component = vel, .access = WEFT_ACCESS_READ}}};
    weft_query_t *q = make_query(&d);
    weft_iter_t it;
    weft_query_iter(q, 0, 0, &it);
    cr_assert(weft_iter_next(&it));
    cr_expect(eq(u32, it.rows, 200), "one batch");
    cr_expect(it.columns[0] != NULL && it.columns[1] != NULL, "both columns are contiguous");
    cr_expect(not(weft_iter_next(&it)));
    /* Break the alignment: removing Velocity from e[10] swaps Velocity's last row into 10. */
    weft_component_remove(world, e[10], vel);
    weft_component_remove(world, e[150], pos);
    uint32_t want = 198;
    for (uint32_t rows = 0; rows <= 64; rows += 8) {
        cr_expect(eq(u32, walk_checked(q, rows), want), "chunk_rows %u", rows);
    }
    uint32_t batches = 0, contiguous = 0;
    weft_query_iter(q, 0, 0, &it);
    while (weft_iter_next(&it)) {
        batches++;
        contiguous += it.columns[0] != NULL && it.columns[1] != NULL;
    }
    cr_expect(contiguous > 0, "aligned stretches still become contiguous batches");
    cr_expect(contiguous < batches, "misaligned rows are looked up");
    weft_query_desc_t dx = {.terms = {{.component = vel, .access = WEFT_ACCESS_READ},
                                      {.component = pos, .access = WEFT_ACCESS_READ}},
                            .exclude = {frozen}};
    weft_query_t *qx = make_query(&dx);
    cr_expect(eq(u32, weft_query_entity_count(qx), 194));
    uint32_t total = 0;
    for (uint32_t k = 0; k < weft_query_chunk_count(qx, 32); k++) {
        weft_query_iter(qx, 32, k, &it);
        while (weft_iter_next(&it)) {
            for (uint32_t i = 0; i < it.rows; i++, total++) {
                weft_entity_t en = weft_iter_entity(&it, i);
                cr_assert(not(weft_component_has(world, en, frozen)));
                cr_assert(weft_iter_get(&it, 0, i) == weft_component_get(world, en, vel));
                cr_assert(weft_iter_get(&it, 1, i) == weft_component_get(world, en, pos));
            }
        }
    }
    cr_expect(eq(u32, total, 194));
}

Test(query, chunk_boundaries_depend_only_on_chunk_rows_and_data) {
    populate(200);
    weft_query_desc_t d = {.terms = {{.component = pos, .access = WEFT_ACCESS_READ},
                                     {.component = vel, .access = WEFT_ACCESS_READ}},
                           .exclude = {mass}};
    weft_query_t *q = make_query(&d);
    /* Per chunk of 10 driving rows (Velocity, 100 rows), every entry's entity lies in the
     * chunk's row range of the driving pool. */
    for (uint32_t k = 0; k < weft_query_chunk_count(q, 10); k++) {
        weft_iter_t it;
        weft_query_iter(q, 10, k, &it);
        while (weft_iter_next(&it)) {
            for (uint32_t i = 0; i < it.rows; i++) {
                weft_entity_t e = weft_iter_entity(&it, i);
                uint32_t row = 0;
                while (weft_component_entity_at(world, vel, row) != e) {
                    row++;
                }
                cr_assert(row >= 10 * k && row < 10 * (k + 1));
                cr_assert(not(weft_component_has(world, e, mass)));
            }
        }
    }
    weft_iter_t past;
    weft_query_iter(q, 10, 1000, &past);
    cr_expect(not(weft_iter_next(&past)), "a chunk past the end is empty");
}

Test(query, repeated_unknown_or_contradictory_components_are_einval) {
    weft_query_t *q;
    weft_query_desc_t rep = {.terms = {{.component = pos, .access = WEFT_ACCESS_READ},
                                       {.component = pos, .access = WEFT_ACCESS_READ}}};
    cr_expect(eq(int, weft_query_create(world, &rep, &q), WEFT_EINVAL));
    weft_query_desc_t both = {.terms = {{.component = pos, .access = WEFT_ACCESS_READ}},
                              .exclude = {pos}};
    cr_expect(eq(int, weft_query_create(world, &both, &q), WEFT_EINVAL));
    weft_query_desc_t unk = {.terms = {{.component = {99}, .access = WEFT_ACCESS_READ}}};
    cr_expect(eq(int, weft_query_create(world, &unk, &q), WEFT_EINVAL));
    cr_expect(q == NULL);
}

Test(query, queries_left_alive_are_freed_by_the_world) {
    weft_query_desc_t d = {.terms = {{.component = pos, .access = WEFT_ACCESS_READ}}};
    make_query(&d);
    make_query(&d);
    /* teardown checks that nothing leaks */
}

Test(query, empty_world_has_no_chunks) {
    weft_query_desc_t d = {.terms = {{.component = pos, .access = WEFT_ACCESS_READ},
                                     {.component = mass, .access = WEFT_ACCESS_READ}}};
    weft_query_t *q = make_query(&d);
    cr_expect(eq(u32, weft_query_chunk_count(q, 16), 0));
    cr_expect(eq(u32, weft_query_entity_count(q), 0));
}

/* ---- concurrent iteration from several threads ---- */

typedef struct chunk_job {
    const weft_query_t *q;
    uint32_t first, step, chunks;
    double sum;
} chunk_job_t;

static void *run_chunks(void *p) {
    chunk_job_t *j = p;
    for (uint32_t k = j->first; k < j->chunks; k += j->step) {
        weft_iter_t it;
        weft_query_iter(j->q, 128, k, &it);
        while (weft_iter_next(&it)) {
            for (uint32_t i = 0; i < it.rows; i++) {
                vec3_t *pp = weft_iter_get(&it, 0, i);
                const vec3_t *v = weft_iter_get(&it, 1, i);
                pp->z += v->y; /* each entity belongs to exactly one chunk */
                j->sum += (double)v->y;
            }
        }
    }
    return NULL;
}

Test(query, several_threads_can_iterate_different_chunks_at_once) {
    populate(20000);
    weft_query_desc_t d = {.terms = {{.component = pos, .access = WEFT_ACCESS_WRITE},
                                     {.component = vel, .access = WEFT_ACCESS_READ}}};
    weft_query_t *q = make_query(&d);
    enum { T = 4 };
    chunk_job_t jobs[T];
    pthread_t th[T];
    uint32_t chunks = weft_query_chunk_count(q, 128);
    for (uint32_t t = 0; t < T; t++) {
        jobs[t] = (chunk_job_t){.q = q, .first = t, .step = T, .chunks = chunks};
        cr_assert(eq(int, pthread_create(&th[t], NULL, run_chunks, &jobs[t]), 0));
    }
    double sum = 0;
    for (uint32_t t = 0; t < T; t++) {
        pthread_join(th[t], NULL);
        sum += jobs[t].sum;
    }
    double want = 0;
    for (int i = 0; i < 20000; i += 2) {
        want += i;
    }
    cr_expect(eq(dbl, sum, want));
    for (uint32_t r = 0; r < weft_component_rows(world, pos); r++) {
        const vec3_t *p = weft_component_row(world, pos, r);
        int i = (int)p->x;
        cr_assert(eq(flt, p->z, i % 2 == 0 ? (float)i : 0.0f));
    }
}

/* A query without include terms, or with an entry after the first zero of a list, is
 * WEFT_EINVAL in every build. */
Test(query, a_query_without_terms_or_with_a_gap_in_a_list_is_einval) {
    weft_query_t *q = (weft_query_t *)&q;
    weft_query_desc_t none = {0};
    cr_expect(eq(int, weft_query_create(world, &none, &q), WEFT_EINVAL));
    cr_expect(q == NULL);
    weft_query_desc_t gap = {.terms = {{.component = pos, .access = WEFT_ACCESS_READ},
                                       {.component = {0}},
                                       {.component = vel, .access = WEFT_ACCESS_READ}}};
    cr_expect(eq(int, weft_query_create(world, &gap, &q), WEFT_EINVAL));
    cr_expect(strstr(weft_last_error(), "terms[2] is set after the list ended") != NULL, "%s",
              weft_last_error());
    weft_query_desc_t xgap = {.terms = {{.component = pos, .access = WEFT_ACCESS_READ}},
                              .exclude = {{0}, vel}};
    cr_expect(eq(int, weft_query_create(world, &xgap, &q), WEFT_EINVAL));
    cr_expect(strstr(weft_last_error(), "exclude[1] is set after the list ended") != NULL, "%s",
              weft_last_error());
}
