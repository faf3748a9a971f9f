/* test_ready.c: the ready-list run of graph phases (src/sched/ready.h): every unit runs once
 * per frame, each system only after all of its predecessors' chunks, at several worker
 * counts, on chains (one predecessor: no count), a fan-out from a chunked system and a
 * fan-in of several predecessors into a chunked system. */
#include "sched_fixture.h"

#define CHAINS 12
#define FANOUT 6
#define MAX_NODES (CHAINS * 3 + FANOUT + 2)

typedef struct node {
    uint32_t id;
    uint32_t npreds;
    uint32_t preds[FANOUT];
    uint32_t chunks; /* expected chunks per frame */
} node_t;

static node_t nodes[MAX_NODES];
static uint32_t nnodes;
static _Atomic uint32_t chunks_done[MAX_NODES];
static _Atomic uint32_t workers_seen;

/* A few microseconds of arithmetic, so the measured-cost rule keeps the phase threaded. */
static float busy(float v) {
    for (int k = 0; k < 2000; k++) {
        v = v * 0.999f + 0.25f;
    }
    return v;
}

static void ordered_body(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const node_t *n = ctx->user;
    for (uint32_t p = 0; p < n->npreds; p++) {
        const node_t *q = &nodes[n->preds[p]];
        CHECK(atomic_load(&chunks_done[q->id]) == q->chunks);
    }
    CHECK(atomic_load(&chunks_done[n->id]) < n->chunks);
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            float *x = weft_iter_get(it, 0, i);
            *x = busy(*x);
        }
    }
    atomic_fetch_or(&workers_seen, 1u << (ctx->worker & 31u));
    atomic_fetch_add(&chunks_done[n->id], 1);
}

static node_t *add_node(uint32_t chunks) {
    node_t *n = &nodes[nnodes];
    *n = (node_t){.id = nnodes, .chunks = chunks};
    nnodes++;
    return n;
}

/* A system writing `x` in chunks of 8 rows. */
static void writer_of(weft_world_t *w, const char *name, node_t *n, weft_component_t x) {
    must_register(w, &(weft_system_desc_t){.name = name,
                                           .fn = ordered_body,
                                           .user = n,
                                           .terms = {W(x)},
                                           .parallel = true,
                                           .chunk_size = 8});
}

/* One phase: CHAINS chains of 3 systems (each chain writes its own component); "src" writes
 * X in 4 chunks, FANOUT systems read X and write their own component, "sink" writes X in 4
 * chunks after all of them. */
static void build(weft_world_t *w) {
    nnodes = 0;
    char name[32];
    for (int i = 0; i < CHAINS; i++) {
        snprintf(name, sizeof name, "c%d", i);
        weft_component_t c = float_component(w, name);
        float_rows(w, c, 2);
        for (int j = 0; j < 3; j++) {
            node_t *n = add_node(1);
            if (j > 0) {
                n->preds[n->npreds++] = n->id - 1;
            }
            snprintf(name, sizeof name, "chain%d_%d", i, j);
            must_register(w, &(weft_system_desc_t){
                                 .name = name, .fn = ordered_body, .user = n, .terms = {W(c)}});
        }
    }
    weft_component_t x = float_component(w, "X");
    float_rows(w, x, 32);
    node_t *src = add_node(4);
    writer_of(w, "src", src, x);
    node_t *sink_preds[FANOUT];
    for (int k = 0; k < FANOUT; k++) {
        snprintf(name, sizeof name, "y%d", k);
        weft_component_t y = float_component(w, name);
        float_rows(w, y, 1);
        node_t *n = add_node(1);
        n->preds[n->npreds++] = src->id;
        sink_preds[k] = n;
        snprintf(name, sizeof name, "fan%d", k);
        must_register(w, &(weft_system_desc_t){
                             .name = name, .fn = ordered_body, .user = n, .terms = {R(x), W(y)}});
    }
    node_t *sink = add_node(4);
    for (int k = 0; k < FANOUT; k++) {
        sink->preds[sink->npreds++] = sink_preds[k]->id;
    }
    writer_of(w, "sink", sink, x);
}

Test(ready, every_unit_runs_once_after_all_of_its_predecessors) {
    const uint32_t workers[3] = {2, 3, 4};
    for (int k = 0; k < 3; k++) {
        weft_world_t *w = NULL;
        weft_world_desc_t d = {.worker_count = workers[k]};
        cr_assert(eq(int, weft_world_create(&d, &w), WEFT_OK));
        build(w);
        cr_assert(eq(u32, edge_count(w), CHAINS * 2 + FANOUT * 2));
        atomic_store(&workers_seen, 0);
        for (int fr = 0; fr < 24; fr++) {
            for (uint32_t i = 0; i < nnodes; i++) {
                atomic_store(&chunks_done[i], 0);
            }
            cr_assert(eq(int, weft_world_progress(w, 0.0f), WEFT_OK), "%s", weft_last_error());
            CHECKED();
            for (uint32_t i = 0; i < nnodes; i++) {
                cr_assert(eq(u32, atomic_load(&chunks_done[i]), nodes[i].chunks),
                          "system %u, frame %d, %u workers", i, fr, workers[k]);
            }
        }
        weft_world_destroy(w);
    }
}
