/* report.c: result strings, the thread-local last-error message, and the default assert. */
#include "report.h"

#include "atomic.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Detailed message of the last failure on this thread (weft_last_error). */
static _Thread_local char last_error[512];

const char *weft_version(void) { return WEFT_VERSION_STRING; }

const char *weft_result_name(weft_result_t r) {
    switch (r) {
#define WEFT__RESULT_NAME(name, value, str) \
    case WEFT_##name:                       \
        return "WEFT_" #name;
        WEFT_RESULT_LIST(WEFT__RESULT_NAME)
#undef WEFT__RESULT_NAME
    default:
        return "WEFT_UNKNOWN";
    }
}

const char *weft_result_str(weft_result_t r) {
    switch (r) {
#define WEFT__RESULT_STR(name, value, str) \
    case WEFT_##name:                      \
        return str;
        WEFT_RESULT_LIST(WEFT__RESULT_STR)
#undef WEFT__RESULT_STR
    default:
        return "unknown result";
    }
}

const char *weft_last_error(void) { return last_error; }

/* Process-wide, set rarely (at start-up, by a test or a debugger session): relaxed is enough,
 * a thread that misses a change reports as before. */
static weft_atomic_bool contract_abort;

void weft_set_contract_abort(bool on) { weft_atomic_store_relaxed(&contract_abort, on); }

bool weft__contract_aborts(void) { return weft_atomic_load_relaxed(&contract_abort); }

weft_result_t weft__report(const weft_logger_t *log, weft_log_level_t level, weft_result_t code,
                           const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    weft_log_level_t most = log ? log->level : WEFT_LOG_ERROR;
    if (level > most) {
        return code;
    }
    if (log && log->fn) {
        log->fn(level, code, last_error, file, line, log->user);
    } else if (WEFT_DEBUG >= 1) {
        fprintf(stderr, "weft: %s: %s (%s:%d)\n", weft_result_name(code), last_error, file, line);
    }
    return code;
}

weft_result_t weft__null_arg(const char *fn, const char *what, const char *file, int line) {
    (void)weft__fail(NULL, WEFT_EINVAL, file, line, "%s: %s is NULL", fn, what);
    if (weft__contract_aborts()) {
        weft_assert_fail("non-NULL argument", weft_last_error(), file, line, fn);
    }
    return WEFT_EINVAL;
}

void weft_assert_fail(const char *expr, const char *msg, const char *file, int line,
                      const char *func) {
    /* No allocation: the heap may be what is broken. */
    fprintf(stderr, "weft: assertion failed: %s\n  %s\n  at %s:%d in %s()\n", expr, msg ? msg : "",
            file, line, func);
    fflush(stderr);
    abort();
}
