/* tools/json.h: a small, tolerant JSON reader for weft's tools (trace renderer, report comparison),
 * and the one JSON string writer the tools and weft_bench share.
 *
 * Not part of the weft library: the tools must build on a bare CI machine with only a C compiler,
 * so they carry their own reader instead of a dependency.
 *
 * The reader builds a read-only tree in one arena owned by the document. It accepts strict JSON
 * plus what hand-edited or interrupted files contain: comments (`//` and `/ * * /`), trailing
 * commas, and, with WT_JSON_TOLERATE_TRUNCATION, a document cut off at the end (Chrome trace files
 * may legally lack their closing brackets; an element cut in half is dropped, whole ones kept).
 *
 * Thread: a document may be read from any number of threads; parse/free are per document. */
#ifndef WEFT_TOOLS_JSON_H
#define WEFT_TOOLS_JSON_H

#include <stdio.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum wt_json_type {
    WT_JSON_NULL = 0,
    WT_JSON_BOOL,
    WT_JSON_NUMBER,
    WT_JSON_STRING,
    WT_JSON_ARRAY,
    WT_JSON_OBJECT
} wt_json_type_t;

/* One node. Arrays and objects chain their elements through `child`/`next`; an object's
 * elements carry their member name in `key`. Strings are decoded UTF-8, NUL-terminated. */
typedef struct wt_json {
    wt_json_type_t type;   /* kind of value */
    bool boolean;          /* WT_JSON_BOOL only */
    double number;         /* WT_JSON_NUMBER only */
    const char *string;    /* WT_JSON_STRING only; owned by the document */
    size_t length;         /* string length in bytes, or element count of an array/object */
    const char *key;       /* member name when the parent is an object, else NULL */
    struct wt_json *child; /* first element of an array/object, else NULL */
    struct wt_json *next;  /* next sibling in the parent, else NULL */
} wt_json_t;

typedef struct wt_json_doc wt_json_doc_t; /* opaque: the arena and the root */

enum {
    WT_JSON_TOLERATE_TRUNCATION = 1u << 0 /* close containers left open at end of input */
};

/* Write `s` (NULL: empty) to `f` as a JSON string literal: quotes, backslashes and control
 * characters escaped, other bytes as they are (UTF-8 passes through). */
void wt_json_write_string(FILE *f, const char *s);

/* Parse `len` bytes of `text` (need not be NUL-terminated). On success returns a document the
 * caller frees with wt_json_free(). On failure returns NULL and, if `err` is non-NULL, writes a
 * message with the byte offset ("offset 17: expected ':'") into err[0..err_size). */
wt_json_doc_t *wt_json_parse(const char *text, size_t len, unsigned flags, char *err,
                             size_t err_size);

/* Read a whole file (or stdin for "-") into a malloc'd NUL-terminated buffer; NULL on failure
 * with a message in err. `*len` receives the byte count. The caller frees the buffer. */
char *wt_json_read_file(const char *path, size_t *len, char *err, size_t err_size);

/* Free the document and every node and string in it. NULL is ignored. */
void wt_json_free(wt_json_doc_t *doc);

/* The root value; never NULL for a document returned by wt_json_parse(). */
const wt_json_t *wt_json_root(const wt_json_doc_t *doc);

/* Member `key` of object `obj` (first match), or NULL if obj is not an object or lacks it. */
const wt_json_t *wt_json_get(const wt_json_t *obj, const char *key);

/* The number in `v`, or `fallback` if v is NULL or not a number. */
double wt_json_number(const wt_json_t *v, double fallback);

/* The string in `v`, or `fallback` if v is NULL or not a string. */
const char *wt_json_string(const wt_json_t *v, const char *fallback);

#endif /* WEFT_TOOLS_JSON_H */
