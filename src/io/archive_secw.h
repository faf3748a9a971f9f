/* archive_secw.h: the section writer of archive saving (private).
 * See archive_secw.c for the design. Usage: init, file_header, then per section
 * begin(tag, payload size, count) / put... / end, and finally finish (always, also after an
 * error: it frees the staging block and returns the first error). */
#ifndef WEFT_ARCHIVE_SECW_H
#define WEFT_ARCHIVE_SECW_H

#include <stdlib.h>

#include "archive_format.h"
#include "weft/archive.h"

#define WEFT__SECW_BLOCK (64u * 1024u) /* staging block and streaming slice, bytes */

typedef struct weft__secw {
    const weft_writer_t *writer; /* destination */
    const weft_logger_t *log;    /* the saved world's logger: every failure is reported here */
    weft_allocator_t alloc;      /* where block came from */
    unsigned char *block;        /* staging block of WEFT__SECW_BLOCK bytes, owned */
    size_t used;                 /* bytes pending in block */
    weft__hash_t hash;           /* checksum of the open section's payload */
    uint64_t left;               /* payload bytes the open section still expects */
    uint64_t written;            /* bytes the writer has accepted */
    weft_result_t error;         /* first writer error (reported when it happened); sticky */
} weft__secw_t;

/* Failures (the writer's included) are reported through `log` once, when they happen.
 * Errors: WEFT_ENOMEM (nothing to finish). */
weft_result_t weft__secw_init(weft__secw_t *w, const weft_writer_t *writer,
                              const weft_allocator_t *alloc, const weft_logger_t *log);
void weft__secw_file_header(weft__secw_t *w, uint32_t comp_count, uint32_t module_count);
/* Open a section of exactly `size` payload bytes (a multiple of 8). */
void weft__secw_begin(weft__secw_t *w, uint32_t tag, uint64_t size, uint64_t count);
/* Append payload bytes (large spans stream straight from `data`). */
void weft__secw_put(weft__secw_t *w, const void *data, size_t n);
/* Append n <= 8 zero bytes (padding). */
void weft__secw_zeros(weft__secw_t *w, size_t n);
/* Direct access to the staging block: get room for up to *n bytes, fill k of them, then
 * commit(k). Used to convert data (ids) without a second buffer. */
unsigned char *weft__secw_space(weft__secw_t *w, size_t *n);
void weft__secw_commit(weft__secw_t *w, size_t n);
/* Close the section: writes the payload checksum trailer. */
void weft__secw_end(weft__secw_t *w);
/* Flush, free the block, return the first error (WEFT_OK if none). */
weft_result_t weft__secw_finish(weft__secw_t *w);

#endif /* WEFT_ARCHIVE_SECW_H */
