/* archive_fixture.h: shared helpers of the archive suites — a fixed component set, random
 * worlds from a seed, and world equality that accounts for entity remapping. */
#ifndef WEFT_TEST_ARCHIVE_FIXTURE_H
#define WEFT_TEST_ARCHIVE_FIXTURE_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft.h"
#include "weft/archive.h"
#include "weft/component.h"
#include "weft/entity.h"
#include "weft/snapshot.h"
#include "weft/world.h"

/* Component values used by every archive test. */
typedef struct pos3 {
    float x, y, z;
} pos3_t; /* 12 bytes, no entity fields */

typedef struct ref {
    weft_entity_t target; /* entity field at offset 0 */
    uint32_t tag;
    uint32_t pad;
} ref_t;

typedef struct pair {
    uint64_t a;
    weft_entity_t first;  /* entity field at offset 8 */
    weft_entity_t second; /* entity field at offset 16 */
} pair_t;

enum { FX_POS, FX_VEL, FX_REF, FX_TAG, FX_PAIR, FX_COUNT };

typedef struct fx_world {
    weft_world_t *w;
    weft_component_t c[FX_COUNT];
} fx_world_t;

/* The first failure of a batch of checks. The suites run with --full-stats, which reports
 * every passing assertion, so loops check with plain C (FX_CHECK), stop at the first failure
 * and the test asserts once (FX_ASSERT_NO_FAIL) with the message naming that failure. */
typedef struct fx_fail {
    bool failed;
    char msg[512];
} fx_fail_t;

/* Record `cond` failing with a printf-style message (the first failure wins); false. */
static inline bool fx_fail_note(fx_fail_t *fl, const char *cond, const char *fmt, ...) {
    if (fl->failed) {
        return false;
    }
    fl->failed = true;
    int k = snprintf(fl->msg, sizeof fl->msg, "(%s) ", cond);
    if (k < 0 || (size_t)k >= sizeof fl->msg) {
        return false;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fl->msg + k, sizeof fl->msg - (size_t)k, fmt, ap);
    va_end(ap);
    return false;
}

/* True when `cond` holds; otherwise records the first failure and yields false. The variadic
 * part is the message: a format and its arguments. */
#define FX_CHECK(fl, cond, ...) ((cond) || fx_fail_note((fl), #cond, __VA_ARGS__))

/* The single assertion of a batch: nothing in `fl` failed. */
#define FX_ASSERT_NO_FAIL(fl) cr_assert(!(fl)->failed, "%s", (fl)->msg)

static inline void fx_register(fx_world_t *f) {
    const weft_component_desc_t descs[FX_COUNT] = {
        {.name = "Position", .size = sizeof(pos3_t)},
        {.name = "Velocity", .size = sizeof(pos3_t)},
        {.name = "Ref", .size = sizeof(ref_t), .entity_field_count = 1, .entity_fields = {0}},
        {.name = "Tag"},
        {.name = "Pair",
         .size = sizeof(pair_t),
         .entity_field_count = 2,
         .entity_fields = {8, 16},
         .version = 3},
    };
    for (int i = 0; i < FX_COUNT; ++i) {
        cr_assert_eq(weft_component_register(f->w, &descs[i], &f->c[i]), WEFT_OK, "%s",
                     weft_last_error());
    }
    /* a resource too (as in tools/fuzz/fuzz_world.h): whole-world archives carry its value */
    weft_component_t settings;
    uint64_t init[2] = {0x5e771465u, 3};
    weft_resource_desc_t rd = {.name = "Settings", .size = sizeof init, .initial = init};
    cr_assert_eq(weft_resource_register(f->w, &rd, &settings), WEFT_OK, "%s", weft_last_error());
}

/* An inline world with nothing registered (destroy with weft_world_destroy). */
static inline weft_world_t *fx_bare_world(void) {
    weft_world_t *w;
    cr_assert_eq(weft_world_create(&(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE}, &w),
                 WEFT_OK);
    return w;
}

static inline void fx_init_desc(fx_world_t *f, const weft_world_desc_t *desc) {
    cr_assert_eq(weft_world_create(desc, &f->w), WEFT_OK);
    fx_register(f);
}

static inline void fx_init(fx_world_t *f) {
    fx_init_desc(f, &(weft_world_desc_t){.execution = WEFT_EXECUTION_INLINE});
}

static inline void fx_fini(fx_world_t *f) {
    weft_world_destroy(f->w);
    f->w = NULL;
}

/* xorshift64*: deterministic per seed. */
static inline uint64_t fx_rand(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* Build a random world: n entities, random components and references (some to destroyed
 * entities), then a few destroys so the free list is non-trivial. */
static inline void fx_populate(fx_world_t *f, uint64_t seed, uint32_t n) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1u;
    weft_entity_t *es = malloc(sizeof *es * (n ? n : 1));
    cr_assert_eq(weft_entity_create_n(f->w, n, es), WEFT_OK);
    fx_fail_t fl = {0};
    weft_result_t r2;
#define FX_POP_OK(call, what)                                                            \
    FX_CHECK(&fl, (r2 = (call)) == WEFT_OK, "populate seed %llu entity %u: %s: %s (%s)", \
             (unsigned long long)seed, i, what, weft_result_name(r2), weft_last_error())
    for (uint32_t i = 0; i < n && !fl.failed; ++i) {
        uint64_t r = fx_rand(&s);
        if (r & 1) {
            pos3_t p = {(float)i, (float)(r % 97), -1.5f};
            if (!FX_POP_OK(weft_component_set(f->w, es[i], f->c[FX_POS], &p), "set Position")) {
                break;
            }
        }
        if (r & 2) {
            pos3_t v = {0.25f, (float)(r % 13), (float)i};
            if (!FX_POP_OK(weft_component_set(f->w, es[i], f->c[FX_VEL], &v), "set Velocity")) {
                break;
            }
        }
        if (r & 4) {
            ref_t rf = {.target = (r & 8) ? es[fx_rand(&s) % n] : 0, .tag = (uint32_t)i};
            if (!FX_POP_OK(weft_component_set(f->w, es[i], f->c[FX_REF], &rf), "set Ref")) {
                break;
            }
        }
        if ((r & 16) &&
            !FX_POP_OK(weft_component_add(f->w, es[i], f->c[FX_TAG], NULL), "add Tag")) {
            break;
        }
        if (r & 32) {
            pair_t p = {.a = r, .first = es[fx_rand(&s) % n], .second = es[i]};
            if (!FX_POP_OK(weft_component_set(f->w, es[i], f->c[FX_PAIR], &p), "set Pair")) {
                break;
            }
        }
    }
    /* Destroy ~10%: references to them become dangling (stale) handles. */
    for (uint32_t i = 0; i < n && !fl.failed; ++i) {
        if (fx_rand(&s) % 10 == 0) {
            (void)FX_POP_OK(weft_entity_destroy(f->w, es[i]), "destroy");
        }
    }
#undef FX_POP_OK
    free(es);
    FX_ASSERT_NO_FAIL(&fl);
}

/* Alive entities of a world in ascending index order (the whole-world archive order). */
static inline uint32_t fx_alive(const fx_world_t *f, weft_entity_t *out, uint32_t cap) {
    weft_world_stats_t st;
    weft_world_stats(f->w, &st);
    uint32_t k = 0;
    bool over = false;
    for (uint32_t i = 1; i < st.entity_slots && !over; ++i) {
        weft_entity_t e = weft_entity_from_index(f->w, i);
        if (e != 0) {
            over = k >= cap;
            if (!over) {
                out[k++] = e;
            }
        }
    }
    cr_assert(!over, "more than %u alive entities", cap);
    return k;
}

/* Map a reference from world A to world B given the archive order `src` -> `dst` (n
 * entries, src ascending by entity index as archives order them): in-archive references are
 * remapped, others follow the rule (keep or null). */
static inline weft_entity_t fx_map(weft_entity_t v, const weft_entity_t *src,
                                   const weft_entity_t *dst, uint32_t n, bool keep_external) {
    if (v == 0) {
        return 0;
    }
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (weft_entity_index(src[mid]) < weft_entity_index(v)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < n && src[lo] == v) {
        return dst[lo];
    }
    return keep_external ? v : 0;
}

/* Whether dst[i] in world b holds exactly src[i]'s components from world a, with entity
 * fields mapped; records the first difference in `fl`. */
static inline bool fx_check_equal(const fx_world_t *a, const fx_world_t *b,
                                  const weft_entity_t *src, const weft_entity_t *dst, uint32_t n,
                                  bool keep_external, fx_fail_t *fl) {
    for (uint32_t i = 0; i < n; ++i) {
        if (!FX_CHECK(fl, weft_entity_is_alive(b->w, dst[i]), "entity %u not alive after load",
                      i)) {
            return false;
        }
        for (int c = 0; c < FX_COUNT; ++c) {
            const void *pa = weft_component_get(a->w, src[i], a->c[c]);
            const void *pb = weft_component_get(b->w, dst[i], b->c[c]);
            if (!FX_CHECK(fl, (pa != NULL) == (pb != NULL),
                          "entity %u component %d presence differs (%d vs %d)", i, c, pa != NULL,
                          pb != NULL)) {
                return false;
            }
            if (!pa) {
                continue;
            }
            bool ok = true;
            if (c == FX_POS || c == FX_VEL) {
                ok = FX_CHECK(fl, memcmp(pa, pb, sizeof(pos3_t)) == 0, "entity %u comp %d data", i,
                              c);
            } else if (c == FX_REF) {
                const ref_t *ra = pa, *rb = pb;
                weft_entity_t want = fx_map(ra->target, src, dst, n, keep_external);
                ok = FX_CHECK(fl, ra->tag == rb->tag, "entity %u ref tag %u -> %u", i, ra->tag,
                              rb->tag) &&
                     FX_CHECK(fl, want == rb->target, "entity %u ref 0x%llx -> 0x%llx, want 0x%llx",
                              i, (unsigned long long)ra->target, (unsigned long long)rb->target,
                              (unsigned long long)want);
            } else if (c == FX_PAIR) {
                const pair_t *qa = pa, *qb = pb;
                weft_entity_t w1 = fx_map(qa->first, src, dst, n, keep_external);
                weft_entity_t w2 = fx_map(qa->second, src, dst, n, keep_external);
                ok = FX_CHECK(fl, qa->a == qb->a, "entity %u pair.a %llu -> %llu", i,
                              (unsigned long long)qa->a, (unsigned long long)qb->a) &&
                     FX_CHECK(fl, w1 == qb->first, "entity %u pair.first 0x%llx, want 0x%llx", i,
                              (unsigned long long)qb->first, (unsigned long long)w1) &&
                     FX_CHECK(fl, w2 == qb->second, "entity %u pair.second 0x%llx, want 0x%llx", i,
                              (unsigned long long)qb->second, (unsigned long long)w2);
            }
            if (!ok) {
                return false;
            }
        }
    }
    return true;
}

/* Check that dst[i] in world b holds exactly src[i]'s components from world a, with entity
 * fields mapped (one assertion). */
static inline void fx_expect_equal(const fx_world_t *a, const fx_world_t *b,
                                   const weft_entity_t *src, const weft_entity_t *dst, uint32_t n,
                                   bool keep_external) {
    fx_fail_t fl = {0};
    fx_check_equal(a, b, src, dst, n, keep_external, &fl);
    FX_ASSERT_NO_FAIL(&fl);
}

/* Save with `desc` into a fresh membuf (caller frees). */
static inline weft_membuf_t fx_save(const fx_world_t *f, const weft_archive_save_desc_t *desc) {
    weft_membuf_t buf = {0};
    weft_writer_t wr = weft_membuf_writer(&buf);
    weft_result_t r = weft_archive_save(f->w, desc, &wr);
    cr_assert_eq(r, WEFT_OK, "save: %s", weft_last_error());
    return buf;
}

/* A world `f` holding fx_populate(seed, n). */
static inline void fx_populated(fx_world_t *f, uint64_t seed, uint32_t n) {
    fx_init(f);
    fx_populate(f, seed, n);
}

/* A world `f` holding fx_populate(seed, n), and its whole-world archive (caller frees). */
static inline weft_membuf_t fx_saved_world(fx_world_t *f, uint64_t seed, uint32_t n) {
    fx_populated(f, seed, n);
    return fx_save(f, NULL);
}

/* A snapshot of `w` holding its state now (free with weft_snapshot_destroy). */
static inline weft_snapshot_t *fx_captured(weft_world_t *w) {
    weft_snapshot_t *snap;
    cr_assert_eq(weft_snapshot_create(w, &snap), WEFT_OK);
    cr_assert_eq(weft_snapshot_capture(w, snap), WEFT_OK, "%s", weft_last_error());
    return snap;
}

/* Load `n` bytes into `f` with `desc`; if the load fails, check that the world is unchanged
 * (hash and entity count) and that there is a message, recording the first violation in `fl`
 * (for loops: no assertion). Returns the load's result. */
static inline weft_result_t fx_load_try(fx_world_t *f, const void *p, size_t n,
                                        const weft_archive_load_desc_t *desc, fx_fail_t *fl) {
    uint64_t h = weft_world_hash(f->w);
    uint32_t count = weft_entity_count(f->w);
    weft_result_t r = weft_archive_load_memory(f->w, p, n, desc, NULL);
    if (r != WEFT_OK) {
        uint64_t h2 = weft_world_hash(f->w);
        uint32_t count2 = weft_entity_count(f->w);
        (void)(FX_CHECK(fl, h2 == h, "failed load (%s) changed the world hash 0x%llx -> 0x%llx",
                        weft_result_name(r), (unsigned long long)h, (unsigned long long)h2) &&
               FX_CHECK(fl, count2 == count, "failed load (%s) changed the entity count %u -> %u",
                        weft_result_name(r), count, count2) &&
               FX_CHECK(fl, weft_last_error()[0] != '\0', "failed load (%s) has no message",
                        weft_result_name(r)));
    }
    return r;
}

/* Load `n` bytes into `f` with `desc`; if the load fails, require the world unchanged
 * (hash and entity count) and a message. Returns the load's result. */
static inline weft_result_t fx_load_checked(fx_world_t *f, const void *p, size_t n,
                                            const weft_archive_load_desc_t *desc) {
    fx_fail_t fl = {0};
    weft_result_t r = fx_load_try(f, p, n, desc, &fl);
    FX_ASSERT_NO_FAIL(&fl);
    return r;
}

/* ---- an allocator hook that counts, and can fail the k-th allocation --------------- */

typedef struct fx_counting {
    long fail_at;   /* fail the allocation with this number (1-based); 0: never */
    long count;     /* allocations so far (reset it to restart the numbering) */
    size_t live;    /* bytes outstanding */
    size_t largest; /* largest single request while `watch` */
    bool watch;     /* record `largest` */
} fx_counting_t;

static inline void *fx_count_alloc(size_t size, size_t align, void *user) {
    fx_counting_t *c = user;
    if (c->fail_at && ++c->count == c->fail_at) {
        return NULL;
    }
    if (c->watch && size > c->largest) {
        c->largest = size;
    }
    if (align < sizeof(void *)) {
        align = sizeof(void *);
    }
    void *p = aligned_alloc(align, (size + align - 1) / align * align);
    if (p) {
        c->live += size;
    }
    return p;
}

static inline void fx_count_free(void *p, size_t size, void *user) {
    fx_counting_t *c = user;
    if (p) {
        c->live -= size;
    }
    free(p);
}

/* The allocator hook over `c`, for weft_world_desc_t.allocator or weft_membuf_t.allocator. */
static inline weft_allocator_t fx_counting_allocator(fx_counting_t *c) {
    return (weft_allocator_t){fx_count_alloc, fx_count_free, c};
}

#endif /* WEFT_TEST_ARCHIVE_FIXTURE_H */
