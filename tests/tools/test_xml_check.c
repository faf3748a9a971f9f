/* tests/tools/test_xml_check.c: the XML checker itself — it must reject each kind of
 * malformed document, or the SVG tests that rely on it would prove nothing. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include "xml_check.h"

TestSuite(xml_check, .timeout = 10);

static int check(const char *doc, xml_stats_t *st) {
    char err[200];
    int rc = xml_check(doc, strlen(doc), st, err, sizeof err);
    if (rc != 0) {
        cr_log_info("rejected: %s", err);
    }
    return rc;
}

Test(xml_check, accepts_a_small_svg_and_counts_its_elements) {
    xml_stats_t st;
    const char *doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" width='10'>"
                      "<!-- a comment --><g><rect x=\"1\"/><rect x=\"2\"><title>a &amp; b &#233; "
                      "&#x41;</title></rect></g><text>µs</text></svg>\n";
    cr_assert(eq(int, check(doc, &st), 0));
    cr_expect(eq(str, st.root, "svg"));
    cr_expect(eq(sz, xml_count(&st, "rect"), 2));
    cr_expect(eq(sz, xml_count(&st, "text"), 1));
    cr_expect(eq(sz, xml_count(&st, "circle"), 0));
    cr_expect(eq(sz, st.elements, 6));
    cr_expect(eq(sz, st.max_depth, 4)); /* svg > g > rect > title */
    cr_expect(st.text_chars > 5, "st.text_chars > 5 (%zu vs %zu)", (size_t)(st.text_chars),
              (size_t)(5));
}

Test(xml_check, rejects_mismatched_and_unclosed_tags) {
    cr_expect(ne(int, check("<svg><g></svg>", NULL), 0));
    cr_expect(ne(int, check("<svg><g>", NULL), 0));
    cr_expect(ne(int, check("<svg></g></svg>", NULL), 0));
    cr_expect(ne(int, check("<svg/><svg/>", NULL), 0));
    cr_expect(ne(int, check("", NULL), 0));
}

Test(xml_check, rejects_raw_markup_characters_in_text_and_attributes) {
    cr_expect(ne(int, check("<a>x < y</a>", NULL), 0));
    cr_expect(ne(int, check("<a>x & y</a>", NULL), 0));
    cr_expect(ne(int, check("<a>&nbsp;</a>", NULL), 0));
    cr_expect(ne(int, check("<a b=\"<\"/>", NULL), 0));
    cr_expect(ne(int, check("<a b=\"x\" b=\"y\"/>", NULL), 0));
    cr_expect(ne(int, check("<a b=x/>", NULL), 0));
    cr_expect(ne(int, check("<a>]]></a>", NULL), 0));
}

Test(xml_check, rejects_bad_encoding_and_control_characters) {
    cr_expect(ne(int, check("<a>\xC3</a>", NULL), 0));
    cr_expect(ne(int, check("<a>\xC0\xAF</a>", NULL), 0)); /* overlong '/' */
    cr_expect(ne(int, check("<a>\x01</a>", NULL), 0));
}

Test(xml_check, rejects_text_outside_the_root_and_misplaced_declarations) {
    cr_expect(ne(int, check("hello<a/>", NULL), 0));
    cr_expect(ne(int, check("<a/>tail", NULL), 0));
    cr_expect(ne(int, check("<a/><?xml version=\"1.0\"?>", NULL), 0));
    cr_expect(ne(int, check("<a><!-- x -- y --></a>", NULL), 0));
    cr_expect(eq(int, check("<a/>\n<!-- trailing comment -->\n", NULL), 0));
    cr_expect(eq(int,
                 check("<?xml version=\"1.0\"?>\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG "
                       "1.1//EN\" \"x.dtd\" [ <!ENTITY e \"v\"> ]>\n<svg/>",
                       NULL),
                 0));
    cr_expect(ne(int, check("<a><!DOCTYPE a></a>", NULL), 0));
    cr_expect(ne(int, check("<!DOCTYPE a", NULL), 0));
}
