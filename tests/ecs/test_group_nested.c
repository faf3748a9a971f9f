/* test_group_nested.c: nested groups ({A,B} c {A,B,C} c {A,B,C,D}) share pools, each keeping
 * dense aligned columns, through random single and bulk churn against a model; groups that
 * overlap without nesting are refused and change nothing. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>

#include "ecs_fixture.h"
#include "weft_test.h"

#define NC 6         /* components c0..c5 */
#define MAX_ENTS 512 /* live entities the model tracks */

static test_alloc_t alloc;
static weft_world_t *world;
static weft_component_t comp[NC];

static void setup(void) {
    memset(&alloc, 0, sizeof alloc);
    world = test_world(&alloc);
    cr_assert(world != NULL);
    for (int c = 0; c < NC; c++) {
        char name[8];
        snprintf(name, sizeof name, "C%d", c);
        comp[c] = test_register(world, name, sizeof(int32_t));
    }
}

static void teardown(void) {
    weft_world_destroy(world);
    cr_expect(eq(sz, alloc.live_bytes, 0));
}

TestSuite(group_nested, .init = setup, .fini = teardown, .timeout = 60);

/* ---- the model -------------------------------------------------------------- */

typedef struct model {
    weft_entity_t e[MAX_ENTS];
    bool has[MAX_ENTS][NC];
    int32_t val[MAX_ENTS][NC];
    uint32_t count;
} model_t;

static model_t m;

/* A group of the test: its members as component indices, and its handle once created. */
typedef struct tgroup {
    int members[4];
    int count;
    weft_group_t g;
} tgroup_t;

static weft_result_t create_group(tgroup_t *t) {
    weft_group_desc_t d = {0};
    for (int i = 0; i < t->count; i++) {
        d.components[i] = comp[t->members[i]];
    }
    return weft_group_create(world, &d, &t->g);
}

static bool has_all(uint32_t k, const tgroup_t *t) {
    for (int i = 0; i < t->count; i++) {
        if (!m.has[k][t->members[i]]) {
            return false;
        }
    }
    return true;
}

static uint32_t model_slot(weft_entity_t e) {
    for (uint32_t k = 0; k < m.count; k++) {
        if (m.e[k] == e) {
            return k;
        }
    }
    cr_assert(false, "entity %llu not in the model", (unsigned long long)e);
    return 0;
}

/* Every created group: rows [0, n) hold, in every member pool, exactly the entities that have
 * every member (with their values), and an inner group's rows are the first of its outer one. */
static void expect_groups(const tgroup_t *groups, int count, uint32_t step) {
    for (int gi = 0; gi < count; gi++) {
        const tgroup_t *t = &groups[gi];
        if (t->g.id == 0) {
            continue;
        }
        uint32_t n = weft_group_rows(world, t->g), want = 0;
        for (uint32_t k = 0; k < m.count; k++) {
            want += has_all(k, t);
        }
        cr_assert(eq(u32, n, want), "step %u: group %d has %u rows, the model %u", step, gi, n,
                  want);
        const uint32_t *ents = weft_group_entities(world, t->g);
        for (uint32_t r = 0; r < n; r++) {
            weft_entity_t e = weft_entity_from_index(world, ents[r]);
            uint32_t k = model_slot(e);
            cr_assert(has_all(k, t), "step %u: group %d row %u lacks a member", step, gi, r);
            for (int i = 0; i < t->count; i++) {
                int c = t->members[i];
                cr_assert(eq(u64, weft_component_entity_at(world, comp[c], r), e),
                          "step %u: group %d member C%d row %u is not aligned", step, gi, c, r);
                const int32_t *col = weft_group_column(world, t->g, comp[c]);
                cr_assert(eq(i32, col[r], m.val[k][c]), "step %u: group %d C%d row %u value", step,
                          gi, c, r);
            }
        }
    }
    /* nesting: group i+1 is inside group i in the chain groups[0..3) */
    for (int gi = 0; gi + 1 < 3; gi++) {
        if (groups[gi].g.id == 0 || groups[gi + 1].g.id == 0) {
            continue;
        }
        uint32_t inner_n = weft_group_rows(world, groups[gi + 1].g);
        const uint32_t *outer = weft_group_entities(world, groups[gi].g);
        const uint32_t *inner = weft_group_entities(world, groups[gi + 1].g);
        for (uint32_t r = 0; r < inner_n; r++) {
            cr_assert(eq(u32, outer[r], inner[r]), "step %u: inner prefix row %u", step, r);
        }
    }
}

/* ---- operations -------------------------------------------------------------- */

static void op_create(wt_rng_t *rng) {
    uint32_t k = m.count++;
    m.e[k] = test_entity(world);
    memset(m.has[k], 0, sizeof m.has[k]);
    for (int c = 0; c < NC; c++) {
        if (wt_rng_below(rng, 2)) {
            int32_t v = (int32_t)wt_rng_below(rng, 1000000);
            cr_assert(eq(int, weft_component_set(world, m.e[k], comp[c], &v), WEFT_OK));
            m.has[k][c] = true;
            m.val[k][c] = v;
        }
    }
}

static void op_create_with(wt_rng_t *rng) {
    uint32_t n = 1 + wt_rng_below(rng, 8);
    weft_component_t list[NC];
    int idx[NC];
    uint32_t count = 0;
    for (int c = 0; c < NC; c++) {
        if (wt_rng_below(rng, 3) != 0) {
            idx[count] = c;
            list[count++] = comp[c];
        }
    }
    int32_t vals[NC][8];
    const void *values[NC];
    for (uint32_t j = 0; j < count; j++) {
        for (uint32_t i = 0; i < n; i++) {
            vals[j][i] = (int32_t)wt_rng_below(rng, 1000000);
        }
        values[j] = vals[j];
    }
    weft_entity_t out[8];
    cr_assert(eq(int, weft_entity_create_with(world, n, list, count, values, out), WEFT_OK));
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = m.count++;
        m.e[k] = out[i];
        memset(m.has[k], 0, sizeof m.has[k]);
        for (uint32_t j = 0; j < count; j++) {
            m.has[k][idx[j]] = true;
            m.val[k][idx[j]] = vals[j][i];
        }
    }
}

static void op_add(wt_rng_t *rng) {
    uint32_t k = wt_rng_below(rng, m.count);
    int c = (int)wt_rng_below(rng, NC);
    int32_t v = (int32_t)wt_rng_below(rng, 1000000);
    cr_assert(eq(int, weft_component_set(world, m.e[k], comp[c], &v), WEFT_OK));
    m.has[k][c] = true;
    m.val[k][c] = v;
}

static void op_remove(wt_rng_t *rng) {
    uint32_t k = wt_rng_below(rng, m.count);
    int c = (int)wt_rng_below(rng, NC);
    weft_result_t r = weft_component_remove(world, m.e[k], comp[c]);
    cr_assert(eq(int, r, m.has[k][c] ? WEFT_OK : WEFT_ENOENT));
    m.has[k][c] = false;
}

static void op_destroy(wt_rng_t *rng) {
    uint32_t k = wt_rng_below(rng, m.count);
    cr_assert(eq(int, weft_entity_destroy(world, m.e[k]), WEFT_OK));
    m.count--;
    m.e[k] = m.e[m.count];
    memcpy(m.has[k], m.has[m.count], sizeof m.has[k]);
    memcpy(m.val[k], m.val[m.count], sizeof m.val[k]);
}

/* add_n or remove_n of one component over the entities that lack (have) it. */
static void op_bulk(wt_rng_t *rng, bool add) {
    int c = (int)wt_rng_below(rng, NC);
    weft_entity_t es[16];
    uint32_t ks[16], n = 0;
    for (uint32_t k = 0; k < m.count && n < 16; k++) {
        if (m.has[k][c] != add && wt_rng_below(rng, 4) == 0) {
            ks[n] = k;
            es[n++] = m.e[k];
        }
    }
    if (add) {
        cr_assert(eq(int, weft_component_add_n(world, es, n, comp[c]), WEFT_OK));
    } else {
        cr_assert(eq(int, weft_component_remove_n(world, es, n, comp[c]), WEFT_OK));
    }
    for (uint32_t i = 0; i < n; i++) {
        m.has[ks[i]][c] = add;
        m.val[ks[i]][c] = 0; /* add_n zero-initialises */
    }
}

/* ---- tests ------------------------------------------------------------------- */

Test(group_nested, a_chain_of_nested_groups_stays_aligned_under_random_churn) {
    uint64_t seed =
        wt_seed("group_nested/a_chain_of_nested_groups_stays_aligned_under_random_churn");
    wt_rng_t rng = {seed};
    memset(&m, 0, sizeof m);
    tgroup_t groups[4] = {
        {.members = {0, 1}, .count = 2},
        {.members = {0, 1, 2}, .count = 3},
        {.members = {0, 1, 2, 3}, .count = 4},
        {.members = {4, 5}, .count = 2},
    };
    /* the groups are created in a random order at random steps, inner ones before outer
     * ones as often as not, so creation must align around existing groups too */
    int order[4] = {0, 1, 2, 3};
    for (int i = 3; i > 0; i--) {
        int j = (int)wt_rng_below(&rng, (uint32_t)i + 1u), tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    int created = 0;
    const uint32_t steps = 3000;
    for (uint32_t step = 0; step < steps; step++) {
        if (created < 4 && step == (uint32_t)created * 400u + wt_rng_below(&rng, 2)) {
            cr_assert(eq(int, create_group(&groups[order[created]]), WEFT_OK),
                      "step %u: group %d: %s", step, order[created], weft_last_error());
            created++;
            expect_groups(groups, 4, step);
        }
        uint32_t pick = wt_rng_below(&rng, 100);
        if (m.count < 8 || (pick < 30 && m.count + 8 <= MAX_ENTS)) {
            op_create(&rng);
        } else if (pick < 40 && m.count + 8 <= MAX_ENTS) {
            op_create_with(&rng);
        } else if (pick < 60) {
            op_add(&rng);
        } else if (pick < 80) {
            op_remove(&rng);
        } else if (pick < 90) {
            op_destroy(&rng);
        } else {
            op_bulk(&rng, pick < 95);
        }
        if (step % 25 == 0) {
            expect_groups(groups, 4, step);
        }
    }
    expect_groups(groups, 4, steps);
}

Test(group_nested, a_query_over_the_inner_set_sees_every_entity_once) {
    tgroup_t groups[2] = {{.members = {0, 1}, .count = 2}, {.members = {0, 1, 2}, .count = 3}};
    cr_assert(eq(int, create_group(&groups[0]), WEFT_OK));
    cr_assert(eq(int, create_group(&groups[1]), WEFT_OK));
    uint32_t want = 0;
    for (int32_t i = 0; i < 300; i++) {
        weft_entity_t e = test_entity(world);
        weft_component_set(world, e, comp[0], &i);
        weft_component_set(world, e, comp[1], &i);
        if (i % 3 != 0) {
            weft_component_set(world, e, comp[2], &i);
            want += 1;
        }
    }
    weft_query_desc_t d = {.terms = {{.component = comp[0], .access = WEFT_ACCESS_READ},
                                     {.component = comp[1], .access = WEFT_ACCESS_READ},
                                     {.component = comp[2], .access = WEFT_ACCESS_READ}}};
    weft_query_t *q = NULL;
    cr_assert(eq(int, weft_query_create(world, &d, &q), WEFT_OK));
    cr_expect(eq(u32, weft_query_rows(q), want), "the inner group drives: its rows only");
    weft_iter_t it;
    cr_assert(eq(int, weft_query_iter(q, 0, 0, &it), WEFT_OK));
    uint32_t seen = 0;
    while (weft_iter_next(&it)) {
        for (uint32_t t = 0; t < 3; t++) { /* the group covers every term: dense columns */
            cr_assert(it.columns[t] != NULL, "term %u has no column", t);
        }
        for (uint32_t i = 0; i < it.rows; i++) {
            const int32_t *a = weft_iter_get(&it, 0, i), *b = weft_iter_get(&it, 1, i),
                          *c = weft_iter_get(&it, 2, i);
            cr_assert(eq(i32, *a, *b));
            cr_assert(eq(i32, *b, *c));
            cr_assert(ne(i32, *a % 3, 0));
            seen++;
        }
    }
    cr_expect(eq(u32, seen, want));
    weft_query_destroy(q);
}

Test(group_nested, groups_that_overlap_without_nesting_are_refused_naming_both) {
    tgroup_t ab = {.members = {0, 1}, .count = 2}, ef = {.members = {4, 5}, .count = 2};
    cr_assert(eq(int, create_group(&ab), WEFT_OK));
    cr_assert(eq(int, create_group(&ef), WEFT_OK));
    weft_entity_t e = test_entity(world);
    for (int c = 0; c < NC; c++) {
        weft_component_add(world, e, comp[c], NULL);
    }
    tgroup_t ac = {.members = {0, 2}, .count = 2};
    cr_expect(eq(int, create_group(&ac), WEFT_ECONFLICT));
    cr_expect(eq(u32, ac.g.id, 0));
    const char *msg = weft_last_error();
    cr_expect(strstr(msg, "{C0, C2}") != NULL && strstr(msg, "{C0, C1}") != NULL, "%s", msg);
    /* {C0, C1, C4, C5} contains both, but would join two chains */
    tgroup_t both = {.members = {0, 1, 4, 5}, .count = 4};
    cr_expect(eq(int, create_group(&both), WEFT_ECONFLICT));
    msg = weft_last_error();
    cr_expect(strstr(msg, "{C0, C1}") != NULL && strstr(msg, "{C4, C5}") != NULL, "%s", msg);
    /* nothing changed: the groups and their rows are as before */
    cr_expect(eq(u32, weft_group_rows(world, ab.g), 1));
    cr_expect(eq(u32, weft_group_rows(world, ef.g), 1));
    cr_expect(eq(u32, weft_group_of(world, comp[2]).id, 0));
    /* a nested request is fine, and the same member set returns the same group */
    tgroup_t abc = {.members = {0, 1, 2}, .count = 3}, again = abc;
    cr_expect(eq(int, create_group(&abc), WEFT_OK));
    cr_expect(eq(int, create_group(&again), WEFT_OK));
    cr_expect(eq(u32, abc.g.id, again.g.id));
    cr_expect(eq(u32, weft_group_rows(world, abc.g), 1));
    cr_expect(eq(u32, weft_group_of(world, comp[0]).id, ab.g.id), "the outermost group");
    cr_expect(eq(u32, weft_group_of(world, comp[2]).id, abc.g.id));
}

/* Group invariants read through the public API alone (no model): rows [0, n) aligned in
 * every member pool, and n the number of entities having every member. */
static void expect_aligned_any(const tgroup_t *t, const char *when) {
    uint32_t n = weft_group_rows(world, t->g), all = 0;
    weft_component_t lead = comp[t->members[0]];
    for (uint32_t r = 0; r < weft_component_rows(world, lead); r++) {
        weft_entity_t e = weft_component_entity_at(world, lead, r);
        bool every = true;
        for (int i = 1; i < t->count; i++) {
            every = every && weft_component_has(world, e, comp[t->members[i]]);
        }
        all += every;
        for (int i = 0; i < t->count && r < n; i++) {
            cr_assert(eq(u64, weft_component_entity_at(world, comp[t->members[i]], r), e),
                      "%s: C%d row %u is not aligned", when, t->members[i], r);
        }
        cr_assert(every || r >= n, "%s: row %u is in the prefix without every member", when, r);
    }
    cr_assert(eq(u32, n, all), "%s: %u rows in the group, %u entities have every member", when, n,
              all);
}

Test(group_nested, an_archive_loads_into_nested_groups_created_inner_first) {
    uint64_t seed = wt_seed("group_nested/an_archive_loads_into_nested_groups_created_inner_first");
    wt_rng_t rng = {seed};
    memset(&m, 0, sizeof m);
    /* inner first, so the inner groups have the lower ids */
    tgroup_t groups[3] = {{.members = {0, 1, 2, 3}, .count = 4},
                          {.members = {0, 1, 2}, .count = 3},
                          {.members = {0, 1}, .count = 2}};
    for (int i = 0; i < 3; i++) {
        cr_assert(eq(int, create_group(&groups[i]), WEFT_OK), "%s", weft_last_error());
    }
    for (int i = 0; i < 200; i++) {
        op_create(&rng);
    }
    weft_membuf_t buf = {0};
    weft_writer_t w = weft_membuf_writer(&buf);
    cr_assert(eq(int, weft_archive_save(world, NULL, &w), WEFT_OK));
    /* loading into the same world adds a disjoint copy, aligned by the loader */
    cr_assert(eq(int, weft_archive_load_memory(world, buf.data, buf.size, NULL, NULL), WEFT_OK));
    for (int i = 0; i < 3; i++) {
        expect_aligned_any(&groups[i], "after the load");
    }
    weft_membuf_free(&buf);
}
