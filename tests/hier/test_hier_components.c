/* test_hier_components.c: the hierarchy's `local`, `world` and `link` components as the
 * per-entity component calls see them (module-owned components, weft/module.h): reads and
 * writes that reach the hierarchy, refusals that leave the world unchanged, and user systems
 * ordered against the hierarchy system by their declarations at 1 to 8 workers. */
#include <criterion/criterion.h>
#include <string.h>

#include "hier_ref.h"
#include "hier_world.h"
#include "weft.h"

TestSuite(hier_components, .timeout = 120);

static hr_fail_t fail;
#define CHECK(cond, ...) hr_check(&fail, (cond), __VA_ARGS__)

/* n nodes, node i (> 0) under a random earlier node, attached keeping its world (so binds
 * are not the identity) every third node and keeping its local otherwise. */
static void build_forest(weft_world_t *w, hr_rng_t *r, weft_entity_t *e, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        const weft_transform_t t = hr_transform(r);
        cr_assert(weft_entity_create(w, &e[i]) == WEFT_OK);
        cr_assert(weft_hier_add(w, e[i], &t) == WEFT_OK);
        if (i > 0 && hr_below(r, 8) != 0) {
            const weft_entity_t p = e[hr_below(r, i)];
            cr_assert(weft_hier_attach_ex(w, e[i], p,
                                          i % 3 == 0 ? WEFT_HIER_KEEP_WORLD
                                                     : WEFT_HIER_KEEP_LOCAL) == WEFT_OK);
        }
    }
    cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
}

/* Every node's world matrix equals the documented formula, bit for bit. */
static bool worlds_exact(weft_world_t *w, const weft_entity_t *e, uint32_t n, const char *what) {
    bool ok = true;
    for (uint32_t i = 0; ok && i < n; i++) {
        const weft_mat4_t ref = hw_ref_world(w, e[i]);
        ok = CHECK(hr_mat_eq(weft_hier_world(w, e[i]), &ref), "%s: node %u differs", what, i);
    }
    return ok;
}

/* A one-thread world holding build_forest's n nodes, their component ids in *hc and one
 * entity that is not a node in *plain. */
static weft_world_t *forest_world(hr_rng_t *r, weft_entity_t *e, uint32_t n,
                                  weft_hier_components_t *hc, weft_entity_t *plain) {
    weft_world_t *w = hw_new_world(1, WEFT_EXECUTION_INLINE);
    build_forest(w, r, e, n);
    cr_assert(weft_hier_components(w, hc) == WEFT_OK);
    cr_assert(weft_entity_create(w, plain) == WEFT_OK);
    return w;
}

Test(hier_components, get_and_has_read_the_hierarchy_and_set_or_get_mut_on_local_is_recomputed) {
    hr_rng_t r = hr_seeded(&fail, "component calls");
    enum { N = 300 };
    weft_entity_t e[N], plain;
    weft_hier_components_t hc;
    weft_world_t *w = forest_world(&r, e, N, &hc, &plain);
    for (uint32_t i = 0; i < N; i++) {
        CHECK(weft_component_get(w, e[i], hc.local) == weft_hier_local_read(w, e[i]) &&
                  weft_component_get(w, e[i], hc.world) == (const void *)weft_hier_world(w, e[i]) &&
                  weft_component_get(w, e[i], hc.link) == (const void *)weft_hier_link(w, e[i]),
              "node %u: get reads the hierarchy's data", i);
        CHECK(weft_component_has(w, e[i], hc.local) && weft_component_has(w, e[i], hc.world) &&
                  weft_component_has(w, e[i], hc.link),
              "node %u: has", i);
    }
    cr_assert(!weft_component_has(w, plain, hc.local) &&
              weft_component_get(w, plain, hc.world) == NULL);
    cr_assert(weft_component_rows(w, hc.local) == N, "the rows are the store's (no holes)");

    /* Each round writes a few locals, half through set and half through get_mut, and
     * updates: the result must equal the formula (a missed mark keeps stale matrices). */
    for (int round = 0; round < 6; round++) {
        for (int k = 0; k < 5; k++) {
            const uint32_t i = hr_below(&r, N);
            const weft_transform_t t = hr_transform(&r);
            if (k % 2 == 0) {
                cr_assert(weft_component_set(w, e[i], hc.local, &t) == WEFT_OK, "%s",
                          weft_last_error());
            } else {
                weft_transform_t *p = weft_component_get_mut(w, e[i], hc.local);
                cr_assert(p != NULL);
                *p = t;
            }
            cr_assert(memcmp(weft_hier_local_read(w, e[i]), &t, sizeof(t)) == 0);
        }
        cr_assert(weft_hier_update(w, WEFT_HIER_PASS_AUTO) == WEFT_OK);
        weft_hier_stats_t st;
        weft_hier_stats(w, &st);
        CHECK(st.recomputed > 0 && st.recomputed < N, "round %d: a sparse update (%u rows)", round,
              st.recomputed);
        worlds_exact(w, e, N, "after set/get_mut and an update");
    }
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
    weft_world_destroy(w);
}

/* ---- refusals ----------------------------------------------------------------- */

static weft_component_t refuse_comp;
static weft_entity_t refuse_target;
static weft_result_t cmd_results[3];

static void record_commands(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    weft_transform_t t = weft_transform_identity();
    cmd_results[0] = weft_cmd_add(ctx->cmd, refuse_target, refuse_comp);
    cmd_results[1] = weft_cmd_set(ctx->cmd, refuse_target, refuse_comp, &t);
    cmd_results[2] = weft_cmd_remove(ctx->cmd, refuse_target, refuse_comp);
}

/* r is the refusal expected, and the message names the hierarchy call to use. */
static void refused(weft_result_t got, weft_result_t want, const char *call, const char *hint) {
    cr_assert(got == want, "%s: %s, expected %s", call, weft_result_name(got),
              weft_result_name(want));
    cr_assert(strstr(weft_last_error(), hint) != NULL, "%s: message '%s' names %s", call,
              weft_last_error(), hint);
}

Test(hier_components, adding_removing_and_writing_world_or_link_are_refused_and_change_nothing) {
    hr_rng_t r = hr_seeded(&fail, "refusals");
    enum { N = 40 };
    weft_entity_t e[N], plain;
    weft_hier_components_t hc;
    weft_world_t *w = forest_world(&r, e, N, &hc, &plain);
    const uint64_t before = weft_world_hash(w);
    const weft_component_t cs[3] = {hc.local, hc.world, hc.link};
    const char *const hints[3] = {"weft_hier_add", "weft_hier_update", "weft_hier_attach"};
    unsigned char bytes[sizeof(weft_parent_link_t)] = {0};
    const weft_entity_t child = e[N - 1];
    for (int c = 0; c < 3; c++) {
        refused(weft_component_add(w, plain, cs[c], NULL), WEFT_ESTATE, "add", hints[c]);
        refused(weft_component_add(w, child, cs[c], NULL), WEFT_ESTATE, "add to a node", hints[c]);
        refused(weft_component_remove(w, child, cs[c]), WEFT_ESTATE, "remove", hints[c]);
        refused(weft_component_remove_ordered(w, child, cs[c]), WEFT_ESTATE, "remove_ordered",
                hints[c]);
        refused(weft_component_add_n(w, &plain, 1, cs[c]), WEFT_ESTATE, "add_n", hints[c]);
        refused(weft_component_remove_n(w, &child, 1, cs[c]), WEFT_ESTATE, "remove_n", hints[c]);
        refused(weft_component_set_n(w, &child, 1, cs[c], bytes), WEFT_ESTATE, "set_n", hints[c]);
        if (c > 0) {
            weft_query_t *q = NULL;
            refused(
                weft_query_create(w,
                                  &(weft_query_desc_t){
                                      .terms = {{.component = cs[c], .access = WEFT_ACCESS_WRITE}}},
                                  &q),
                WEFT_EINVAL, "a query writing it", hints[c]);
            refused(weft_component_set(w, child, cs[c], bytes), WEFT_ESTATE, "set", hints[c]);
            cr_assert(weft_component_get_mut(w, child, cs[c]) == NULL);
            cr_assert(strstr(weft_last_error(), hints[c]) != NULL, "get_mut: %s",
                      weft_last_error());
        }
    }
    const weft_transform_t t = hr_transform(&r);
    refused(weft_component_set(w, plain, hc.local, &t), WEFT_ESTATE, "set local on a non-node",
            "weft_hier_add");

    /* Commands recorded from a system are refused at record time. */
    refuse_comp = hc.local;
    refuse_target = child;
    weft_system_t s;
    cr_assert(weft_system_register(
                  w, &(weft_system_desc_t){.name = "record_commands", .fn = record_commands}, &s) ==
              WEFT_OK);
    cr_assert(weft_world_progress(w, 0.0f) == WEFT_OK);
    for (int k = 0; k < 3; k++) {
        cr_assert(cmd_results[k] == WEFT_ESTATE, "command %d: %s", k,
                  weft_result_name(cmd_results[k]));
    }
    cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
    cr_assert(weft_world_hash(w) == before, "every refusal left the world unchanged");
    cr_assert(weft_hier_count(w) == N && weft_component_rows(w, hc.local) == N);
    weft_world_destroy(w);
}

/* ---- user systems around the hierarchy system ---------------------------------- */

enum { SYS_N = 1500, SYS_FRAMES = 4 };
static weft_hier_components_t sys_hc;
static weft_component_t seen_c; /* per node: its world matrix as the reader saw it */
static uint32_t sys_frame;

/* The local change of node entity e in frame f: a pure function of both. */
static void move_local(weft_transform_t *t, weft_entity_t e, uint32_t f) {
    const uint32_t k = (uint32_t)e * 2654435761u + f * 40503u;
    if (k % 7u == 0u) { /* about 1 node in 7 moves per frame */
        t->position.x += (float)(k % 13u) * 0.25f;
        t->position.z -= (float)(k % 5u) * 0.5f;
    }
}

/* Writes `local` (declared), iterating the node tag. */
static void mover(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            const weft_entity_t e = weft_iter_entity(it, i);
            const uint32_t k = (uint32_t)e * 2654435761u + sys_frame * 40503u;
            if (k % 7u == 0u) { /* only movers take a writable pointer (it marks the node) */
                move_local(weft_component_get_mut(ctx->world, e, sys_hc.local), e, sys_frame);
            }
        }
    }
}

/* Reads `world` (declared) into each node's Seen row. */
static void reader(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            const weft_mat4_t *m =
                weft_component_get(ctx->world, weft_iter_entity(it, i), sys_hc.world);
            memcpy(weft_iter_get(it, 1, i), m, sizeof(*m));
        }
    }
}

static weft_world_t *sys_world(uint32_t workers, hr_rng_t r, weft_entity_t *e) {
    weft_world_t *w = hw_world_of(workers);
    build_forest(w, &r, e, SYS_N);
    cr_assert(weft_hier_components(w, &sys_hc) == WEFT_OK);
    seen_c = hw_component(w, "Seen", sizeof(weft_mat4_t), _Alignof(weft_mat4_t));
    for (uint32_t i = 0; i < SYS_N; i++) {
        cr_assert(weft_component_add(w, e[i], seen_c, NULL) == WEFT_OK);
    }
    return w;
}

/* A mover (writes local), the hierarchy system and a reader (reads world), registered in
 * that order in one phase: their declarations order them mover -> hierarchy -> reader at
 * every worker count, so each frame the reader sees that frame's world matrices. The model
 * makes the same changes with direct calls on one thread. */
Test(hier_components, systems_declaring_local_and_world_run_around_the_update_at_1_to_8_workers) {
    static weft_entity_t e[SYS_N];
    const hr_rng_t seed = hr_seeded(&fail, "systems"); /* one forest for every world */
    weft_world_t *m = sys_world(1, seed, e);
    for (uint32_t f = 0; f < SYS_FRAMES; f++) {
        for (uint32_t i = 0; i < SYS_N; i++) {
            const uint32_t k = (uint32_t)e[i] * 2654435761u + f * 40503u;
            if (k % 7u == 0u) {
                move_local(weft_hier_local(m, e[i]), e[i], f);
            }
        }
        cr_assert(weft_hier_update(m, WEFT_HIER_PASS_AUTO) == WEFT_OK);
        for (uint32_t i = 0; i < SYS_N; i++) {
            cr_assert(weft_component_set(m, e[i], seen_c, weft_hier_world(m, e[i])) == WEFT_OK);
        }
    }
    cr_assert(worlds_exact(m, e, SYS_N, "model"), "%s", hr_fail_message(&fail));
    const uint64_t model = weft_world_hash(m);
    weft_world_destroy(m);

    const uint32_t workers[4] = {1, 2, 4, 8};
    for (int wi = 0; wi < 4; wi++) {
        weft_world_t *w = sys_world(workers[wi], seed, e);
        weft_system_t s;
        hw_system(w, &(weft_system_desc_t){.name = "mover",
                                           .fn = mover,
                                           .terms = {{.component = sys_hc.node}},
                                           .writes = {sys_hc.local},
                                           .chunk_size = 128});
        cr_assert(weft_hier_register_system(w, NULL, &s) == WEFT_OK);
        hw_system(
            w, &(weft_system_desc_t){.name = "reader",
                                     .fn = reader,
                                     .terms = {{.component = sys_hc.node},
                                               {.component = seen_c, .access = WEFT_ACCESS_WRITE}},
                                     .reads = {sys_hc.world},
                                     .chunk_size = 128});
        for (sys_frame = 0; sys_frame < SYS_FRAMES; sys_frame++) {
            cr_assert(weft_world_progress(w, 0.0f) == WEFT_OK, "%s", weft_last_error());
        }
        cr_assert(worlds_exact(w, e, SYS_N, "systems"), "%u workers: %s", workers[wi],
                  hr_fail_message(&fail));
        cr_assert(weft_world_hash(w) == model, "%u workers: the world equals the model's",
                  workers[wi]);
        weft_world_destroy(w);
    }
}
