/* model.h: the model-based stress test's operation list, runner and shrinker (model.c).
 *
 * DESIGN
 * An operation is a kind plus three random words; its arguments (which entity, which
 * component, which value) are resolved against the reference model when it runs, so any
 * sub-list of a valid list is valid too. That is what makes shrinking a plain "drop chunks of
 * the list while it still fails" (delta debugging), with no repair step. */
#ifndef WEFT_TESTS_MODEL_H
#define WEFT_TESTS_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum op_kind {
    OP_CREATE,
    OP_CREATE_N,
    OP_DESTROY,
    OP_DESTROY_N,
    OP_ADD,
    OP_SET,
    OP_REMOVE,
    OP_REMOVE_ORDERED,
    OP_SORT,
    OP_STALE,
    OP_FRAME,
    OP_CAPTURE,
    OP_RESTORE,
    OP_SAVE_LOAD,
    OP_HIER_ADD,
    OP_HIER_ATTACH,
    OP_HIER_DETACH,
    OP_HIER_DESTROY,
    OP_COUNT
} op_kind_t;

typedef struct op {
    uint8_t kind; /* op_kind_t */
    uint32_t a, b, c;
} op_t;

typedef struct model_result {
    bool ok;            /* every step matched the model */
    size_t failed_step; /* index of the failing op when !ok */
    char msg[512];      /* what differed */
    uint64_t frames;    /* frames run */
    uint64_t checks;    /* full model comparisons made */
} model_result_t;

/* Generate n operations from `seed`. */
void model_generate(op_t *ops, size_t n, uint64_t seed);

/* Run ops on a fresh world with `workers` workers (and an inline twin world that must hash
 * identically after every step), checking against the reference model after every step.
 * Stops at the first difference. */
void model_run(const op_t *ops, size_t n, uint32_t workers, model_result_t *res);

/* Shrink a failing list in place (delta debugging; at most `budget_s` seconds); returns the
 * new length. The list still fails with `workers` workers. */
size_t model_shrink(op_t *ops, size_t n, uint32_t workers, double budget_s);

/* Read a reproduction printed by model_print (lines "{OP_KIND, a, b, c},"; others are
 * skipped) into ops; returns the count (0 when the file cannot be read). */
size_t model_read(const char *path, op_t *ops, size_t cap);

/* Print ops as a reproduction (one line each). */
void model_print(const op_t *ops, size_t n);

#endif /* WEFT_TESTS_MODEL_H */
