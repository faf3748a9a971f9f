/* archive_io.c: the reader/writer callbacks weft ships (growable memory buffer, fixed memory
 * span, stdio FILE *) and the input slurper that bounds every allocation by the bytes that
 * actually arrived.
 *
 * DESIGN
 * The loader parses from memory (archive_load.c), so a streaming reader is first drained
 * into a buffer. The buffer grows by doubling only as bytes arrive, never by a size the input
 * claims, so hostile input cannot make the loader allocate more than about twice its own
 * length; desc.max_bytes caps it outright. */
#include <stdio.h>
#include <string.h>

#include "archive_internal.h"
#include "report.h"

/* ---- growable memory writer ------------------------------------------- >>membuf */

static void *buf_alloc(const weft_allocator_t *a, size_t size) {
    if (a->alloc)
        return a->alloc(size, 16, a->user);
    return malloc(size);
}

static void buf_free(const weft_allocator_t *a, void *p, size_t size) {
    if (!p)
        return;
    if (a->free)
        a->free(p, size, a->user);
    else
        free(p);
}

/* Grow `b` to hold at least `need` bytes (doubling). Moves the bytes over by hand because the
 * allocator hook has no realloc. */
static weft_result_t membuf_reserve(weft_membuf_t *b, size_t need) {
    if (need <= b->capacity)
        return WEFT_OK;
    size_t cap = b->capacity ? b->capacity : 4096u;
    while (cap < need) {
        if (cap > SIZE_MAX / 2u)
            return WEFT__FAIL(NULL, WEFT_ENOMEM, "weft_membuf: %zu bytes is too large", need);
        cap *= 2u;
    }
    unsigned char *p = buf_alloc(&b->allocator, cap);
    if (!p)
        return WEFT__FAIL(NULL, WEFT_ENOMEM, "weft_membuf: cannot allocate %zu bytes", cap);
    if (b->size)
        memcpy(p, b->data, b->size);
    buf_free(&b->allocator, b->data, b->capacity);
    b->data = p;
    b->capacity = cap;
    return WEFT_OK;
}

/* Grow `b` to exactly `cap` bytes (the slurper controls its own growth). */
static weft_result_t membuf_grow_exact(weft_membuf_t *b, size_t cap) {
    unsigned char *p = buf_alloc(&b->allocator, cap);
    if (!p)
        return WEFT__FAIL(NULL, WEFT_ENOMEM, "weft_archive_load: cannot allocate %zu bytes", cap);
    if (b->size)
        memcpy(p, b->data, b->size);
    buf_free(&b->allocator, b->data, b->capacity);
    b->data = p;
    b->capacity = cap;
    return WEFT_OK;
}

weft_result_t weft_membuf_reserve(weft_membuf_t *buf, size_t capacity) {
    WEFT__CONTRACT(buf != NULL, NULL, WEFT_EINVAL, "weft_membuf_reserve: buf is NULL");
    return membuf_reserve(buf, capacity);
}

static weft_result_t membuf_write(const void *data, size_t size, void *user) {
    weft_membuf_t *b = user;
    if (size > SIZE_MAX - b->size)
        return WEFT__FAIL(NULL, WEFT_ENOMEM, "weft_membuf: size overflow");
    weft_result_t r = membuf_reserve(b, b->size + size);
    if (r != WEFT_OK)
        return r;
    memcpy(b->data + b->size, data, size);
    b->size += size;
    return WEFT_OK;
}

weft_writer_t weft_membuf_writer(weft_membuf_t *buf) {
    return (weft_writer_t){.write = membuf_write, .user = buf};
}

void weft_membuf_free(weft_membuf_t *buf) {
    if (!buf)
        return;
    buf_free(&buf->allocator, buf->data, buf->capacity);
    buf->data = NULL;
    buf->size = 0;
    buf->capacity = 0;
}

/* ---- fixed memory reader ---------------------------------------------- >>memreader */

static weft_result_t memreader_read(void *dst, size_t size, size_t *got, void *user) {
    weft_memreader_t *m = user;
    size_t left = m->size - m->pos;
    size_t n = size < left ? size : left;
    if (n)
        memcpy(dst, m->data + m->pos, n);
    m->pos += n;
    *got = n;
    return WEFT_OK;
}

weft_reader_t weft_memreader(weft_memreader_t *m, const void *data, size_t size) {
    m->data = data;
    m->size = data ? size : 0;
    m->pos = 0;
    return (weft_reader_t){.read = memreader_read, .user = m};
}

/* ---- stdio ------------------------------------------------------------- >>file */

static weft_result_t file_write(const void *data, size_t size, void *user) {
    if (size && fwrite(data, 1, size, (FILE *)user) != size)
        return WEFT__FAIL(NULL, WEFT_EIO, "weft_file_writer: fwrite of %zu bytes failed", size);
    return WEFT_OK;
}

static weft_result_t file_read(void *dst, size_t size, size_t *got, void *user) {
    FILE *f = user;
    *got = fread(dst, 1, size, f);
    if (*got < size && ferror(f))
        return WEFT__FAIL(NULL, WEFT_EIO, "weft_file_reader: fread failed");
    return WEFT_OK;
}

weft_writer_t weft_file_writer(FILE *file) {
    return (weft_writer_t){.write = file_write, .user = file};
}

weft_reader_t weft_file_reader(FILE *file) {
    return (weft_reader_t){.read = file_read, .user = file};
}

/* ---- slurp -------------------------------------------------------------- >>slurp */

weft_result_t weft__archive_slurp(const weft_reader_t *reader, const weft_allocator_t *alloc,
                                  size_t max_bytes, weft_membuf_t *out) {
    *out = (weft_membuf_t){.allocator = *alloc};
    /* Room for one byte past the limit tells "exactly max_bytes" from "too much". */
    size_t limit = max_bytes < SIZE_MAX ? max_bytes + 1u : max_bytes;
    weft_result_t r = WEFT_OK;
    for (;;) {
        if (out->size == out->capacity) {
            if (out->size >= limit) {
                r = WEFT__FAIL(NULL, WEFT_ECAPACITY,
                               "weft_archive_load: input exceeds max_bytes (%zu)", max_bytes);
                goto fail_free_buffer;
            }
            size_t want = out->capacity ? out->capacity * 2u : 64u * 1024u;
            if (want > limit || want < out->capacity)
                want = limit;
            r = membuf_grow_exact(out, want);
            if (r != WEFT_OK)
                goto fail_free_buffer;
        }
        size_t got = 0;
        r = reader->read(out->data + out->size, out->capacity - out->size, &got, reader->user);
        if (r != WEFT_OK)
            goto fail_free_buffer;
        if (got == 0)
            break;
        if (got > out->capacity - out->size) {
            r = WEFT__FAIL(NULL, WEFT_EIO, "weft_archive_load: the reader returned more bytes than asked");
            goto fail_free_buffer;
        }
        out->size += got;
    }
    if (out->size > max_bytes) {
        r = WEFT__FAIL(NULL, WEFT_ECAPACITY, "weft_archive_load: input exceeds max_bytes (%zu)",
                       max_bytes);
        goto fail_free_buffer;
    }
    return WEFT_OK;

fail_free_buffer:
    weft_membuf_free(out);
    return r;
}
