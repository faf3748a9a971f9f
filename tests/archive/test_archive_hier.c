/* test_archive_hier.c: hierarchies through archives — links, inverse binds and world matrices
 * survive a round trip, the order stays valid, subtrees save with their descendants, and a
 * failed load leaves the hierarchy as it was. */
#include "archive_fixture.h"
#include "weft/hierarchy.h"
#include "weft/snapshot.h"

TestSuite(archive_hier, .timeout = 60);

#define NODES 64

typedef struct hier_world {
    fx_world_t f;
    weft_entity_t e[NODES];
} hier_world_t;

static weft_transform_t transform_of(uint64_t *s) {
    weft_transform_t t = weft_transform_identity();
    t.position.x = (float)(fx_rand(s) % 100) * 0.25f;
    t.position.y = (float)(fx_rand(s) % 50) * -0.5f;
    t.scale.x = 1.0f + (float)(fx_rand(s) % 4) * 0.5f;
    return t;
}

/* Nodes attached in a shuffled order (subtree moves included), a detach, and an update. */
static void build(hier_world_t *h, uint64_t seed, const weft_world_desc_t *desc) {
    fx_init_desc(&h->f, desc);
    cr_assert_eq(weft_hier_components(h->f.w, NULL), WEFT_OK);
    uint64_t s = seed | 1u;
    cr_assert_eq(weft_entity_create_n(h->f.w, NODES, h->e), WEFT_OK);
    fx_fail_t fl = {0};
    weft_result_t r;
    for (int i = 0; i < NODES; ++i) {
        weft_transform_t t = transform_of(&s);
        if (!FX_CHECK(&fl, (r = weft_hier_add(h->f.w, h->e[i], &t)) == WEFT_OK,
                      "seed %llu node %d: hier_add: %s", (unsigned long long)seed, i,
                      weft_last_error())) {
            break;
        }
        pos3_t p = {(float)i, 0, 0};
        if (!FX_CHECK(&fl, (r = weft_component_set(h->f.w, h->e[i], h->f.c[FX_POS], &p)) == WEFT_OK,
                      "seed %llu node %d: set Position: %s", (unsigned long long)seed, i,
                      weft_last_error())) {
            break;
        }
    }
    FX_ASSERT_NO_FAIL(&fl);
    /* The write-up's counter-example first, then random parents. */
    cr_assert_eq(weft_hier_attach(h->f.w, h->e[4], h->e[3]), WEFT_OK);
    cr_assert_eq(weft_hier_attach(h->f.w, h->e[2], h->e[1]), WEFT_OK);
    cr_assert_eq(weft_hier_attach(h->f.w, h->e[3], h->e[2]), WEFT_OK);
    for (int i = 5; i < NODES; ++i) {
        int p = (int)(fx_rand(&s) % (uint64_t)NODES);
        r = weft_hier_attach(h->f.w, h->e[i], h->e[p]);
        if (!FX_CHECK(&fl, r == WEFT_OK || r == WEFT_ECYCLE, "seed %llu: attach %d to %d: %s",
                      (unsigned long long)seed, i, p, weft_last_error())) {
            break;
        }
    }
    FX_ASSERT_NO_FAIL(&fl);
    cr_assert_eq(weft_hier_detach(h->f.w, h->e[10]), WEFT_OK);
    cr_assert_eq(weft_hier_update(h->f.w, WEFT_HIER_PASS_SEQUENTIAL), WEFT_OK);
}

/* Every parent precedes its children in the update order. */
static void expect_order_valid(weft_world_t *w) {
    uint32_t n = weft_hier_count(w);
    weft_entity_t *order = malloc(sizeof *order * (n + 1u));
    cr_assert_eq(weft_hier_order(w, order, n), n);
    fx_fail_t fl = {0};
    for (uint32_t i = 0; i < n; ++i) {
        weft_entity_t p = weft_hier_parent(w, order[i]);
        if (!p) {
            continue;
        }
        bool before = false;
        for (uint32_t j = 0; j < i; ++j) {
            before |= order[j] == p;
        }
        if (!FX_CHECK(&fl, before, "parent 0x%llx of node %u (0x%llx) comes after it",
                      (unsigned long long)p, i, (unsigned long long)order[i])) {
            break;
        }
    }
    free(order);
    FX_ASSERT_NO_FAIL(&fl);
}

/* Node src[i] of a matches dst[i] of b: parent, local, link, world. */
static void expect_same_nodes(weft_world_t *a, weft_world_t *b, const weft_entity_t *src,
                              const weft_entity_t *dst, uint32_t n, bool outside_root) {
    fx_fail_t fl = {0};
    for (uint32_t i = 0; i < n; ++i) {
        bool ha = weft_hier_has(a, src[i]), hb = weft_hier_has(b, dst[i]);
        if (!FX_CHECK(&fl, ha == hb, "node %u: in the hierarchy %d -> %d", i, ha, hb)) {
            break;
        }
        if (!ha) {
            continue;
        }
        weft_entity_t pa = weft_hier_parent(a, src[i]);
        weft_entity_t want = fx_map(pa, src, dst, n, false);
        weft_entity_t pb = weft_hier_parent(b, dst[i]);
        if (!FX_CHECK(&fl, pb == want, "node %u parent 0x%llx, want 0x%llx", i,
                      (unsigned long long)pb, (unsigned long long)want) ||
            !FX_CHECK(&fl,
                      memcmp(weft_hier_local_read(a, src[i]), weft_hier_local_read(b, dst[i]),
                             sizeof(weft_transform_t)) == 0,
                      "node %u local", i) ||
            !FX_CHECK(&fl,
                      memcmp(weft_hier_world(a, src[i]), weft_hier_world(b, dst[i]),
                             sizeof(weft_mat4_t)) == 0,
                      "node %u world", i)) {
            break;
        }
        if ((want != 0 || !outside_root) &&
            !FX_CHECK(&fl,
                      memcmp(&weft_hier_link(a, src[i])->inverse_bind,
                             &weft_hier_link(b, dst[i])->inverse_bind, sizeof(weft_mat4_t)) == 0,
                      "node %u inverse bind", i)) {
            break;
        }
    }
    FX_ASSERT_NO_FAIL(&fl);
}

Test(archive_hier, hierarchy_round_trips_with_identical_world_matrices) {
    uint64_t seed = (uint64_t)time(NULL);
    fprintf(stderr, "archive_hier seed %llu\n", (unsigned long long)seed);
    const weft_world_desc_t desc = {.execution = WEFT_EXECUTION_INLINE};
    hier_world_t a;
    build(&a, seed, &desc);
    weft_membuf_t buf = fx_save(&a.f, NULL);
    weft_archive_info_t info;
    cr_assert_eq(weft_archive_inspect(buf.data, buf.size, &info), WEFT_OK);
    cr_assert_eq(info.hierarchy_nodes, NODES);

    fx_world_t b;
    fx_init(&b);
    cr_assert_eq(weft_hier_components(b.w, NULL), WEFT_OK);
    weft_entity_t src[NODES], dst[NODES];
    uint32_t n = fx_alive(&a.f, src, NODES);
    cr_assert_eq(weft_archive_load_memory(
                     b.w, buf.data, buf.size,
                     &(weft_archive_load_desc_t){.out_entities = dst, .out_capacity = NODES}, NULL),
                 WEFT_OK, "%s", weft_last_error());
    cr_assert_eq(weft_hier_count(b.w), NODES);
    expect_order_valid(b.w);
    expect_same_nodes(a.f.w, b.w, src, dst, n, false);
    /* Recomputing from the loaded data gives the same matrices bit for bit. */
    cr_assert_eq(weft_hier_update(a.f.w, WEFT_HIER_PASS_SEQUENTIAL), WEFT_OK);
    cr_assert_eq(weft_hier_update(b.w, WEFT_HIER_PASS_SEQUENTIAL), WEFT_OK);
    expect_same_nodes(a.f.w, b.w, src, dst, n, false);
    /* Destroying a loaded node goes through the tag's hook like any node. */
    cr_assert_eq(weft_hier_destroy(b.w, dst[0], WEFT_HIER_DESTROY_SUBTREE), WEFT_OK);
    expect_order_valid(b.w);
    weft_membuf_free(&buf);
    fx_fini(&b);
    fx_fini(&a.f);
}

Test(archive_hier, loading_twice_and_keep_ids_keep_the_order_valid) {
    hier_world_t a;
    build(&a, 5, &(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE});
    weft_membuf_t buf = fx_save(&a.f, NULL);
    cr_assert_eq(weft_archive_load_memory(a.f.w, buf.data, buf.size, NULL, NULL), WEFT_OK);
    cr_assert_eq(weft_archive_load_memory(a.f.w, buf.data, buf.size, NULL, NULL), WEFT_OK);
    cr_assert_eq(weft_hier_count(a.f.w), 3 * NODES);
    expect_order_valid(a.f.w);

    fx_world_t b;
    fx_init(&b);
    cr_assert_eq(weft_hier_components(b.w, NULL), WEFT_OK);
    weft_entity_t dst[NODES];
    cr_assert_eq(weft_archive_load_memory(b.w, buf.data, buf.size,
                                          &(weft_archive_load_desc_t){.keep_ids = true,
                                                                      .out_entities = dst,
                                                                      .out_capacity = NODES},
                                          NULL),
                 WEFT_OK);
    expect_same_nodes(a.f.w, b.w, a.e, a.e, NODES, false);
    expect_order_valid(b.w);
    weft_membuf_free(&buf);
    fx_fini(&b);
    fx_fini(&a.f);
}

Test(archive_hier, saving_a_subtree_with_descendants_makes_its_top_a_root) {
    hier_world_t a;
    build(&a, 9, &(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE});
    /* e[3] sits under e[2] (see build); save e[3] and everything below it. */
    weft_membuf_t buf =
        fx_save(&a.f, &(weft_archive_save_desc_t){
                          .entities = &a.e[3], .entity_count = 1, .with_descendants = true});
    uint32_t subtree = 0;
    for (int i = 0; i < NODES; ++i) {
        weft_entity_t x = a.e[i];
        while (x && x != a.e[3]) {
            x = weft_hier_parent(a.f.w, x);
        }
        subtree += x == a.e[3];
    }
    fx_world_t b;
    fx_init(&b);
    cr_assert_eq(weft_hier_components(b.w, NULL), WEFT_OK);
    weft_archive_info_t info;
    cr_assert_eq(weft_archive_load_memory(b.w, buf.data, buf.size, NULL, &info), WEFT_OK);
    cr_assert_eq(info.entity_count, subtree);
    cr_assert_eq(weft_hier_count(b.w), subtree);
    uint32_t roots = 0;
    weft_entity_t order[NODES];
    weft_hier_order(b.w, order, NODES);
    for (uint32_t i = 0; i < subtree; ++i) {
        roots += weft_hier_parent(b.w, order[i]) == 0;
    }
    cr_assert_eq(roots, 1, "only the subtree's top is a root");
    cr_assert_eq(weft_hier_parent(b.w, order[0]), 0);
    expect_order_valid(b.w);
    weft_membuf_free(&buf);
    fx_fini(&b);
    fx_fini(&a.f);
}

/* ---- failures ---------------------------------------------------------------------- */

Test(archive_hier, out_of_memory_while_loading_a_hierarchy_leaves_it_unchanged) {
    hier_world_t a;
    build(&a, 13, &(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE});
    weft_membuf_t buf = fx_save(&a.f, NULL);
    fx_counting_t c = {0};
    hier_world_t b;
    build(&b, 14,
          &(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE,
                               .allocator = fx_counting_allocator(&c)});
    weft_entity_t before[NODES];
    fx_fail_t fl = {0};
    for (long k = 1;; ++k) {
        uint64_t h = weft_world_hash(b.f.w);
        uint32_t nodes = weft_hier_count(b.f.w);
        weft_hier_order(b.f.w, before, NODES);
        c.count = 0;
        c.fail_at = k;
        weft_result_t r = weft_archive_load_memory(b.f.w, buf.data, buf.size, NULL, NULL);
        c.fail_at = 0;
        if (r == WEFT_OK) {
            break;
        }
        weft_entity_t now[NODES];
        weft_hier_order(b.f.w, now, NODES);
        if (!FX_CHECK(&fl, r == WEFT_ENOMEM, "k=%ld: %s: %s", k, weft_result_name(r),
                      weft_last_error()) ||
            !FX_CHECK(&fl, weft_world_hash(b.f.w) == h, "k=%ld changed the world hash", k) ||
            !FX_CHECK(&fl, weft_hier_count(b.f.w) == nodes, "k=%ld: %u nodes, want %u", k,
                      weft_hier_count(b.f.w), nodes) ||
            !FX_CHECK(&fl, memcmp(now, before, sizeof now) == 0, "k=%ld: order changed", k) ||
            !FX_CHECK(&fl, k < 10000, "k=%ld: still failing", k)) {
            break;
        }
    }
    FX_ASSERT_NO_FAIL(&fl);
    cr_assert_eq(weft_hier_count(b.f.w), 2 * NODES);
    expect_order_valid(b.f.w);
    weft_membuf_free(&buf);
    fx_fini(&b.f);
    fx_fini(&a.f);
}

Test(archive_hier, a_hierarchy_archive_needs_the_hierarchy_registered) {
    hier_world_t a;
    build(&a, 15, &(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE});
    weft_membuf_t buf = fx_save(&a.f, NULL);
    fx_world_t b;
    fx_init(&b);
    uint64_t h = weft_world_hash(b.w);
    cr_assert_eq(weft_archive_load_memory(b.w, buf.data, buf.size, NULL, NULL), WEFT_EMISMATCH);
    cr_assert_eq(weft_world_hash(b.w), h);
    /* skip_unknown drops the hierarchy with its components. */
    cr_assert_eq(weft_archive_load_memory(b.w, buf.data, buf.size,
                                          &(weft_archive_load_desc_t){.skip_unknown = true}, NULL),
                 WEFT_OK);
    cr_assert_eq(weft_entity_count(b.w), NODES);
    weft_membuf_free(&buf);
    fx_fini(&b);
    fx_fini(&a.f);
}

/* Everything observable about the hierarchy, for before/after comparisons. */
typedef struct hier_state {
    uint32_t n;
    weft_entity_t order[4 * NODES];
    weft_entity_t parent[4 * NODES];
    weft_transform_t local[4 * NODES];
    weft_parent_link_t link[4 * NODES];
    weft_mat4_t world[4 * NODES];
} hier_state_t;

static void hier_state(weft_world_t *w, hier_state_t *st) {
    memset(st, 0, sizeof *st);
    st->n = weft_hier_order(w, st->order, 4 * NODES);
    cr_assert_leq(st->n, 4 * NODES);
    for (uint32_t i = 0; i < st->n; ++i) {
        st->parent[i] = weft_hier_parent(w, st->order[i]);
        st->local[i] = *weft_hier_local_read(w, st->order[i]);
        st->link[i] = *weft_hier_link(w, st->order[i]);
        st->world[i] = *weft_hier_world(w, st->order[i]);
    }
}

static void attach_or_cycle(weft_world_t *w, weft_entity_t child, weft_entity_t parent) {
    weft_result_t r = weft_hier_attach(w, child, parent);
    cr_assert(r == WEFT_OK || r == WEFT_ECYCLE, "%s", weft_last_error());
}

/* Structural and value changes: detach, re-parent, destroy a subtree, new nodes. */
static void hier_scramble(hier_world_t *h) {
    cr_assert_eq(weft_hier_detach(h->f.w, h->e[3]), WEFT_OK);
    attach_or_cycle(h->f.w, h->e[1], h->e[NODES - 1]);
    attach_or_cycle(h->f.w, h->e[30], h->e[0]);
    cr_assert_eq(weft_hier_destroy(h->f.w, h->e[20], WEFT_HIER_DESTROY_SUBTREE), WEFT_OK);
    weft_entity_t extra[4];
    cr_assert_eq(weft_entity_create_n(h->f.w, 4, extra), WEFT_OK);
    for (int i = 0; i < 4; ++i) {
        cr_assert_eq(weft_hier_add(h->f.w, extra[i], NULL), WEFT_OK);
        attach_or_cycle(h->f.w, h->e[0], extra[i]);
    }
    weft_hier_local(h->f.w, h->e[5])->position.z = 42.0f;
    cr_assert_eq(weft_hier_update(h->f.w, WEFT_HIER_PASS_SEQUENTIAL), WEFT_OK);
}

Test(archive_hier, snapshots_restore_the_hierarchy_exactly) {
    hier_world_t a;
    build(&a, 16, &(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE});
    weft_snapshot_t *snap = fx_captured(a.f.w);
    static hier_state_t before, after;
    hier_state(a.f.w, &before);
    uint64_t h = weft_world_hash(a.f.w);
    for (int round = 0; round < 2; ++round) {
        hier_scramble(&a);
        cr_assert_neq(weft_world_hash(a.f.w), h);
        cr_assert_eq(weft_snapshot_restore(a.f.w, snap), WEFT_OK, "%s", weft_last_error());
        cr_assert_eq(weft_world_hash(a.f.w), h);
        hier_state(a.f.w, &after);
        cr_assert(memcmp(&before, &after, sizeof before) == 0, "round %d: hierarchy differs",
                  round);
        expect_order_valid(a.f.w);
    }
    /* The restored hierarchy updates like the original. */
    cr_assert_eq(weft_hier_update(a.f.w, WEFT_HIER_PASS_SEQUENTIAL), WEFT_OK);
    hier_state(a.f.w, &after);
    cr_assert(memcmp(before.world, after.world, sizeof before.world) == 0);
    weft_snapshot_destroy(snap);
    fx_fini(&a.f);
}

Test(archive_hier, out_of_memory_while_restoring_a_hierarchy_changes_nothing) {
    fx_counting_t c = {0};
    hier_world_t a;
    build(&a, 17,
          &(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE,
                               .allocator = fx_counting_allocator(&c)});
    weft_snapshot_t *snap = fx_captured(a.f.w);
    uint64_t h0 = weft_world_hash(a.f.w);
    hier_scramble(&a);
    static hier_state_t mid, now;
    hier_state(a.f.w, &mid);
    long k = 1;
    fx_fail_t fl = {0};
    for (;; ++k) {
        uint64_t h = weft_world_hash(a.f.w);
        c.count = 0;
        c.fail_at = k;
        weft_result_t r = weft_snapshot_restore(a.f.w, snap);
        c.fail_at = 0;
        if (r == WEFT_OK) {
            break;
        }
        if (!FX_CHECK(&fl, r == WEFT_ENOMEM, "k=%ld: %s: %s", k, weft_result_name(r),
                      weft_last_error()) ||
            !FX_CHECK(&fl, weft_world_hash(a.f.w) == h, "k=%ld changed the world hash", k)) {
            break;
        }
        hier_state(a.f.w, &now);
        if (!FX_CHECK(&fl, memcmp(&mid, &now, sizeof mid) == 0, "k=%ld: hierarchy changed", k) ||
            !FX_CHECK(&fl, k < 1000, "k=%ld: still failing", k)) {
            break;
        }
    }
    FX_ASSERT_NO_FAIL(&fl);
    cr_assert_gt(k, 1, "the hierarchy rebuild allocates");
    cr_assert_eq(weft_world_hash(a.f.w), h0);
    weft_snapshot_destroy(snap);
    fx_fini(&a.f);
}

/* Format 2 stored the hierarchy in a HIER section; format 3 stores it as the hierarchy
 * module's section. The corpus holds the same generated world in both formats: each loads
 * into the same world, hierarchy and hash included. */
static uint64_t load_corpus_file(const char *name, weft_archive_info_t *info, uint32_t *nodes) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", WEFT_ARCHIVE_CORPUS_DIR, name);
    FILE *fp = fopen(path, "rb");
    cr_assert(fp != NULL, "%s", path);
    fx_world_t f;
    fx_init(&f);
    cr_assert_eq(weft_hier_components(f.w, NULL), WEFT_OK);
    weft_reader_t rd = weft_file_reader(fp);
    cr_assert_eq(weft_archive_load(f.w, &rd, &(weft_archive_load_desc_t){.keep_ids = true}, info),
                 WEFT_OK, "%s: %s", name, weft_last_error());
    fclose(fp);
    *nodes = weft_hier_count(f.w);
    expect_order_valid(f.w);
    const uint64_t h = weft_world_hash(f.w);
    fx_fini(&f);
    return h;
}

Test(archive_hier, a_format_2_hier_section_loads_as_the_hierarchy_modules_part) {
    weft_archive_info_t i2, i3;
    uint32_t n2, n3;
    const uint64_t h2 = load_corpus_file("ok_small.warc", &i2, &n2);
    const uint64_t h3 = load_corpus_file("ok_v3_small.warc", &i3, &n3);
    cr_assert_eq(i2.format_version, 2u);
    cr_assert_eq(i3.format_version, 3u);
    cr_assert_eq(i2.hierarchy_nodes, 7u); /* 8 made, one destroyed */
    cr_assert_eq(i3.hierarchy_nodes, 7u);
    cr_assert_eq(n2, 7u);
    cr_assert_eq(n3, 7u);
    cr_assert_eq(h2, h3, "both formats load the same world");
}
