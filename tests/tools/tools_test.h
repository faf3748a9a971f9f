/* tests/tools/tools_test.h: helpers shared by the tools tests — temp directories, running a
 * tool as a child process and capturing its output, reading files. */
#ifndef WEFT_TESTS_TOOLS_TEST_H
#define WEFT_TESTS_TOOLS_TEST_H

#include <stddef.h>
#include <stdio.h>

/* Create a fresh directory under $TMPDIR (or /tmp); returns a static path. Aborts the test on
 * failure. */
const char *tt_tempdir(void);

/* Remove a directory made by tt_tempdir() and everything in it. */
void tt_rmtree(const char *dir);

/* path = dir + "/" + name, into buf. Returns buf. */
char *tt_path(char *buf, size_t size, const char *dir, const char *name);

/* Write `text` to path; aborts the test on failure. */
void tt_write(const char *path, const char *text);

/* Read a whole file into a malloc'd NUL-terminated buffer (NULL if unreadable). */
char *tt_read(const char *path, size_t *len);

/* Run `cmd` through the shell with stdout and stderr captured into *out (malloc'd, may be
 * NULL on failure). Returns the exit status, or -1 if the command could not run. */
int tt_run(const char *cmd, char **out);

/* The whole content of an open stream (rewound first), malloc'd and NUL-terminated. */
char *tt_slurp(FILE *f, size_t *len);

#endif /* WEFT_TESTS_TOOLS_TEST_H */
