/* archive_internal.h: what the archive writer, parser, loader and snapshot code share
 * (private; not installed).
 *
 * DESIGN
 * Loading runs in three stages, and only the last one touches the world:
 *   1. parse   (archive_parse.c): the bytes become a weft__arc_t of pointers into the input;
 *              every count is checked against the bytes that hold it, every checksum is
 *              verified, local ids are bounds-checked. World-independent (also used by
 *              weft_archive_inspect and the fuzz target).
 *   2. stage   (archive_load.c): sections are matched to registered components, layouts and
 *              upgrade hooks checked, the remap table built, entity ids chosen, and every
 *              allocation the commit needs is made (pool and index capacity, converted data).
 *   3. commit  (archive_load.c): entities are created and rows appended into capacity that
 *              already exists, so the commit cannot fail and a failed load never leaves a
 *              half-loaded world. */
#ifndef WEFT_ARCHIVE_INTERNAL_H
#define WEFT_ARCHIVE_INTERNAL_H

#include <stdlib.h>

#include "archive_format.h"
#include "jobs/platform/alloc.h"
#include "weft/archive.h"

/* One parsed COMP section. Pointers point into the input bytes. */
typedef struct weft__arc_comp {
    const char *name;            /* not NUL-terminated */
    uint32_t name_len;           /* 1 .. WEFT__ARC_NAME_MAX */
    uint32_t size;               /* bytes per value (0 for a tag) */
    uint32_t align;              /* power of two */
    uint32_t schema;             /* schema version at save time */
    uint32_t field_count;        /* entity fields */
    const unsigned char *fields; /* field_count little-endian u32 offsets */
    bool resource;               /* a resource's value (rows 0, ids NULL, data: one value) */
    uint64_t rows;               /* values in the section */
    const unsigned char *ids;    /* rows little-endian u32 local ids, < entity_count */
    const unsigned char *data;   /* rows * size bytes, row-major */
} weft__arc_comp_t;

/* One parsed module section (MODL, or a format-2 HIER read as one). Pointers into the input. */
typedef struct weft__arc_module {
    const char *name;          /* not NUL-terminated */
    uint32_t name_len;         /* 1 .. WEFT_MODULE_NAME_MAX */
    uint32_t version;          /* the module's archive version */
    uint64_t items;            /* the section's count (the module's items) */
    const unsigned char *data; /* the module's bytes */
    uint64_t size;             /* bytes at data */
} weft__arc_module_t;

/* A parsed archive. `comps` is the only allocation (freed by weft__arc_free). */
typedef struct weft__arc {
    uint32_t format_version;    /* from the file header */
    uint32_t comp_count;        /* COMP sections */
    uint64_t entity_count;      /* entities in ENTS */
    const unsigned char *ents;  /* entity_count little-endian u64 handles, ascending index */
    uint64_t slot_count;        /* SLOT: table high-water mark S (0: no SLOT, format 1) */
    const unsigned char *slots; /* S little-endian u32 slot states */
    uint64_t free_count;        /* SLOT: free-list entries F */
    const unsigned char *free;  /* F little-endian u32 slot indices, bottom first */
    weft__arc_comp_t *comps;    /* [comp_count] */
    uint64_t row_count;         /* sum of rows over comps */
    uint32_t module_count;      /* module sections */
    weft__arc_module_t modules[WEFT__ARC_MODULES_MAX]; /* in archive order */
    uint64_t byte_size;                                /* bytes parsed (the whole input) */
    weft_allocator_t alloc;                            /* what comps came from */
} weft__arc_t;

/* Parse and validate `size` bytes (stage 1). Failures are reported through `log` (the
 * target world's logger; NULL when no world is involved, as in weft_archive_inspect). On
 * error nothing is allocated and `out` is zeroed.
 * Errors: WEFT_EINVAL, WEFT_ECORRUPT, WEFT_EVERSION, WEFT_ENOMEM. */
weft_result_t weft__arc_parse(const void *data, size_t size, bool verify_checksums,
                              const weft_allocator_t *alloc, const weft_logger_t *log,
                              weft__arc_t *out);
void weft__arc_free(weft__arc_t *arc);

/* Local id of the archived entity `handle`, or UINT64_MAX when it is not in the archive
 * (binary search over the ascending indices). */
uint64_t weft__arc_find(const weft__arc_t *arc, uint64_t handle);

/* Drain `reader` into `out` (allocated from `alloc`), growing only as bytes arrive and
 * refusing more than max_bytes (WEFT_ECAPACITY). Every failure, the reader's included, is
 * reported through `log` (the target world's logger). On error `out` is empty.
 * Errors: WEFT_ECAPACITY, WEFT_ENOMEM, WEFT_EIO, or the reader's error. */
weft_result_t weft__archive_slurp(const weft_reader_t *reader, const weft_allocator_t *alloc,
                                  size_t max_bytes, const weft_logger_t *log, weft_membuf_t *out);

/* The built-in reader and writer callbacks (archive_io.c) have no world to report to: on
 * failure they leave a detail for this thread and return the code, and the save or load
 * that called them reports it through its world's logger with weft__io_report. */
void weft__io_clear(void);
/* Report the failure `code` of a reader or writer (`what`: e.g. "weft_archive_save: the
 * writer") after `at` bytes through `log`, with the built-in callback's detail if one was
 * left since weft__io_clear. Returns `code`. */
weft_result_t weft__io_report(const weft_logger_t *log, weft_result_t code, const char *what,
                              uint64_t at);

/* Items of the module section called `name` (0: none), for the info structs. */
uint64_t weft__arc_module_items(const weft__arc_t *arc, const char *name);

/* ---- modules on save (archive_modules.c) -------------------------------- >>arc_modules */

struct weft_world;
struct weft__secw;

/* The save context handed to modules (weft/module.h): local[] by entity index holds the
 * archive-local id + 1 of each saved entity (while marking: 1 for every saved entity). */
struct weft_module_save {
    struct weft_world *world;
    uint32_t *local;      /* [slots] */
    uint32_t slots;       /* entries in local */
    bool marking;         /* inside archive_mark: include allowed */
    struct weft__secw *w; /* inside archive_save: the section being written */
    uint64_t written;     /* bytes put so far */
};

/* Let every module with archive_mark add entities to a partial save (local[] = 1 marks).
 * Errors: the first module's error. */
weft_result_t weft__save_mark_modules(struct weft_world *world, uint32_t *local, uint32_t slots);

/* The module sections a save writes (sizes[i], items[i]: bytes and items of module i;
 * 0 bytes: no section), returning how many sections that makes. */
uint32_t weft__save_module_sizes(struct weft_world *world, uint32_t *local, uint32_t slots,
                                 uint64_t *sizes, uint64_t *items);

/* Write the module sections planned by weft__save_module_sizes. Errors: a module's error,
 * or WEFT_EINVAL when it writes another byte count than it declared. */
weft_result_t weft__save_write_modules(struct weft_world *world, struct weft__secw *w,
                                       uint32_t *local, uint32_t slots, const uint64_t *sizes,
                                       const uint64_t *items);

#endif /* WEFT_ARCHIVE_INTERNAL_H */
