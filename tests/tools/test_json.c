/* tests/tools/test_json.c: the tools' JSON reader and the Chrome trace loader built on it. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "json_trace.h"

TestSuite(json, .timeout = 10);
TestSuite(json_trace, .timeout = 10);

static wt_json_doc_t *parse(const char *text, unsigned flags) {
    char err[160] = "";
    wt_json_doc_t *doc = wt_json_parse(text, strlen(text), flags, err, sizeof err);
    if (doc == NULL) {
        cr_log_info("parse error: %s", err);
    }
    return doc;
}

Test(json, parses_nested_values_and_decodes_escapes) {
    wt_json_doc_t *doc = parse("{\"a\": [1, -2.5e3, true, false, null], "
                               "\"s\": \"q\\\"\\n\\u00e9\\ud83d\\ude00\", \"o\": {}}",
                               0);
    cr_assert(not(eq(ptr, doc, NULL)));
    const wt_json_t *root = wt_json_root(doc);
    cr_assert(eq(int, root->type, WT_JSON_OBJECT));
    cr_expect(eq(sz, root->length, 3));
    const wt_json_t *a = wt_json_get(root, "a");
    cr_assert(eq(sz, a->length, 5));
    cr_expect(eq(dbl, a->child->number, 1.0));
    cr_expect(eq(dbl, a->child->next->number, -2500.0));
    cr_expect(eq(int, a->child->next->next->boolean, 1));
    cr_expect(eq(int, a->child->next->next->next->boolean, 0));
    cr_expect(eq(int, a->child->next->next->next->next->type, WT_JSON_NULL));
    cr_expect(eq(str, (char *)wt_json_string(wt_json_get(root, "s"), ""),
                 "q\"\n\xC3\xA9\xF0\x9F\x98\x80"));
    cr_expect(eq(int, wt_json_get(root, "o")->type, WT_JSON_OBJECT));
    cr_expect(eq(ptr, (void *)wt_json_get(root, "missing"), NULL));
    wt_json_free(doc);
}

Test(json, accepts_comments_and_trailing_commas) {
    wt_json_doc_t *doc = parse("// header\n{\"x\": [1, 2,], /* note */ \"y\": 3,}", 0);
    cr_assert(not(eq(ptr, doc, NULL)));
    cr_expect(eq(sz, wt_json_get(wt_json_root(doc), "x")->length, 2));
    cr_expect(eq(dbl, wt_json_number(wt_json_get(wt_json_root(doc), "y"), 0), 3.0));
    wt_json_free(doc);
}

Test(json, rejects_malformed_input_with_an_offset) {
    const char *bad[] = {"{\"a\" 1}", "[1 2]", "{\"a\":}",  "[1,",  "\"open",
                         "tru",       "{} x",  "[\"\\q\"]", "{1:2}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[160] = "";
        wt_json_doc_t *doc = wt_json_parse(bad[i], strlen(bad[i]), 0, err, sizeof err);
        cr_expect(eq(ptr, doc, NULL), "accepted malformed input %s", bad[i]);
        cr_expect(eq(int, strncmp(err, "offset ", 7), 0), "message '%s' lacks an offset", err);
        wt_json_free(doc);
    }
}

Test(json, truncation_tolerance_keeps_only_whole_elements) {
    wt_json_doc_t *doc = parse("{\"traceEvents\":[{\"n\":1},{\"n\":2},{\"n\":3,\"ts\":4",
                               WT_JSON_TOLERATE_TRUNCATION);
    cr_assert(not(eq(ptr, doc, NULL)));
    const wt_json_t *list = wt_json_get(wt_json_root(doc), "traceEvents");
    cr_assert(not(eq(ptr, (void *)list, NULL)));
    cr_expect(eq(sz, list->length, 2));
    wt_json_free(doc);
    /* Strict mode rejects the same text. */
    cr_expect(eq(ptr, parse("[{\"n\":1},{\"n\":2", 0), NULL));
}

Test(json, deep_nesting_is_rejected_instead_of_overflowing_the_stack) {
    static char deep[4096];
    memset(deep, '[', sizeof deep - 1);
    cr_expect(eq(ptr, parse(deep, 0), NULL));
}

static const char *const trace_text =
    "{\"traceEvents\":["
    "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":7,\"args\":{\"name\":\"weft-worker-"
    "1\"}},"
    "{\"name\":\"movement\",\"cat\":\"system\",\"ph\":\"X\",\"ts\":100,\"dur\":50,\"pid\":1,"
    "\"tid\":7,"
    "\"args\":{\"chunk\":3,\"rows\":4096}},"
    "{\"name\":\"grid\",\"ph\":\"B\",\"ts\":10,\"pid\":1,\"tid\":2},"
    "{\"name\":\"grid\",\"ph\":\"E\",\"ts\":40,\"pid\":1,\"tid\":2},"
    "{\"name\":\"counter\",\"ph\":\"C\",\"ts\":5,\"pid\":1,\"tid\":2,\"args\":{\"v\":1}},"
    "{\"name\":\"open\",\"ph\":\"B\",\"ts\":60,\"pid\":1,\"tid\":2}"
    "]}";

Test(json_trace, loads_complete_and_paired_events_and_names_lanes) {
    wt_trace_t t;
    char err[160] = "";
    int rc = wt_trace_load(trace_text, strlen(trace_text), &t, err, sizeof err);
    cr_assert(eq(int, rc, 0), "%s", err);
    cr_assert(eq(sz, t.count, 2));
    cr_expect(eq(sz, t.skipped, 2)); /* the counter, and the begin without an end */
    cr_assert(eq(sz, t.lane_count, 2));
    /* Sorted by lane: tid 2 (grid) before tid 7 (movement). */
    cr_expect(eq(str, (char *)t.events[0].name, "grid"));
    cr_expect(eq(dbl, t.events[0].dur, 30.0));
    cr_expect(eq(str, (char *)t.events[1].name, "movement"));
    cr_expect(eq(str, (char *)t.events[1].args, "chunk=3, rows=4096"));
    cr_expect(eq(str, (char *)t.lanes[1].name, "weft-worker-1"));
    cr_expect(eq(ptr, (void *)t.lanes[0].name, NULL));
    cr_expect(eq(sz, wt_trace_lane_of(&t, &t.events[1]), 1));
    wt_trace_free(&t);
}

Test(json_trace, rejects_documents_that_are_not_traces) {
    wt_trace_t t;
    char err[160] = "";
    const char *not_trace = "{\"suite\":\"jobs\"}";
    cr_expect(eq(int, wt_trace_load(not_trace, strlen(not_trace), &t, err, sizeof err), -1));
    cr_expect(ne(int, (int)strlen(err), 0));
}

/* Corrupted and truncated traces must be rejected or loaded, never crash or read out of bounds
 * (the sanitizer builds make an overrun fatal). Randomised: the seed is printed. */
Test(json_trace, survives_random_corruption_and_truncation) {
    unsigned seed = (unsigned)time(NULL);
    cr_log_info("seed %u", seed);
    srand(seed);
    const size_t len = strlen(trace_text);
    char *buf = malloc(len + 1);
    cr_assert(buf != NULL);
    static const char alphabet[] = "{}[]\",:\\/*0123456789.eE+-tfnu \n";
    size_t loaded = 0;
    for (int round = 0; round < 3000; round++) {
        memcpy(buf, trace_text, len + 1);
        size_t n = round % 3 == 0 ? (size_t)rand() % (len + 1) : len; /* truncate a third */
        int flips = 1 + rand() % 4;
        for (int k = 0; k < flips && n > 0; k++) {
            buf[(size_t)rand() % n] = alphabet[(size_t)rand() % (sizeof alphabet - 1)];
        }
        wt_trace_t t;
        char err[160];
        if (wt_trace_load(buf, n, &t, err, sizeof err) == 0) {
            for (size_t i = 0; i < t.count; i++) {
                cr_assert(t.events[i].name != NULL && t.events[i].dur >= 0);
                cr_assert(wt_trace_lane_of(&t, &t.events[i]) < t.lane_count);
            }
            loaded++;
            wt_trace_free(&t);
        }
    }
    free(buf);
    cr_log_info("%zu of 3000 corrupted traces still loaded", loaded);
    cr_expect(loaded > 0, "loaded > 0 (%zu vs %zu)", (size_t)(loaded),
              (size_t)(0)); /* truncations keep the whole events: some must load */
}
