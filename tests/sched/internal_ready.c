/* internal_ready.c: the deferred ready run (src/sched/ready.h): a graph phase of one-chunk
 * systems without change filters, handed out last frame, is prepared system by system by the
 * worker that runs it. Checked at 2, 4 and 8 workers: every system runs once per frame, after
 * all of its predecessors (chains, a fan-out and a fan-in, whose count is restored by the
 * releaser since nothing resets it at a deferred start), the run is deferred on the frames
 * that may be, and the world hash matches a 1-worker world's after every frame. The rule's
 * dispatch cost D is set to 0 between frames (internal access), so the phase is handed out
 * whatever this machine's timings. */
#include <stdatomic.h>
#include <stdio.h>

#include "internal_fixture.h"

TestSuite(ready_deferred, .timeout = 120);

#define CHAINS 8
#define FANOUT 4
#define NODES (CHAINS * 3 + FANOUT + 2)
#define FRAMES 40

typedef struct rnode {
    uint32_t id;
    uint32_t npreds;
    uint32_t preds[FANOUT];
} rnode_t;

static rnode_t rnodes[NODES];
static _Atomic uint32_t runs[NODES];

/* Reads the predecessors' run counts (each must have run this frame), then its rows. */
static void rbody(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const rnode_t *n = ctx->user;
    uint32_t mine = atomic_load(&runs[n->id]);
    for (uint32_t p = 0; p < n->npreds; p++) {
        CHECK(atomic_load(&runs[n->preds[p]]) == mine + 1u);
    }
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            float *x = weft_iter_get(it, 0, i);
            *x = *x * 0.5f + (float)(n->id + 1u);
        }
    }
    atomic_fetch_add(&runs[n->id], 1u);
}

static weft_component_t rcomp(weft_world_t *w, const char *name, uint32_t rows) {
    weft_component_t c = {0};
    cr_assert(eq(int,
                 weft_component_register(
                     w, &(weft_component_desc_t){.name = name, .size = sizeof(float)}, &c),
                 WEFT_OK));
    for (uint32_t i = 0; i < rows; i++) {
        weft_entity_t e;
        float v = (float)i;
        cr_assert(eq(int, weft_entity_create(w, &e), WEFT_OK));
        cr_assert(eq(int, weft_component_set(w, e, c, &v), WEFT_OK));
    }
    return c;
}

/* One phase, registration order fixing the edges: CHAINS chains of 3 systems on their own
 * component; "src" writes X, FANOUT systems read X and write their own, "sink" writes X after
 * all of them (FANOUT predecessors in the phase). No system is parallel. */
static weft_world_t *make(uint32_t workers) {
    weft_world_t *w = NULL;
    cr_assert(
        eq(int, weft_world_create(&(weft_world_desc_t){.worker_count = workers}, &w), WEFT_OK));
    uint32_t id = 0;
    char name[32];
    for (int i = 0; i < CHAINS; i++) {
        snprintf(name, sizeof name, "c%d", i);
        weft_component_t c = rcomp(w, name, 3);
        for (int j = 0; j < 3; j++, id++) {
            rnodes[id] = (rnode_t){.id = id, .npreds = j > 0, .preds = {id - 1u}};
            snprintf(name, sizeof name, "chain%d_%d", i, j);
            must_register(w, &(weft_system_desc_t){
                                 .name = name, .fn = rbody, .user = &rnodes[id], .terms = {W(c)}});
        }
    }
    weft_component_t x = rcomp(w, "X", 5);
    uint32_t src = id++;
    rnodes[src] = (rnode_t){.id = src};
    must_register(w, &(weft_system_desc_t){
                         .name = "src", .fn = rbody, .user = &rnodes[src], .terms = {W(x)}});
    uint32_t sink = src + FANOUT + 1u;
    rnodes[sink] = (rnode_t){.id = sink, .npreds = FANOUT};
    for (int k = 0; k < FANOUT; k++, id++) {
        snprintf(name, sizeof name, "y%d", k);
        weft_component_t y = rcomp(w, name, 2);
        rnodes[id] = (rnode_t){.id = id, .npreds = 1, .preds = {src}};
        rnodes[sink].preds[k] = id;
        snprintf(name, sizeof name, "fan%d", k);
        must_register(w,
                      &(weft_system_desc_t){
                          .name = name, .fn = rbody, .user = &rnodes[id], .terms = {W(y), R(x)}});
    }
    must_register(w, &(weft_system_desc_t){
                         .name = "sink", .fn = rbody, .user = &rnodes[sink], .terms = {W(x)}});
    return w;
}

Test(ready_deferred, every_system_runs_once_after_its_predecessors_and_the_hash_matches) {
    uint64_t want[FRAMES];
    weft_world_t *one = make(1);
    for (int fr = 0; fr < FRAMES; fr++) {
        cr_assert(eq(int, weft_world_progress(one, 0.01f), WEFT_OK), "%s", weft_last_error());
        want[fr] = weft_world_hash(one);
    }
    weft_world_destroy(one);
    const uint32_t workers[3] = {2, 4, 8};
    for (int k = 0; k < 3; k++) {
        for (uint32_t i = 0; i < NODES; i++) {
            atomic_store(&runs[i], 0u);
        }
        weft_world_t *w = make(workers[k]);
        uint32_t deferred = 0;
        for (int fr = 0; fr < FRAMES; fr++) {
            cr_assert(eq(int, weft_world_progress(w, 0.01f), WEFT_OK), "%s", weft_last_error());
            CHECKED();
            for (uint32_t i = 0; i < NODES; i++) {
                cr_assert(eq(u32, atomic_load(&runs[i]), (uint32_t)fr + 1u),
                          "system %u, frame %d, %u workers", i, fr, workers[k]);
            }
            cr_assert(eq(u64, weft_world_hash(w), want[fr]), "frame %d, %u workers", fr,
                      workers[k]);
            deferred += weft__sched_peek(w)->ready.deferred;
            zero_dispatch(w);
        }
        /* every frame but the first ones (costs unknown, D untrusted) and the sampled ones */
        cr_assert(ge(u32, deferred, FRAMES / 2), "%u workers: %u deferred frames", workers[k],
                  deferred);
        weft_world_destroy(w);
    }
}
