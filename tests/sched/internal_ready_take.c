/* internal_ready_take.c: how many published slots one claim of the ready list takes
 * (src/sched/ready.h, weft__ready_take): half of a 1/P share of what is reserved, at least
 * one, none past a slot not yet published, and at most ceil(n / P) units in a row of one
 * system of n units, so a system's chunks released together are spread over the claims of
 * several workers instead of run in a row by one. Slot arrays are written by hand here
 * ((run position + 1) << 32 | chunk, 0: not yet published); the units of each run position
 * come from a table. */
#include "sched_fixture.h"

#include "src/sched/ready.h"

TestSuite(ready_claim, .timeout = 30);

#define MAX_SLOTS 512

static weft_atomic_u64 slots[MAX_SLOTS];
static uint32_t lookups;

static uint32_t units_of_pos(const void *ctx, uint32_t pos) {
    lookups++;
    return ((const uint32_t *)ctx)[pos];
}

static void clear(void) {
    for (uint32_t i = 0; i < MAX_SLOTS; i++) {
        weft_atomic_store_relaxed(&slots[i], 0);
    }
    lookups = 0;
}

/* Publish chunks [c0, c1) of run position `pos` from slot *n on. */
static void put(uint32_t *n, uint32_t pos, uint32_t c0, uint32_t c1) {
    for (uint32_t c = c0; c < c1; c++) {
        weft_atomic_store_relaxed(&slots[(*n)++], ((uint64_t)pos + 1u) << 32 | c);
    }
}

/* Clear the slots, then publish each span {run position, c0, c1} in turn; returns the slots
 * written. */
static uint32_t fill(const uint32_t (*spans)[3], uint32_t count) {
    uint32_t n = 0;
    clear();
    for (uint32_t k = 0; k < count; k++) {
        put(&n, spans[k][0], spans[k][1], spans[k][2]);
    }
    return n;
}

static uint32_t take(uint32_t h, uint32_t t, uint32_t workers, const uint32_t *units) {
    return weft__ready_take(slots, h, t, workers, units_of_pos, units);
}

/* A system of 13 chunks (its chunk 0 run by the releaser) ahead of 200 chunks of another:
 * at 4 workers a claim may take 26 slots, but at most ceil(13 / 4) = 4 of the first
 * system's, so its 12 published chunks go to three claims; the third goes on into the
 * second system's chunks up to its share. */
Test(ready_claim, a_released_system_is_spread_over_claims_of_its_one_pth_share) {
    static const uint32_t units[2] = {13, 294};
    static const uint32_t spans[2][3] = {{0, 1, 13}, {1, 0, 200}};
    uint32_t n = fill(spans, 2);
    cr_expect(eq(u32, take(0, n, 4, units), 4));
    cr_expect(eq(u32, take(4, n, 4, units), 4));
    cr_expect(eq(u32, take(8, n, 4, units), 25)); /* (212 - 8) / 8: 4 + 21 of the second */
    /* at 16 workers a claim may take 6 slots, but one chunk of the first system */
    cr_expect(eq(u32, take(0, n, 16, units), 1));
    cr_expect(eq(u32, take(1, n, 16, units), 1));
}

/* At 2 workers a system published alone is never capped: the share, a quarter of what is
 * published, stays below half of its units. */
Test(ready_claim, at_two_workers_a_system_published_alone_takes_its_whole_share) {
    static const uint32_t units[1] = {101};
    static const uint32_t spans[1][3] = {{0, 1, 101}};
    uint32_t n = fill(spans, 1);
    cr_expect(eq(u32, take(0, n, 2, units), 25));
    cr_expect(eq(u32, take(25, n, 2, units), 18)); /* (100 - 25) / 4 */
}

/* One-unit systems (a phase of many small systems) never meet the cap, and their records
 * are not looked at: only a second unit of one system in a row asks for its units. */
Test(ready_claim, one_unit_systems_take_the_share_without_a_lookup) {
    static uint32_t units[64];
    uint32_t n = 0;
    clear();
    for (uint32_t p = 0; p < 64; p++) {
        units[p] = 1;
        put(&n, p, 0, 1);
    }
    cr_expect(eq(u32, take(0, n, 4, units), 8));
    cr_expect(eq(u32, lookups, 0));
}

/* A slot not yet written stops the run (its publisher claims it), and a claim at a slot not
 * yet written takes none; past what is reserved at least one is wanted. */
Test(ready_claim, a_run_stops_at_the_first_slot_not_yet_published) {
    static const uint32_t units[2] = {8, 8};
    static const uint32_t spans[2][3] = {{0, 0, 8}, {1, 0, 8}};
    uint32_t n = fill(spans, 2);
    weft_atomic_store_relaxed(&slots[2], 0);
    cr_expect(eq(u32, take(0, n, 2, units), 2));
    cr_expect(eq(u32, take(2, n, 2, units), 0));
    cr_expect(eq(u32, take(15, n, 8, units), 1)); /* (16 - 15) / 16 = 0: at least one */
}
