/* fuzz_archive.c: libFuzzer target for the archive loader (weft_archive_load_memory and
 * weft_archive_inspect).
 *
 * Each input is loaded three ways: into a long-lived world with remapping and checksums
 * (the production path), into the same world with checksums skipped (so mutations reach
 * the structural checks instead of stopping at the checksum), and with kept ids into a
 * fresh world. Invariants checked on every input, besides the sanitizers' own: a failed
 * load leaves weft_world_hash() unchanged and reports its code and message through the
 * world's logger; a successful one leaves a world that accepts further work; inspect
 * accepts what the checksummed load got past parsing and describes it the same way.
 * Loaded entities are destroyed again so the long-lived world stays small.
 * The worlds log to a recorder, not stderr, so the fuzzer's output stays readable.
 * Build: -DWEFT_FUZZ=ON with clang (tools/fuzz/CMakeLists.txt). */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_world.h"

#define OUT_CAP 4096u

static weft_world_t *world;
static weft_component_t comps[FZ_COUNT];
static weft_entity_t loaded[OUT_CAP];

/* What the worlds' logger saw since the last reset. */
static int log_calls;
static weft_result_t log_code;

static void record_log(weft_log_level_t level, weft_result_t code, const char *msg,
                       const char *file, int line, void *user) {
    (void)level, (void)msg, (void)file, (void)line, (void)user;
    log_calls++;
    log_code = code;
}

static const weft_logger_t recorder = {.fn = record_log};

static void check(bool cond, const char *what) {
    if (!cond) {
        fprintf(stderr, "fuzz_archive: invariant broken: %s (%s)\n", what, weft_last_error());
        abort();
    }
}

/* Load `data` into `w`; returns the result, and the info in *info_out when not NULL. */
static weft_result_t load_into(weft_world_t *w, const uint8_t *data, size_t size, bool skip,
                               bool keep, weft_archive_info_t *info_out) {
    uint64_t before = weft_world_hash(w);
    weft_archive_info_t info = {0};
    weft_archive_load_desc_t d = {
        .skip_checksums = skip, .keep_ids = keep, .out_entities = loaded, .out_capacity = OUT_CAP};
    log_calls = 0;
    weft_result_t r = weft_archive_load_memory(w, data, size, &d, &info);
    if (info_out) {
        *info_out = info;
    }
    if (r != WEFT_OK) {
        check(weft_world_hash(w) == before, "failed load changed the world");
        check(weft_last_error()[0] != '\0', "failure without a message");
        check(log_calls > 0, "failure not reported through the world's logger");
        check(log_code == r, "the logger saw another code than the load returned");
        return r;
    }
    check(info.byte_size == size, "info.byte_size");
    for (uint64_t i = 0; i < info.entity_count; ++i) {
        check(weft_entity_is_alive(w, loaded[i]), "loaded entity not alive");
    }
    check(weft_entity_destroy_n(w, loaded, (uint32_t)info.entity_count) == WEFT_OK,
          "destroy loaded entities");
    return r;
}

/* Stage 1 of a checksummed load is what weft_archive_inspect runs: after a load that got
 * past parsing (success, or an error only a world can cause) inspect must accept the bytes
 * too. Only then, because without a world its failures go to the default logger (stderr). */
static void inspect_agrees(const uint8_t *data, size_t size, weft_result_t loaded_r,
                           const weft_archive_info_t *loaded_info) {
    bool parsed = loaded_r == WEFT_OK || loaded_r == WEFT_EMISMATCH || loaded_r == WEFT_EEXIST ||
                  loaded_r == WEFT_ECAPACITY;
    if (!parsed) {
        return;
    }
    weft_archive_info_t info;
    check(weft_archive_inspect(data, size, &info) == WEFT_OK, "inspect rejects a parsed archive");
    if (loaded_r == WEFT_OK) {
        check(info.entity_count == loaded_info->entity_count && info.rows == loaded_info->rows &&
                  info.component_count == loaded_info->component_count &&
                  info.hierarchy_nodes == loaded_info->hierarchy_nodes,
              "inspect and load describe the archive differently");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!world) {
        world = fz_world(comps, &recorder);
        check(world != NULL, "world creation");
    }
    weft_archive_info_t info;
    weft_result_t r = load_into(world, data, size, false, false, &info);
    inspect_agrees(data, size, r, &info);
    (void)load_into(world, data, size, true, false, NULL);
    weft_component_t fresh_comps[FZ_COUNT];
    weft_world_t *fresh = fz_world(fresh_comps, &recorder);
    check(fresh != NULL, "fresh world creation");
    (void)load_into(fresh, data, size, true, true, NULL);
    weft_world_destroy(fresh);
    return 0;
}
