/* test_hier_tracking.c: the two attach behaviours (keep the world transform, keep the local
 * transform) and change tracking (an update recomputes only changed nodes and their
 * descendants, with bits equal to a full update).
 *
 * The ordering, cycle and baking checks run once per attach mode. Loops over many nodes
 * check with plain C (CHECK) and assert once, naming node, step and seed. */
#include <criterion/criterion.h>
#include <string.h>

#include "hier_ref.h"
#include "hier_world.h"
#include "weft.h"

TestSuite(hier_tracking, .timeout = 300);

static hr_fail_t fail;
#define CHECK(cond, ...) hr_check(&fail, (cond), __VA_ARGS__)

static const weft_hier_attach_mode_t modes[2] = {WEFT_HIER_KEEP_WORLD, WEFT_HIER_KEEP_LOCAL};
static const char *const mode_names[2] = {"keep world", "keep local"};

static weft_world_t *new_world(void) { return hw_new_world(1, WEFT_EXECUTION_INLINE); }

static weft_entity_t new_node(weft_world_t *w, const weft_transform_t *t) {
    weft_entity_t e = 0;
    cr_assert(weft_entity_create(w, &e) == WEFT_OK);
    cr_assert(weft_hier_add(w, e, t) == WEFT_OK);
    return e;
}

/* Position of every entity index in weft_hier_order, checked parents first. */
static bool order_ok(weft_world_t *w) {
    const uint32_t n = weft_hier_count(w);
    weft_entity_t *o = malloc((n + 1) * sizeof(*o));
    weft_hier_order(w, o, n);
    bool ok = true;
    for (uint32_t i = 0; ok && i < n; i++) {
        const weft_entity_t p = weft_hier_parent(w, o[i]);
        bool seen = p == 0;
        for (uint32_t j = 0; !seen && j < i; j++) {
            seen = o[j] == p;
        }
        ok = CHECK(seen, "order: the parent of position %u does not precede it", i);
    }
    free(o);
    return ok;
}

Test(hier_tracking, the_counter_example_orders_parents_first_in_both_attach_modes) {
    for (int m = 0; m < 2; m++) {
        weft_world_t *w = new_world();
        hr_fail_init(&fail, 0);
        weft_entity_t e[5];
        for (int i = 1; i <= 4; i++) {
            e[i] = new_node(w, NULL);
        }
        cr_assert(weft_hier_attach_ex(w, e[4], e[3], modes[m]) == WEFT_OK);
        cr_assert(weft_hier_attach_ex(w, e[2], e[1], modes[m]) == WEFT_OK);
        cr_assert(weft_hier_attach_ex(w, e[3], e[2], modes[m]) == WEFT_OK);
        cr_assert(weft_hier_depth(w, e[4]) == 3, "%s", mode_names[m]);
        cr_assert(order_ok(w), "%s: %s", mode_names[m], hr_fail_message(&fail));
        weft_world_destroy(w);
    }
}

/* A 2,500-deep chain attached link by link in random order: parents first afterwards, and
 * every world matrix equals the documented formula, in both modes. */
Test(hier_tracking, a_2500_deep_chain_attached_in_random_order_in_both_attach_modes) {
    hr_rng_t r = hr_seeded(&fail, "2500 chain");
    enum { N = 2500 };
    for (int m = 0; m < 2 && !fail.failed; m++) {
        weft_world_t *w = new_world();
        weft_entity_t *e = malloc(N * sizeof(*e));
        uint32_t *perm = malloc(N * sizeof(*perm));
        for (uint32_t i = 0; i < N; i++) {
            weft_transform_t t = hr_transform(&r);
            t.position = weft_vec3_scale(t.position, 0.01f); /* keep 2,500 levels finite */
            e[i] = new_node(w, &t);
            perm[i] = i;
        }
        for (uint32_t i = N - 1; i > 0; i--) { /* Fisher-Yates */
            const uint32_t j = hr_below(&r, i + 1), x = perm[i];
            perm[i] = perm[j];
            perm[j] = x;
        }
        for (uint32_t i = 0; i < N && !fail.failed; i++) {
            const uint32_t c = perm[i];
            if (c != 0) {
                CHECK(weft_hier_attach_ex(w, e[c], e[c - 1], modes[m]) == WEFT_OK,
                      "%s: attaching link %u failed", mode_names[m], c);
            }
        }
        CHECK(weft_hier_depth(w, e[N - 1]) == N - 1, "%s: wrong depth", mode_names[m]);
        if (!fail.failed && order_ok(w)) {
            CHECK(weft_hier_update(w, WEFT_HIER_PASS_AUTO) == WEFT_OK, "update failed");
            weft_mat4_t pw = weft_transform_matrix(weft_hier_local_read(w, e[0]));
            for (uint32_t i = 1; i < N && !fail.failed; i++) {
                const weft_mat4_t want = hr_node_world(weft_hier_local_read(w, e[i]),
                                                       &weft_hier_link(w, e[i])->inverse_bind, &pw);
                CHECK(hr_mat_eq(weft_hier_world(w, e[i]), &want), "%s: link %u differs",
                      mode_names[m], i);
                pw = want;
            }
        }
        free(perm);
        free(e);
        weft_world_destroy(w);
    }
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
}

Test(hier_tracking, cycles_are_rejected_and_change_nothing_in_both_attach_modes) {
    hr_rng_t r = hr_seeded(&fail, "cycles both modes");
    for (int m = 0; m < 2; m++) {
        weft_world_t *w = new_world();
        weft_entity_t e[6];
        for (int i = 0; i < 6; i++) {
            const weft_transform_t t = hr_transform(&r);
            e[i] = new_node(w, &t);
        }
        for (int i = 1; i < 6; i++) {
            cr_assert(weft_hier_attach_ex(w, e[i], e[i - 1], modes[m]) == WEFT_OK);
        }
        cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
        weft_parent_link_t links[6];
        weft_transform_t locals[6];
        for (int i = 0; i < 6; i++) {
            links[i] = *weft_hier_link(w, e[i]);
            locals[i] = *weft_hier_local_read(w, e[i]);
        }
        cr_assert(weft_hier_attach_ex(w, e[2], e[2], modes[m]) == WEFT_ECYCLE);
        cr_assert(weft_hier_attach_ex(w, e[0], e[5], modes[m]) == WEFT_ECYCLE);
        cr_assert(weft_hier_attach_ex(w, e[1], e[3], modes[m]) == WEFT_ECYCLE);
        cr_assert(weft_hier_attach_ex(w, e[1], e[3], (weft_hier_attach_mode_t)5) == WEFT_EINVAL);
        for (int i = 0; i < 6; i++) {
            cr_assert(memcmp(&links[i], weft_hier_link(w, e[i]), sizeof(links[i])) == 0,
                      "%s: link %d changed", mode_names[m], i);
            cr_assert(memcmp(&locals[i], weft_hier_local_read(w, e[i]), sizeof(locals[i])) == 0);
        }
        weft_hier_stats_t st;
        cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
        weft_hier_stats(w, &st);
        cr_assert(st.recomputed == 0, "%s: a refused attach marked %u nodes changed", mode_names[m],
                  st.recomputed);
        weft_world_destroy(w);
    }
}

/* Keep-world: the child does not move, its link holds the parent's inverse world. Keep-local:
 * its local transform stays, the bind is the identity and the world is parent * local. In
 * both, detach bakes the last world matrix into the local transform. */
Test(hier_tracking, the_two_attach_modes_keep_what_they_say_and_detach_bakes_in_both) {
    hr_rng_t r = hr_seeded(&fail, "attach modes");
    for (int m = 0; m < 2; m++) {
        weft_world_t *w = new_world();
        weft_transform_t ta = hr_transform(&r), tb = hr_transform(&r);
        ta.scale = weft_vec3_make(1.0f, 1.0f, 1.0f); /* no shear, which baking would lose */
        weft_entity_t a = new_node(w, &ta), b = new_node(w, &tb);
        cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
        const weft_mat4_t before = *weft_hier_world(w, b);
        cr_assert(weft_hier_attach_ex(w, b, a, modes[m]) == WEFT_OK);
        cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
        const weft_mat4_t id = weft_mat4_identity();
        const bool identity_bind = hr_mat_eq(&weft_hier_link(w, b)->inverse_bind, &id);
        if (modes[m] == WEFT_HIER_KEEP_WORLD) {
            cr_assert(hr_mat_near(weft_hier_world(w, b), &before, 1e-4f), "keep world moved b");
            cr_assert(!identity_bind);
        } else {
            cr_assert(identity_bind, "keep local: the bind is the identity");
            cr_assert(memcmp(weft_hier_local_read(w, b), &tb, sizeof(tb)) == 0);
            const weft_mat4_t la = weft_transform_matrix(&ta), lb = weft_transform_matrix(&tb);
            const weft_mat4_t want = weft_mat4_mul(&la, &lb); /* one multiply */
            cr_assert(hr_mat_eq(weft_hier_world(w, b), &want));
        }
        const weft_mat4_t attached = *weft_hier_world(w, b);
        cr_assert(weft_hier_detach(w, b) == WEFT_OK);
        const weft_transform_t baked = weft_transform_from_matrix(&attached);
        cr_assert(memcmp(weft_hier_local_read(w, b), &baked, sizeof(baked)) == 0,
                  "%s: detach bakes", mode_names[m]);
        cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
        cr_assert(hr_mat_near(weft_hier_world(w, b), &attached, 1e-4f));
        weft_world_destroy(w);
    }
}

/* ---- change tracking ------------------------------------------------------ */

/* Nodes that the next update must recompute: marked ones and their descendants. Marks are
 * looked up by entity index (the low 32 bits of a handle; the session's entities are
 * created in one run, so their indices are distinct). */
static uint32_t expected_recomputed(weft_world_t *w, const weft_entity_t *e, uint32_t n,
                                    const bool *marked) {
    uint32_t top = 0;
    for (uint32_t i = 0; i < n; i++) {
        top = (uint32_t)e[i] > top ? (uint32_t)e[i] : top;
    }
    bool *by_index = calloc((size_t)top + 1, sizeof(*by_index));
    for (uint32_t i = 0; i < n; i++) {
        by_index[(uint32_t)e[i]] = marked[i];
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!weft_hier_has(w, e[i])) {
            continue;
        }
        bool hit = false;
        for (weft_entity_t x = e[i]; x != 0 && !hit; x = weft_hier_parent(w, x)) {
            hit = by_index[(uint32_t)x];
        }
        k += hit;
    }
    free(by_index);
    return k;
}

/* A random forest under random edits (new locals, attaches in both modes, detaches), a few
 * or many at a time: after each incremental update the world matrices equal those of a full
 * update bit for bit, and the update recomputed exactly the changed nodes and their
 * descendants. */
static void incremental_session(const char *what, uint32_t N, int steps) {
    hr_rng_t r = hr_seeded(&fail, what);
    weft_world_t *w = new_world();
    weft_entity_t *e = malloc(N * sizeof(*e));
    bool *marked = malloc(N * sizeof(*marked));
    for (uint32_t i = 0; i < N; i++) {
        const weft_transform_t t = hr_transform(&r);
        e[i] = new_node(w, &t);
        if (i > 0) {
            cr_assert(weft_hier_attach_ex(w, e[i], e[hr_below(&r, i)], modes[i % 2]) == WEFT_OK);
        }
    }
    cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
    weft_mat4_t *got = malloc(N * sizeof(*got));
    for (int step = 0; step < steps && !fail.failed; step++) {
        fail.step = step;
        memset(marked, 0, N * sizeof(*marked));
        /* 0: nothing changed; every fourth step a large change (a third of the nodes), past
         * what the sparse pass marks, so the scanning pass runs too (hierarchy_update.c). */
        const uint32_t edits = step % 4 == 3 ? N / 3 : hr_below(&r, 6);
        for (uint32_t k = 0; k < edits; k++) {
            const uint32_t i = hr_below(&r, N), j = hr_below(&r, N);
            const uint32_t kind = hr_below(&r, 4);
            if (kind < 2) {
                *weft_hier_local(w, e[i]) = hr_transform(&r);
                marked[i] = true;
            } else if (kind == 2) {
                const weft_result_t res =
                    weft_hier_attach_ex(w, e[i], e[j], modes[hr_below(&r, 2)]);
                marked[i] = marked[i] || res == WEFT_OK;
            } else if (weft_hier_parent(w, e[i]) != 0) {
                CHECK(weft_hier_detach(w, e[i]) == WEFT_OK, "detach failed");
                marked[i] = true;
            }
        }
        /* Every fifth step invalidates on top of the edits: a full update must still
         * recompose the edited nodes' local matrices. */
        const bool full = step % 5 == 4;
        if (full) {
            weft_hier_invalidate(w);
        }
        const uint32_t want = full ? weft_hier_count(w) : expected_recomputed(w, e, N, marked);
        const weft_hier_pass_t pass = (weft_hier_pass_t)(1 + hr_below(&r, 2));
        CHECK(weft_hier_update(w, pass) == WEFT_OK, "update failed");
        weft_hier_stats_t st;
        weft_hier_stats(w, &st);
        CHECK(st.recomputed == want, "the update recomputed %u nodes, expected %u", st.recomputed,
              want);
        for (uint32_t i = 0; i < N; i++) {
            got[i] = *weft_hier_world(w, e[i]);
        }
        weft_hier_invalidate(w);
        CHECK(weft_hier_update(w, (weft_hier_pass_t)(1 + hr_below(&r, 2))) == WEFT_OK,
              "full update failed");
        weft_hier_stats(w, &st);
        CHECK(st.recomputed == weft_hier_count(w), "a full update recomputed %u of %u nodes",
              st.recomputed, weft_hier_count(w));
        for (uint32_t i = 0; i < N && !fail.failed; i++) {
            const weft_mat4_t ref = hw_ref_world(w, e[i]);
            CHECK(hr_mat_eq(&got[i], weft_hier_world(w, e[i])) && hr_mat_eq(&got[i], &ref),
                  "node %u: the incremental update differs from a full one", i);
        }
    }
    free(got);
    free(marked);
    free(e);
    weft_world_destroy(w);
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
}

Test(hier_tracking, incremental_updates_equal_a_full_update_bit_for_bit) {
    incremental_session("incremental", 400, 200);
}

/* Several blocks of rows: the sequential pass skips blocks whose rows and parents are clean. */
Test(hier_tracking, incremental_updates_over_many_blocks_equal_a_full_update_bit_for_bit) {
    incremental_session("incremental blocks", 6000, 25);
}

Test(hier_tracking, a_static_hierarchy_recomputes_nothing_and_reading_marks_nothing) {
    weft_world_t *w = new_world();
    weft_entity_t a = new_node(w, NULL), b = new_node(w, NULL);
    cr_assert(weft_hier_attach(w, b, a) == WEFT_OK);
    weft_hier_stats_t st;
    cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
    weft_hier_stats(w, &st);
    cr_assert(st.recomputed == 2);
    (void)weft_hier_local_read(w, a);
    cr_assert(weft_hier_update(w, WEFT_HIER_PASS_LEVELS) == WEFT_OK);
    weft_hier_stats(w, &st);
    cr_assert(st.recomputed == 0);
    (void)weft_hier_local(w, b);
    cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
    weft_hier_stats(w, &st);
    cr_assert(st.recomputed == 1, "only b: it has no children");
    weft_world_destroy(w);
}

/* Worlds after the update just made equal those of a full update, bit for bit. */
static bool equals_full_update(weft_world_t *w, const weft_entity_t *e, uint32_t n) {
    weft_mat4_t *got = malloc(n * sizeof(*got));
    for (uint32_t i = 0; i < n; i++) {
        got[i] = *weft_hier_world(w, e[i]);
    }
    weft_hier_invalidate(w);
    cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
    bool same = true;
    for (uint32_t i = 0; i < n; i++) {
        same = same && hr_mat_eq(&got[i], weft_hier_world(w, e[i]));
    }
    free(got);
    return same;
}

/* The sparse pass (few changed rows) skips the child lists of rows it knows to be childless
 * and computes a changed row at once unless its parent is changed too: a leaf that gains a
 * child passes its next change down, and a changed row under a changed parent waits for it. */
Test(hier_tracking, the_sparse_pass_follows_new_children_and_computes_parents_first) {
    enum { N = 64 };
    weft_world_t *w = new_world();
    weft_entity_t e[N];
    hr_rng_t r = hr_seeded(&fail, "sparse");
    for (uint32_t i = 0; i < N; i++) {
        const weft_transform_t t = hr_transform(&r);
        e[i] = new_node(w, &t);
    }
    cr_assert(weft_hier_attach(w, e[1], e[0]) == WEFT_OK);
    cr_assert(weft_hier_attach(w, e[2], e[1]) == WEFT_OK);
    cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
    weft_hier_stats_t st;
    for (int mode = 0; mode < 2; mode++) {
        const weft_entity_t leaf = e[5 + mode], child = e[7 + mode];
        *weft_hier_local(w, leaf) = hr_transform(&r);
        cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
        weft_hier_stats(w, &st);
        cr_assert(st.recomputed == 1, "%s: a changed leaf alone", mode_names[mode]);
        cr_assert(weft_hier_attach_ex(w, child, leaf, modes[mode]) == WEFT_OK);
        cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
        *weft_hier_local(w, leaf) = hr_transform(&r);
        cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
        weft_hier_stats(w, &st);
        cr_assert(st.recomputed == 2, "%s: the former leaf and its new child, not %u",
                  mode_names[mode], st.recomputed);
        cr_assert(equals_full_update(w, e, N), "%s: the new child missed its parent's change",
                  mode_names[mode]);
    }
    /* A node and its grandchild changed together: the grandchild waits for its unchanged
     * parent, which waits for the changed grandparent. */
    *weft_hier_local(w, e[2]) = hr_transform(&r);
    *weft_hier_local(w, e[0]) = hr_transform(&r);
    cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
    weft_hier_stats(w, &st);
    cr_assert(st.recomputed == 3);
    cr_assert(equals_full_update(w, e, N), "the grandchild read its parent's old world matrix");
    weft_world_destroy(w);
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
}

/* New local transforms for the marked nodes, then a sequential update: it recomputed exactly
 * them and their descendants, and its world matrices equal a full update's. */
static void change_and_check(weft_world_t *w, const weft_entity_t *e, uint32_t n,
                             const bool *marked, hr_rng_t *r) {
    for (uint32_t i = 0; i < n; i++) {
        if (marked[i]) {
            *weft_hier_local(w, e[i]) = hr_transform(r);
        }
    }
    const uint32_t want = expected_recomputed(w, e, n, marked);
    CHECK(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK, "update failed");
    weft_hier_stats_t st;
    weft_hier_stats(w, &st);
    CHECK(st.recomputed == want, "the update recomputed %u nodes, expected %u", st.recomputed,
          want);
    CHECK(equals_full_update(w, e, n), "the update differs from a full one");
}

/* The sparse pass finds the changed rows a line of flags at a time, then word by word: runs
 * of adjacent changed rows (several in one word, across words and lines), the last rows
 * (past the last whole line and word), changed rows under changed parents (marked once) and
 * changed leaves (never queued) are each recomputed, once, with their descendants. Trees of
 * eight nodes keep every update under the quarter of the rows past which the scan runs. */
Test(hier_tracking, the_sparse_pass_finds_every_changed_row_of_a_flag_line_once) {
    enum { N = 3 * 64 + 13 };
    weft_world_t *w = new_world();
    weft_entity_t e[N];
    bool marked[N];
    hr_rng_t r = hr_seeded(&fail, "flag lines");
    for (uint32_t i = 0; i < N; i++) {
        const weft_transform_t t = hr_transform(&r);
        e[i] = new_node(w, &t);
        if (i % 8 != 0) { /* trees of 8 nodes, parents first: row i is node i */
            const weft_entity_t p = e[i - 1 - hr_below(&r, i % 8)];
            cr_assert(weft_hier_attach_ex(w, e[i], p, modes[i % 2]) == WEFT_OK);
        }
    }
    cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
    for (int step = 0; step < 40 && !fail.failed; step++) {
        fail.step = step;
        memset(marked, 0, sizeof(marked));
        /* One run of 1-20 adjacent rows anywhere (the tail included), and a few lone rows. */
        const uint32_t len = 1 + hr_below(&r, 20), at = hr_below(&r, N - len + 1);
        for (uint32_t i = at; i < at + len; i++) {
            marked[i] = true;
        }
        for (uint32_t k = hr_below(&r, 4); k > 0; k--) {
            marked[step % 2 ? N - 1 - hr_below(&r, 9) : hr_below(&r, N)] = true;
        }
        change_and_check(w, e, N, marked, &r);
    }
    weft_world_destroy(w);
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
}

/* Whole words of marked rows (64 in a row) are computed as runs, in row order with the rows
 * listed around them: a changed root whose 300 children and grandchildren follow it, some of
 * them changed too, among enough unrelated roots to stay under the sparse pass's budget. */
Test(hier_tracking, the_sparse_pass_computes_runs_of_marked_rows_in_row_order) {
    enum { KIDS = 300, N = 4 * (KIDS + 1) + 400 };
    weft_world_t *w = new_world();
    weft_entity_t e[N];
    bool marked[N] = {0};
    hr_rng_t r = hr_seeded(&fail, "runs");
    for (uint32_t i = 0; i < N; i++) {
        const weft_transform_t t = hr_transform(&r);
        e[i] = new_node(w, &t);
        /* Rows 2-63 under row 0, rows 64-300 under those (a few of the last under row 1,
         * another root): a change of row 0 lists row 0's word, then runs over whole words
         * whose parents are in the listed word, then lists the last word. */
        if (i >= 2 && i <= KIDS) {
            const weft_entity_t p = i < 64                   ? e[0]
                                    : i >= 256 && i % 7 == 0 ? e[1]
                                                             : e[2 + hr_below(&r, 62)];
            cr_assert(weft_hier_attach_ex(w, e[i], p, modes[i % 2]) == WEFT_OK);
        }
    }
    cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
    for (int step = 0; step < 6 && !fail.failed; step++) {
        fail.step = step;
        memset(marked, 0, sizeof(marked));
        marked[step % 3 == 2 ? 1 : 0] = true;
        for (uint32_t k = hr_below(&r, 5); k > 0; k--) {
            marked[hr_below(&r, KIDS + 10)] = true;
        }
        change_and_check(w, e, N, marked, &r);
    }
    weft_world_destroy(w);
    cr_assert(!fail.failed, "%s", hr_fail_message(&fail));
}

/* ---- the hierarchy in the world hash -------------------------------------- */

static uint64_t updated_hash(weft_world_t *w) {
    cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
    return weft_world_hash(w);
}

/* The archive of w loaded (ids kept) into a fresh world with the hierarchy set up. */
static uint64_t archive_round_trip_hash(weft_world_t *w) {
    weft_membuf_t buf = {0};
    weft_writer_t wr = weft_membuf_writer(&buf);
    cr_assert(weft_archive_save(w, NULL, &wr) == WEFT_OK, "save: %s", weft_last_error());
    weft_world_t *b = new_world();
    weft_hier_components_t ids;
    cr_assert(weft_hier_components(b, &ids) == WEFT_OK);
    cr_assert(weft_archive_load_memory(b, buf.data, buf.size,
                                       &(weft_archive_load_desc_t){.keep_ids = true},
                                       NULL) == WEFT_OK,
              "load: %s", weft_last_error());
    const uint64_t h = weft_world_hash(b);
    weft_world_destroy(b);
    weft_membuf_free(&buf);
    return h;
}

/* One local transform, one bind, one parent and one attach mode changed in turn: the hash
 * changes each time and comes back when the change is undone (by the inverse call where
 * one exists exactly, else by restoring a snapshot); a snapshot restore and an archive round
 * trip reproduce the hash. */
Test(hier_tracking, the_world_hash_follows_every_hierarchy_change_and_returns_when_undone) {
    hr_rng_t r = hr_seeded(&fail, "hash");
    weft_world_t *w = new_world();
    weft_transform_t t[4];
    for (int i = 0; i < 4; i++) {
        t[i] = hr_transform(&r);
    }
    const weft_entity_t p = new_node(w, &t[0]), q = new_node(w, &t[1]), c = new_node(w, &t[2]);
    cr_assert(weft_hier_attach_ex(w, c, p, WEFT_HIER_KEEP_LOCAL) == WEFT_OK);
    const uint64_t h0 = updated_hash(w);
    weft_snapshot_t *snap = NULL;
    cr_assert(weft_snapshot_create(w, &snap) == WEFT_OK);
    cr_assert(weft_snapshot_capture(w, snap) == WEFT_OK);

    /* local */
    *weft_hier_local(w, c) = t[3];
    cr_assert(updated_hash(w) != h0, "a local transform change must change the hash");
    *weft_hier_local(w, c) = t[2];
    cr_assert(updated_hash(w) == h0, "undoing the local change must restore the hash");

    /* parent (keep-local both ways: the bind stays the identity, so the undo is exact) */
    cr_assert(weft_hier_attach_ex(w, c, q, WEFT_HIER_KEEP_LOCAL) == WEFT_OK);
    cr_assert(updated_hash(w) != h0, "a parent change must change the hash");
    cr_assert(weft_hier_attach_ex(w, c, p, WEFT_HIER_KEEP_LOCAL) == WEFT_OK);
    cr_assert(updated_hash(w) == h0, "undoing the parent change must restore the hash");

    /* attach mode: the same parent, keeping the world (bakes local, binds to p) */
    cr_assert(weft_hier_attach_ex(w, c, p, WEFT_HIER_KEEP_WORLD) == WEFT_OK);
    const uint64_t h_keep_world = updated_hash(w);
    cr_assert(h_keep_world != h0, "an attach mode change must change the hash");
    weft_snapshot_t *snap_world = NULL;
    cr_assert(weft_snapshot_create(w, &snap_world) == WEFT_OK);
    cr_assert(weft_snapshot_capture(w, snap_world) == WEFT_OK);
    cr_assert(weft_snapshot_restore(w, snap) == WEFT_OK);
    cr_assert(weft_world_hash(w) == h0, "restoring the snapshot restores the hash");
    cr_assert(updated_hash(w) == h0, "and the restored world is up to date");

    /* bind alone: from keep-world, re-attach under the same parent keeping the local, so
     * only the inverse bind changes (to the identity) */
    cr_assert(weft_snapshot_restore(w, snap_world) == WEFT_OK);
    cr_assert(weft_world_hash(w) == h_keep_world);
    const weft_transform_t local_before = *weft_hier_local_read(w, c);
    cr_assert(weft_hier_attach_ex(w, c, p, WEFT_HIER_KEEP_LOCAL) == WEFT_OK);
    cr_assert(memcmp(&local_before, weft_hier_local_read(w, c), sizeof(local_before)) == 0);
    cr_assert(weft_hier_parent(w, c) == p);
    cr_assert(weft_world_hash(w) != h_keep_world, "a bind change must change the hash");
    cr_assert(weft_snapshot_restore(w, snap_world) == WEFT_OK);
    cr_assert(updated_hash(w) == h_keep_world, "undoing the bind change restores the hash");

    /* archives */
    cr_assert(archive_round_trip_hash(w) == h_keep_world, "archive round trip (keep world)");
    cr_assert(weft_snapshot_restore(w, snap) == WEFT_OK);
    cr_assert(archive_round_trip_hash(w) == h0, "archive round trip (keep local)");

    weft_snapshot_destroy(snap_world);
    weft_snapshot_destroy(snap);
    weft_world_destroy(w);
}

/* ---- structural changes from systems ------------------------------------------ */

static weft_entity_t sys_p, sys_q, sys_c, sys_d, sys_e;
static int direct_results[4];

/* Records, in this order: c under p keeping its local; c re-parented under q keeping its
 * world; d under c keeping its local; e detached. Also tries the direct calls. */
static void edit_first(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    cr_assert(weft_hier_cmd_attach(ctx->cmd, sys_c, sys_p, WEFT_HIER_KEEP_LOCAL) == WEFT_OK);
    cr_assert(weft_hier_cmd_attach(ctx->cmd, sys_c, sys_q, WEFT_HIER_KEEP_WORLD) == WEFT_OK);
    cr_assert(weft_hier_cmd_attach(ctx->cmd, sys_d, sys_c, WEFT_HIER_KEEP_LOCAL) == WEFT_OK);
    cr_assert(weft_hier_cmd_detach(ctx->cmd, sys_e) == WEFT_OK);
    cr_assert(weft_hier_cmd_attach(ctx->cmd, sys_e, sys_p, (weft_hier_attach_mode_t)9) ==
              WEFT_EINVAL);
    direct_results[0] = (int)weft_hier_attach(ctx->world, sys_d, sys_p);
    direct_results[1] = (int)weft_hier_detach(ctx->world, sys_e);
    direct_results[2] = (int)weft_hier_update(ctx->world, WEFT_HIER_PASS_SEQUENTIAL);
    direct_results[3] = (int)weft_hier_attach_ex(ctx->world, sys_d, sys_p, WEFT_HIER_KEEP_LOCAL);
}

/* Registered second: its commands apply after edit_first's, whatever ran first. */
static void edit_second(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    (void)it;
    cr_assert(weft_hier_cmd_attach(ctx->cmd, sys_d, sys_p, WEFT_HIER_KEEP_LOCAL) == WEFT_OK);
}

/* The same edits through command buffers at 1 and 2 workers: the result follows the command
 * order (registration, then write order), matches the same direct calls made in that order,
 * and direct calls from the systems returned WEFT_ESTATE and changed nothing. */
Test(hier_tracking, attach_detach_and_reparent_from_systems_apply_in_command_order) {
    hr_rng_t r = hr_seeded(&fail, "commands");
    weft_transform_t t[5];
    for (int i = 0; i < 5; i++) {
        t[i] = hr_transform(&r);
    }
    uint64_t hashes[3];
    for (int run = 0; run < 3; run++) {
        weft_world_t *w = hw_new_world(run == 0 ? 1 : 2,
                                       run == 0 ? WEFT_EXECUTION_INLINE : WEFT_EXECUTION_THREADED);
        sys_p = new_node(w, &t[0]);
        sys_q = new_node(w, &t[1]);
        sys_c = new_node(w, &t[2]);
        sys_d = new_node(w, &t[3]);
        sys_e = new_node(w, &t[4]);
        cr_assert(weft_hier_attach(w, sys_e, sys_q) == WEFT_OK);
        cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
        if (run < 2) {
            weft_system_t s;
            cr_assert(weft_system_register(
                          w, &(weft_system_desc_t){.name = "edit_first", .fn = edit_first}, &s) ==
                      WEFT_OK);
            cr_assert(weft_system_register(
                          w, &(weft_system_desc_t){.name = "edit_second", .fn = edit_second}, &s) ==
                      WEFT_OK);
            memset(direct_results, 0, sizeof(direct_results));
            cr_assert(weft_world_progress(w, 0.0f) == WEFT_OK);
            for (int k = 0; k < 4; k++) {
                cr_assert(direct_results[k] == WEFT_ESTATE, "direct call %d from a system: %s", k,
                          weft_result_name((weft_result_t)direct_results[k]));
            }
        } else { /* the same calls, made directly in command order */
            cr_assert(weft_hier_attach_ex(w, sys_c, sys_p, WEFT_HIER_KEEP_LOCAL) == WEFT_OK);
            cr_assert(weft_hier_attach_ex(w, sys_c, sys_q, WEFT_HIER_KEEP_WORLD) == WEFT_OK);
            cr_assert(weft_hier_attach_ex(w, sys_d, sys_c, WEFT_HIER_KEEP_LOCAL) == WEFT_OK);
            cr_assert(weft_hier_detach(w, sys_e) == WEFT_OK);
            cr_assert(weft_hier_attach_ex(w, sys_d, sys_p, WEFT_HIER_KEEP_LOCAL) == WEFT_OK);
        }
        cr_assert(weft_hier_parent(w, sys_c) == sys_q, "run %d: c was re-parented under q", run);
        cr_assert(weft_hier_parent(w, sys_d) == sys_p, "run %d: the second system's attach is last",
                  run);
        cr_assert(weft_hier_parent(w, sys_e) == 0, "run %d: e was detached", run);
        const weft_mat4_t id = weft_mat4_identity();
        cr_assert(!hr_mat_eq(&weft_hier_link(w, sys_c)->inverse_bind, &id), "keep world binds");
        cr_assert(hr_mat_eq(&weft_hier_link(w, sys_d)->inverse_bind, &id), "keep local");
        cr_assert(weft_hier_update(w, WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
        hashes[run] = weft_world_hash(w);
        weft_world_destroy(w);
    }
    cr_assert(hashes[0] == hashes[2] && hashes[1] == hashes[2],
              "commands at 1 and 2 workers give the world the direct calls give");
}

/* A hierarchy command in a phase whose other commands are many row changes of a plain
 * component: such a phase may be applied placed (src/sched/command_place.c), whose walk must
 * not skip or reorder the deferred call, so a phase holding one is applied serially. */
static weft_component_t plain_tag;

static void tag_all_and_attach(weft_iter_t *it, const weft_system_ctx_t *ctx) {
    if (ctx->chunk == 0) {
        weft_result_t r = weft_hier_cmd_attach(ctx->cmd, sys_c, sys_p, WEFT_HIER_KEEP_LOCAL);
        direct_results[0] = r;
    }
    while (weft_iter_next(it)) {
        for (uint32_t i = 0; i < it->rows; i++) {
            (void)weft_cmd_add(ctx->cmd, weft_iter_entity(it, i), plain_tag);
        }
    }
}

Test(hier_tracking, a_hierarchy_command_beside_many_plain_row_changes_applies_at_two_workers) {
    hr_rng_t r = hr_seeded(&fail, "placed");
    weft_world_t *w = hw_new_world(2, WEFT_EXECUTION_THREADED);
    weft_transform_t t0 = hr_transform(&r), t1 = hr_transform(&r);
    sys_p = new_node(w, &t0);
    sys_c = new_node(w, &t1);
    weft_component_t val;
    cr_assert(weft_component_register(w, &(weft_component_desc_t){.name = "Val", .size = 4},
                                      &val) == WEFT_OK);
    cr_assert(weft_component_register(w, &(weft_component_desc_t){.name = "PlainTag"},
                                      &plain_tag) == WEFT_OK);
    for (int i = 0; i < 4000; i++) { /* 4000 adds: far above any placed-apply floor */
        weft_entity_t e;
        uint32_t v = (uint32_t)i;
        cr_assert(weft_entity_create(w, &e) == WEFT_OK);
        cr_assert(weft_component_set(w, e, val, &v) == WEFT_OK);
    }
    weft_system_t s;
    cr_assert(weft_system_register(
                  w,
                  &(weft_system_desc_t){.name = "tag_all_and_attach",
                                        .fn = tag_all_and_attach,
                                        .terms = {{.component = val, .access = WEFT_ACCESS_READ}}},
                  &s) == WEFT_OK);
    direct_results[0] = -1;
    cr_assert(weft_world_progress(w, 0.0f) == WEFT_OK, "%s", weft_last_error());
    cr_assert(direct_results[0] == WEFT_OK);
    cr_expect(weft_component_rows(w, plain_tag) == 4000u);
    cr_expect(weft_hier_parent(w, sys_c) == sys_p, "the attach recorded beside them was applied");
    weft_world_destroy(w);
}

/* ---- hash breakdown --------------------------------------------------------------- */

/* Index of the first part where a and b differ (count when none). */
static uint32_t first_difference(const weft_hash_part_t *a, const weft_hash_part_t *b,
                                 uint32_t count) {
    uint32_t i = 0;
    while (i < count && a[i].kind == b[i].kind && a[i].id == b[i].id && a[i].hash == b[i].hash) {
        i++;
    }
    return i;
}

/* Two worlds built alike have equal parts; a change in one component's data shows in that
 * component's part only, a hierarchy change in the hierarchy module's part only. */
Test(hier_tracking, the_hash_breakdown_names_the_part_where_two_worlds_differ) {
    hr_rng_t r = hr_seeded(&fail, "hash parts");
    weft_transform_t t[2] = {hr_transform(&r), hr_transform(&r)};
    weft_world_t *w[2];
    weft_component_t pos[2];
    weft_entity_t node[2][2];
    for (int k = 0; k < 2; k++) {
        w[k] = new_world();
        cr_assert(weft_component_register(w[k],
                                          &(weft_component_desc_t){.name = "pos",
                                                                   .size = sizeof(float),
                                                                   .align = _Alignof(float)},
                                          &pos[k]) == WEFT_OK);
        node[k][0] = new_node(w[k], &t[0]);
        node[k][1] = new_node(w[k], &t[1]);
        const float x = 1.0f;
        cr_assert(weft_component_set(w[k], node[k][0], pos[k], &x) == WEFT_OK);
        cr_assert(weft_hier_attach(w[k], node[k][1], node[k][0]) == WEFT_OK);
        cr_assert(weft_hier_update(w[k], WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
    }
    enum { CAP = 16 };
    weft_hash_part_t a[CAP], b[CAP];
    uint32_t na = 0, nb = 0;
    cr_assert(weft_world_hash_parts(w[0], a, CAP, &na) == WEFT_OK);
    cr_assert(weft_world_hash_parts(w[1], b, CAP, &nb) == WEFT_OK);
    cr_assert(na == nb && na <= CAP && na >= 3);
    cr_assert(a[0].kind == WEFT_HASH_PART_ENTITIES && a[na - 1].kind == WEFT_HASH_PART_MODULE);
    cr_assert(strcmp(a[na - 1].name, "weft.hierarchy") == 0);
    cr_assert(first_difference(a, b, na) == na, "worlds built alike have equal parts");

    const float y = 2.0f;
    cr_assert(weft_component_set(w[1], node[1][0], pos[1], &y) == WEFT_OK);
    cr_assert(weft_world_hash_parts(w[1], b, CAP, &nb) == WEFT_OK);
    uint32_t d = first_difference(a, b, na);
    cr_assert(d < na && b[d].kind == WEFT_HASH_PART_COMPONENT && b[d].id == pos[1].id &&
                  strcmp(b[d].name, "pos") == 0,
              "the first differing part is the changed component");
    cr_assert(first_difference(a + d + 1, b + d + 1, na - d - 1) == na - d - 1, "only that one");

    cr_assert(weft_component_set(w[1], node[1][0], pos[1], &(float){1.0f}) == WEFT_OK);
    *weft_hier_local(w[1], node[1][1]) = t[0];
    cr_assert(weft_hier_update(w[1], WEFT_HIER_PASS_SEQUENTIAL) == WEFT_OK);
    cr_assert(weft_world_hash_parts(w[1], b, CAP, &nb) == WEFT_OK);
    d = first_difference(a, b, na);
    cr_assert(d == na - 1 && b[d].kind == WEFT_HASH_PART_MODULE,
              "a hierarchy change shows in the hierarchy's part only");

    uint32_t n0 = 0;
    cr_assert(weft_world_hash_parts(w[0], NULL, 0, &n0) == WEFT_OK && n0 == na);
    cr_assert(weft_world_hash_parts(NULL, NULL, 0, &n0) == WEFT_EINVAL);
    cr_assert(weft_world_hash_parts(w[0], NULL, 4, &n0) == WEFT_EINVAL);
    weft_world_destroy(w[0]);
    weft_world_destroy(w[1]);
}
