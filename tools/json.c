/* tools/json.c: recursive-descent JSON reader building an arena-owned tree (see json.h).
 *
 * DESIGN: every node and decoded string of a document lives in one chain of arena blocks, so a
 * document is freed in one walk and nodes never need individual ownership. Parsing is a plain
 * recursive descent with a depth limit. Truncation tolerance works by tagging errors that were
 * caused by running out of input: a container whose element failed that way drops the element and
 * closes itself, and the containers around it then see the end of input and close too. Arrays are
 * lists, so a cut array keeps its complete elements; objects are records, so a cut object is
 * incomplete and its parent drops it (`drop_cut_object`). The root is always kept. A number that
 * ends exactly at the cut may be missing digits, so it counts as cut too. */
#include "json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK 65536u /* default block size; bigger requests get their own block */
#define MAX_DEPTH 512      /* nesting limit, so hostile input cannot exhaust the stack */

typedef struct arena_block {
    struct arena_block *next; /* older block, or NULL */
    size_t used;              /* bytes handed out from data */
    size_t size;              /* capacity of data */
    max_align_t data[];       /* storage; max_align_t keeps every node aligned */
} arena_block_t;

struct wt_json_doc {
    arena_block_t *blocks; /* newest first; owns every node and string */
    wt_json_t *root;       /* the parsed value */
};

typedef struct parser {
    const char *p;        /* next unread byte */
    const char *begin;    /* start of input, for error offsets */
    const char *end;      /* one past the last byte */
    wt_json_doc_t *doc;   /* arena owner */
    unsigned flags;       /* WT_JSON_* flags */
    int depth;            /* current nesting */
    bool at_eof;          /* the first error was caused by running out of input */
    bool drop_cut_object; /* an object was closed by the end of input: its parent drops it */
    bool failed;          /* an error was recorded */
    char msg[160];        /* first error message */
} parser_t;

/* ---- arena -------------------------------------------------------------------- >>arena */

static void *arena_alloc(wt_json_doc_t *doc, size_t size) {
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    arena_block_t *b = doc->blocks;
    if (b == NULL || b->size - b->used < size) {
        size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;
        b = malloc(sizeof(arena_block_t) + cap);
        if (b == NULL) {
            return NULL;
        }
        b->next = doc->blocks;
        b->used = 0;
        b->size = cap;
        doc->blocks = b;
    }
    void *ptr = (char *)b->data + b->used;
    b->used += size;
    return ptr;
}

void wt_json_free(wt_json_doc_t *doc) {
    if (doc == NULL) {
        return;
    }
    arena_block_t *b = doc->blocks;
    while (b != NULL) {
        arena_block_t *next = b->next;
        free(b);
        b = next;
    }
    free(doc);
}

/* ---- errors and whitespace ---------------------------------------------------- >>lex */

/* Record the first error only: later ones are consequences of it. */
static bool fail(parser_t *ps, bool eof, const char *fmt, ...) {
    if (!ps->failed) {
        ps->failed = true;
        ps->at_eof = eof;
        int n = snprintf(ps->msg, sizeof ps->msg, "offset %zu: ", (size_t)(ps->p - ps->begin));
        if (n > 0 && (size_t)n < sizeof ps->msg) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(ps->msg + n, sizeof ps->msg - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return false;
}

/* Skip whitespace and comments. Returns false only on an unterminated block comment. */
static bool skip_space(parser_t *ps) {
    while (ps->p < ps->end) {
        char c = *ps->p;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            ps->p++;
        } else if (c == '/' && ps->end - ps->p >= 2 && ps->p[1] == '/') {
            while (ps->p < ps->end && *ps->p != '\n') {
                ps->p++;
            }
        } else if (c == '/' && ps->end - ps->p >= 2 && ps->p[1] == '*') {
            const char *close = NULL;
            for (const char *q = ps->p + 2; q + 1 < ps->end; q++) {
                if (q[0] == '*' && q[1] == '/') {
                    close = q;
                    break;
                }
            }
            if (close == NULL) {
                ps->p = ps->end;
                return fail(ps, true, "unterminated comment");
            }
            ps->p = close + 2;
        } else {
            break;
        }
    }
    return true;
}

static bool match_word(parser_t *ps, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n) {
        bool prefix = memcmp(ps->p, word, (size_t)(ps->end - ps->p)) == 0;
        return prefix ? fail(ps, true, "truncated literal") : false;
    }
    if (memcmp(ps->p, word, n) != 0) {
        return false;
    }
    ps->p += n;
    return true;
}

/* ---- strings ------------------------------------------------------------------ >>string */

static int hex4(const char *s) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = (c >= '0' && c <= '9')   ? c - '0'
                : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                         : -1;
        if (d < 0) {
            return -1;
        }
        v = v * 16 + d;
    }
    return v;
}

static size_t put_utf8(char *out, uint32_t cp) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Parse a string starting at the opening quote. The decoded form is never longer than the raw
 * span (every escape shrinks or keeps its size), so one allocation of the raw length suffices. */
static bool parse_string(parser_t *ps, const char **out, size_t *out_len) {
    const char *q = ps->p + 1;
    while (q < ps->end && *q != '"') {
        q += (*q == '\\') ? 2 : 1;
    }
    if (q >= ps->end) {
        return fail(ps, true, "unterminated string");
    }
    char *buf = arena_alloc(ps->doc, (size_t)(q - ps->p));
    if (buf == NULL) {
        return fail(ps, false, "out of memory");
    }
    size_t n = 0;
    const char *s = ps->p + 1;
    while (s < q) {
        if (*s != '\\') {
            buf[n++] = *s++;
            continue;
        }
        char e = s[1];
        s += 2;
        switch (e) {
        case '"':
            buf[n++] = '"';
            break;
        case '\\':
            buf[n++] = '\\';
            break;
        case '/':
            buf[n++] = '/';
            break;
        case 'b':
            buf[n++] = '\b';
            break;
        case 'f':
            buf[n++] = '\f';
            break;
        case 'n':
            buf[n++] = '\n';
            break;
        case 'r':
            buf[n++] = '\r';
            break;
        case 't':
            buf[n++] = '\t';
            break;
        case 'u': {
            int hi = (q - s >= 4) ? hex4(s) : -1;
            if (hi < 0) {
                ps->p = s;
                return fail(ps, false, "bad \\u escape");
            }
            s += 4;
            uint32_t cp = (uint32_t)hi;
            /* A high surrogate followed by a low one encodes one code point above U+FFFF. */
            if (hi >= 0xD800 && hi < 0xDC00 && q - s >= 6 && s[0] == '\\' && s[1] == 'u') {
                int lo = hex4(s + 2);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000u + (((uint32_t)hi - 0xD800u) << 10) + ((uint32_t)lo - 0xDC00u);
                    s += 6;
                }
            }
            if (cp >= 0xD800 && cp < 0xE000) {
                cp = 0xFFFD; /* lone surrogate: keep going with the replacement character */
            }
            n += put_utf8(buf + n, cp);
            break;
        }
        default:
            ps->p = s - 2;
            return fail(ps, false, "bad escape '\\%c'", e);
        }
    }
    buf[n] = '\0';
    ps->p = q + 1;
    *out = buf;
    *out_len = n;
    return true;
}

/* ---- values ------------------------------------------------------------------- >>value */

static bool parse_value(parser_t *ps, wt_json_t *v);

static bool parse_number(parser_t *ps, wt_json_t *v) {
    char tmp[64];
    size_t n = 0;
    const char *s = ps->p;
    while (s < ps->end && n + 1 < sizeof tmp && strchr("+-0123456789.eE", *s) != NULL) {
        tmp[n++] = *s++;
    }
    tmp[n] = '\0';
    char *stop = NULL;
    double d = strtod(tmp, &stop);
    if (n == 0 || stop != tmp + n) {
        return fail(ps, s >= ps->end, "bad number");
    }
    if (s >= ps->end && ps->depth > 0 && (ps->flags & WT_JSON_TOLERATE_TRUNCATION) != 0) {
        return fail(ps, true, "number cut by the end of input");
    }
    v->type = WT_JSON_NUMBER;
    v->number = d;
    ps->p = s;
    return true;
}

/* Elements of an array or members of an object, up to the closing bracket. */
static bool parse_container(parser_t *ps, wt_json_t *v, bool is_object) {
    const char close = is_object ? '}' : ']';
    const bool tolerant = (ps->flags & WT_JSON_TOLERATE_TRUNCATION) != 0;
    v->type = is_object ? WT_JSON_OBJECT : WT_JSON_ARRAY;
    if (++ps->depth > MAX_DEPTH) {
        return fail(ps, false, "nesting deeper than %d", MAX_DEPTH);
    }
    ps->p++; /* the opening bracket */
    wt_json_t **tail = &v->child;
    bool cut = false; /* closed by the end of input rather than by its bracket */
    for (;;) {
        if (!skip_space(ps) || ps->p >= ps->end) {
            if (tolerant) {
                cut = true; /* cut after a whole element: keep what we have */
                break;
            }
            return fail(ps, true, "unexpected end of input, expected '%c'", close);
        }
        if (*ps->p == close) {
            ps->p++;
            break;
        }
        wt_json_t *e = arena_alloc(ps->doc, sizeof *e);
        if (e == NULL) {
            return fail(ps, false, "out of memory");
        }
        memset(e, 0, sizeof *e);
        bool ok = true;
        if (is_object) {
            size_t key_len = 0;
            if (*ps->p != '"') {
                return fail(ps, false, "expected member name");
            }
            ok = parse_string(ps, &e->key, &key_len) && skip_space(ps);
            if (ok && (ps->p >= ps->end || *ps->p != ':')) {
                ok = fail(ps, ps->p >= ps->end, "expected ':'");
            }
            if (ok) {
                ps->p++;
            }
        }
        ok = ok && skip_space(ps) && parse_value(ps, e);
        if (!ok) {
            if (tolerant && ps->at_eof) {
                ps->failed = false; /* drop the half-written element and close */
                ps->p = ps->end;
                cut = true;
                break;
            }
            return false;
        }
        if (ps->drop_cut_object) {
            ps->drop_cut_object = false; /* e is an object the cut went through: incomplete */
            cut = true;
            break;
        }
        *tail = e;
        tail = &e->next;
        v->length++;
        if (!skip_space(ps)) {
            continue; /* handled at the top of the loop */
        }
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++; /* a trailing comma before the close is accepted */
        } else if (ps->p < ps->end && *ps->p != close) {
            return fail(ps, false, "expected ',' or '%c'", close);
        }
    }
    ps->depth--;
    ps->drop_cut_object = cut && is_object;
    return true;
}

static bool parse_value(parser_t *ps, wt_json_t *v) {
    if (ps->p >= ps->end) {
        return fail(ps, true, "unexpected end of input, expected a value");
    }
    char c = *ps->p;
    if (c == '{' || c == '[') {
        return parse_container(ps, v, c == '{');
    }
    if (c == '"') {
        v->type = WT_JSON_STRING;
        return parse_string(ps, &v->string, &v->length);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        return parse_number(ps, v);
    }
    if (match_word(ps, "true") || match_word(ps, "false")) {
        v->type = WT_JSON_BOOL;
        v->boolean = ps->p[-1] == 'e' && ps->p[-2] == 'u';
        return true;
    }
    if (match_word(ps, "null")) {
        v->type = WT_JSON_NULL;
        return true;
    }
    return ps->failed ? false : fail(ps, false, "unexpected character '%c'", c);
}

wt_json_doc_t *wt_json_parse(const char *text, size_t len, unsigned flags, char *err,
                             size_t err_size) {
    wt_json_doc_t *doc = calloc(1, sizeof *doc);
    parser_t ps = {.p = text, .begin = text, .end = text + len, .doc = doc, .flags = flags};
    if (doc == NULL) {
        fail(&ps, false, "out of memory");
        goto fail_report;
    }
    doc->root = arena_alloc(doc, sizeof *doc->root);
    if (doc->root == NULL) {
        fail(&ps, false, "out of memory");
        goto fail_free_doc;
    }
    memset(doc->root, 0, sizeof *doc->root);
    if (!skip_space(&ps) || !parse_value(&ps, doc->root) || !skip_space(&ps)) {
        goto fail_free_doc;
    }
    if (ps.p != ps.end) {
        fail(&ps, false, "trailing data after the value");
        goto fail_free_doc;
    }
    return doc;

fail_free_doc:
    wt_json_free(doc);
fail_report:
    if (err != NULL && err_size > 0) {
        snprintf(err, err_size, "%s", ps.msg);
    }
    return NULL;
}

/* ---- access ------------------------------------------------------------------- >>access */

const wt_json_t *wt_json_root(const wt_json_doc_t *doc) { return doc->root; }

const wt_json_t *wt_json_get(const wt_json_t *obj, const char *key) {
    if (obj == NULL || obj->type != WT_JSON_OBJECT) {
        return NULL;
    }
    for (const wt_json_t *m = obj->child; m != NULL; m = m->next) {
        if (strcmp(m->key, key) == 0) {
            return m;
        }
    }
    return NULL;
}

double wt_json_number(const wt_json_t *v, double fallback) {
    return (v != NULL && v->type == WT_JSON_NUMBER) ? v->number : fallback;
}

const char *wt_json_string(const wt_json_t *v, const char *fallback) {
    return (v != NULL && v->type == WT_JSON_STRING) ? v->string : fallback;
}

/* ---- files -------------------------------------------------------------------- >>file */

char *wt_json_read_file(const char *path, size_t *len, char *err, size_t err_size) {
    bool use_stdin = strcmp(path, "-") == 0;
    FILE *f = use_stdin ? stdin : fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, err_size, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1u << 16;
    size_t n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1) {
            break; /* end of file or an error, told apart below */
        }
        char *bigger = realloc(buf, cap * 2);
        if (bigger == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    bool io_error = ferror(f) != 0;
    if (!use_stdin) {
        fclose(f);
    }
    if (buf == NULL || io_error) {
        snprintf(err, err_size, "cannot read '%s': %s", path,
                 buf == NULL ? "out of memory" : "I/O error");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

void wt_json_write_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; c && *c; c++) {
        if (*c == '"' || *c == '\\') {
            fprintf(f, "\\%c", *c);
        } else if (*c < 0x20) {
            fprintf(f, "\\u%04x", *c);
        } else {
            fputc(*c, f);
        }
    }
    fputc('"', f);
}
