/* test_archive_roundtrip.c: save/load round trips — random worlds, remapping, double
 * loads, kept ids, partial saves, external references, upgrades, stdio I/O. */
#include "archive_fixture.h"

TestSuite(archive, .timeout = 240);

#define N_MAX 600u

/* Save all of a random world, load it into a fresh world and compare under remapping. */
static void roundtrip_seed(uint64_t seed, uint32_t n) {
    fx_world_t a, b;
    fx_init(&a);
    fx_init(&b);
    fx_populate(&a, seed, n);
    weft_membuf_t buf = fx_save(&a, NULL);
    static weft_entity_t src[N_MAX], dst[N_MAX];
    uint32_t alive = fx_alive(&a, src, N_MAX);
    weft_archive_info_t info;
    weft_result_t r = weft_archive_load_memory(
        b.w, buf.data, buf.size,
        &(weft_archive_load_desc_t){.out_entities = dst, .out_capacity = N_MAX}, &info);
    cr_assert_eq(r, WEFT_OK, "seed %llu: %s", (unsigned long long)seed, weft_last_error());
    cr_assert_eq(info.entity_count, alive, "seed %llu", (unsigned long long)seed);
    cr_assert_eq(info.byte_size, buf.size);
    cr_assert_eq(weft_entity_count(b.w), alive);
    fx_fail_t fl = {0};
    if (fx_check_equal(&a, &b, src, dst, alive, false, &fl)) {
        for (int c = 0; c < FX_COUNT; ++c) {
            uint32_t ca = weft_component_rows(a.w, a.c[c]);
            uint32_t cb = weft_component_rows(b.w, b.c[c]);
            if (!FX_CHECK(&fl, ca == cb, "component %d count %u -> %u", c, ca, cb)) {
                break;
            }
        }
    }
    cr_assert(!fl.failed, "seed %llu n %u: %s", (unsigned long long)seed, n, fl.msg);
    weft_membuf_free(&buf);
    fx_fini(&a);
    fx_fini(&b);
}

Test(archive, random_worlds_round_trip_with_remapped_references) {
    uint64_t base = (uint64_t)time(NULL);
    for (uint64_t k = 0; k < 24; ++k) {
        uint64_t seed = base + k;
        fprintf(stderr, "archive round trip seed %llu\n", (unsigned long long)seed);
        roundtrip_seed(seed, (uint32_t)(seed % N_MAX));
    }
}

Test(archive, empty_world_round_trips) { roundtrip_seed(1, 0); }

/* A handle and where it came from, for the disjointness check. */
struct tagged_handle {
    weft_entity_t e;
    uint32_t set; /* 0: the originals, 1: first copy, 2: second copy */
    uint32_t at;  /* index within its set */
};

/* By handle, then by set (so equal handles from different sets end up adjacent). */
static int cmp_tagged_handle(const void *x, const void *y) {
    const struct tagged_handle *a = x, *b = y;
    if (a->e != b->e) {
        return a->e < b->e ? -1 : 1;
    }
    return a->set < b->set ? -1 : a->set > b->set;
}

Test(archive, loading_twice_gives_two_disjoint_copies) {
    fx_world_t a;
    weft_membuf_t buf = fx_saved_world(&a, 7, 200);
    static weft_entity_t src[N_MAX], d1[N_MAX], d2[N_MAX];
    uint32_t n = fx_alive(&a, src, N_MAX);
    weft_archive_load_desc_t ld = {.out_entities = d1, .out_capacity = N_MAX};
    cr_assert_eq(weft_archive_load_memory(a.w, buf.data, buf.size, &ld, NULL), WEFT_OK);
    ld.out_entities = d2;
    cr_assert_eq(weft_archive_load_memory(a.w, buf.data, buf.size, &ld, NULL), WEFT_OK);
    cr_assert_eq(weft_entity_count(a.w), 3 * n);
    /* No handle is in two of src, d1, d2: sort the 3n handles (tagged with their set) and
     * look for equal neighbours. */
    static struct tagged_handle all[3 * N_MAX];
    for (uint32_t i = 0; i < n; ++i) {
        all[i] = (struct tagged_handle){src[i], 0, i};
        all[n + i] = (struct tagged_handle){d1[i], 1, i};
        all[2 * n + i] = (struct tagged_handle){d2[i], 2, i};
    }
    qsort(all, 3 * (size_t)n, sizeof all[0], cmp_tagged_handle);
    static const char *const set_name[3] = {"src", "d1", "d2"};
    fx_fail_t fl = {0};
    for (uint32_t k = 1; k < 3 * n; ++k) {
        if (all[k].set != all[k - 1].set &&
            !FX_CHECK(&fl, all[k].e != all[k - 1].e, "%s[%u] == %s[%u] == 0x%llx",
                      set_name[all[k - 1].set], all[k - 1].at, set_name[all[k].set], all[k].at,
                      (unsigned long long)all[k].e)) {
            break;
        }
    }
    FX_ASSERT_NO_FAIL(&fl);
    /* Each copy's references point into that copy (or to null for dangling ones). */
    fx_expect_equal(&a, &a, src, d1, n, false);
    fx_expect_equal(&a, &a, src, d2, n, false);
    weft_membuf_free(&buf);
    fx_fini(&a);
}

Test(archive, keep_ids_reproduces_handles_in_an_empty_world) {
    fx_world_t a, b;
    fx_init(&a);
    fx_init(&b);
    fx_populate(&a, 11, 300);
    static weft_entity_t src[N_MAX], dst[N_MAX];
    uint32_t n = fx_alive(&a, src, N_MAX);
    weft_membuf_t buf = fx_save(&a, NULL);
    weft_archive_load_desc_t ld = {.keep_ids = true, .out_entities = dst, .out_capacity = N_MAX};
    cr_assert_eq(weft_archive_load_memory(b.w, buf.data, buf.size, &ld, NULL), WEFT_OK, "%s",
                 weft_last_error());
    fx_fail_t fl = {0};
    for (uint32_t i = 0; i < n; ++i) {
        if (!FX_CHECK(&fl, src[i] == dst[i], "entity %u: 0x%llx loaded as 0x%llx", i,
                      (unsigned long long)src[i], (unsigned long long)dst[i])) {
            break;
        }
    }
    FX_ASSERT_NO_FAIL(&fl);
    /* Kept ids: every reference, dangling ones included, is kept verbatim. */
    fx_expect_equal(&a, &b, src, dst, n, true);
    /* New entities of b still get unused ids. */
    weft_entity_t e;
    cr_assert_eq(weft_entity_create(b.w, &e), WEFT_OK);
    for (uint32_t i = 0; i < n; ++i) {
        if (!FX_CHECK(&fl, weft_entity_index(e) != weft_entity_index(src[i]),
                      "new entity 0x%llx reuses the index of loaded entity %u (0x%llx)",
                      (unsigned long long)e, i, (unsigned long long)src[i])) {
            break;
        }
    }
    FX_ASSERT_NO_FAIL(&fl);
    weft_membuf_free(&buf);
    fx_fini(&a);
    fx_fini(&b);
}

Test(archive, keep_ids_into_a_world_using_them_fails_and_changes_nothing) {
    fx_world_t a;
    weft_membuf_t buf = fx_saved_world(&a, 12, 100);
    cr_assert_eq(
        fx_load_checked(&a, buf.data, buf.size, &(weft_archive_load_desc_t){.keep_ids = true}),
        WEFT_EEXIST);
    cr_assert(strstr(weft_last_error(), "in use") != NULL, "%s", weft_last_error());
    weft_membuf_free(&buf);
    fx_fini(&a);
}

Test(archive, keep_ids_onto_a_retired_slot_fails_and_changes_nothing) {
    fx_world_t a, b;
    weft_membuf_t buf = fx_saved_world(&a, 13, 50); /* entities at the first indices */
    fx_init(&b);
    /* Retire b's first slot: destroy it at each of its 65536 generations. */
    weft_entity_t e;
    cr_assert_eq(weft_entity_create(b.w, &e), WEFT_OK);
    uint32_t idx = weft_entity_index(e), rounds = 0;
    for (; rounds <= (1u << WEFT_ENTITY_GENERATION_BITS); rounds++) {
        cr_assert_eq(weft_entity_destroy(b.w, e), WEFT_OK);
        cr_assert_eq(weft_entity_create(b.w, &e), WEFT_OK);
        if (weft_entity_index(e) != idx) {
            break;
        }
    }
    cr_assert(weft_entity_index(e) != idx, "slot %u was never retired", idx);
    cr_assert_eq(weft_entity_destroy(b.w, e), WEFT_OK);
    cr_assert_eq(
        fx_load_checked(&b, buf.data, buf.size, &(weft_archive_load_desc_t){.keep_ids = true}),
        WEFT_EEXIST);
    cr_assert(strstr(weft_last_error(), "retired") != NULL, "%s", weft_last_error());
    weft_membuf_free(&buf);
    fx_fini(&a);
    fx_fini(&b);
}

Test(archive, partial_save_nulls_references_outside_the_archive) {
    fx_world_t a, b;
    fx_init(&a);
    fx_init(&b);
    weft_entity_t e[3];
    cr_assert_eq(weft_entity_create_n(a.w, 3, e), WEFT_OK);
    ref_t r0 = {.target = e[1], .tag = 1}, r1 = {.target = e[2], .tag = 2};
    cr_assert_eq(weft_component_set(a.w, e[0], a.c[FX_REF], &r0), WEFT_OK);
    cr_assert_eq(weft_component_set(a.w, e[1], a.c[FX_REF], &r1), WEFT_OK);
    weft_membuf_t buf = fx_save(&a, &(weft_archive_save_desc_t){.entities = e, .entity_count = 2});
    weft_entity_t d[2];
    weft_archive_load_desc_t ld = {.out_entities = d, .out_capacity = 2};
    weft_archive_info_t info;
    cr_assert_eq(weft_archive_load_memory(b.w, buf.data, buf.size, &ld, &info), WEFT_OK);
    cr_assert_eq(info.entity_count, 2);
    const ref_t *q0 = weft_component_get(b.w, d[0], b.c[FX_REF]);
    const ref_t *q1 = weft_component_get(b.w, d[1], b.c[FX_REF]);
    cr_assert_eq(q0->target, d[1]); /* inside: remapped */
    cr_assert_eq(q1->target, 0);    /* outside: null */
    /* keep_external keeps the outside handle verbatim. */
    ld.keep_external = true;
    cr_assert_eq(weft_archive_load_memory(b.w, buf.data, buf.size, &ld, NULL), WEFT_OK);
    q1 = weft_component_get(b.w, d[1], b.c[FX_REF]);
    cr_assert_eq(q1->target, e[2]);
    weft_membuf_free(&buf);
    fx_fini(&a);
    fx_fini(&b);
}

Test(archive, save_of_a_stale_entity_is_an_error) {
    fx_world_t a;
    fx_init(&a);
    weft_entity_t e;
    cr_assert_eq(weft_entity_create(a.w, &e), WEFT_OK);
    cr_assert_eq(weft_entity_destroy(a.w, e), WEFT_OK);
    weft_membuf_t buf = {0};
    weft_writer_t wr = weft_membuf_writer(&buf);
    cr_assert_eq(
        weft_archive_save(a.w, &(weft_archive_save_desc_t){.entities = &e, .entity_count = 1}, &wr),
        WEFT_ESTALE);
    weft_membuf_free(&buf);
    fx_fini(&a);
}

Test(archive, file_round_trip_through_stdio) {
    fx_world_t a, b;
    fx_init(&a);
    fx_init(&b);
    fx_populate(&a, 21, 250);
    FILE *f = tmpfile();
    cr_assert(f != NULL);
    weft_writer_t wr = weft_file_writer(f);
    cr_assert_eq(weft_archive_save(a.w, NULL, &wr), WEFT_OK);
    rewind(f);
    static weft_entity_t src[N_MAX], dst[N_MAX];
    uint32_t n = fx_alive(&a, src, N_MAX);
    weft_reader_t rd = weft_file_reader(f);
    cr_assert_eq(weft_archive_load(
                     b.w, &rd,
                     &(weft_archive_load_desc_t){.out_entities = dst, .out_capacity = N_MAX}, NULL),
                 WEFT_OK, "%s", weft_last_error());
    fx_expect_equal(&a, &b, src, dst, n, false);
    fclose(f);
    fx_fini(&a);
    fx_fini(&b);
}

Test(archive, reader_input_beyond_max_bytes_is_refused) {
    fx_world_t a;
    weft_membuf_t buf = fx_saved_world(&a, 5, 100);
    uint64_t h = weft_world_hash(a.w);
    weft_memreader_t m;
    weft_reader_t rd = weft_memreader(&m, buf.data, buf.size);
    cr_assert_eq(
        weft_archive_load(a.w, &rd, &(weft_archive_load_desc_t){.max_bytes = buf.size - 1}, NULL),
        WEFT_ECAPACITY);
    cr_assert_eq(weft_world_hash(a.w), h);
    rd = weft_memreader(&m, buf.data, buf.size);
    cr_assert_eq(
        weft_archive_load(a.w, &rd, &(weft_archive_load_desc_t){.max_bytes = buf.size}, NULL),
        WEFT_OK);
    weft_membuf_free(&buf);
    fx_fini(&a);
}

/* A reader over a buffer whose size hint lies by `hint` (UINT64_MAX: "huge"). */
typedef struct lying {
    weft_memreader_t m;
    uint64_t hint;
} lying_t;

static weft_result_t lying_read(void *dst, size_t size, size_t *got, void *user) {
    lying_t *l = user;
    size_t left = l->m.size - l->m.pos;
    *got = size < left ? size : left;
    memcpy(dst, l->m.data + l->m.pos, *got);
    l->m.pos += *got;
    return WEFT_OK;
}

static bool lying_remaining(uint64_t *bytes, void *user) {
    *bytes = ((lying_t *)user)->hint;
    return true;
}

Test(archive, a_wrong_size_hint_changes_nothing_but_how_the_input_buffer_grows) {
    fx_world_t a;
    weft_membuf_t buf = fx_saved_world(&a, 7, 300);
    uint64_t hints[] = {0, 10, buf.size - 1, buf.size, buf.size + 1, UINT64_MAX};
    uint64_t want = 0;
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
        fx_world_t b;
        fx_init(&b);
        lying_t l = {.m = {.data = buf.data, .size = buf.size}, .hint = hints[i]};
        weft_reader_t rd = {.read = lying_read, .user = &l, .remaining = lying_remaining};
        /* max_bytes = the archive's size: a huge hint must not raise the allocation past it */
        cr_assert_eq(
            weft_archive_load(b.w, &rd, &(weft_archive_load_desc_t){.max_bytes = buf.size}, NULL),
            WEFT_OK, "hint %llu: %s", (unsigned long long)hints[i], weft_last_error());
        uint64_t h = weft_world_hash(b.w);
        if (i == 0) {
            want = h;
        }
        cr_expect_eq(h, want, "hint %llu gave another world", (unsigned long long)hints[i]);
        fx_fini(&b);
    }
    weft_membuf_free(&buf);
    fx_fini(&a);
}

Test(archive, the_file_reader_reports_the_bytes_left_and_keeps_its_position) {
    FILE *f = tmpfile();
    cr_assert(f != NULL);
    cr_assert_eq(fwrite("0123456789", 1, 10, f), 10u);
    cr_assert_eq(fseek(f, 3, SEEK_SET), 0);
    weft_reader_t rd = weft_file_reader(f);
    uint64_t left = 0;
    cr_assert(rd.remaining != NULL && rd.remaining(&left, rd.user));
    cr_expect_eq(left, 7u);
    cr_expect_eq(ftell(f), 3L, "the position moved");
    weft_memreader_t m;
    rd = weft_memreader(&m, "abcdef", 6);
    cr_assert(rd.remaining != NULL && rd.remaining(&left, rd.user));
    cr_expect_eq(left, 6u);
    fclose(f);
}

/* ---- layout mismatches and upgrades -------------------------------------------------- */

typedef struct pos4 {
    float x, y, z, w;
} pos4_t;

static weft_result_t upgrade_pos(const void *old, size_t old_size, void *new_data, void *user) {
    (void)user;
    cr_assert_eq(old_size, sizeof(pos3_t));
    pos3_t p;
    memcpy(&p, old, sizeof p);
    pos4_t q = {p.x, p.y, p.z, 1.0f};
    memcpy(new_data, &q, sizeof q);
    return WEFT_OK;
}

Test(archive, layout_and_schema_mismatches_fail_unless_an_upgrade_hook_applies) {
    fx_world_t a;
    weft_membuf_t buf = fx_saved_world(&a, 3, 50);
    weft_world_t *w = fx_bare_world();
    /* Unknown components. */
    uint64_t h = weft_world_hash(w);
    cr_assert_eq(weft_archive_load_memory(w, buf.data, buf.size, NULL, NULL), WEFT_EMISMATCH);
    cr_assert(strstr(weft_last_error(), "not registered") != NULL, "%s", weft_last_error());
    cr_assert_eq(weft_world_hash(w), h);
    cr_assert_eq(weft_archive_load_memory(w, buf.data, buf.size,
                                          &(weft_archive_load_desc_t){.skip_unknown = true}, NULL),
                 WEFT_OK);
    weft_world_destroy(w);

    /* Position registered with 16 bytes, schema 2: version mismatch, then upgraded. */
    w = fx_bare_world();
    weft_component_t pos;
    cr_assert_eq(
        weft_component_register(
            w, &(weft_component_desc_t){.name = "Position", .size = 16, .version = 2}, &pos),
        WEFT_OK);
    weft_archive_load_desc_t ld = {.skip_unknown = true};
    cr_assert_eq(weft_archive_load_memory(w, buf.data, buf.size, &ld, NULL), WEFT_EVERSION);
    weft_archive_upgrade_t up = {.component = "Position", .from_schema = 1, .fn = upgrade_pos};
    ld.upgrades = &up;
    ld.upgrade_count = 1;
    static weft_entity_t src[N_MAX], dst[N_MAX];
    uint32_t n = fx_alive(&a, src, N_MAX);
    ld.out_entities = dst;
    ld.out_capacity = N_MAX;
    cr_assert_eq(weft_archive_load_memory(w, buf.data, buf.size, &ld, NULL), WEFT_OK, "%s",
                 weft_last_error());
    fx_fail_t fl = {0};
    for (uint32_t i = 0; i < n; ++i) {
        const pos3_t *p = weft_component_get(a.w, src[i], a.c[FX_POS]);
        const pos4_t *q = weft_component_get(w, dst[i], pos);
        if (!FX_CHECK(&fl, (p != NULL) == (q != NULL), "entity %u: presence %d -> %d", i, p != NULL,
                      q != NULL)) {
            break;
        }
        if (p && !FX_CHECK(&fl, p->x == q->x && p->y == q->y && p->z == q->z && q->w == 1.0f,
                           "entity %u: (%g %g %g) upgraded to (%g %g %g %g)", i, (double)p->x,
                           (double)p->y, (double)p->z, (double)q->x, (double)q->y, (double)q->z,
                           (double)q->w)) {
            break;
        }
    }
    FX_ASSERT_NO_FAIL(&fl);
    weft_world_destroy(w);

    /* Same schema, other size: a layout mismatch. */
    w = fx_bare_world();
    cr_assert_eq(
        weft_component_register(w, &(weft_component_desc_t){.name = "Position", .size = 16}, &pos),
        WEFT_OK);
    cr_assert_eq(weft_archive_load_memory(w, buf.data, buf.size,
                                          &(weft_archive_load_desc_t){.skip_unknown = true}, NULL),
                 WEFT_EMISMATCH);
    weft_world_destroy(w);
    weft_membuf_free(&buf);
    fx_fini(&a);
}

static int hook_calls;
static fx_fail_t hook_fail; /* the first call that did not see the loaded value */
static void count_add(weft_world_t *w, weft_entity_t e, weft_component_t c, void *p, void *u) {
    (void)w, (void)c, (void)u;
    const pos3_t *v = p;
    (void)FX_CHECK(&hook_fail, v->z == -1.5f, "on_add call %d (entity 0x%llx) sees z = %g",
                   hook_calls, (unsigned long long)e, (double)v->z);
    hook_calls++;
}

Test(archive, on_add_hooks_fire_once_per_loaded_value_after_data_is_in_place) {
    fx_world_t a;
    weft_membuf_t buf = fx_saved_world(&a, 9, 120);
    weft_world_t *w = fx_bare_world();
    weft_component_t pos;
    cr_assert_eq(weft_component_register(w,
                                         &(weft_component_desc_t){.name = "Position",
                                                                  .size = sizeof(pos3_t),
                                                                  .on_add = count_add},
                                         &pos),
                 WEFT_OK);
    hook_calls = 0;
    hook_fail = (fx_fail_t){0};
    cr_assert_eq(weft_archive_load_memory(w, buf.data, buf.size,
                                          &(weft_archive_load_desc_t){.skip_unknown = true}, NULL),
                 WEFT_OK);
    cr_assert(!hook_fail.failed, "on_add sees the loaded value: %s", hook_fail.msg);
    cr_assert_eq(hook_calls, (int)weft_component_rows(a.w, a.c[FX_POS]));
    weft_world_destroy(w);
    weft_membuf_free(&buf);
    fx_fini(&a);
}

Test(archive, loaded_entities_join_groups_aligned) {
    fx_world_t a, b;
    fx_init(&a);
    fx_init(&b);
    fx_populate(&a, 31, 400);
    weft_group_t g;
    cr_assert_eq(
        weft_group_create(b.w, &(weft_group_desc_t){.components = {b.c[FX_POS], b.c[FX_VEL]}}, &g),
        WEFT_OK);
    fx_populate(&b, 32, 50); /* b already has grouped rows */
    uint32_t before = weft_group_rows(b.w, g);
    weft_membuf_t buf = fx_save(&a, NULL);
    cr_assert_eq(weft_archive_load_memory(b.w, buf.data, buf.size, NULL, NULL), WEFT_OK);
    /* Every entity with both members is in the aligned prefix of both pools. */
    uint32_t both = 0;
    uint32_t np = weft_component_rows(b.w, b.c[FX_POS]);
    for (uint32_t r = 0; r < np; ++r) {
        weft_entity_t e = weft_component_entity_at(b.w, b.c[FX_POS], r);
        both += weft_component_has(b.w, e, b.c[FX_VEL]);
    }
    cr_assert_eq(weft_group_rows(b.w, g), both);
    cr_assert_gt(weft_group_rows(b.w, g), before);
    fx_fail_t fl = {0};
    for (uint32_t r = 0; r < both; ++r) {
        weft_entity_t ep = weft_component_entity_at(b.w, b.c[FX_POS], r);
        weft_entity_t ev = weft_component_entity_at(b.w, b.c[FX_VEL], r);
        if (!FX_CHECK(&fl, ep == ev, "row %u of %u: Position 0x%llx, Velocity 0x%llx", r, both,
                      (unsigned long long)ep, (unsigned long long)ev)) {
            break;
        }
    }
    FX_ASSERT_NO_FAIL(&fl);
    weft_membuf_free(&buf);
    fx_fini(&a);
    fx_fini(&b);
}
