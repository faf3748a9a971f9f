/* internal_fused.c: with more than one worker, a phase sure to run on the calling thread is
 * prepared and run system by system in one pass (frame.c, fuse_phase), as with one worker.
 * Checked at 2 workers: the fused path is taken on the frames that may take it (dispatch cost
 * D set huge between frames, internal access), the world hash matches a 1-worker world's
 * after every frame (commands included), the phase's W follows this frame's row counts, and
 * once handing out pays (D set to 0) the next frame leaves the fused path. */
#include <stdio.h>

#include "sched_fixture.h"
#include "src/sched/system.h"

TestSuite(fused, .timeout = 60);

#define SYSTEMS 12
#define FRAMES 40

static weft_component_t comps[SYSTEMS], tag;

/* Rows of its own component; every 7th row of system 0 toggles a tag by command. */
static void fbody(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    uintptr_t id = (uintptr_t)ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            float *x = weft_iter_get(it, 0, i);
            *x = *x * 0.5f + (float)(id + 1u);
            weft_entity_t e = weft_iter_entity(it, i);
            if (id == 0 && (uint32_t)e % 7u == 0u) {
                if (weft_component_has(ctx->world, e, tag)) {
                    (void)weft_cmd_remove(ctx->cmd, e, tag);
                } else {
                    (void)weft_cmd_add(ctx->cmd, e, tag);
                }
            }
        }
    }
}

/* One phase: SYSTEMS independent systems, system i writing component i (8 + i rows). */
static weft_world_t *make(uint32_t workers) {
    weft_world_t *w = NULL;
    cr_assert(
        eq(int, weft_world_create(&(weft_world_desc_t){.worker_count = workers}, &w), WEFT_OK));
    cr_assert(eq(
        int, weft_component_register(w, &(weft_component_desc_t){.name = "tag", .size = 0}, &tag),
        WEFT_OK));
    for (uintptr_t i = 0; i < SYSTEMS; i++) {
        char name[32];
        snprintf(name, sizeof name, "c%u", (unsigned)i);
        comps[i] = float_component(w, name);
        float_rows(w, comps[i], 8u + (uint32_t)i);
        snprintf(name, sizeof name, "s%u", (unsigned)i);
        must_register(w, &(weft_system_desc_t){.name = name,
                                               .fn = fbody,
                                               .user = (void *)i,
                                               .terms = {W(comps[i])},
                                               .reads = {tag}});
    }
    return w;
}

/* Every kept dispatch sample set to d (ns), trusted. */
static void set_dispatch(weft_world_t *w, float d) {
    struct weft_sched *s = weft__sched_peek(w);
    for (uint32_t ph = 0; s && s->phase_cost && ph < s->graph.nphases; ph++) {
        weft__phase_cost_t *pc = &s->phase_cost[ph];
        for (uint32_t i = 0; i < WEFT__COST_DISPATCH_SAMPLES; i++) {
            pc->dispatch[i] = d;
        }
        pc->nsamples = pc->nsamples > 4u ? pc->nsamples : 4u;
    }
}

/* The systems' phase: the one holding run position 0. */
static weft__phase_cost_t *phase0(weft_world_t *w) { return &weft__sched_peek(w)->phase_cost[0]; }

/* W of the phase from its systems' estimates and this frame's rows (phase_cost.h). */
static double work_now(weft_world_t *w) {
    struct weft_sched *s = weft__sched_peek(w);
    double work = 0;
    bool known = true;
    for (uint32_t p = s->graph.phase_first[0]; p < s->graph.phase_first[1]; p++) {
        weft__cost_estimate(&s->systems[s->graph.order[p]]->cost, &work, &known);
    }
    cr_assert(known);
    return work;
}

Test(fused, a_phase_sure_to_run_inline_is_fused_follows_its_rows_and_matches_one_worker) {
    uint64_t want[FRAMES];
    weft_world_t *one = make(1);
    for (int fr = 0; fr < FRAMES; fr++) {
        if (fr == FRAMES / 2) {
            float_rows(one, comps[3], 500);
        }
        cr_assert(eq(int, weft_world_progress(one, 0.01f), WEFT_OK), "%s", weft_last_error());
        want[fr] = weft_world_hash(one);
    }
    weft_world_destroy(one);
    weft_world_t *w = make(2);
    uint32_t fused = 0;
    for (int fr = 0; fr < FRAMES; fr++) {
        if (fr == FRAMES / 2) {
            float_rows(w, comps[3], 500); /* W grows: the fused frame must see it */
        }
        cr_assert(eq(int, weft_world_progress(w, 0.01f), WEFT_OK), "%s", weft_last_error());
        cr_assert(eq(u64, weft_world_hash(w), want[fr]), "frame %d", fr);
        weft__phase_cost_t *pc = phase0(w);
        if (pc->fused_last) {
            fused++;
            double rows_say = work_now(w); /* the same sum in the same order */
            cr_assert(pc->work_last == rows_say, "frame %d: W %g, this frame's rows say %g", fr,
                      pc->work_last, rows_say);
        }
        set_dispatch(w, 1e12f); /* handing out never pays: inline from here */
    }
    /* every frame but the first ones (costs unknown, D untrusted) and the sampled ones */
    cr_assert(ge(u32, fused, FRAMES / 2), "%u fused frames", fused);
    /* handing out pays now: the next frame decides on the threads again, unfused */
    struct weft_sched *s = weft__sched_peek(w);
    set_dispatch(w, 0.0f);
    if (s->frame_no % 16u == 15u) { /* the next one is sampled anyway: test the one after */
        cr_assert(eq(int, weft_world_progress(w, 0.01f), WEFT_OK));
        set_dispatch(w, 0.0f);
    }
    cr_assert(eq(int, weft_world_progress(w, 0.01f), WEFT_OK));
    cr_assert(not(phase0(w)->fused_last));
    weft_world_destroy(w);
}
