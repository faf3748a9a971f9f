/* weft/base.h: version, export macro, result codes, asserts and the per-instance hooks
 * (allocator, logger) shared by the job system and the ECS.
 *
 * Thread: everything here is safe from any thread. */
#ifndef WEFT_BASE_H
#define WEFT_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- export ------------------------------------------------------------ >>export */

#if defined(_WIN32)
#define WEFT_API
#else
#define WEFT_API __attribute__((visibility("default")))
#endif

/* C11 and C++ spell alignment and compile-time checks differently; the public headers use
 * these so they compile as both (a C++ engine includes them directly). */
#ifdef __cplusplus
#define WEFT_ALIGNAS(n) alignas(n)
#define WEFT_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define WEFT_ALIGNAS(n) _Alignas(n)
#define WEFT_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define WEFT_PRINTF(fmt_idx, args_idx) __attribute__((format(printf, fmt_idx, args_idx)))
#define WEFT_NORETURN __attribute__((noreturn))
#else
#define WEFT_PRINTF(fmt_idx, args_idx)
#define WEFT_NORETURN
#endif

/* Returns WEFT_VERSION_STRING of the library actually linked. */
WEFT_API const char *weft_version(void);

/* ---- results ----------------------------------------------------------- >>result */

/* One list feeds the enum, weft_result_name() and weft_result_str().
 * WEFT_OK is 0 and every failure is negative. */
#define WEFT_RESULT_LIST(X)                                  \
    X(OK, 0, "success")                                      \
    X(EINVAL, -1, "invalid argument or broken contract")     \
    X(ENOMEM, -2, "out of memory")                           \
    X(ESTALE, -3, "null or stale handle")                    \
    X(EEXIST, -4, "already exists")                          \
    X(ENOENT, -5, "not found")                               \
    X(ECAPACITY, -6, "capacity exhausted")                   \
    X(ESHUTDOWN, -7, "the job system is shutting down")      \
    X(EDEADLK, -8, "the wait would deadlock")                \
    X(ETHREAD, -9, "thread creation failed")                 \
    X(ECYCLE, -10, "dependency cycle")                       \
    X(ECONFLICT, -11, "conflicting declaration")             \
    X(ECORRUPT, -12, "corrupt or truncated data")            \
    X(EVERSION, -13, "unsupported format or schema version") \
    X(EMISMATCH, -14, "component layout mismatch")           \
    X(EIO, -15, "I/O error")                                 \
    X(ESTATE, -16, "call not allowed in the current state")  \
    X(EACCESS, -17, "access not declared by the system")

typedef enum weft_result {
#define WEFT__RESULT_ENUM(name, value, str) WEFT_##name = (value),
    WEFT_RESULT_LIST(WEFT__RESULT_ENUM)
#undef WEFT__RESULT_ENUM
        WEFT_RESULT_MIN = -17 /* the most negative code; keep in step with the list */
} weft_result_t;

/* "WEFT_ENOMEM" for WEFT_ENOMEM; "WEFT_UNKNOWN" for a value not in the list. Never NULL. */
WEFT_API const char *weft_result_name(weft_result_t r);
/* "out of memory" for WEFT_ENOMEM; "unknown result" otherwise. Never NULL. */
WEFT_API const char *weft_result_str(weft_result_t r);

/* How calls report, one rule for the whole API:
 * - A call that can fail (it allocates, builds, validates a desc, does I/O, or changes the
 *   world) returns weft_result_t and hands results back through out-parameters; on failure
 *   its out-parameters hold their neutral value (0, NULL, an invalid handle) and nothing else
 *   changed.
 * - A getter that cannot fail returns its value directly: counts (`_count`: how many objects
 *   of a kind, e.g. weft_entity_count; `_rows`: rows of a pool, group or query, e.g.
 *   weft_component_rows), handles, pointers, booleans. Given an invalid or stale handle it
 *   returns the neutral value (0, NULL, false, an invalid handle); it never aborts and
 *   writes nothing.
 * - A NULL world, command buffer, view or query is an invalid handle in every build: a call
 *   returning weft_result_t returns WEFT_EINVAL, a getter its neutral value, a void call does
 *   nothing; each reports "<function>: <argument> is NULL" (weft_last_error()).
 * - A main-thread-only call (weft/world.h) made from another thread, from inside a system or
 *   from inside a component hook returns WEFT_ESTATE in debug builds, naming the function and
 *   the thread; release builds do not look.
 * - Lists in descs are fixed arrays that end at their first zero entry (weft/query.h). */

/* The detailed message of the last failure reported on the calling thread, e.g.
 * "weft_component_add: entity 0x100000007 already has component 'Position'".
 * Valid until the next failing call on this thread; "" when none. Never NULL. */
WEFT_API const char *weft_last_error(void);

/* A broken caller contract (a NULL where the header forbids it, a bad desc, a call from a
 * thread that may not make it) returns its documented error code in every build. With
 * `on`, it aborts instead, after reporting (for a debugger stop at the first misuse).
 * Process-wide; off by default. Thread: any. */
WEFT_API void weft_set_contract_abort(bool on);

/* ---- hooks -------------------------------------------------------------- >>hooks */

/* Allocator hook. Set both functions or neither (zero means malloc/free).
 * `alloc` returns memory aligned to `align` (a power of two) or NULL; `free` receives the
 * size that was asked for. Called from any thread that allocates on the instance's behalf. */
typedef struct weft_allocator {
    void *(*alloc)(size_t size, size_t align, void *user); /* NULL: aligned malloc */
    void (*free)(void *ptr, size_t size, void *user);      /* NULL: free */
    void *user;                                            /* passed back unchanged */
} weft_allocator_t;

/* How much a report matters. ERROR: a call failed because the caller broke its contract or
 * a resource ran out. DEBUG: an outcome the API documents as expected, e.g. a command skipped
 * at apply because its target died first, or WEFT_EEXIST/WEFT_ENOENT from adding a component
 * an entity has or removing one it lacks. */
typedef enum weft_log_level {
    WEFT_LOG_ERROR = 0,
    WEFT_LOG_WARN = 1,
    WEFT_LOG_INFO = 2,
    WEFT_LOG_DEBUG = 3,
} weft_log_level_t;

/* Logger hook: one call per reported failure or notable event at or above `level`'s
 * importance. May be called from any thread; must not call back into weft. msg is valid only
 * for the call. weft_last_error() holds every report's message whatever the level. */
typedef struct weft_logger {
    void (*fn)(weft_log_level_t level, weft_result_t code, const char *msg, const char *file,
               int line, void *user); /* NULL: stderr when WEFT_DEBUG>=1, else silent */
    void *user;                       /* passed back unchanged */
    weft_log_level_t level; /* the most verbose level delivered; 0 (WEFT_LOG_ERROR): errors
                               only. Applies to fn and to the stderr default alike */
} weft_logger_t;

/* ---- asserts ------------------------------------------------------------ >>assert */

/* Contract asserts fire when WEFT_DEBUG >= 1. Override WEFT_ASSERT before including weft
 * headers (in your build) to route them elsewhere; the default prints expression, file,
 * line and function, then aborts without allocating. */
WEFT_API WEFT_NORETURN void weft_assert_fail(const char *expr, const char *msg, const char *file,
                                             int line, const char *func);

#ifndef WEFT_DEBUG
#define WEFT_DEBUG 0
#endif

#ifndef WEFT_ASSERT
#if WEFT_DEBUG >= 1
#define WEFT_ASSERT(cond, msg) \
    ((cond) ? (void)0 : weft_assert_fail(#cond, (msg), __FILE__, __LINE__, __func__))
#else
#define WEFT_ASSERT(cond, msg) ((void)0)
#endif
#endif

#ifdef __cplusplus
}
#endif
#endif /* WEFT_BASE_H */
