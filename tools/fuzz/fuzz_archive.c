/* fuzz_archive.c: libFuzzer target for the archive loader (weft_archive_load_memory and
 * weft_archive_inspect).
 *
 * Each input is loaded three ways: into a long-lived world with remapping and checksums
 * (the production path), into the same world with checksums skipped (so mutations reach
 * the structural checks instead of stopping at the checksum), and with kept ids into a
 * fresh world. Invariants checked on every input, besides the sanitizers' own: a failed
 * load leaves weft_world_hash() unchanged and sets a message; a successful one leaves a
 * world that accepts further work. Loaded entities are destroyed again so the long-lived
 * world stays small. Build: -DWEFT_FUZZ=ON with clang (tools/fuzz/CMakeLists.txt). */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_world.h"

#define OUT_CAP 4096u

static weft_world_t *world;
static weft_component_t comps[FZ_COUNT];
static weft_entity_t loaded[OUT_CAP];

static void check(bool cond, const char *what) {
    if (!cond) {
        fprintf(stderr, "fuzz_archive: invariant broken: %s (%s)\n", what, weft_last_error());
        abort();
    }
}

static void load_into(weft_world_t *w, const uint8_t *data, size_t size, bool skip, bool keep) {
    uint64_t before = weft_world_hash(w);
    weft_archive_info_t info = {0};
    weft_archive_load_desc_t d = {
        .skip_checksums = skip, .keep_ids = keep, .out_entities = loaded, .out_capacity = OUT_CAP};
    weft_result_t r = weft_archive_load_memory(w, data, size, &d, &info);
    if (r != WEFT_OK) {
        check(weft_world_hash(w) == before, "failed load changed the world");
        check(weft_last_error()[0] != '\0', "failure without a message");
        return;
    }
    check(info.byte_size == size, "info.byte_size");
    for (uint64_t i = 0; i < info.entity_count; ++i)
        check(weft_entity_is_alive(w, loaded[i]), "loaded entity not alive");
    check(weft_entity_destroy_n(w, loaded, (uint32_t)info.entity_count) == WEFT_OK,
          "destroy loaded entities");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!world) {
        world = fz_world(comps);
        check(world != NULL, "world creation");
    }
    weft_archive_info_t info;
    (void)weft_archive_inspect(data, size, &info);
    load_into(world, data, size, false, false);
    load_into(world, data, size, true, false);
    weft_component_t fresh_comps[FZ_COUNT];
    weft_world_t *fresh = fz_world(fresh_comps);
    check(fresh != NULL, "fresh world creation");
    load_into(fresh, data, size, true, true);
    weft_world_destroy(fresh);
    return 0;
}
