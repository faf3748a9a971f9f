/* test_entity.c: entity handles — create, destroy, liveness, recycling, bulk calls. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "ecs_fixture.h"

static test_alloc_t alloc;
static weft_world_t *world;

static void setup(void) {
    memset(&alloc, 0, sizeof alloc);
    world = test_world(&alloc);
    cr_assert(world != NULL);
}

static void teardown(void) {
    weft_world_destroy(world);
    cr_expect(eq(sz, alloc.live_bytes, 0), "the world leaked %zu bytes", alloc.live_bytes);
}

TestSuite(entity, .init = setup, .fini = teardown, .timeout = 20);

Test(entity, create_gives_live_non_null_handles) {
    weft_entity_t a = test_entity(world), b = test_entity(world);
    cr_assert(ne(u64, a, WEFT_ENTITY_NULL));
    cr_assert(ne(u64, a, b));
    cr_expect(weft_entity_is_alive(world, a));
    cr_expect(weft_entity_is_alive(world, b));
    cr_expect(eq(u32, weft_entity_count(world), 2));
    cr_expect(eq(u32, weft_entity_index(a), 1), "slot 0 is never handed out");
}

Test(entity, null_entity_is_never_alive) {
    cr_expect(not(weft_entity_is_alive(world, WEFT_ENTITY_NULL)));
    cr_expect(not(weft_entity_is_alive(world, weft_entity_make(12345, 0))));
}

Test(entity, destroy_bumps_generation_and_stales_the_handle) {
    weft_entity_t e = test_entity(world);
    cr_assert(eq(int, weft_entity_destroy(world, e), WEFT_OK));
    cr_expect(not(weft_entity_is_alive(world, e)));
    cr_expect(eq(u32, weft_entity_count(world), 0));
    weft_entity_t r = test_entity(world);
    cr_expect(eq(u32, weft_entity_index(r), weft_entity_index(e)), "the slot is recycled");
    cr_expect(eq(u32, weft_entity_generation(r), weft_entity_generation(e) + 1));
    cr_expect(not(weft_entity_is_alive(world, e)), "the old handle stays stale");
    cr_expect(weft_entity_is_alive(world, r));
}

Test(entity, destroy_of_stale_handle_returns_estale_and_changes_nothing) {
    weft_entity_t e = test_entity(world);
    weft_entity_t keep = test_entity(world);
    cr_assert(eq(int, weft_entity_destroy(world, e), WEFT_OK));
    uint64_t h = weft_world_hash(world);
    cr_expect(eq(int, weft_entity_destroy(world, e), WEFT_ESTALE));
    cr_expect(eq(int, weft_entity_destroy(world, WEFT_ENTITY_NULL), WEFT_ESTALE));
    cr_expect(eq(u64, weft_world_hash(world), h));
    cr_expect(weft_entity_is_alive(world, keep));
    cr_expect(ne(str, (char *)weft_last_error(), ""));
}

Test(entity, recycling_is_lifo) {
    weft_entity_t e[4];
    for (int i = 0; i < 4; i++) {
        e[i] = test_entity(world);
    }
    weft_entity_destroy(world, e[1]);
    weft_entity_destroy(world, e[3]);
    cr_expect(eq(u32, weft_entity_index(test_entity(world)), weft_entity_index(e[3])));
    cr_expect(eq(u32, weft_entity_index(test_entity(world)), weft_entity_index(e[1])));
    cr_expect(eq(u32, weft_entity_index(test_entity(world)), 5), "then fresh slots");
}

/* Every call on a stale handle says so: not alive, WEFT_ESTALE, no data. */
static void expect_stale(weft_entity_t e) {
    cr_assert(not(weft_entity_is_alive(world, e)), "0x%llx is alive", (unsigned long long)e);
    weft_component_t c = weft_component_lookup(world, "Value");
    if (c.id != 0) {
        cr_assert(eq(ptr, (void *)weft_component_get(world, e, c), NULL));
        cr_assert(eq(int, weft_component_add(world, e, c, NULL), WEFT_ESTALE));
    }
    cr_assert(eq(int, weft_entity_destroy(world, e), WEFT_ESTALE));
}

/* Recycle the slot of `first` until it is retired (its last generation destroyed), checking
 * at every step that the first handle stays stale and is never handed out again. */
static uint32_t recycle_until_retired(weft_entity_t first) {
    weft_entity_t e = first;
    uint32_t idx = weft_entity_index(first), rounds = 0;
    for (;;) {
        cr_assert(eq(int, weft_entity_destroy(world, e), WEFT_OK));
        e = test_entity(world);
        rounds++;
        cr_assert(weft_entity_is_alive(world, first) == false,
                  "round %u: the first handle is alive", rounds);
        cr_assert(e != first, "round %u: the first handle was handed out again", rounds);
        if (weft_entity_index(e) != idx) {
            break;
        }
    }
    cr_assert(eq(int, weft_entity_destroy(world, e), WEFT_OK));
    return rounds;
}

Test(entity, a_stale_handle_never_names_a_later_entity_however_often_its_slot_is_reused) {
    weft_entity_t first = test_entity(world);
    uint32_t idx = weft_entity_index(first);
    uint32_t rounds = recycle_until_retired(first);
    /* generations 0 .. 65535 each named one entity; then the slot was retired */
    cr_expect(rounds == (1u << WEFT_ENTITY_GENERATION_BITS), "retired after %u rounds", rounds);
    cr_expect(eq(u64, weft_entity_from_index(world, idx), WEFT_ENTITY_NULL));
    for (uint32_t i = 0; i < 1000; i++) { /* the retired slot is never handed out */
        weft_entity_t e = test_entity(world);
        cr_assert(ne(u32, weft_entity_index(e), idx));
        cr_assert(weft_entity_is_alive(world, first) == false);
    }
}

Test(entity, a_snapshot_restore_keeps_a_retired_slot_retired) {
    weft_entity_t first = test_entity(world);
    uint32_t idx = weft_entity_index(first);
    recycle_until_retired(first);
    weft_snapshot_t *snap = NULL;
    cr_assert(eq(int, weft_snapshot_create(world, &snap), WEFT_OK));
    cr_assert(eq(int, weft_snapshot_capture(world, snap), WEFT_OK));
    weft_entity_t later = test_entity(world);
    cr_assert(eq(int, weft_snapshot_restore(world, snap), WEFT_OK));
    (void)later;
    expect_stale(first);
    for (uint32_t i = 0; i < 100; i++) {
        cr_assert(ne(u32, weft_entity_index(test_entity(world)), idx));
    }
    expect_stale(first);
    weft_snapshot_destroy(snap);
}

Test(entity, a_stale_handle_stays_stale_for_every_call_after_2_16_plus_1_recycles_and_more) {
    weft_entity_t first = test_entity(world);
    weft_component_t c = test_register(world, "Value", 12);
    cr_assert(eq(int, weft_component_add(world, first, c, NULL), WEFT_OK));
    /* Destroy and re-create whatever the latest entity is, 2^17 + 3 times: the first slot
     * passes its last generation after 2^16 rounds; the rest run on the slots after it. */
    weft_entity_t e = first;
    for (uint32_t round = 1; round <= (1u << 17) + 3u; round++) {
        cr_assert(eq(int, weft_entity_destroy(world, e), WEFT_OK));
        e = test_entity(world);
        cr_assert(ne(u64, e, first), "round %u handed out the first handle again", round);
        if (round == (1u << 16) + 1u || round % 4096u == 0) {
            expect_stale(first);
        }
    }
    expect_stale(first);
    cr_expect(eq(int, weft_component_add(world, e, c, NULL), WEFT_OK), "the live one works");
}

Test(entity, an_archive_round_trip_keeps_a_retired_slot_retired) {
    weft_component_t c = test_register(world, "Value", 12);
    weft_entity_t first = test_entity(world);
    uint32_t idx = weft_entity_index(first);
    recycle_until_retired(first);
    weft_entity_t live[8];
    cr_assert(eq(int, weft_entity_create_n(world, 8, live), WEFT_OK));
    for (int i = 0; i < 8; i++) {
        cr_assert(eq(int, weft_component_add(world, live[i], c, NULL), WEFT_OK));
    }
    weft_membuf_t buf = {0};
    weft_writer_t w = weft_membuf_writer(&buf);
    cr_assert(eq(int, weft_archive_save(world, NULL, &w), WEFT_OK), "%s", weft_last_error());
    cr_assert(eq(int, weft_entity_destroy_n(world, live, 8), WEFT_OK));
    /* keep_ids: the archived handles come back; the retired slot is not among them. */
    weft_entity_t got[8];
    weft_archive_load_desc_t keep = {.keep_ids = true, .out_entities = got, .out_capacity = 8};
    cr_assert(eq(int, weft_archive_load_memory(world, buf.data, buf.size, &keep, NULL), WEFT_OK),
              "%s", weft_last_error());
    for (int i = 0; i < 8; i++) {
        cr_expect(eq(u64, got[i], live[i]));
    }
    expect_stale(first);
    /* fresh ids: a second copy, never on the retired slot */
    weft_archive_load_desc_t fresh = {.out_entities = got, .out_capacity = 8};
    cr_assert(eq(int, weft_archive_load_memory(world, buf.data, buf.size, &fresh, NULL), WEFT_OK),
              "%s", weft_last_error());
    for (int i = 0; i < 8; i++) {
        cr_expect(ne(u32, weft_entity_index(got[i]), idx));
    }
    for (uint32_t i = 0; i < 100; i++) {
        cr_assert(ne(u32, weft_entity_index(test_entity(world)), idx));
    }
    expect_stale(first);
    weft_membuf_free(&buf);
}

/* ---- stale handles across keep_ids archive loads -------------------------------------- */

enum { HIST_SLOTS = 1024 };

/* Every handle a world ever handed out: 1 + the newest generation at each index (0: the
 * index was never used), so (idx, g) was handed out iff g < next_gen[idx]. */
typedef struct history {
    uint32_t next_gen[HIST_SLOTS];
} history_t;

static void hist_note(history_t *h, weft_entity_t e) {
    uint32_t idx = weft_entity_index(e), gen = weft_entity_generation(e);
    cr_assert(lt(u32, idx, HIST_SLOTS));
    if (gen + 1u > h->next_gen[idx]) {
        h->next_gen[idx] = gen + 1u;
    }
}

static uint64_t hist_rand(uint64_t *s) {
    *s += 0x9E3779B97F4A7C15ull;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* `steps` random creates and destroys on w, keeping at most 300 alive in live[] (*n of
 * them); every handle is noted in h, and a third of the live ones carry component c. */
static void churn(weft_world_t *w, weft_component_t c, history_t *h, uint64_t *seed,
                  weft_entity_t *live, uint32_t *n, int steps) {
    for (int i = 0; i < steps; i++) {
        if (*n > 0 && (*n == 300 || hist_rand(seed) % 5 < 2)) {
            uint32_t k = (uint32_t)(hist_rand(seed) % *n);
            cr_assert(eq(int, weft_entity_destroy(w, live[k]), WEFT_OK));
            live[k] = live[--*n];
        } else {
            weft_entity_t e = test_entity(w);
            hist_note(h, e);
            if (hist_rand(seed) % 3 == 0) {
                cr_assert(eq(int, weft_component_add(w, e, c, NULL), WEFT_OK));
            }
            live[(*n)++] = e;
        }
    }
}

static weft_membuf_t save_of(weft_world_t *w, const weft_entity_t *list, uint32_t n) {
    weft_membuf_t buf = {0};
    weft_writer_t wr = weft_membuf_writer(&buf);
    weft_archive_save_desc_t d = {.entities = list, .entity_count = n};
    cr_assert(eq(int, weft_archive_save(w, list ? &d : NULL, &wr), WEFT_OK), "%s",
              weft_last_error());
    return buf;
}

static void load_kept(weft_world_t *w, const weft_membuf_t *buf) {
    weft_archive_load_desc_t keep = {.keep_ids = true};
    cr_assert(eq(int, weft_archive_load_memory(w, buf->data, buf->size, &keep, NULL), WEFT_OK),
              "%s", weft_last_error());
}

/* True when e is among live[0..n). */
static bool listed(const weft_entity_t *live, uint32_t n, weft_entity_t e) {
    for (uint32_t i = 0; i < n; i++) {
        if (live[i] == e) {
            return true;
        }
    }
    return false;
}

/* After a keep_ids load into `b`: the only handles alive in b that either history handed
 * out are the archived ones (`kept`, k of them), and the next `creates` entities of b are
 * handles neither history ever handed out. */
static void expect_no_revived_handle(weft_world_t *b, const history_t *ha, const history_t *hb,
                                     const weft_entity_t *kept, uint32_t k, uint32_t creates) {
    for (uint32_t idx = 1; idx < HIST_SLOTS; idx++) {
        uint32_t top =
            ha->next_gen[idx] > hb->next_gen[idx] ? ha->next_gen[idx] : hb->next_gen[idx];
        for (uint32_t g = 0; g < top; g++) {
            weft_entity_t e = weft_entity_make(idx, g);
            cr_assert(eq(int, weft_entity_is_alive(b, e), listed(kept, k, e)),
                      "0x%llx: alive %d after the load, archived %d", (unsigned long long)e,
                      weft_entity_is_alive(b, e), listed(kept, k, e));
        }
    }
    for (uint32_t i = 0; i < creates; i++) {
        weft_entity_t e = test_entity(b);
        uint32_t idx = weft_entity_index(e), gen = weft_entity_generation(e);
        if (idx < HIST_SLOTS) {
            cr_assert(ge(u32, gen, ha->next_gen[idx]), "create %u revived 0x%llx (saved world)", i,
                      (unsigned long long)e);
            cr_assert(ge(u32, gen, hb->next_gen[idx]), "create %u revived 0x%llx (target world)", i,
                      (unsigned long long)e);
        }
    }
}

/* The seed of a randomised test, printed so a failure can be replayed. */
static uint64_t seeded(const char *what) {
    uint64_t seed = (uint64_t)time(NULL);
    fprintf(stderr, "entity keep_ids %s seed %llu\n", what, (unsigned long long)seed);
    return seed;
}

/* A second world with the same "Value" registration, counted by `a`. */
static weft_world_t *target_world(test_alloc_t *a) {
    memset(a, 0, sizeof *a);
    weft_world_t *b = test_world(a);
    (void)test_register(b, "Value", 12);
    return b;
}

static void target_done(weft_world_t *b, test_alloc_t *a, weft_membuf_t *buf) {
    weft_world_destroy(b);
    weft_membuf_free(buf);
    cr_expect(eq(sz, a->live_bytes, 0), "the target world leaked %zu bytes", a->live_bytes);
}

Test(entity, a_keep_ids_load_into_a_fresh_world_keeps_every_stale_handle_stale) {
    uint64_t seed = seeded("fresh-world");
    static history_t ha, none;
    memset(&ha, 0, sizeof ha);
    memset(&none, 0, sizeof none);
    weft_component_t c = test_register(world, "Value", 12);
    weft_entity_t first = test_entity(world); /* one slot retired, generations 0..65535 */
    hist_note(&ha, first);
    ha.next_gen[weft_entity_index(first)] = 1u << WEFT_ENTITY_GENERATION_BITS;
    recycle_until_retired(first);
    static weft_entity_t live[300];
    uint32_t n = 0;
    churn(world, c, &ha, &seed, live, &n, 4000);
    weft_membuf_t buf = save_of(world, NULL, 0);
    test_alloc_t alloc_b;
    weft_world_t *b = target_world(&alloc_b);
    load_kept(b, &buf);
    cr_expect(eq(u32, weft_entity_count(b), n));
    /* The allocator comes across too: both worlds hand out the same next handles. */
    for (uint32_t i = 0; i < 2 * HIST_SLOTS / 3; i++) {
        weft_entity_t ea = test_entity(world), eb = test_entity(b);
        cr_assert(eq(u64, ea, eb), "create %u", i);
        cr_assert(eq(int, weft_entity_destroy(world, ea), WEFT_OK));
        cr_assert(eq(int, weft_entity_destroy(b, eb), WEFT_OK));
    }
    weft_world_destroy(b);
    b = target_world(&alloc_b);
    load_kept(b, &buf);
    expect_no_revived_handle(b, &ha, &none, live, n, 2 * HIST_SLOTS);
    target_done(b, &alloc_b, &buf);
}

Test(entity, a_partial_keep_ids_load_leaves_the_unsaved_entities_handles_stale) {
    uint64_t seed = seeded("partial");
    static history_t ha, none;
    memset(&ha, 0, sizeof ha);
    memset(&none, 0, sizeof none);
    weft_component_t c = test_register(world, "Value", 12);
    static weft_entity_t live[300];
    uint32_t n = 0;
    churn(world, c, &ha, &seed, live, &n, 3000);
    uint32_t saved = n / 2; /* the others stay behind: their handles must not come back */
    weft_membuf_t buf = save_of(world, live, saved);
    test_alloc_t alloc_b;
    weft_world_t *b = target_world(&alloc_b);
    load_kept(b, &buf);
    cr_expect(eq(u32, weft_entity_count(b), saved));
    expect_no_revived_handle(b, &ha, &none, live, saved, 2 * HIST_SLOTS);
    target_done(b, &alloc_b, &buf);
}

Test(entity, a_keep_ids_load_into_a_used_world_keeps_both_worlds_stale_handles_stale) {
    uint64_t seed = seeded("merge");
    static history_t ha, hb;
    memset(&ha, 0, sizeof ha);
    memset(&hb, 0, sizeof hb);
    weft_component_t c = test_register(world, "Value", 12);
    static weft_entity_t live[300], live_b[300];
    uint32_t n = 0, nb = 0;
    weft_entity_t first = test_entity(world); /* a retires a slot b has free */
    hist_note(&ha, first);
    ha.next_gen[weft_entity_index(first)] = 1u << WEFT_ENTITY_GENERATION_BITS;
    recycle_until_retired(first);
    churn(world, c, &ha, &seed, live, &n, 3000);
    /* Then age 64 slots of a (64 rounds of destroy and re-create) and leave them dead: b,
     * whose slots below 1000 are all used once, has them free at older generations. */
    static weft_entity_t aged[64];
    cr_assert(eq(int, weft_entity_create_n(world, 64, aged), WEFT_OK));
    for (int round = 0; round < 64; round++) {
        cr_assert(eq(int, weft_entity_destroy_n(world, aged, 64), WEFT_OK));
        cr_assert(eq(int, weft_entity_create_n(world, 64, aged), WEFT_OK));
        for (int i = 0; i < 64; i++) {
            hist_note(&ha, aged[i]);
        }
    }
    cr_assert(eq(int, weft_entity_destroy_n(world, aged, 64), WEFT_OK));
    weft_membuf_t buf = save_of(world, NULL, 0);
    test_alloc_t alloc_b;
    weft_world_t *b = target_world(&alloc_b);
    weft_component_t cb = weft_component_lookup(b, "Value");
    static weft_entity_t once[1000];
    cr_assert(eq(int, weft_entity_create_n(b, 1000, once), WEFT_OK));
    for (int i = 0; i < 1000; i++) {
        hist_note(&hb, once[i]);
    }
    cr_assert(eq(int, weft_entity_destroy_n(b, once, 1000), WEFT_OK));
    churn(b, cb, &hb, &seed, live_b, &nb, 3000);
    cr_assert(eq(int, weft_entity_destroy_n(b, live_b, nb), WEFT_OK)); /* room for A's ids */
    load_kept(b, &buf);
    expect_no_revived_handle(b, &ha, &hb, live, n, 2 * HIST_SLOTS);
    target_done(b, &alloc_b, &buf);
}

Test(entity, create_n_and_destroy_n_handle_many_entities) {
    enum { N = 10000 };
    weft_entity_t *es = malloc(N * sizeof *es);
    cr_assert(eq(int, weft_entity_create_n(world, N, es), WEFT_OK));
    cr_expect(eq(u32, weft_entity_count(world), N));
    for (int i = 0; i < N; i++) {
        cr_assert(weft_entity_is_alive(world, es[i]));
    }
    /* destroy the even ones twice over: repeats and stale handles are skipped */
    weft_entity_t *even = malloc(N * sizeof *even);
    for (int i = 0; i < N / 2; i++) {
        even[i] = even[N / 2 + i] = es[2 * i];
    }
    cr_assert(eq(int, weft_entity_destroy_n(world, even, N), WEFT_OK));
    cr_expect(eq(u32, weft_entity_count(world), N / 2));
    for (int i = 0; i < N; i++) {
        cr_assert(eq(int, weft_entity_is_alive(world, es[i]), i % 2 == 1));
    }
    free(even);
    free(es);
}

Test(entity, from_index_returns_the_live_handle_or_null) {
    weft_entity_t e = test_entity(world);
    cr_expect(eq(u64, weft_entity_from_index(world, weft_entity_index(e)), e));
    weft_entity_destroy(world, e);
    cr_expect(eq(u64, weft_entity_from_index(world, weft_entity_index(e)), WEFT_ENTITY_NULL));
    cr_expect(eq(u64, weft_entity_from_index(world, 0), WEFT_ENTITY_NULL));
    cr_expect(eq(u64, weft_entity_from_index(world, 999999), WEFT_ENTITY_NULL));
}

Test(entity, entity_limit_is_enforced_with_ecapacity) {
    weft_world_t *small = NULL;
    weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE,
                           .entity_limit = 100,
                           .allocator = test_allocator(&alloc)};
    cr_assert(eq(int, weft_world_create(&d, &small), WEFT_OK));
    weft_entity_t es[99];
    cr_expect(eq(int, weft_entity_create_n(small, 99, es), WEFT_OK), "slot 0 is reserved");
    weft_entity_t extra;
    cr_expect(eq(int, weft_entity_create(small, &extra), WEFT_ECAPACITY));
    cr_expect(eq(u64, extra, WEFT_ENTITY_NULL));
    weft_entity_destroy(small, es[5]);
    cr_expect(eq(int, weft_entity_create(small, &extra), WEFT_OK), "a freed slot is reusable");
    weft_world_destroy(small);
}

/* Bulk reservations back their fresh slot pages in one call (entity.c, populate_slots): the
 * slots already in use on the pages around them keep their state, and the table still fills
 * exactly to entity_limit. */
Test(entity, bulk_reservations_keep_the_slots_in_use_and_fill_to_the_limit) {
    enum { LIMIT = 300000, FIRST = 2500 }; /* FIRST spans pages of 1,024 slots */
    weft_world_t *w = NULL;
    weft_world_desc_t d = {.execution = WEFT_EXECUTION_INLINE,
                           .entity_limit = LIMIT,
                           .allocator = test_allocator(&alloc)};
    cr_assert(eq(int, weft_world_create(&d, &w), WEFT_OK));
    weft_entity_t *first = malloc(FIRST * sizeof *first);
    weft_entity_t *rest = malloc(LIMIT * sizeof *rest);
    cr_assert(first != NULL && rest != NULL);
    for (int i = 0; i < FIRST; i++) {
        cr_assert(eq(int, weft_entity_create(w, &first[i]), WEFT_OK));
    }
    for (int i = 0; i < FIRST; i += 3) {
        cr_assert(eq(int, weft_entity_destroy(w, first[i]), WEFT_OK));
    }
    uint32_t freed = (FIRST + 2) / 3, live = FIRST - freed;
    cr_assert(eq(int, weft_entity_reserve(w, 100000), WEFT_OK));
    cr_assert(eq(int, weft_entity_create_n(w, 100000, rest), WEFT_OK));
    uint32_t left = LIMIT - 1u - FIRST; /* slot 0 is reserved; the freed slots were reused */
    cr_assert(eq(int, weft_entity_create_n(w, left - (100000 - freed), rest + 100000), WEFT_OK));
    cr_expect(eq(u32, weft_entity_count(w), LIMIT - 1u));
    for (int i = 0; i < FIRST; i++) {
        cr_assert(eq(int, weft_entity_is_alive(w, first[i]), i % 3 != 0), "first[%d]", i);
    }
    for (uint32_t i = 0; i < LIMIT - 1u - live; i++) {
        cr_assert(weft_entity_is_alive(w, rest[i]), "rest[%u]", i);
    }
    weft_entity_t extra;
    cr_expect(eq(int, weft_entity_create(w, &extra), WEFT_ECAPACITY));
    free(first);
    free(rest);
    weft_world_destroy(w);
}

/* ---- alive from another thread while the main thread creates ---- */

typedef struct reader_arg {
    weft_world_t *world;
    const weft_entity_t *watched; /* created before the reader starts, never destroyed */
    uint32_t n;
    int failures;
} reader_arg_t;

static void *reader(void *p) {
    reader_arg_t *r = p;
    for (int round = 0; round < 200; round++) {
        for (uint32_t i = 0; i < r->n; i++) {
            if (!weft_entity_is_alive(r->world, r->watched[i])) {
                r->failures++;
            }
        }
    }
    return NULL;
}

Test(entity, is_alive_is_safe_from_another_thread_while_creating) {
    enum { WATCHED = 512, CREATED = 200000 };
    static weft_entity_t watched[WATCHED];
    cr_assert(eq(int, weft_entity_create_n(world, WATCHED, watched), WEFT_OK));
    reader_arg_t arg = {.world = world, .watched = watched, .n = WATCHED};
    pthread_t t;
    cr_assert(eq(int, pthread_create(&t, NULL, reader, &arg), 0));
    for (int i = 0; i < CREATED; i++) {
        cr_assert(ne(u64, test_entity(world), WEFT_ENTITY_NULL));
    }
    pthread_join(t, NULL);
    cr_expect(eq(int, arg.failures, 0));
}

Test(entity, create_with_null_out_is_einval) {
    uint32_t before = weft_entity_count(world);
    cr_expect(eq(int, weft_entity_create(world, NULL), WEFT_EINVAL));
    cr_expect(eq(u32, weft_entity_count(world), before), "no entity was created");
}
