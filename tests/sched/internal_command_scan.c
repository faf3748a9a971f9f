/* internal_command_scan.c: the split dry run (weft__cmd_stage_scan_split, src/sched/command.c)
 * finds what the serial dry run finds: the same creates, destroys, row operations, hooked flag,
 * rows and placeholder flags per component and destroyed indices, on random buffers whose
 * records reach entities of one buffer and of several (deferred to the main thread), stale
 * handles, placeholders created and destroyed, signature steps and sparse pages that do not
 * exist yet (the split gives up and the serial dry run runs), at 2 to 8 workers. The seed is
 * printed; set WEFT_SEED to replay one. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdlib.h>
#include <string.h>

#include "sched_fixture.h"
#include "src/core/access.h"
#include "src/core/world.h"
#include "src/sched/command.h"

TestSuite(split_dry_run, .timeout = 120);

#define SD_COMPS 7
#define SD_ENTITIES 2500
#define SD_BUFFERS 24

typedef struct sd_world {
    weft_world_t *w;
    weft_component_t c[SD_COMPS]; /* c[6] is never on an entity at first: new steps */
    weft_entity_t *ents;
    uint32_t nents;
} sd_world_t;

static void sd_hook(weft_world_t *w, weft_entity_t e, weft_component_t c, void *data, void *user) {
    (void)w, (void)e, (void)c, (void)data, (void)user;
}

static weft_result_t sd_call(weft_world_t *w, const void *data, uint32_t size) {
    (void)w, (void)data, (void)size;
    return WEFT_OK;
}

static void sd_make(sd_world_t *s, uint32_t workers, uint64_t seed, bool hook) {
    memset(s, 0, sizeof *s);
    cr_assert(eq(int,
                 weft_world_create(&(weft_world_desc_t){.worker_count = workers,
                                                        .execution = WEFT_EXECUTION_THREADED},
                                   &s->w),
                 WEFT_OK));
    static const uint32_t sizes[SD_COMPS] = {12, 4, 0, 8, 4, 16, 4};
    static const char *names[SD_COMPS] = {"a", "b", "c", "d", "e", "f", "g"};
    for (int k = 0; k < SD_COMPS; k++) {
        weft_component_desc_t d = {.name = names[k], .size = sizes[k]};
        if (hook && k == 4) {
            d.on_add = sd_hook;
        }
        cr_assert(eq(int, weft_component_register(s->w, &d, &s->c[k]), WEFT_OK));
    }
    s->ents = calloc(SD_ENTITIES, sizeof *s->ents);
    cr_assert(s->ents != NULL);
    unsigned char zero[16] = {0};
    for (uint32_t i = 0; i < SD_ENTITIES; i++) {
        uint64_t r = fixture_mix(seed ^ (i * 0x9E37u));
        cr_assert(eq(int, weft_entity_create(s->w, &s->ents[i]), WEFT_OK));
        for (int k = 0; k < SD_COMPS - 1; k++) {
            if (r >> (k * 3) & 1u) {
                cr_assert(eq(int, weft_component_set(s->w, s->ents[i], s->c[k], zero), WEFT_OK));
            }
        }
    }
    s->nents = SD_ENTITIES;
    for (uint32_t i = 0; i < SD_ENTITIES; i += 17) { /* stale handles in the buffers */
        cr_assert(eq(int, weft_entity_destroy(s->w, s->ents[i]), WEFT_OK));
    }
}

/* Record random commands into buffer b: most records reach entities of a range of their
 * own, some reach a range every buffer reaches (shared). */
static void sd_record(sd_world_t *s, weft_cmd_t *cmd, uint32_t b, uint64_t seed, bool call) {
    unsigned char data[16] = {1};
    weft__cmd_open(cmd, weft__thread_token());
    uint32_t n = 20 + (uint32_t)(fixture_mix(seed ^ b) % 120);
    weft_entity_t ph = WEFT_ENTITY_NULL;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t r = fixture_mix(seed ^ ((uint64_t)b << 32) ^ i);
        uint32_t own = SD_ENTITIES / SD_BUFFERS;
        uint32_t pick = (r >> 8) % 8 == 0 ? (uint32_t)((r >> 16) % 64) /* shared range */
                                          : b * own + (uint32_t)((r >> 16) % own);
        weft_entity_t e = s->ents[pick];
        if (ph != WEFT_ENTITY_NULL && (r >> 40) % 3 == 0) {
            e = ph;
        }
        weft_component_t c = s->c[(r >> 4) % SD_COMPS];
        switch (r % 8) {
        case 0:
            cr_assert(eq(int, weft_cmd_destroy(cmd, e), WEFT_OK));
            break;
        case 1:
            ph = weft_cmd_create(cmd);
            cr_assert(ph != WEFT_ENTITY_NULL);
            break;
        case 2:
        case 3:
            cr_assert(eq(int, weft_cmd_set(cmd, e, c, data), WEFT_OK));
            break;
        case 4:
            cr_assert(eq(int, weft_cmd_add(cmd, e, c), WEFT_OK));
            break;
        case 5:
        case 6:
            cr_assert(eq(int, weft_cmd_remove(cmd, e, c), WEFT_OK));
            break;
        default:
            cr_assert(eq(int, weft__cmd_push_emit(cmd, 7, e, data, 4), WEFT_OK));
            break;
        }
    }
    if (call && b == SD_BUFFERS / 2) {
        cr_assert(eq(int, weft_cmd_call(cmd, sd_call, data, 4), WEFT_OK));
    }
    weft__cmd_close(cmd);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Dry-run the buffers into a fresh stage, serially or split; returns whether it split. */
static bool sd_scan(sd_world_t *s, weft__cmd_stage_t *st, weft_cmd_t *cmds, uint32_t n,
                    bool split) {
    weft_world_t *w = s->w;
    memset(st, 0, sizeof *st);
    cr_assert(eq(int, weft__cmd_stage_begin(st, w, &w->counted), WEFT_OK));
    bool done = false;
    if (split) {
        for (uint32_t b = 0; b < n; b++) {
            if (cmds[b].len != 0) {
                cr_assert(weft__cmd_stage_add(st, &w->counted, &cmds[b]));
            }
        }
        cr_assert(eq(int, weft__cmd_stage_scan_split(st, w, &w->counted, weft_world_jobs(w), &done),
                     WEFT_OK));
        if (!done) {
            cr_assert(eq(int, weft__cmd_stage_begin(st, w, &w->counted), WEFT_OK));
        }
    }
    if (!done) {
        uint64_t map[512];
        for (uint32_t b = 0; b < n; b++) {
            cr_assert(cmds[b].created <= 512);
            cr_assert(eq(int, weft__cmd_stage_scan(st, w, &w->counted, &cmds[b], map), WEFT_OK));
        }
    }
    qsort(st->dead, st->ndead, sizeof *st->dead, cmp_u32);
    return done;
}

static void sd_same(const weft__cmd_stage_t *x, const weft__cmd_stage_t *y, uint64_t seed,
                    const char *what) {
    cr_assert(eq(u32, x->creates, y->creates), "seed %llu (%s): creates", (unsigned long long)seed,
              what);
    cr_assert(eq(u32, x->destroys, y->destroys), "seed %llu (%s): destroys",
              (unsigned long long)seed, what);
    cr_assert(eq(u32, x->ops, y->ops), "seed %llu (%s): row operations", (unsigned long long)seed,
              what);
    cr_assert(eq(int, x->hooked, y->hooked), "seed %llu (%s): hooked", (unsigned long long)seed,
              what);
    cr_assert(eq(u32, x->ncomp, y->ncomp));
    for (uint32_t c = 1; c < x->ncomp; c++) {
        cr_assert(eq(u32, x->rows[c], y->rows[c]), "seed %llu (%s): rows of component %u",
                  (unsigned long long)seed, what, c);
        cr_assert(eq(u8, x->placeholder[c], y->placeholder[c]),
                  "seed %llu (%s): placeholder flag of component %u", (unsigned long long)seed,
                  what, c);
    }
    cr_assert(eq(u32, x->ndead, y->ndead), "seed %llu (%s): destroyed indices",
              (unsigned long long)seed, what);
    for (uint32_t i = 0; i < x->ndead; i++) {
        cr_assert(eq(u32, x->dead[i], y->dead[i]), "seed %llu (%s): destroyed index %u",
                  (unsigned long long)seed, what, i);
    }
}

static void sd_round(uint32_t workers, uint64_t seed, bool hook, bool call) {
    sd_world_t s;
    sd_make(&s, workers, seed, hook);
    weft_world_t *w = s.w;
    weft_cmd_t *cmds = aligned_alloc(WEFT_CACHE_LINE, SD_BUFFERS * sizeof *cmds);
    cr_assert(cmds != NULL);
    for (uint32_t b = 0; b < SD_BUFFERS; b++) {
        cmds[b] = (weft_cmd_t){.world = w, .alloc = &w->counted, .log = w->log};
        if (b % 7 != 3) { /* some buffers stay empty */
            sd_record(&s, &cmds[b], b, seed, call);
        }
    }
    weft__cmd_stage_t first, serial, split;
    /* First split: component g was never on an entity, so its steps do not exist yet: the
     * split gives up whenever a record needs one, and the serial dry run makes them. */
    (void)sd_scan(&s, &first, cmds, SD_BUFFERS, true);
    (void)sd_scan(&s, &serial, cmds, SD_BUFFERS, false);
    sd_same(&first, &serial, seed, "first split");
    cr_assert(sd_scan(&s, &split, cmds, SD_BUFFERS, true), "seed %llu: the split ran",
              (unsigned long long)seed);
    cr_assert(split.deferred > 0, "seed %llu: some records reach shared entities",
              (unsigned long long)seed);
    sd_same(&split, &serial, seed, "split");
    weft__cmd_stage_fini(&first, &w->counted);
    weft__cmd_stage_fini(&serial, &w->counted);
    weft__cmd_stage_fini(&split, &w->counted);
    for (uint32_t b = 0; b < SD_BUFFERS; b++) {
        weft__cmd_fini(&cmds[b]);
    }
    free(cmds);
    free(s.ents);
    weft_world_destroy(w);
}

Test(split_dry_run, finds_what_the_serial_dry_run_finds_at_2_to_8_workers) {
    uint64_t seed = fixture_seed("split_dry_run");
    static const uint32_t counts[] = {2, 3, 4, 8};
    for (uint32_t k = 0; k < 4; k++) {
        for (uint32_t v = 0; v < 3; v++) {
            sd_round(counts[k], seed + k * 3u + v, v == 1, v == 2);
        }
    }
}
