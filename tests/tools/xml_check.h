/* tests/tools/xml_check.h: a small XML 1.0 well-formedness checker for the tools' SVG output.
 *
 * Checks what a browser's XML parser rejects: one root element, properly nested and matching
 * tags, quoted attributes without duplicates or raw '<', only the five predefined entities or
 * numeric references, no stray '<' or '&' in text, well-formed comments / processing
 * instructions, valid UTF-8. Not checked: the inside of a DOCTYPE (Graphviz writes one; it is
 * skipped, and must come before the root) and namespace binding beyond the root's xmlns. It also counts elements by name so tests can assert content. */
#ifndef WEFT_TESTS_XML_CHECK_H
#define WEFT_TESTS_XML_CHECK_H

#include <stddef.h>

#define XML_MAX_NAMES 32

typedef struct xml_stats {
    char root[32];                 /* name of the root element */
    size_t elements;               /* element count, root included */
    size_t text_chars;             /* non-whitespace characters of text content */
    size_t max_depth;              /* deepest nesting */
    char names[XML_MAX_NAMES][24]; /* distinct element names seen (first XML_MAX_NAMES) */
    size_t counts[XML_MAX_NAMES];  /* occurrences of each name */
    size_t name_count;             /* entries used in names/counts */
} xml_stats_t;

/* Check text[0..len). Returns 0 if well-formed (filling *stats if non-NULL), else -1 with a
 * message naming the line and the problem in err. */
int xml_check(const char *text, size_t len, xml_stats_t *stats, char *err, size_t err_size);

/* Occurrences of element `name` recorded in stats (0 if never seen). */
size_t xml_count(const xml_stats_t *stats, const char *name);

/* Read and check a file; same results as xml_check(), plus -1 if it cannot be read. */
int xml_check_file(const char *path, xml_stats_t *stats, char *err, size_t err_size);

#endif /* WEFT_TESTS_XML_CHECK_H */
