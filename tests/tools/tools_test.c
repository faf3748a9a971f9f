/* tests/tools/tools_test.c: process and file helpers for the tools tests (see tools_test.h). */
#define _POSIX_C_SOURCE 200809L
#include "tools_test.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

const char *tt_tempdir(void) {
    static char dir[512];
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/weft-tools-XXXXXX", base && *base ? base : "/tmp");
    cr_assert(mkdtemp(dir) != NULL, "mkdtemp failed for %s", dir);
    return dir;
}

void tt_rmtree(const char *dir) {
    char cmd[700];
    /* Only our own mkdtemp directories: refuse anything else rather than delete it. */
    cr_assert(strstr(dir, "/weft-tools-") != NULL, "refusing to remove %s", dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect(system(cmd) == 0, "could not remove %s", dir);
}

char *tt_path(char *buf, size_t size, const char *dir, const char *name) {
    snprintf(buf, size, "%s/%s", dir, name);
    return buf;
}

void tt_write(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "cannot write %s", path);
    fputs(text, f);
    cr_assert(fclose(f) == 0);
}

char *tt_slurp(FILE *f, size_t *len) {
    rewind(f);
    size_t cap = 1 << 16;
    size_t n = 0;
    char *buf = malloc(cap + 1);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) {
            break;
        }
        char *g = realloc(buf, cap * 2 + 1);
        if (g == NULL) {
            free(buf);
            return NULL;
        }
        buf = g;
        cap *= 2;
    }
    if (buf != NULL) {
        buf[n] = '\0';
        if (len != NULL) {
            *len = n;
        }
    }
    return buf;
}

char *tt_read(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    char *buf = tt_slurp(f, len);
    fclose(f);
    return buf;
}

int tt_run(const char *cmd, char **out) {
    char full[4096];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (p == NULL) {
        *out = NULL;
        return -1;
    }
    size_t cap = 4096;
    size_t n = 0;
    char *buf = malloc(cap);
    size_t got = 0;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *g = realloc(buf, cap * 2);
            if (g == NULL) {
                break;
            }
            buf = g;
            cap *= 2;
        }
    }
    if (buf != NULL) {
        buf[n] = '\0';
    }
    *out = buf;
    int status = pclose(p);
    if (status == -1 || !WIFEXITED(status)) {
        return -1;
    }
    return WEXITSTATUS(status);
}
