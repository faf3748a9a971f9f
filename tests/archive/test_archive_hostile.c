/* test_archive_hostile.c: the loader against damaged and hostile input — truncation, bit
 * flips, random bytes, the fuzz corpus — and out-of-memory at every allocation of a load.
 * Every failure must leave weft_world_hash() unchanged; allocations stay bounded. */
#include <dirent.h>

#include "archive_fixture.h"
#include "weft/hierarchy.h"

TestSuite(archive_hostile, .timeout = 120);

static void counted_world(fx_world_t *f, fx_counting_t *c) {
    fx_init_desc(f, &(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE,
                                         .allocator = fx_counting_allocator(c)});
}

/* A small but complete archive: every component kind, references, a destroyed entity. */
static weft_membuf_t sample_archive(uint32_t n) {
    fx_world_t a;
    weft_membuf_t buf = fx_saved_world(&a, 77, n);
    fx_fini(&a);
    return buf;
}

/* Load bytes into a populated world; a failure must leave the world unchanged (one
 * assertion). */
static weft_result_t load_must_fail(fx_world_t *f, const void *p, size_t n, bool skip_checks) {
    return fx_load_checked(f, p, n, &(weft_archive_load_desc_t){.skip_checksums = skip_checks});
}

/* load_must_fail for loops: records the first violation in `fl` instead of asserting. */
static weft_result_t try_load(fx_world_t *f, const void *p, size_t n, bool skip_checks,
                              fx_fail_t *fl) {
    return fx_load_try(f, p, n, &(weft_archive_load_desc_t){.skip_checksums = skip_checks}, fl);
}

Test(archive_hostile, every_truncation_fails_cleanly) {
    weft_membuf_t buf = sample_archive(40);
    fx_world_t f;
    fx_populated(&f, 5, 30);
    fx_fail_t fl = {0};
    for (size_t len = 0; len < buf.size && !fl.failed; ++len) {
        weft_result_t r = try_load(&f, buf.data, len, false, &fl);
        (void)FX_CHECK(&fl, r == WEFT_ECORRUPT || r == WEFT_EVERSION, "len %zu of %zu: %s", len,
                       buf.size, weft_result_name(r));
    }
    FX_ASSERT_NO_FAIL(&fl);
    /* One extra byte is trailing garbage. */
    unsigned char *longer = malloc(buf.size + 1);
    memcpy(longer, buf.data, buf.size);
    longer[buf.size] = 0;
    cr_assert_eq(load_must_fail(&f, longer, buf.size + 1, false), WEFT_ECORRUPT);
    free(longer);
    weft_membuf_free(&buf);
    fx_fini(&f);
}

Test(archive_hostile, every_single_bit_flip_is_detected) {
    weft_membuf_t buf = sample_archive(25);
    fx_world_t f;
    fx_populated(&f, 6, 30);
    fx_fail_t fl = {0};
    for (size_t bit = 0; bit < buf.size * 8 && !fl.failed; ++bit) {
        buf.data[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        weft_result_t r = try_load(&f, buf.data, buf.size, false, &fl);
        (void)FX_CHECK(&fl, r == WEFT_ECORRUPT || r == WEFT_EVERSION, "bit %zu of %zu: %s", bit,
                       buf.size * 8, weft_result_name(r));
        buf.data[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    }
    FX_ASSERT_NO_FAIL(&fl);
    weft_membuf_free(&buf);
    fx_fini(&f);
}

/* Without checksums only the structure protects the loader: mutate and make sure that
 * nothing crashes, failures change nothing, and successes leave a consistent world. */
Test(archive_hostile, structural_checks_hold_without_checksums) {
    uint64_t seed = (uint64_t)time(NULL);
    fprintf(stderr, "archive_hostile structural seed %llu\n", (unsigned long long)seed);
    uint64_t s = seed | 1u;
    weft_membuf_t buf = sample_archive(30);
    unsigned char *m = malloc(buf.size);
    fx_world_t f;
    fx_populated(&f, 8, 20);
    fx_fail_t fl = {0};
    for (int iter = 0; iter < 3000 && !fl.failed; ++iter) {
        if (iter % 200 == 199) { /* successful loads accumulate: start over now and then */
            fx_fini(&f);
            fx_populated(&f, 8, 20);
        }
        memcpy(m, buf.data, buf.size);
        int flips = 1 + (int)(fx_rand(&s) % 4);
        for (int k = 0; k < flips; ++k) {
            size_t at = fx_rand(&s) % buf.size;
            m[at] = (iter & 1) ? (unsigned char)fx_rand(&s) : (unsigned char)(m[at] ^ 0xFF);
        }
        weft_result_t r = try_load(&f, m, buf.size, true, &fl);
        if (r == WEFT_OK) {
            /* Loaded mutated data: still a usable world. */
            weft_entity_t e;
            weft_result_t rc = weft_entity_create(f.w, &e);
            (void)FX_CHECK(&fl, rc == WEFT_OK, "iter %d: create after a load: %s (%s)", iter,
                           weft_result_name(rc), weft_last_error());
        }
    }
    cr_assert(!fl.failed, "seed %llu: %s", (unsigned long long)seed, fl.msg);
    free(m);
    weft_membuf_free(&buf);
    fx_fini(&f);
}

/* ---- allocation bounds ----------------------------------------------------------------- */

/* Input that is not an archive fails at the magic, the file header check or the first
 * section header check (a valid file header is kept in half the iterations), all before the
 * parser's first allocation (the section table): such input never allocates at all. */
Test(archive_hostile, random_bytes_fail_before_any_allocation) {
    uint64_t seed = (uint64_t)time(NULL);
    fprintf(stderr, "archive_hostile random seed %llu\n", (unsigned long long)seed);
    uint64_t s = seed | 1u;
    fx_counting_t c = {0};
    fx_world_t f;
    counted_world(&f, &c);
    fx_populate(&f, 9, 20);
    weft_membuf_t good = sample_archive(10);
    unsigned char *m = malloc(4096);
    fx_fail_t fl = {0};
    for (int iter = 0; iter < 2000 && !fl.failed; ++iter) {
        size_t n = fx_rand(&s) % 4096;
        for (size_t i = 0; i < n; ++i) {
            m[i] = (unsigned char)fx_rand(&s);
        }
        if (iter & 1) { /* keep a valid file header so the section parser is reached */
            memcpy(m, good.data, n < 32 ? n : 32);
        }
        c.watch = true;
        c.largest = 0;
        weft_result_t r = try_load(&f, m, n, iter % 4 == 1, &fl);
        c.watch = false;
        (void)(FX_CHECK(&fl, r != WEFT_OK, "iter %d: %zu random bytes loaded", iter, n) &&
               FX_CHECK(&fl, c.largest == 0, "iter %d: allocation of %zu for %zu random bytes",
                        iter, c.largest, n));
    }
    cr_assert(!fl.failed, "seed %llu: %s", (unsigned long long)seed, fl.msg);
    free(m);
    weft_membuf_free(&good);
    fx_fini(&f);
    cr_assert_eq(c.live, 0, "leak: %zu bytes", c.live);
}

/* A valid archive and where its sections start (the sample worlds have no hierarchy: ENTS,
 * SLOT, one COMP section per fixture component that has rows, and the resource's). */
typedef struct framed {
    weft_membuf_t buf;
    uint32_t sections;
    size_t at[FX_COUNT + 4];      /* offset of each section header */
    size_t end[FX_COUNT + 4];     /* offset just past each section's trailer */
    uint64_t count[FX_COUNT + 4]; /* each section's count field */
    uint64_t entities;            /* ENTS count */
} framed_t;

static uint64_t rd64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint32_t rd32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Frame the sections of the valid archive `buf` (taken over). */
static framed_t framed(weft_membuf_t buf) {
    framed_t t = {.buf = buf};
    t.sections = rd32(t.buf.data + 16); /* components without rows are not saved */
    cr_assert(t.sections >= 2 && t.sections <= FX_COUNT + 3u, "%u sections", t.sections);
    size_t pos = 32;
    for (uint32_t i = 0; i < t.sections; ++i) {
        cr_assert_leq(pos + 40, t.buf.size);
        t.at[i] = pos;
        t.count[i] = rd64(t.buf.data + pos + 16);
        pos += 32 + (size_t)rd64(t.buf.data + pos + 8) + 8;
        t.end[i] = pos;
    }
    cr_assert_eq(pos, t.buf.size);
    t.entities = t.count[0];
    return t;
}

/* fx_saved_world(seed, n), framed. */
static framed_t framed_archive(uint64_t seed, uint32_t n) {
    fx_world_t a;
    framed_t t = framed(fx_saved_world(&a, seed, n));
    fx_fini(&a);
    return t;
}

/* Mostly entities without components (one in 100 has the tag): the ENTS section is nearly
 * the whole input, so the per-entity stage tables come close to the input length. */
static framed_t framed_bare_entities(uint32_t n) {
    fx_world_t a;
    fx_init(&a);
    weft_entity_t *es = malloc(sizeof *es * n);
    cr_assert_eq(weft_entity_create_n(a.w, n, es), WEFT_OK);
    for (uint32_t i = 0; i < n; i += 100) {
        cr_assert_eq(weft_component_add(a.w, es[i], a.c[FX_TAG], NULL), WEFT_OK);
    }
    free(es);
    framed_t t = framed(fx_save(&a, NULL));
    fx_fini(&a);
    return t;
}

/* Where section i's (i >= 2, a COMP section) owner column starts, and its row count. */
static size_t comp_ids_at(const framed_t *t, const unsigned char *m, uint32_t i, uint64_t *rows) {
    const unsigned char *d = m + t->at[i] + 32;
    *rows = t->count[i];
    return t->at[i] + 32 + 24 + ((rd32(d) + 7u) & ~7u) + ((rd32(d + 16) * 4u + 7u) & ~7u);
}

enum {
    DAMAGE_TAIL,
    DAMAGE_PAYLOAD,
    DAMAGE_IDS,
    DAMAGE_KEPT_IDS,
    DAMAGE_SPLICE,
    DAMAGE_CUT,
    DAMAGE_KINDS
};
static const char *const damage_name[DAMAGE_KINDS] = {
    "random tail", "payload bytes", "owner ids", "kept ids", "spliced header", "truncation"};

/* Rewrite the archive `t`, copied to `m`, as format 1: the SLOT section (section 1) cut
 * out and the file header resealed. Returns the new length. */
static size_t as_format1(const framed_t *t, unsigned char *m) {
    size_t cut = t->end[1] - t->at[1];
    memmove(m + t->at[1], m + t->end[1], t->buf.size - t->end[1]);
    uint32_t version = 1, sections = t->sections - 1u;
    memcpy(m + 8, &version, 4);
    memcpy(m + 16, &sections, 4);
    uint64_t check = weft_archive_checksum(m, 24);
    memcpy(m + 24, &check, 8);
    return t->buf.size - cut;
}

/* Damage a copy of `t` in `m` (capacity `cap`) in the way `kind` says; returns its length and
 * sets the load options. `other` is another valid archive (headers with other counts). */
static size_t damage(const framed_t *t, const framed_t *other, int kind, uint64_t *s,
                     unsigned char *m, size_t cap, weft_archive_load_desc_t *desc) {
    size_t n = t->buf.size;
    memcpy(m, t->buf.data, n);
    *desc = (weft_archive_load_desc_t){.skip_checksums = true};
    switch (kind) {
    case DAMAGE_TAIL: { /* valid file header, ENTS and SLOT, then random bytes */
        size_t keep = t->end[1];
        n = keep + (size_t)(fx_rand(s) % (fx_rand(s) & 1 ? 256 : cap - keep));
        for (size_t i = keep; i < n; ++i) {
            m[i] = (unsigned char)fx_rand(s);
        }
        desc->skip_checksums = fx_rand(s) & 1;
        break;
    }
    case DAMAGE_PAYLOAD: { /* every header valid, random bytes inside SLOT and COMP payloads */
        int k = 1 + (int)(fx_rand(s) % 8);
        for (int j = 0; j < k && t->sections > 1; ++j) {
            uint32_t sec = 1u + (uint32_t)(fx_rand(s) % (t->sections - 1u));
            size_t lo = t->at[sec] + 32, len = t->end[sec] - 8 - lo;
            if (len) {
                m[lo + fx_rand(s) % len] = (unsigned char)fx_rand(s);
            }
        }
        desc->keep_ids = fx_rand(s) & 1; /* a damaged slot table reaches the kept-ids stage */
        break;
    }
    case DAMAGE_IDS: { /* owner columns rewritten: in-range ids, repeats, some out of range */
        for (uint32_t sec = 2; sec < t->sections; ++sec) {
            uint64_t rows;
            size_t ids = comp_ids_at(t, m, sec, &rows);
            for (uint64_t r = 0; r < rows && t->entities; ++r) {
                if (fx_rand(s) % 8 == 0) {
                    uint64_t v = fx_rand(s);
                    uint32_t id = (uint32_t)(v % 64 ? (v >> 8) % t->entities : v >> 32);
                    memcpy(m + ids + 4 * r, &id, 4);
                }
            }
        }
        break;
    }
    case DAMAGE_KEPT_IDS: { /* ascending archived handles with random gaps, loaded as kept */
        uint64_t gap = (uint64_t[]){1, 2, 64, 5000, 70000, 1u << 24}[fx_rand(s) % 6];
        uint64_t idx = fx_rand(s) % 64;
        for (uint64_t k = 0; k < t->entities; ++k) {
            idx += 1u + fx_rand(s) % gap;
            uint64_t gen = fx_rand(s) % 16 == 0 ? fx_rand(s) % (1u << 20) : fx_rand(s) % 4;
            uint64_t e = (gen << 32) | (idx & 0xffffffffu);
            memcpy(m + t->at[0] + 32 + 8 * k, &e, 8);
        }
        desc->keep_ids = true;
        /* The slot table would no longer match ENTS: write it as a format-1 archive (no
         * SLOT), whose skipped slots the loader must bound itself. */
        n = as_format1(t, m);
        break;
    }
    case DAMAGE_SPLICE: { /* a genuine section header with another archive's size and count */
        uint32_t sec = (uint32_t)(fx_rand(s) % t->sections);
        memcpy(m + t->at[sec], other->buf.data + other->at[sec], 32);
        desc->skip_checksums = fx_rand(s) & 1;
        break;
    }
    default: /* DAMAGE_CUT: cut short anywhere after ENTS */
        n = t->end[0] + (size_t)(fx_rand(s) % (n - t->end[0]));
        desc->skip_checksums = fx_rand(s) & 1;
        break;
    }
    return n;
}

/* Damaged archives get past the first section and reach the loader's allocations: the
 * section table (64 bytes per COMP section, each of which occupies >= 72 input bytes), the
 * stage's tables (8 bytes per archived entity for the remap table, 4 for signatures, and 32
 * per section; ENTS holds 8 input bytes per entity), pool arrays for the new
 * rows ((rows + existing rows) * value size and 4 bytes per row, the new rows' values and
 * ids being in the input), sparse pages (3 or 4 KiB each) and the sparse directory. So with fresh
 * ids, no single allocation exceeds the input length plus 4 KiB here (the target holds 20
 * entities, so its existing rows add < 500 bytes; the world is rebuilt after every successful
 * load to keep it so). With kept ids the new free list also holds the slots skipped between
 * the table's high-water mark and the highest archived index, capped by archive_ids.c at
 * max(65536, 4 per archived entity): 4 * (free slots + 65536) bytes more, a fixed allowance,
 * plus 16 per entity (2 x the input). Entity-table pages are committed with vmem, not the
 * allocator hook, so they are not measured here. */
Test(archive_hostile, damaged_archives_allocate_within_the_input_bound) {
    uint64_t seed = (uint64_t)time(NULL);
    fprintf(stderr, "archive_hostile damaged seed %llu\n", (unsigned long long)seed);
    uint64_t s = seed | 1u;
    enum { TEMPLATES = 7 };
    static const uint32_t sizes[TEMPLATES - 1] = {1, 4, 13, 40, 150, 600};
    framed_t t[TEMPLATES];
    size_t cap = 0;
    for (int i = 0; i < TEMPLATES; ++i) {
        t[i] = i < TEMPLATES - 1 ? framed_archive(100u + (uint64_t)i, sizes[i])
                                 : framed_bare_entities(2000);
        cap = t[i].buf.size > cap ? t[i].buf.size : cap;
    }
    cap *= 2;
    unsigned char *m = malloc(cap);
    fx_counting_t c = {0};
    fx_world_t f;
    counted_world(&f, &c);
    fx_populate(&f, 9, 20);
    int allocating[DAMAGE_KINDS] = {0}, loaded = 0;
    size_t worst[2] = {0}, worst_len[2] = {0}; /* largest allocation (fresh, kept ids) */
    fx_fail_t fl = {0};
    for (int iter = 0; iter < 1800 && !fl.failed; ++iter) {
        int kind = iter % DAMAGE_KINDS;
        const framed_t *tp = &t[fx_rand(&s) % TEMPLATES];
        const framed_t *op = &t[fx_rand(&s) % TEMPLATES];
        weft_archive_load_desc_t desc;
        size_t n = damage(tp, op, kind, &s, m, cap, &desc);
        weft_world_stats_t st;
        weft_world_stats(f.w, &st);
        size_t free_slots = st.entity_slots - 1u - st.entity_count;
        size_t bound = desc.keep_ids ? 2 * n + 4 * (free_slots + 65536) + 4096 : n + 4096;
        c.watch = true;
        c.largest = 0;
        weft_result_t r = fx_load_try(&f, m, n, &desc, &fl);
        c.watch = false;
        allocating[kind] += c.largest > 0;
        if (c.largest > worst[desc.keep_ids]) {
            worst[desc.keep_ids] = c.largest, worst_len[desc.keep_ids] = n;
        }
        (void)FX_CHECK(&fl, c.largest <= bound,
                       "iter %d (%s%s): allocation of %zu for %zu input bytes, bound %zu", iter,
                       damage_name[kind], desc.keep_ids ? ", keep_ids" : "", c.largest, n, bound);
        if (r == WEFT_OK) { /* keep the target small: its rows count against the bound */
            loaded++;
            fx_fini(&f);
            counted_world(&f, &c);
            fx_populate(&f, 9, 20);
        }
    }
    cr_assert(!fl.failed, "seed %llu: %s", (unsigned long long)seed, fl.msg);
    fprintf(stderr,
            "damaged archives: %d loaded; largest allocation %zu for %zu bytes (fresh ids), "
            "%zu for %zu bytes (kept ids); allocating iterations:",
            loaded, worst[0], worst_len[0], worst[1], worst_len[1]);
    int missing = -1;
    for (int k = 0; k < DAMAGE_KINDS; ++k) {
        fprintf(stderr, " %s %d", damage_name[k], allocating[k]);
        if (allocating[k] == 0 && missing < 0) {
            missing = k;
        }
    }
    fprintf(stderr, "\n");
    cr_assert(missing < 0, "seed %llu: no '%s' load reached an allocation: the bound went untested",
              (unsigned long long)seed, missing < 0 ? "" : damage_name[missing]);
    free(m);
    for (int i = 0; i < TEMPLATES; ++i) {
        weft_membuf_free(&t[i].buf);
    }
    fx_fini(&f);
    cr_assert_eq(c.live, 0, "leak: %zu bytes", c.live);
}

/* Each way a slot table can contradict its archive, written with valid checksums (so only
 * the structural checks can catch it), fails as WEFT_ECORRUPT and changes nothing; the
 * untouched archive loads, also with kept ids into an empty world. */
Test(archive_hostile, a_slot_table_that_contradicts_the_archive_is_corrupt) {
    framed_t t = framed_archive(41, 60);
    const unsigned char *p = t.buf.data + t.at[1] + 32;
    uint64_t slots = t.count[1], nfree = rd64(p);
    cr_assert_geq(nfree, 2, "the sample world has destroyed entities");
    size_t states = t.at[1] + 40, frees = states + 4 * slots;
    uint32_t archived_idx = (uint32_t)rd64(t.buf.data + t.at[0] + 32); /* first archived */
    uint32_t free0 = rd32(t.buf.data + frees), free1 = rd32(t.buf.data + frees + 4);
    uint32_t gen_arch = rd32(t.buf.data + states + 4 * archived_idx);
    struct {
        const char *what;
        size_t at;
        uint32_t value;
    } cases[] = {
        {"slot 0 not empty", states, 1},
        {"archived generation differs", states + 4 * archived_idx, gen_arch ^ 1u},
        {"archived slot retired", states + 4 * archived_idx, 0x1FFFFu},
        {"reserved state bits", states + 4 * free0,
         rd32(t.buf.data + states + 4 * free0) | 0x20000u},
        {"retired below the last generation", states + 4 * free0, 0x10005u},
        {"free entry repeated", frees + 4, free0},
        {"free entry names an archived entity", frees, archived_idx},
        {"free entry out of range", frees, (uint32_t)slots},
        {"free entry is slot 0", frees, 0},
        {"free count too small", t.at[1] + 32, (uint32_t)(nfree - 1u)},
        {"free count too large", t.at[1] + 32, (uint32_t)(nfree + 1u)},
        {"free entry of a retired slot", states + 4 * free1, 0x1FFFFu},
    };
    fx_world_t f;
    fx_init(&f);
    fx_populate(&f, 9, 20);
    unsigned char *m = malloc(t.buf.size);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(m, t.buf.data, t.buf.size);
        memcpy(m + cases[i].at, &cases[i].value, 4);
        uint64_t sum = weft_archive_checksum(m + t.at[1] + 32, t.end[1] - 8 - (t.at[1] + 32));
        memcpy(m + t.end[1] - 8, &sum, 8); /* resealed: the checksum passes */
        weft_result_t r = load_must_fail(&f, m, t.buf.size, false);
        cr_expect_eq(r, WEFT_ECORRUPT, "%s: %s", cases[i].what, weft_last_error());
        cr_expect(strstr(weft_last_error(), "SLOT") != NULL, "%s: %s", cases[i].what,
                  weft_last_error());
    }
    free(m);
    fx_fini(&f);
    fx_init(&f);
    cr_assert_eq(
        fx_load_checked(&f, t.buf.data, t.buf.size, &(weft_archive_load_desc_t){.keep_ids = true}),
        WEFT_OK, "%s", weft_last_error());
    fx_fini(&f);
    weft_membuf_free(&t.buf);
}

/* An entity listed twice in one component section, resealed so only the structural check
 * can catch it, is WEFT_ECORRUPT naming the entity and the component, in every section and
 * whether the repeat is adjacent or far apart; the world is unchanged (load_must_fail). */
Test(archive_hostile, an_entity_listed_twice_in_one_component_section_is_corrupt) {
    framed_t t = framed_archive(43, 60);
    fx_world_t f;
    fx_init(&f);
    fx_populate(&f, 9, 20);
    unsigned char *m = malloc(t.buf.size);
    uint32_t tried = 0;
    for (uint32_t sec = 2; sec < t.sections; ++sec) {
        if (memcmp(t.buf.data + t.at[sec], "COMP", 4) != 0) {
            continue; /* the hierarchy's section has no owner column */
        }
        uint64_t rows;
        size_t ids = comp_ids_at(&t, t.buf.data, sec, &rows);
        if (rows < 2) {
            continue;
        }
        for (uint64_t dst = 1; dst < rows; dst += rows - 1u) { /* the next row, the last row */
            memcpy(m, t.buf.data, t.buf.size);
            memcpy(m + ids + 4u * dst, m + ids, 4); /* row dst now names row 0's entity */
            uint64_t sum =
                weft_archive_checksum(m + t.at[sec] + 32, t.end[sec] - 8 - (t.at[sec] + 32));
            memcpy(m + t.end[sec] - 8, &sum, 8); /* resealed: the checksum passes */
            weft_result_t r = load_must_fail(&f, m, t.buf.size, false);
            cr_expect_eq(r, WEFT_ECORRUPT, "section %u row %llu: %s", sec, (unsigned long long)dst,
                         weft_last_error());
            cr_expect(strstr(weft_last_error(), "twice") != NULL, "section %u: %s", sec,
                      weft_last_error());
            tried++;
        }
    }
    cr_assert_geq(tried, 2, "the sample archive has component sections of 2+ rows");
    free(m);
    fx_fini(&f);
    weft_membuf_free(&t.buf);
}

/* Archives written before the slot table (format 1) still load, with fresh or kept ids. */
Test(archive_hostile, a_format_1_archive_without_a_slot_table_still_loads) {
    framed_t t = framed_archive(42, 30);
    unsigned char *m = malloc(t.buf.size);
    memcpy(m, t.buf.data, t.buf.size);
    size_t n = as_format1(&t, m);
    weft_archive_info_t info;
    cr_assert_eq(weft_archive_inspect(m, n, &info), WEFT_OK, "%s", weft_last_error());
    cr_expect_eq(info.format_version, 1);
    for (int keep = 0; keep < 2; keep++) {
        fx_world_t f;
        fx_init(&f);
        cr_expect_eq(fx_load_checked(&f, m, n, &(weft_archive_load_desc_t){.keep_ids = keep}),
                     WEFT_OK, "keep_ids %d: %s", keep, weft_last_error());
        cr_expect_eq(weft_entity_count(f.w), t.entities);
        fx_fini(&f);
    }
    free(m);
    weft_membuf_free(&t.buf);
}

Test(archive_hostile, wrong_magic_and_empty_input_are_version_errors) {
    weft_membuf_t buf = sample_archive(5);
    fx_world_t f;
    fx_init(&f);
    buf.data[0] ^= 0x20;
    cr_assert_eq(load_must_fail(&f, buf.data, buf.size, false), WEFT_EVERSION);
    cr_assert(strstr(weft_last_error(), "magic") != NULL, "%s", weft_last_error());
    cr_assert_eq(load_must_fail(&f, buf.data, 0, false), WEFT_EVERSION);
    cr_assert_eq(weft_archive_inspect(buf.data, buf.size, NULL), WEFT_EVERSION);
    weft_membuf_free(&buf);
    fx_fini(&f);
}

/* Every seed file of the fuzz corpus loads or fails cleanly (the corpus holds both). */
Test(archive_hostile, fuzz_corpus_replays_cleanly) {
    DIR *d = opendir(WEFT_ARCHIVE_CORPUS_DIR);
    cr_assert(d != NULL, "corpus dir %s", WEFT_ARCHIVE_CORPUS_DIR);
    fx_world_t f;
    fx_init(&f);
    cr_assert_eq(weft_hier_components(f.w, NULL), WEFT_OK); /* the fuzz world has them too */
    int files = 0, ok = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') {
            continue;
        }
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", WEFT_ARCHIVE_CORPUS_DIR, de->d_name);
        FILE *fp = fopen(path, "rb");
        cr_assert(fp != NULL, "%s", path);
        weft_reader_t rd = weft_file_reader(fp);
        uint64_t h = weft_world_hash(f.w);
        weft_result_t r = weft_archive_load(f.w, &rd, NULL, NULL);
        fclose(fp);
        files++;
        if (r == WEFT_OK) {
            ok++;
            cr_assert(strncmp(de->d_name, "bad_", 4) != 0, "%s loaded", de->d_name);
        } else {
            cr_assert_eq(weft_world_hash(f.w), h, "%s", de->d_name);
            cr_assert(strncmp(de->d_name, "bad_", 4) == 0, "%s: %s", de->d_name, weft_last_error());
        }
    }
    closedir(d);
    cr_assert_geq(files, 8);
    cr_assert_geq(ok, 3);
    fx_fini(&f);
}

/* ---- out of memory ------------------------------------------------------------------ */

/* Load `buf` into `w` with allocation k failing, for k = 1, 2, ... until the load succeeds:
 * each failed load must say WEFT_ENOMEM and leave the world's hash as it was. The first failed
 * check is recorded in `fl` (its message starts with `label`) and ends the walk; returns the k
 * at which it stopped, the load's first success when nothing failed. */
static long load_failing_each_allocation(weft_world_t *w, fx_counting_t *c,
                                         const weft_membuf_t *buf,
                                         const weft_archive_load_desc_t *desc, const char *label,
                                         fx_fail_t *fl) {
    long k = 1;
    for (;; ++k) {
        uint64_t h = weft_world_hash(w);
        c->count = 0;
        c->fail_at = k;
        weft_result_t r = weft_archive_load_memory(w, buf->data, buf->size, desc, NULL);
        c->fail_at = 0;
        if (r == WEFT_OK) {
            break;
        }
        if (!FX_CHECK(fl, r == WEFT_ENOMEM, "%sk=%ld: %s: %s", label, k, weft_result_name(r),
                      weft_last_error()) ||
            !FX_CHECK(fl, weft_world_hash(w) == h, "%sk=%ld changed the world", label, k) ||
            !FX_CHECK(fl, k < 10000, "%sk=%ld: still failing", label, k)) {
            break;
        }
    }
    return k;
}

Test(archive_hostile, out_of_memory_at_every_allocation_of_a_load_changes_nothing) {
    weft_membuf_t buf = sample_archive(300);
    fx_counting_t c = {0};
    fx_world_t f;
    counted_world(&f, &c);
    fx_populate(&f, 10, 200);
    weft_group_t g;
    cr_assert_eq(
        weft_group_create(f.w, &(weft_group_desc_t){.components = {f.c[FX_POS], f.c[FX_REF]}}, &g),
        WEFT_OK);
    fx_fail_t fl = {0};
    long k = load_failing_each_allocation(f.w, &c, &buf, NULL, "", &fl);
    FX_ASSERT_NO_FAIL(&fl);
    cr_assert_gt(k, 3, "the load allocates (k=%ld)", k);
    fprintf(stderr, "load succeeded once %ld allocations could succeed\n", k - 1);
    /* The keep_ids path has its own allocations (the new free list). */
    fx_world_t e;
    counted_world(&e, &c);
    weft_entity_t doomed[3];
    cr_assert_eq(weft_entity_create_n(e.w, 3, doomed), WEFT_OK);
    cr_assert_eq(weft_entity_destroy_n(e.w, doomed, 3), WEFT_OK);
    weft_archive_load_desc_t keep = {.keep_ids = true};
    load_failing_each_allocation(e.w, &c, &buf, &keep, "keep_ids ", &fl);
    FX_ASSERT_NO_FAIL(&fl);
    /* Loading the same ids again: they are in use now. */
    cr_assert_eq(weft_archive_load_memory(e.w, buf.data, buf.size, &keep, NULL), WEFT_EEXIST);
    fx_fini(&e);
    weft_membuf_free(&buf);
    fx_fini(&f);
    cr_assert_eq(c.live, 0, "leak: %zu bytes", c.live);
}

Test(archive_hostile, out_of_memory_during_save_reports_enomem_without_leaks) {
    fx_counting_t c = {0};
    fx_world_t f;
    counted_world(&f, &c);
    fx_populate(&f, 12, 100);
    for (long k = 1; k < 3; ++k) {
        weft_membuf_t buf = {.allocator = fx_counting_allocator(&c)};
        weft_writer_t wr = weft_membuf_writer(&buf);
        c.count = 0;
        c.fail_at = k;
        cr_assert_eq(weft_archive_save(f.w, NULL, &wr), WEFT_ENOMEM, "k=%ld", k);
        c.fail_at = 0;
        weft_membuf_free(&buf);
    }
    fx_fini(&f);
    cr_assert_eq(c.live, 0, "leak: %zu bytes", c.live);
}

/* ---- failures reach the world's logger ----------------------------------------------- */

typedef struct log_record {
    int calls;              /* logger calls so far */
    weft_result_t code;     /* code of the last call */
    weft_log_level_t level; /* level of the last call */
    char msg[512];          /* message of the last call */
} log_record_t;

static void record_log(weft_log_level_t level, weft_result_t code, const char *msg,
                       const char *file, int line, void *user) {
    (void)file, (void)line;
    log_record_t *l = user;
    l->calls++;
    l->code = code;
    l->level = level;
    snprintf(l->msg, sizeof l->msg, "%s", msg);
}

/* The failure `r` was reported exactly once, through the logger, with the same code and
 * message as weft_last_error(), and the message contains `what`. Resets the record. */
static void expect_logged(log_record_t *l, weft_result_t r, weft_result_t want, const char *what,
                          const char *step) {
    cr_assert_eq(r, want, "%s: %s, want %s (%s)", step, weft_result_name(r), weft_result_name(want),
                 weft_last_error());
    cr_assert_eq(l->calls, 1, "%s: %d logger calls for one failure", step, l->calls);
    cr_assert_eq(l->code, r, "%s: logged %s", step, weft_result_name(l->code));
    cr_assert_eq(l->level, WEFT_LOG_ERROR, "%s", step);
    cr_assert_str_eq(l->msg, weft_last_error(), "%s", step);
    cr_assert(strstr(l->msg, what) != NULL, "%s: '%s' lacks '%s'", step, l->msg, what);
    *l = (log_record_t){0};
}

static weft_result_t failing_read(void *dst, size_t size, size_t *got, void *user) {
    (void)dst, (void)size, (void)user;
    *got = 0;
    return WEFT_EIO;
}

static weft_result_t failing_write(const void *data, size_t size, void *user) {
    (void)data, (void)size, (void)user;
    return WEFT_EIO;
}

Test(archive_hostile, load_and_save_failures_are_reported_through_the_world_logger) {
    weft_membuf_t buf = sample_archive(20);
    log_record_t log = {0};
    fx_world_t f;
    fx_init_desc(&f, &(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE,
                                          .logger = {.fn = record_log, .user = &log}});
    fx_populate(&f, 4, 10);
    uint64_t h = weft_world_hash(f.w);

    /* Parser failures (stage 1): a corrupt payload, a truncated file, a bad magic. */
    buf.data[buf.size / 2] ^= 0x10;
    expect_logged(&log, weft_archive_load_memory(f.w, buf.data, buf.size, NULL, NULL),
                  WEFT_ECORRUPT, "archive corrupt", "bit flip");
    buf.data[buf.size / 2] ^= 0x10;
    weft_memreader_t m;
    weft_reader_t rd = weft_memreader(&m, buf.data, buf.size - 8);
    expect_logged(&log, weft_archive_load(f.w, &rd, NULL, NULL), WEFT_ECORRUPT, "truncated",
                  "truncated, through a reader");
    buf.data[0] ^= 1;
    expect_logged(&log, weft_archive_load_memory(f.w, buf.data, buf.size, NULL, NULL),
                  WEFT_EVERSION, "magic", "bad magic");
    buf.data[0] ^= 1;
    /* Reader failures: the input limit, a reader's own error, a FILE that cannot be read. */
    rd = weft_memreader(&m, buf.data, buf.size);
    expect_logged(&log,
                  weft_archive_load(f.w, &rd, &(weft_archive_load_desc_t){.max_bytes = 64}, NULL),
                  WEFT_ECAPACITY, "max_bytes", "max_bytes");
    rd = (weft_reader_t){.read = failing_read};
    expect_logged(&log, weft_archive_load(f.w, &rd, NULL, NULL), WEFT_EIO, "reader",
                  "reader error");
    FILE *wo = fopen("/dev/null", "wb"); /* write-only: fread fails */
    cr_assert(wo != NULL);
    rd = weft_file_reader(wo);
    expect_logged(&log, weft_archive_load(f.w, &rd, NULL, NULL), WEFT_EIO, "fread",
                  "FILE reader error");
    fclose(wo);
    cr_assert_eq(weft_world_hash(f.w), h, "failed loads changed the world");

    /* Writer failures during a save: a writer's own error, a membuf that cannot grow. */
    weft_writer_t wr = {.write = failing_write};
    expect_logged(&log, weft_archive_save(f.w, NULL, &wr), WEFT_EIO, "writer", "writer error");
    fx_counting_t c = {.fail_at = 1};
    weft_membuf_t out = {.allocator = fx_counting_allocator(&c)};
    wr = weft_membuf_writer(&out);
    expect_logged(&log, weft_archive_save(f.w, NULL, &wr), WEFT_ENOMEM, "cannot allocate",
                  "membuf out of memory");
    weft_membuf_free(&out);

    /* The same corrupt archive still loads cleanly once repaired: nothing is left over. */
    cr_assert_eq(weft_archive_load_memory(f.w, buf.data, buf.size, NULL, NULL), WEFT_OK, "%s",
                 weft_last_error());
    cr_assert_eq(log.calls, 0);
    weft_membuf_free(&buf);
    fx_fini(&f);
}
