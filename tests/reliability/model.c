/* model.c: the reference model, the runner and the shrinker of the model-based stress test.
 *
 * DESIGN
 * Two worlds run the same operations: the world under test (threaded, 1..8 workers) and an
 * inline twin. After every step the two must hash equal (weft_world_hash: the result may not
 * depend on the worker count), and the world under test must match the reference model: the
 * entity count and every pool's row count always, the touched entity's components and values
 * after each structural step, every entity in full after frames, loads and restores and every
 * 16 steps, and the whole-world invariants (world_check.h) every 64 steps.
 *
 * The model is a flat array of entities: handle, component mask, values of A (u32), B (u64),
 * D (an entity reference plus a value; C is a tag), and the hierarchy parent. Frames run three
 * systems whose effects the model predicts: "inc" adds 1 to every A; "spawn" turns every B
 * with B % 8 == 3 into a new entity {A = B, B = B + 1} and removes that B; "reap" (phase 1)
 * destroys every entity whose D value is 5 mod 16. New entities are found by scanning the
 * entity table after the frame and matched to the prediction as a multiset, because their
 * ids depend on apply order, which the model does not track (the twin's hash does). */
#define _GNU_SOURCE /* clock_gettime */

#include "model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft/hierarchy.h"
#include "weft_test.h"

#define MAX_LIVE 400u /* creation ops are skipped above this many entities */

enum { CA = 1, CB = 2, CC = 4, CD = 8 }; /* component mask bits */

typedef struct dref {
    weft_entity_t target; /* entity field at offset 0 */
    uint32_t value;
    uint32_t pad;
} dref_t;

typedef struct ment {
    weft_entity_t e;
    uint8_t mask;
    bool node;
    uint32_t a;
    uint64_t b;
    dref_t d;
    weft_entity_t parent;
} ment_t;

typedef struct model {
    ment_t *ents;
    uint32_t n, cap;
} model_t;

typedef struct rig {
    weft_world_t *w[2];    /* [0] under test, [1] inline twin */
    weft_component_t c[4]; /* A, B, C, D (same ids in both worlds) */
    weft_snapshot_t *snap[2];
    model_t m;     /* the model */
    model_t saved; /* the model at the last capture */
    bool captured;
    weft_entity_t stale[16]; /* recently destroyed handles */
    uint32_t nstale;
    model_result_t *res;
    size_t step;
} rig_t;

static bool failf(rig_t *r, const char *fmt, ...) WEFT_PRINTF(2, 3);
static bool failf(rig_t *r, const char *fmt, ...) {
    if (!r->res->ok) {
        return false;
    }
    r->res->ok = false;
    r->res->failed_step = r->step;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->res->msg, sizeof r->res->msg, fmt, ap);
    va_end(ap);
    return false;
}

/* ---- model helpers ------------------------------------------------------------ >>model */

static ment_t *find(model_t *m, weft_entity_t e) {
    for (uint32_t i = 0; i < m->n; i++) {
        if (m->ents[i].e == e) {
            return &m->ents[i];
        }
    }
    return NULL;
}

static ment_t *push(model_t *m, weft_entity_t e) {
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 256;
        m->ents = realloc(m->ents, m->cap * sizeof *m->ents);
        if (m->ents == NULL) {
            abort();
        }
    }
    ment_t *x = &m->ents[m->n++];
    memset(x, 0, sizeof *x);
    x->e = e;
    return x;
}

static void copy_model(model_t *dst, const model_t *src) {
    dst->n = 0;
    for (uint32_t i = 0; i < src->n; i++) {
        *push(dst, src->ents[i].e) = src->ents[i];
    }
}

/* Remove e from the model; its children become roots (destroying a node detaches them). */
static void model_kill(rig_t *r, weft_entity_t e) {
    model_t *m = &r->m;
    for (uint32_t i = 0; i < m->n; i++) {
        if (m->ents[i].parent == e) {
            m->ents[i].parent = 0;
        }
    }
    for (uint32_t i = 0; i < m->n; i++) {
        if (m->ents[i].e == e) {
            m->ents[i] = m->ents[--m->n];
            break;
        }
    }
    r->stale[r->nstale++ % 16] = e;
}

static bool is_descendant(model_t *m, weft_entity_t x, weft_entity_t of) {
    for (uint32_t guard = 0; x != 0 && guard <= m->n; guard++) {
        if (x == of) {
            return true;
        }
        ment_t *p = find(m, x);
        x = p ? p->parent : 0;
    }
    return false;
}

static uint32_t hier_nodes(const model_t *m) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        k += m->ents[i].node;
    }
    return k;
}

/* ---- systems ------------------------------------------------------------------- >>systems */

static void sys_inc(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)ctx;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            ++*(uint32_t *)weft_iter_get(it, 0, i);
        }
    }
}

static void sys_spawn(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    const weft_component_t *c = ctx->user;
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            uint64_t b = *(const uint64_t *)weft_iter_get(it, 0, i);
            if (b % 8 != 3) {
                continue;
            }
            weft_entity_t p = weft_cmd_create(ctx->cmd);
            uint32_t a = (uint32_t)b;
            uint64_t b2 = b + 1;
            if (p == 0 || weft_cmd_set(ctx->cmd, p, c[0], &a) != WEFT_OK ||
                weft_cmd_set(ctx->cmd, p, c[1], &b2) != WEFT_OK ||
                weft_cmd_remove(ctx->cmd, weft_iter_entity(it, i), c[1]) != WEFT_OK) {
                abort(); /* no allocator faults here: a failure is a bug */
            }
        }
    }
}

static void sys_reap(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            if (((const dref_t *)weft_iter_get(it, 0, i))->value % 16 == 5) {
                if (weft_cmd_destroy(ctx->cmd, weft_iter_entity(it, i)) != WEFT_OK) {
                    abort();
                }
            }
        }
    }
}

/* ---- setup ------------------------------------------------------------------------ >>rig */

/* $WT_MODEL_BREAK=1 plants a wrong prediction (A set to a value that is 7 mod 1000), to see
 * the failure report and the shrinker at work. */
static bool model_broken;
static bool model_trace; /* $WT_MODEL_TRACE=1: print every step (for reproductions) */

static wt_log_count_t quiet_log; /* expected errors are many; keep them off stderr */

static bool rig_init(rig_t *r, uint32_t workers) {
    for (int k = 0; k < 2; k++) {
        weft_world_desc_t d = {.worker_count = k == 0 ? workers : 1,
                               .execution =
                                   k == 0 ? WEFT_EXECUTION_THREADED : WEFT_EXECUTION_INLINE,
                               .logger = wt_log_counter(&quiet_log)};
        if (weft_world_create(&d, &r->w[k]) != WEFT_OK) {
            return failf(r, "world create: %s", weft_last_error());
        }
        weft_world_t *w = r->w[k];
        weft_component_desc_t cd[4] = {
            {.name = "A", .size = 4},
            {.name = "B", .size = 8},
            {.name = "C"},
            {.name = "D", .size = sizeof(dref_t), .entity_field_count = 1}};
        for (int i = 0; i < 4; i++) {
            if (weft_component_register(w, &cd[i], &r->c[i]) != WEFT_OK) {
                return failf(r, "register: %s", weft_last_error());
            }
        }
        weft_group_t g;
        if (weft_group_create(w, &(weft_group_desc_t){.components = {r->c[0], r->c[1]}}, &g) !=
            WEFT_OK) {
            return failf(r, "group: %s", weft_last_error());
        }
        weft_system_desc_t sd[3] = {
            {.name = "inc",
             .fn = sys_inc,
             .parallel = true,
             .chunk_size = 32,
             .terms = {{.component = r->c[0], .access = WEFT_ACCESS_WRITE}}},
            {.name = "spawn",
             .fn = sys_spawn,
             .user = r->c,
             .parallel = true,
             .chunk_size = 32,
             .terms = {{.component = r->c[1], .access = WEFT_ACCESS_READ}}},
            {.name = "reap",
             .fn = sys_reap,
             .phase = 1,
             .parallel = true,
             .chunk_size = 16,
             .terms = {{.component = r->c[3], .access = WEFT_ACCESS_READ}}},
        };
        weft_system_t s;
        for (int i = 0; i < 3; i++) {
            if (weft_system_register(w, &sd[i], &s) != WEFT_OK) {
                return failf(r, "system: %s", weft_last_error());
            }
        }
        weft_hier_components_t hc;
        if (weft_hier_components(w, &hc) != WEFT_OK ||
            weft_snapshot_create(w, &r->snap[k]) != WEFT_OK) {
            return failf(r, "hierarchy/snapshot setup: %s", weft_last_error());
        }
    }
    return true;
}

static void rig_fini(rig_t *r) {
    for (int k = 0; k < 2; k++) {
        weft_snapshot_destroy(r->snap[k]);
        weft_world_destroy(r->w[k]);
    }
    free(r->m.ents);
    free(r->saved.ents);
}

/* ---- checks ------------------------------------------------------------------------ >>check */

static bool check_entity(rig_t *r, const ment_t *x) {
    weft_world_t *w = r->w[0];
    if (!weft_entity_is_alive(w, x->e)) {
        return failf(r, "entity 0x%llx should be alive", (unsigned long long)x->e);
    }
    for (int i = 0; i < 4; i++) {
        bool want = (x->mask >> i) & 1;
        if (weft_component_has(w, x->e, r->c[i]) != want) {
            return failf(r, "entity 0x%llx: has(%c) is %d, model says %d", (unsigned long long)x->e,
                         'A' + i, !want, want);
        }
    }
    const uint32_t *a = weft_component_get(w, x->e, r->c[0]);
    const uint64_t *b = weft_component_get(w, x->e, r->c[1]);
    const dref_t *d = weft_component_get(w, x->e, r->c[3]);
    if ((x->mask & CA) && *a != x->a) {
        return failf(r, "entity 0x%llx: A = %u, model %u", (unsigned long long)x->e, *a, x->a);
    }
    if ((x->mask & CB) && *b != x->b) {
        return failf(r, "entity 0x%llx: B = %llu, model %llu", (unsigned long long)x->e,
                     (unsigned long long)*b, (unsigned long long)x->b);
    }
    if ((x->mask & CD) && (d->target != x->d.target || d->value != x->d.value)) {
        return failf(r, "entity 0x%llx: D = {0x%llx, %u}, model {0x%llx, %u}",
                     (unsigned long long)x->e, (unsigned long long)d->target, d->value,
                     (unsigned long long)x->d.target, x->d.value);
    }
    if (weft_hier_has(w, x->e) != x->node) {
        return failf(r, "entity 0x%llx: node %d, model %d", (unsigned long long)x->e, !x->node,
                     x->node);
    }
    if (x->node && weft_hier_parent(w, x->e) != x->parent) {
        return failf(r, "entity 0x%llx: parent 0x%llx, model 0x%llx", (unsigned long long)x->e,
                     (unsigned long long)weft_hier_parent(w, x->e), (unsigned long long)x->parent);
    }
    return true;
}

static bool check_step(rig_t *r, bool full, bool invariants) {
    weft_world_t *w = r->w[0];
    if (weft_world_hash(w) != weft_world_hash(r->w[1])) {
        return failf(r, "the threaded world and the inline twin hash differently");
    }
    if (weft_entity_count(w) != r->m.n) {
        return failf(r, "%u entities, model %u", weft_entity_count(w), r->m.n);
    }
    uint32_t cnt[4] = {0}, nodes = 0;
    for (uint32_t i = 0; i < r->m.n; i++) {
        for (int k = 0; k < 4; k++) {
            cnt[k] += (r->m.ents[i].mask >> k) & 1;
        }
        nodes += r->m.ents[i].node;
    }
    for (int k = 0; k < 4; k++) {
        if (weft_component_rows(w, r->c[k]) != cnt[k]) {
            return failf(r, "pool %c has %u rows, model %u", 'A' + k,
                         weft_component_rows(w, r->c[k]), cnt[k]);
        }
    }
    if (weft_hier_count(w) != nodes) {
        return failf(r, "%u hierarchy nodes, model %u", weft_hier_count(w), nodes);
    }
    if (full) {
        r->res->checks++;
        for (uint32_t i = 0; i < r->m.n; i++) {
            if (!check_entity(r, &r->m.ents[i])) {
                return false;
            }
        }
    }
    if (invariants) {
        char err[256];
        if (!wt_world_check(w, err, sizeof err)) {
            return failf(r, "invariant: %s", err);
        }
    }
    return true;
}

/* ---- operations ------------------------------------------------------------------- >>ops */

/* Apply `call` to both worlds; both must return the same code, which must be `want`. */
#define BOTH(r, want, call)                                                                  \
    do {                                                                                     \
        for (int k_ = 0; k_ < 2; k_++) {                                                     \
            weft_world_t *W = (r)->w[k_];                                                    \
            weft_result_t got_ = (call);                                                     \
            if (got_ != (want))                                                              \
                return failf((r), "%s: %s, expected %s (%s)", #call, weft_result_name(got_), \
                             weft_result_name(want), weft_last_error());                     \
        }                                                                                    \
    } while (0)

static ment_t *pick(rig_t *r, uint32_t x) { return r->m.n ? &r->m.ents[x % r->m.n] : NULL; }

static bool op_create(rig_t *r, uint32_t n) {
    if (r->m.n + n > MAX_LIVE) {
        return true;
    }
    weft_entity_t e[2][8];
    for (int k = 0; k < 2; k++) {
        weft_result_t got =
            n == 1 ? weft_entity_create(r->w[k], &e[k][0]) : weft_entity_create_n(r->w[k], n, e[k]);
        if (got != WEFT_OK) {
            return failf(r, "create: %s", weft_last_error());
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        if (e[0][i] != e[1][i]) {
            return failf(r, "create gave 0x%llx, the twin 0x%llx", (unsigned long long)e[0][i],
                         (unsigned long long)e[1][i]);
        }
        if (find(&r->m, e[0][i]) != NULL) {
            return failf(r, "create returned a live handle 0x%llx", (unsigned long long)e[0][i]);
        }
        push(&r->m, e[0][i]);
    }
    return true;
}

static bool op_set(rig_t *r, const op_t *op, bool add_only) {
    ment_t *x = pick(r, op->a);
    if (x == NULL) {
        return true;
    }
    int ci = (int)(op->b % 4);
    uint8_t bit = (uint8_t)(1u << ci);
    weft_entity_t e = x->e;
    if (add_only) {
        weft_result_t want = (x->mask & bit) ? WEFT_EEXIST : WEFT_OK;
        BOTH(r, want, weft_component_add(W, e, r->c[ci], NULL));
        if (want == WEFT_OK) {
            x->mask |= bit;
            x->a = ci == 0 ? 0 : x->a;
            x->b = ci == 1 ? 0 : x->b;
            if (ci == 3) {
                memset(&x->d, 0, sizeof x->d);
            }
        }
        return check_entity(r, x);
    }
    uint32_t a = op->c;
    uint64_t b = (uint64_t)op->c * 7u;
    dref_t d = {.target = pick(r, op->c)->e, .value = op->c % 64};
    const void *val = ci == 0   ? (const void *)&a
                      : ci == 1 ? (const void *)&b
                      : ci == 3 ? (const void *)&d
                                : NULL;
    BOTH(r, WEFT_OK, weft_component_set(W, e, r->c[ci], val));
    x->mask |= bit;
    if (ci == 0) {
        x->a = a + (model_broken && a % 1000 == 7); /* WT_MODEL_BREAK: shrinker self-test */
    } else if (ci == 1) {
        x->b = b;
    } else if (ci == 3) {
        x->d = d;
    }
    return check_entity(r, x);
}

static bool op_remove(rig_t *r, const op_t *op, bool ordered) {
    ment_t *x = pick(r, op->a);
    if (x == NULL) {
        return true;
    }
    int ci = (int)(op->b % 4);
    uint8_t bit = (uint8_t)(1u << ci);
    weft_result_t want = (x->mask & bit) ? WEFT_OK : WEFT_ENOENT;
    if (ordered && ci < 2 && want == WEFT_OK) {
        want = WEFT_ESTATE; /* A and B are grouped: order cannot be kept */
    }
    weft_entity_t e = x->e;
    if (ordered) {
        BOTH(r, want, weft_component_remove_ordered(W, e, r->c[ci]));
    } else {
        BOTH(r, want, weft_component_remove(W, e, r->c[ci]));
    }
    if (want == WEFT_OK) {
        x->mask &= (uint8_t)~bit;
    }
    return check_entity(r, x);
}

/* Orders D rows by value (the sort op; A is grouped, so sorting it must fail first). */
static int cmp_d_or_a(weft_entity_t ea, const void *a, weft_entity_t eb, const void *b, void *u) {
    (void)ea;
    (void)eb;
    (void)u;
    uint32_t x = ((const dref_t *)a)->value, y = ((const dref_t *)b)->value;
    return (x > y) - (x < y);
}

static bool op_destroy(rig_t *r, const op_t *op) {
    ment_t *x = pick(r, op->a);
    if (x == NULL) {
        return true;
    }
    weft_entity_t e = x->e;
    BOTH(r, WEFT_OK, weft_entity_destroy(W, e));
    model_kill(r, e);
    for (int k = 0; k < 2; k++) {
        if (weft_entity_is_alive(r->w[k], e)) {
            return failf(r, "destroyed entity still alive");
        }
    }
    return true;
}

static bool op_destroy_n(rig_t *r, const op_t *op) {
    weft_entity_t es[6];
    uint32_t n = 0;
    for (uint32_t i = 0; i < 3 && r->m.n > 0; i++) {
        es[n++] = pick(r, op->a + i * op->b)->e;
        if (r->nstale) {
            es[n++] = r->stale[(op->c + i) % (r->nstale < 16 ? r->nstale : 16)];
        }
    }
    BOTH(r, WEFT_OK, weft_entity_destroy_n(W, es, n));
    for (uint32_t i = 0; i < n; i++) {
        if (find(&r->m, es[i])) {
            model_kill(r, es[i]);
        }
    }
    return true;
}

static bool op_stale(rig_t *r, const op_t *op) {
    if (r->nstale == 0) {
        return true;
    }
    weft_entity_t e = r->stale[op->a % (r->nstale < 16 ? r->nstale : 16)];
    if (find(&r->m, e) != NULL) {
        return true; /* cannot happen: generations differ; keep the op harmless anyway */
    }
    BOTH(r, WEFT_ESTALE, weft_entity_destroy(W, e));
    BOTH(r, WEFT_ESTALE, weft_component_add(W, e, r->c[op->b % 4], NULL));
    for (int k = 0; k < 2; k++) {
        if (weft_component_get(r->w[k], e, r->c[0]) != NULL || weft_entity_is_alive(r->w[k], e)) {
            return failf(r, "stale handle 0x%llx reads as alive", (unsigned long long)e);
        }
    }
    return true;
}

static int cmp_pair(const void *x, const void *y) {
    const uint64_t *a = x, *b = y;
    return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

static int cmp_handle(const void *x, const void *y) {
    weft_entity_t a = *(const weft_entity_t *)x, b = *(const weft_entity_t *)y;
    return (a > b) - (a < b);
}

/* One frame on both worlds, then the model's prediction of it. */
static bool op_frame(rig_t *r, float dt) {
    BOTH(r, WEFT_OK, weft_world_progress(W, dt));
    r->res->frames++;
    model_t *m = &r->m;
    uint32_t nspawn = 0, n0 = m->n;
    uint64_t *want = malloc(((size_t)n0 + 1) * 2 * sizeof *want);
    weft_entity_t *known = malloc(((size_t)n0 + 1) * sizeof *known);
    if (want == NULL || known == NULL) {
        abort();
    }
    for (uint32_t i = 0; i < n0; i++) {
        ment_t *x = &m->ents[i];
        known[i] = x->e;
        if (x->mask & CA) {
            x->a++;
        }
        if ((x->mask & CB) && x->b % 8 == 3) {
            want[2 * nspawn] = (uint32_t)x->b;
            want[2 * nspawn + 1] = x->b + 1;
            nspawn++;
            x->mask &= (uint8_t)~CB;
        }
    }
    qsort(known, n0, sizeof *known, cmp_handle);
    for (uint32_t i = 0; i < m->n;) { /* phase 1: reap */
        if ((m->ents[i].mask & CD) && m->ents[i].d.value % 16 == 5) {
            model_kill(r, m->ents[i].e);
        } else {
            i++;
        }
    }
    /* Find the spawned entities: live, and not among the entities known before the frame. */
    weft_world_stats_t st;
    weft_world_stats(r->w[0], &st);
    uint64_t *got = malloc(((size_t)nspawn + 1) * 2 * sizeof *got);
    uint32_t ngot = 0;
    bool ok = got != NULL;
    for (uint32_t i = 1; ok && i < st.entity_slots; i++) {
        weft_entity_t e = weft_entity_from_index(r->w[0], i);
        if (e == 0 || bsearch(&e, known, n0, sizeof *known, cmp_handle) != NULL) {
            continue;
        }
        const uint32_t *a = weft_component_get(r->w[0], e, r->c[0]);
        const uint64_t *b = weft_component_get(r->w[0], e, r->c[1]);
        if (ngot == nspawn || a == NULL || b == NULL || weft_component_has(r->w[0], e, r->c[2]) ||
            weft_component_has(r->w[0], e, r->c[3])) {
            ok = failf(r, "frame: unexpected new entity 0x%llx", (unsigned long long)e);
            break;
        }
        got[2 * ngot] = *a;
        got[2 * ngot + 1] = *b;
        ngot++;
        ment_t *x = push(m, e);
        x->mask = CA | CB;
        x->a = *a;
        x->b = *b;
    }
    if (ok && ngot != nspawn) {
        ok = failf(r, "frame: %u entities spawned, model %u", ngot, nspawn);
    }
    if (ok) {
        qsort(want, nspawn, 2 * sizeof *want, cmp_pair);
        qsort(got, ngot, 2 * sizeof *got, cmp_pair);
        if (memcmp(want, got, (size_t)nspawn * 2 * sizeof *want) != 0) {
            ok = failf(r, "frame: spawned entities carry other values than the model's");
        }
    }
    free(want);
    free(known);
    free(got);
    return ok;
}

static bool op_capture(rig_t *r) {
    weft_result_t want = WEFT_OK; /* hierarchy nodes are captured too (weft/snapshot.h) */
    BOTH(r, want, weft_snapshot_capture(W, r->snap[k_]));
    if (want == WEFT_OK) {
        copy_model(&r->saved, &r->m);
        r->captured = true;
    }
    return true;
}

static bool op_restore(rig_t *r) {
    weft_result_t want = r->captured ? WEFT_OK : WEFT_ESTATE;
    BOTH(r, want, weft_snapshot_restore(W, r->snap[k_]));
    if (want == WEFT_OK) {
        copy_model(&r->m, &r->saved);
    }
    return true;
}

static int cmp_handle_index(const void *x, const void *y) {
    uint32_t a = weft_entity_index(((const ment_t *)x)->e);
    uint32_t b = weft_entity_index(((const ment_t *)y)->e);
    return (a > b) - (a < b);
}

/* Save the whole world and load it back into itself: every entity gets a remapped copy. */
static bool op_save_load(rig_t *r) {
    model_t *m = &r->m;
    if (m->n == 0 || m->n * 2 > MAX_LIVE) {
        return true;
    }
    if (hier_nodes(m) && wt_env_u64("WT_MODEL_HIER_ARCHIVE", 1) == 0) {
        return true;
    }
    uint32_t n = m->n;
    qsort(m->ents, n, sizeof *m->ents, cmp_handle_index);
    weft_entity_t *out[2];
    for (int k = 0; k < 2; k++) {
        weft_membuf_t buf = {0};
        weft_writer_t wr = weft_membuf_writer(&buf);
        out[k] = calloc(n, sizeof(weft_entity_t));
        weft_result_t s = weft_archive_save(r->w[k], NULL, &wr);
        weft_archive_load_desc_t d = {.out_entities = out[k], .out_capacity = n};
        weft_result_t l =
            s == WEFT_OK ? weft_archive_load_memory(r->w[k], buf.data, buf.size, &d, NULL) : s;
        weft_membuf_free(&buf);
        if (l != WEFT_OK) {
            free(out[0]);
            free(out[1]);
            return failf(r, "save/load: %s (%s)", weft_result_name(l), weft_last_error());
        }
    }
    bool ok = memcmp(out[0], out[1], n * sizeof(weft_entity_t)) == 0 ||
              failf(r, "load gave the twin other handles");
    for (uint32_t i = 0; ok && i < n; i++) {
        ment_t src = m->ents[i];
        ment_t *x = push(m, out[0][i]);
        *x = src;
        x->e = out[0][i];
        x->parent = 0;   /* hierarchy links are remapped like any entity field */
        x->d.target = 0; /* a reference outside the archive (dead) becomes null */
        for (uint32_t j = 0; j < n; j++) {
            if (src.node && m->ents[j].e == src.parent) {
                x->parent = out[0][j];
            }
            if ((x->mask & CD) && m->ents[j].e == src.d.target) {
                x->d.target = out[0][j];
            }
        }
    }
    free(out[0]);
    free(out[1]);
    return ok;
}

static bool op_hier(rig_t *r, const op_t *op) {
    model_t *m = &r->m;
    ment_t *x = pick(r, op->a);
    if (x == NULL) {
        return true;
    }
    weft_entity_t e = x->e;
    if (model_trace) {
        fprintf(stderr, "model trace:   entity 0x%llx (node %d, parent 0x%llx), other 0x%llx\n",
                (unsigned long long)e, x->node, (unsigned long long)x->parent,
                (unsigned long long)pick(r, op->b)->e);
    }
    switch (op->kind) {
    case OP_HIER_ADD: {
        weft_result_t want = x->node ? WEFT_EEXIST : WEFT_OK;
        BOTH(r, want, weft_hier_add(W, e, NULL));
        x->node = true;
        return true;
    }
    case OP_HIER_ATTACH: {
        ment_t *p = pick(r, op->b);
        weft_entity_t pe = p->e;
        weft_result_t want = WEFT_OK;
        if (!x->node || !p->node) {
            want = WEFT_ENOENT;
        } else if (is_descendant(m, pe, e)) {
            want = WEFT_ECYCLE;
        }
        BOTH(r, want, weft_hier_attach(W, e, pe));
        if (want == WEFT_OK) {
            x->parent = pe;
        }
        return true;
    }
    case OP_HIER_DETACH: {
        weft_result_t want = x->node ? WEFT_OK : WEFT_ENOENT;
        BOTH(r, want, weft_hier_detach(W, e));
        x->parent = 0;
        return true;
    }
    default: {
        weft_hier_destroy_t mode = op->b % 2 ? WEFT_HIER_DESTROY_SUBTREE : WEFT_HIER_DESTROY_DETACH;
        weft_result_t want = x->node ? WEFT_OK : WEFT_ENOENT;
        BOTH(r, want, weft_hier_destroy(W, e, mode));
        if (want != WEFT_OK) {
            return true;
        }
        if (mode == WEFT_HIER_DESTROY_SUBTREE) {
            /* Collect the whole subtree first: killing a node detaches its children. */
            weft_entity_t *sub = malloc(((size_t)m->n + 1) * sizeof *sub);
            uint32_t ns = 0;
            if (sub == NULL) {
                abort();
            }
            for (uint32_t i = 0; i < m->n; i++) {
                if (m->ents[i].e != e && is_descendant(m, m->ents[i].e, e)) {
                    sub[ns++] = m->ents[i].e;
                }
            }
            for (uint32_t i = 0; i < ns; i++) {
                model_kill(r, sub[i]);
            }
            free(sub);
        }
        model_kill(r, e);
        return true;
    }
    }
}

static bool apply(rig_t *r, const op_t *op) {
    switch ((op_kind_t)op->kind) {
    case OP_CREATE:
        return op_create(r, 1);
    case OP_CREATE_N:
        return op_create(r, 2 + op->a % 7);
    case OP_DESTROY:
        return op_destroy(r, op);
    case OP_DESTROY_N:
        return op_destroy_n(r, op);
    case OP_ADD:
        return op_set(r, op, true);
    case OP_SET:
        return op_set(r, op, false);
    case OP_REMOVE:
        return op_remove(r, op, false);
    case OP_REMOVE_ORDERED:
        return op_remove(r, op, true);
    case OP_SORT: {
        weft_result_t want = op->a % 2 ? WEFT_ESTATE : WEFT_OK; /* A is grouped */
        weft_component_t c = op->a % 2 ? r->c[0] : r->c[3];
        BOTH(r, want, weft_component_sort(W, c, cmp_d_or_a, NULL));
        return true;
    }
    case OP_STALE:
        return op_stale(r, op);
    case OP_FRAME:
        return op_frame(r, 0.016f);
    case OP_CAPTURE:
        return op_capture(r);
    case OP_RESTORE:
        return op_restore(r);
    case OP_SAVE_LOAD:
        return op_save_load(r);
    default:
        return op_hier(r, op);
    }
}

/* ---- driver -------------------------------------------------------------------- >>driver */

static const char *const op_names[OP_COUNT] = {
    "create",  "create_n",       "destroy",  "destroy_n",   "add",         "set",
    "remove",  "remove_ordered", "sort",     "stale",       "frame",       "capture",
    "restore", "save_load",      "hier_add", "hier_attach", "hier_detach", "hier_destroy"};

/* Relative frequencies, tuned so the world hovers around a hundred entities. */
static const uint32_t op_weights[OP_COUNT] = {120, 25, 70, 15, 110, 150, 90, 25, 6,
                                              20,  30, 6,  6,  2,   35,  50, 15, 15};

void model_generate(op_t *ops, size_t n, uint64_t seed) {
    wt_rng_t rng = {seed};
    uint32_t total = 0;
    for (int k = 0; k < OP_COUNT; k++) {
        total += op_weights[k];
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t x = wt_rng_below(&rng, total), k = 0;
        while (x >= op_weights[k]) {
            x -= op_weights[k++];
        }
        ops[i] = (op_t){.kind = (uint8_t)k,
                        .a = (uint32_t)wt_rng_next(&rng),
                        .b = (uint32_t)wt_rng_next(&rng),
                        .c = (uint32_t)wt_rng_next(&rng)};
    }
}

void model_run(const op_t *ops, size_t n, uint32_t workers, model_result_t *res) {
    memset(res, 0, sizeof *res);
    res->ok = true;
    model_broken = wt_env_u64("WT_MODEL_BREAK", 0) != 0;
    model_trace = wt_env_u64("WT_MODEL_TRACE", 0) != 0;
    rig_t r;
    memset(&r, 0, sizeof r);
    r.res = res;
    if (rig_init(&r, workers)) {
        for (size_t i = 0; i < n && res->ok; i++) {
            r.step = i;
            uint8_t k = ops[i].kind;
            bool big = k == OP_FRAME || k == OP_RESTORE || k == OP_SAVE_LOAD || k == OP_CAPTURE;
            uint32_t before = r.m.n;
            if (apply(&r, &ops[i])) {
                check_step(&r, big || i % 16 == 0, big || i % 64 == 0);
            }
            if (model_trace) {
                fprintf(stderr,
                        "model trace: step %zu %s: model %u -> %u entities (%u nodes); "
                        "world %u entities, %u nodes%s%s\n",
                        i, op_names[k], before, r.m.n, hier_nodes(&r.m), weft_entity_count(r.w[0]),
                        weft_hier_count(r.w[0]),
                        res->ok ? "" : ": FAILED: ", res->ok ? "" : res->msg);
            }
        }
        r.step = n;
        if (res->ok) {
            check_step(&r, true, true);
        }
    }
    rig_fini(&r);
}

size_t model_shrink(op_t *ops, size_t n, uint32_t workers, double budget_s) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    op_t *tmp = malloc(n * sizeof *tmp);
    model_result_t res;
    if (tmp == NULL) {
        return n;
    }
    /* Everything after the failing step is irrelevant. */
    model_run(ops, n, workers, &res);
    if (res.ok) {
        goto done;
    }
    n = res.failed_step + 1 < n ? res.failed_step + 1 : n;
    for (size_t chunk = n / 2; chunk >= 1;) {
        bool removed = false;
        for (size_t start = 0; start < n;) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) >
                budget_s) {
                goto done;
            }
            size_t end = start + chunk < n ? start + chunk : n;
            size_t m = 0;
            memcpy(tmp, ops, start * sizeof *ops);
            m = start;
            memcpy(tmp + m, ops + end, (n - end) * sizeof *ops);
            m += n - end;
            model_run(tmp, m, workers, &res);
            if (!res.ok) {
                m = res.failed_step + 1 < m ? res.failed_step + 1 : m;
                memcpy(ops, tmp, m * sizeof *ops);
                n = m;
                removed = true;
            } else {
                start = end;
            }
        }
        if (!removed) {
            chunk /= 2;
        }
    }
done:
    free(tmp);
    return n;
}

void model_print(const op_t *ops, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char up[32];
        size_t j = 0;
        for (const char *p = op_names[ops[i].kind]; *p && j + 1 < sizeof up; p++) {
            up[j++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
        }
        up[j] = '\0';
        fprintf(stderr, "  {OP_%s, %uu, %uu, %uu},\n", up, ops[i].a, ops[i].b, ops[i].c);
    }
}

size_t model_read(const char *path, op_t *ops, size_t cap) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    char line[256], name[64];
    size_t n = 0;
    while (n < cap && fgets(line, sizeof line, f) != NULL) {
        unsigned a, b, c;
        if (sscanf(line, " {OP_%63[A-Z_], %uu, %uu, %uu}", name, &a, &b, &c) != 4) {
            continue;
        }
        for (uint8_t k = 0; k < OP_COUNT; k++) {
            char up[64];
            size_t j = 0;
            for (const char *p = op_names[k]; *p && j + 1 < sizeof up; p++) {
                up[j++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
            }
            up[j] = '\0';
            if (strcmp(up, name) == 0) {
                ops[n++] = (op_t){.kind = k, .a = a, .b = b, .c = c};
                break;
            }
        }
    }
    fclose(f);
    return n;
}
