/* tests/tools/xml_check.c: XML well-formedness checker used by the tools tests (see xml_check.h).
 *
 * DESIGN: a single forward scan with an explicit stack of open element names (offsets into the
 * input), so deep documents cannot overflow the C stack. Encoding is checked first in its own
 * pass (valid UTF-8, no control characters XML 1.0 forbids); the structural scan then only deals
 * with ASCII syntax. Errors report the 1-based line of the offending byte. */
#define _POSIX_C_SOURCE 200809L
#include "xml_check.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STACK 256

typedef struct scan {
    const char *s;   /* input */
    size_t n;        /* input length */
    size_t i;        /* cursor */
    char *err;       /* message buffer */
    size_t err_size; /* its size */
    xml_stats_t *st; /* statistics being filled */
} scan_t;

static int fail(scan_t *x, const char *fmt, ...) {
    size_t line = 1;
    for (size_t k = 0; k < x->i && k < x->n; k++) {
        line += x->s[k] == '\n';
    }
    int m = snprintf(x->err, x->err_size, "line %zu: ", line);
    if (m > 0 && (size_t)m < x->err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(x->err + m, x->err_size - (size_t)m, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static bool starts(const scan_t *x, const char *lit) {
    size_t l = strlen(lit);
    return x->n - x->i >= l && memcmp(x->s + x->i, lit, l) == 0;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void skip_space(scan_t *x) {
    while (x->i < x->n && is_space(x->s[x->i])) {
        x->i++;
    }
}

static bool name_start(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || c >= 0x80;
}

static bool name_char(unsigned char c) {
    return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* Valid UTF-8 without overlongs or surrogates, and no C0 controls other than tab, LF, CR. */
static int check_encoding(scan_t *x) {
    const unsigned char *u = (const unsigned char *)x->s;
    for (size_t k = 0; k < x->n;) {
        unsigned char c = u[k];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (len == 0 || k + len > x->n) {
            x->i = k;
            return fail(x, "invalid UTF-8 byte 0x%02x", c);
        }
        unsigned cp = len == 1 ? c : (unsigned)(c & (0x7F >> len));
        for (size_t j = 1; j < len; j++) {
            if ((u[k + j] & 0xC0) != 0x80) {
                x->i = k;
                return fail(x, "invalid UTF-8 continuation");
            }
            cp = (cp << 6) | (u[k + j] & 0x3Fu);
        }
        static const unsigned min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[len] || (cp >= 0xD800 && cp < 0xE000) || cp > 0x10FFFF ||
            (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r')) {
            x->i = k;
            return fail(x, "character U+%04X not allowed in XML", cp);
        }
        k += len;
    }
    return 0;
}

/* At '&': one of the five predefined entities or a numeric character reference. */
static int check_reference(scan_t *x) {
    static const char *const named[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    for (size_t k = 0; k < 5; k++) {
        if (starts(x, named[k])) {
            x->i += strlen(named[k]);
            return 0;
        }
    }
    if (starts(x, "&#")) {
        size_t j = x->i + 2;
        bool hex = j < x->n && x->s[j] == 'x';
        j += hex;
        size_t digits = 0;
        while (j < x->n &&
               (hex ? strchr("0123456789abcdefABCDEF", x->s[j]) != NULL
                    : (x->s[j] >= '0' && x->s[j] <= '9')) &&
               x->s[j] != '\0') {
            j++;
            digits++;
        }
        if (digits > 0 && j < x->n && x->s[j] == ';') {
            x->i = j + 1;
            return 0;
        }
    }
    return fail(x, "bad entity or stray '&'");
}

static int scan_name(scan_t *x, size_t *len) {
    size_t start = x->i;
    if (x->i >= x->n || !name_start((unsigned char)x->s[x->i])) {
        return fail(x, "expected a name");
    }
    while (x->i < x->n && name_char((unsigned char)x->s[x->i])) {
        x->i++;
    }
    *len = x->i - start;
    return 0;
}

/* Comments, processing instructions and CDATA: skip to the terminator, checking the rules. */
static int scan_special(scan_t *x) {
    const char *end = NULL;
    if (starts(x, "<!--")) {
        x->i += 4;
        end = "-->";
    } else if (starts(x, "<?")) {
        x->i += 2;
        end = "?>";
    } else if (starts(x, "<![CDATA[")) {
        x->i += 9;
        end = "]]>";
    } else if (starts(x, "<!DOCTYPE")) {
        /* Graphviz writes one. Skipped, internal subset included; its contents are not checked
         * (the placement rule — before the root only — is checked by the caller). */
        int brackets = 0;
        for (x->i += 9; x->i < x->n; x->i++) {
            char c = x->s[x->i];
            brackets += (c == '[') - (c == ']');
            if (c == '>' && brackets == 0) {
                x->i++;
                return 0;
            }
        }
        return fail(x, "unterminated DOCTYPE");
    } else {
        return fail(x, "unknown markup declaration");
    }
    size_t el = strlen(end);
    while (x->i < x->n && !starts(x, end)) {
        if (el == 3 && end[0] == '-' && starts(x, "--")) {
            return fail(x, "'--' inside a comment");
        }
        x->i++;
    }
    if (x->i >= x->n) {
        return fail(x, "unterminated '%s' section", end);
    }
    x->i += el;
    return 0;
}

static void count_element(xml_stats_t *st, const char *name, size_t len) {
    st->elements++;
    for (size_t k = 0; k < st->name_count; k++) {
        if (strlen(st->names[k]) == len && memcmp(st->names[k], name, len) == 0) {
            st->counts[k]++;
            return;
        }
    }
    if (st->name_count < XML_MAX_NAMES && len < sizeof st->names[0]) {
        memcpy(st->names[st->name_count], name, len);
        st->names[st->name_count][len] = '\0';
        st->counts[st->name_count++] = 1;
    }
}

/* A start tag (cursor at '<'): attributes checked, duplicates rejected. Sets *empty for '/>'. */
static int scan_start_tag(scan_t *x, size_t *name_at, size_t *name_len, bool *empty) {
    x->i++;
    *name_at = x->i;
    if (scan_name(x, name_len) != 0) {
        return -1;
    }
    size_t attr_at[64];
    size_t attr_len[64];
    size_t nattr = 0;
    for (;;) {
        size_t before = x->i;
        skip_space(x);
        if (starts(x, "/>") || starts(x, ">")) {
            *empty = x->s[x->i] == '/';
            x->i += *empty ? 2 : 1;
            return 0;
        }
        if (x->i == before) {
            return fail(x, "expected whitespace, '>' or '/>' in a tag");
        }
        size_t at = x->i;
        size_t len = 0;
        if (scan_name(x, &len) != 0) {
            return -1;
        }
        for (size_t k = 0; k < nattr; k++) {
            if (attr_len[k] == len && memcmp(x->s + attr_at[k], x->s + at, len) == 0) {
                return fail(x, "duplicate attribute '%.*s'", (int)len, x->s + at);
            }
        }
        if (nattr < 64) {
            attr_at[nattr] = at;
            attr_len[nattr++] = len;
        }
        skip_space(x);
        if (x->i >= x->n || x->s[x->i] != '=') {
            return fail(x, "attribute without '='");
        }
        x->i++;
        skip_space(x);
        char q = x->i < x->n ? x->s[x->i] : '\0';
        if (q != '"' && q != '\'') {
            return fail(x, "unquoted attribute value");
        }
        for (x->i++; x->i < x->n && x->s[x->i] != q;) {
            if (x->s[x->i] == '<') {
                return fail(x, "'<' inside an attribute value");
            }
            if (x->s[x->i] == '&' ? check_reference(x) != 0 : (x->i++, 0)) {
                return -1;
            }
        }
        if (x->i >= x->n) {
            return fail(x, "unterminated attribute value");
        }
        x->i++;
    }
}

int xml_check(const char *text, size_t len, xml_stats_t *stats, char *err, size_t err_size) {
    xml_stats_t local;
    scan_t x = {
        .s = text, .n = len, .err = err, .err_size = err_size, .st = stats ? stats : &local};
    memset(x.st, 0, sizeof *x.st);
    if (check_encoding(&x) != 0) {
        return -1;
    }
    if (starts(&x, "\xEF\xBB\xBF")) {
        x.i += 3;
    }
    size_t stack_at[MAX_STACK];
    size_t stack_len[MAX_STACK];
    size_t depth = 0;
    bool root_done = false;
    while (x.i < x.n) {
        char c = x.s[x.i];
        if (c != '<') {
            if (depth == 0 && !is_space(c)) {
                return fail(&x, "text outside the root element");
            }
            if (c == '&') {
                if (check_reference(&x) != 0) {
                    return -1;
                }
                x.st->text_chars++;
                continue;
            }
            if (starts(&x, "]]>")) {
                return fail(&x, "']]>' in text");
            }
            x.st->text_chars += !is_space(c);
            x.i++;
        } else if (starts(&x, "<?xml ") && x.i != 0 && !(x.i == 3 && text[0] == '\xEF')) {
            return fail(&x, "XML declaration not at the start");
        } else if (starts(&x, "<!DOCTYPE") && (depth > 0 || root_done || x.st->elements > 0)) {
            return fail(&x, "DOCTYPE after the root element started");
        } else if (starts(&x, "<!") || starts(&x, "<?")) {
            if (scan_special(&x) != 0) {
                return -1;
            }
        } else if (starts(&x, "</")) {
            x.i += 2;
            size_t at = x.i;
            size_t nl = 0;
            if (scan_name(&x, &nl) != 0) {
                return -1;
            }
            if (depth == 0 || stack_len[depth - 1] != nl ||
                memcmp(x.s + stack_at[depth - 1], x.s + at, nl) != 0) {
                return fail(&x, "end tag '%.*s' does not match the open element", (int)nl,
                            x.s + at);
            }
            skip_space(&x);
            if (x.i >= x.n || x.s[x.i] != '>') {
                return fail(&x, "expected '>' after end tag name");
            }
            x.i++;
            depth--;
            root_done = depth == 0;
        } else {
            if (root_done) {
                return fail(&x, "second root element");
            }
            size_t at = 0;
            size_t nl = 0;
            bool empty = false;
            if (scan_start_tag(&x, &at, &nl, &empty) != 0) {
                return -1;
            }
            count_element(x.st, x.s + at, nl);
            if (depth == 0) {
                snprintf(x.st->root, sizeof x.st->root, "%.*s", (int)nl, x.s + at);
            }
            if (empty) {
                root_done = root_done || depth == 0;
                continue;
            }
            if (depth == MAX_STACK) {
                return fail(&x, "nesting deeper than %d", MAX_STACK);
            }
            stack_at[depth] = at;
            stack_len[depth++] = nl;
            x.st->max_depth = depth > x.st->max_depth ? depth : x.st->max_depth;
        }
    }
    if (depth > 0) {
        return fail(&x, "end of input with %zu open element(s), innermost '%.*s'", depth,
                    (int)stack_len[depth - 1], x.s + stack_at[depth - 1]);
    }
    if (!root_done) {
        return fail(&x, "no root element");
    }
    return 0;
}

size_t xml_count(const xml_stats_t *stats, const char *name) {
    for (size_t k = 0; k < stats->name_count; k++) {
        if (strcmp(stats->names[k], name) == 0) {
            return stats->counts[k];
        }
    }
    return 0;
}

int xml_check_file(const char *path, xml_stats_t *stats, char *err, size_t err_size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, err_size, "cannot open %s", path);
        return -1;
    }
    size_t cap = 1 << 16;
    size_t n = 0;
    char *buf = malloc(cap);
    while (buf != NULL && (n += fread(buf + n, 1, cap - n, f)) == cap) {
        char *g = realloc(buf, cap * 2);
        if (g == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = g;
        cap *= 2;
    }
    fclose(f);
    if (buf == NULL) {
        snprintf(err, err_size, "out of memory reading %s", path);
        return -1;
    }
    int rc = xml_check(buf, n, stats, err, err_size);
    free(buf);
    return rc;
}
