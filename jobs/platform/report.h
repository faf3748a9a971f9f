/* report.h: internal error reporting shared by jobs/ and src/ (not installed).
 *
 * A failure is reported once, where it is detected: the detailed message goes to the
 * thread-local slot read by weft_last_error() and to the instance's logger hook. */
#ifndef WEFT_PLATFORM_REPORT_H
#define WEFT_PLATFORM_REPORT_H

#include "weft/base.h"

/* Record `code` with a printf-style message in weft_last_error() and hand it to `log` when
 * `level` is within log->level (`log` may be NULL: errors to stderr in debug builds, silent
 * otherwise). Returns `code`, so call sites read `return WEFT__FAIL(log, WEFT_ENOMEM, "...");`.
 * Thread: any. WEFT_API: src/ calls it across the library boundary when both are shared
 * libraries. */
WEFT_API weft_result_t weft__report(const weft_logger_t *log, weft_log_level_t level,
                                    weft_result_t code, const char *file, int line, const char *fmt,
                                    ...) WEFT_PRINTF(6, 7);

/* A failure: reported at WEFT_LOG_ERROR. */
#define weft__fail(log, code, file, line, ...) \
    weft__report((log), WEFT_LOG_ERROR, (code), (file), (line), __VA_ARGS__)
#define WEFT__FAIL(log, code, ...) weft__fail((log), (code), __FILE__, __LINE__, __VA_ARGS__)

/* An outcome the API documents as expected (WEFT_EEXIST from adding a component the entity
 * has, a command skipped at apply): reported at WEFT_LOG_DEBUG, which the default level does
 * not deliver. */
#define WEFT__NOTE(log, code, ...) \
    weft__report((log), WEFT_LOG_DEBUG, (code), __FILE__, __LINE__, __VA_ARGS__)

/* True when weft_set_contract_abort(true) asked broken contracts to abort. Thread: any. */
WEFT_API bool weft__contract_aborts(void);

/* A broken caller contract, in every build: records the message (weft_last_error, the
 * logger) and returns `code` from the enclosing function, which documents it. Only when the
 * program opted in with weft_set_contract_abort(true) does it abort instead, naming the
 * culprit. Debug builds add checks; they never turn a documented error into an abort. */
#define WEFT__CONTRACT(cond, log, code, ...)                                              \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            weft_result_t weft__code_ =                                                   \
                weft__fail((log), (code), __FILE__, __LINE__, __VA_ARGS__);               \
            if (weft__contract_aborts()) {                                                \
                weft_assert_fail(#cond, weft_last_error(), __FILE__, __LINE__, __func__); \
            }                                                                             \
            return weft__code_;                                                           \
        }                                                                                 \
    } while (0)

/* A required pointer argument `what` of `fn` is NULL: reported as WEFT_EINVAL ("fn: what is
 * NULL") like any broken contract (aborting instead when opted in). Returns WEFT_EINVAL.
 * Thread: any. */
WEFT_API weft_result_t weft__null_arg(const char *fn, const char *what, const char *file, int line);

/* Return `ret` from the enclosing function when `ptr` is NULL, after weft__null_arg. For the
 * handles every call starts from (world, command buffer, view, query): a NULL one is an
 * invalid handle in every build, never a crash. */
#define WEFT__NONNULL(ptr, ret)                                       \
    do {                                                              \
        if ((ptr) == NULL) {                                          \
            (void)weft__null_arg(__func__, #ptr, __FILE__, __LINE__); \
            return ret;                                               \
        }                                                             \
    } while (0)

/* Internal invariants: level 2 and expensive checks: level 3. */
#if WEFT_DEBUG >= 2
#define weft_assert_internal(cond) \
    ((cond) ? (void)0 : weft_assert_fail(#cond, "internal invariant", __FILE__, __LINE__, __func__))
#else
#define weft_assert_internal(cond) ((void)0)
#endif
#if WEFT_DEBUG >= 3
#define weft_assert_expensive(cond) weft_assert_internal(cond)
#else
#define weft_assert_expensive(cond) ((void)0)
#endif

#endif /* WEFT_PLATFORM_REPORT_H */
