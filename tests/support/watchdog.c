/* watchdog.c: prints every thread's stack when a test hangs (see watchdog.h).
 *
 * DESIGN
 * The dump must work in the worst state a process can be in: some thread holds a lock
 * forever, maybe the allocator's. So everything the dump needs (gdb's path, the handler
 * registrations, backtrace()'s lazily loaded unwinder) is prepared at install time, and the
 * dump itself uses only async-signal-safe calls: raw clone, execve, wait4 and kill for gdb and
 * the process that bounds its run time, raw getdents64 and tgkill for the fallback, write()
 * for text. So both triggers run it straight
 * from a signal handler: SIGALRM from the armed timer (then abort(), so the hang fails the
 * run) and SIGPROF from Criterion's timeout. */
#define _GNU_SOURCE

#include "watchdog.h"

#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Under ThreadSanitizer a user handler for SIGPROF was seen to keep Criterion's timeout
 * signal from ever acting (TSan defers it), turning a timeout into a hang; there the SIGPROF
 * hook stays off and only wt_watchdog_arm's timer prints stacks. */
#include "wt_sanitizer.h"

#define GDB_SECONDS_DEFAULT 30 /* a gdb that has not finished by then is killed */
#define THREAD_WAIT_MS 1000    /* per-thread wait for a fallback backtrace */

static char gdb_path[512];                         /* "" when gdb is not on PATH or disabled */
static unsigned gdb_seconds = GDB_SECONDS_DEFAULT; /* WT_WATCHDOG_GDB_SECONDS overrides */
static volatile sig_atomic_t installed;
static volatile sig_atomic_t dumping;    /* a dump is in progress (ignore a second trigger) */
static volatile sig_atomic_t thread_ack; /* bumped by each thread that printed its stack */
static timer_t timer;
static volatile sig_atomic_t timer_made;
static const char *armed_what = "test";
static unsigned armed_seconds;

/* ---- async-signal-safe output ------------------------------------------ >>output */

static void put(const char *s) {
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0) {
            return;
        }
        s += w;
        n -= (size_t)w;
    }
}

/* Decimal text of v into buf (>= 24 bytes); returns buf. */
static char *utoa(unsigned long v, char *buf) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (int i = 0; i < n; i++) {
        buf[i] = tmp[n - 1 - i];
    }
    buf[n] = '\0';
    return buf;
}

static void sleep_ms(long ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- gdb ------------------------------------------------------------------ >>gdb */

/* While gdb is attached every thread of this process is stopped, the one running the dump
 * included: a gdb that hangs while attached can only be stopped from outside. So a
 * supervisor process (a raw clone of this one) runs gdb as its own child and is the one that
 * enforces the limit: past gdb_seconds it kills gdb (the kernel then detaches it from us) and
 * sends us SIGCONT, which discards a SIGSTOP of gdb's attach that was still pending and ends
 * a group stop it may have left; this thread then resumes and falls back to backtrace(). The
 * supervisor and gdb's child use raw system calls only: they are copies of a process whose
 * other threads may hold any lock (the allocator's, a sanitizer's), and the sanitizers
 * intercept the libc wrappers. */
#define SUPERVISOR_GDB_FAILED 1
#define SUPERVISOR_GDB_TIMED_OUT 124

static _Noreturn void raw_exit(int code) {
    for (;;) {
        syscall(SYS_exit_group, (long)code);
    }
}

static long raw_sleep_ms(long ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    return syscall(SYS_nanosleep, &ts, NULL);
}

/* Runs in the supervisor: start gdb on `target`, wait for it at most gdb_seconds. */
static _Noreturn void supervise_gdb(pid_t target, char *pid_text) {
    long gdb = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
    if (gdb < 0) {
        raw_exit(SUPERVISOR_GDB_FAILED);
    }
    if (gdb == 0) {
        syscall(SYS_dup3, STDERR_FILENO, STDOUT_FILENO, 0);
        char *argv[] = {gdb_path,
                        "-nx",
                        "-batch",
                        "-p",
                        pid_text,
                        "-ex",
                        "info threads",
                        "-ex",
                        "thread apply all bt",
                        NULL};
        char *envp[] = {"PATH=/usr/bin:/bin", NULL};
        syscall(SYS_execve, gdb_path, argv, envp);
        raw_exit(127);
    }
    for (long waited_ms = 0; waited_ms < (long)gdb_seconds * 1000; waited_ms += 50) {
        int status = 0;
        long r = syscall(SYS_wait4, gdb, &status, WNOHANG, NULL);
        if (r == gdb) {
            raw_exit(WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : SUPERVISOR_GDB_FAILED);
        }
        if (r < 0) {
            raw_exit(SUPERVISOR_GDB_FAILED);
        }
        raw_sleep_ms(50);
    }
    syscall(SYS_kill, gdb, SIGKILL);
    syscall(SYS_wait4, gdb, NULL, 0, NULL); /* gdb is gone: the kernel has detached it */
    syscall(SYS_kill, (long)target, SIGCONT);
    raw_sleep_ms(200); /* a thread may dequeue a stale SIGSTOP just after the first SIGCONT */
    syscall(SYS_kill, (long)target, SIGCONT);
    raw_exit(SUPERVISOR_GDB_TIMED_OUT);
}

/* Attach gdb to this process and print all threads' backtraces. True when gdb exited 0. */
static bool dump_with_gdb(void) {
    if (gdb_path[0] == '\0') {
        return false;
    }
    char pid[24];
    pid_t self = getpid();
    utoa((unsigned long)self, pid);
    /* A raw clone (fork semantics) rather than fork(): the sanitizers' fork interceptors take
     * locks that a hung thread may hold, and ThreadSanitizer deadlocks on fork from a signal
     * handler. */
    pid_t supervisor = (pid_t)syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
    if (supervisor < 0) {
        return false;
    }
    if (supervisor == 0) {
        supervise_gdb(self, pid);
    }
    /* The supervisor ends within gdb_seconds (plus its SIGCONT pause); the margin only
     * guards against a supervisor that cannot run at all. */
    int status = 0;
    pid_t r = 0;
    for (long waited_ms = 0; r == 0 && waited_ms < ((long)gdb_seconds + 10) * 1000;
         waited_ms += 50) {
        r = waitpid(supervisor, &status, WNOHANG);
        if (r == 0) {
            sleep_ms(50);
        }
    }
    char buf[24];
    if (r == 0) {
        kill(supervisor, SIGKILL);
        waitpid(supervisor, NULL, 0);
        put("watchdog: the gdb supervisor did not finish; falling back to backtrace()\n");
        return false;
    }
    if (r < 0 || !WIFEXITED(status)) {
        put("watchdog: the gdb supervisor failed; falling back to backtrace()\n");
        return false;
    }
    switch (WEXITSTATUS(status)) {
    case 0:
        return true;
    case SUPERVISOR_GDB_TIMED_OUT:
        put("\nwatchdog: gdb timed out: no answer within ");
        put(utoa(gdb_seconds, buf));
        put(" s, killed; falling back to backtrace()\n");
        return false;
    default:
        put("\nwatchdog: gdb failed; falling back to backtrace()\n");
        return false;
    }
}

/* ---- fallback: every thread prints its own backtrace ------------------------- >>fallback */

static void on_sigurg(int sig) {
    (void)sig;
    char buf[24];
    void *frames[64];
    put("\n--- thread ");
    put(utoa((unsigned long)syscall(SYS_gettid), buf));
    put(" ---\n");
    int n = backtrace(frames, 64);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
    thread_ack = thread_ack + 1;
}

struct linux_dirent64 {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

static int dump_with_backtrace(void) {
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        put("watchdog: cannot list /proc/self/task\n");
        return 0;
    }
    long self = syscall(SYS_gettid);
    int printed = 0;
    char buf[4096];
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0) {
            break;
        }
        for (long off = 0; off < n;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(void *)(buf + off);
            off += d->d_reclen;
            if (d->d_name[0] < '0' || d->d_name[0] > '9') {
                continue;
            }
            long tid = strtol(d->d_name, NULL, 10);
            sig_atomic_t before = thread_ack;
            if (tid == self) {
                on_sigurg(SIGURG);
            } else if (syscall(SYS_tgkill, (long)getpid(), tid, SIGURG) != 0) {
                continue;
            }
            for (int ms = 0; ms < THREAD_WAIT_MS && thread_ack == before; ms += 10) {
                sleep_ms(10);
            }
            if (thread_ack != before) {
                printed++;
            } else {
                put("watchdog: a thread did not answer (blocked in the kernel with the signal "
                    "masked, or deferred by a sanitizer)\n");
            }
        }
    }
    close(fd);
    return printed;
}

int wt_dump_all_stacks(void) {
    put("watchdog: ---- stacks of every thread ----\n");
    if (dump_with_gdb()) {
        put("watchdog: ---- end of stacks (gdb) ----\n");
        return -1;
    }
    int n = dump_with_backtrace();
    char buf[24];
    put("watchdog: ---- end of stacks (backtrace, ");
    put(utoa((unsigned long)n, buf));
    put(" threads) ----\n");
    return n;
}

/* ---- triggers ---------------------------------------------------------------- >>triggers */

#if !WT_TSAN
/* Criterion's timeout (BoxFort sends SIGPROF): dump, then die of SIGPROF as intended. */
static void on_sigprof(int sig) {
    if (!dumping) {
        dumping = 1;
        put("\nwatchdog: SIGPROF (the test runner's timeout): the test hung\n");
        wt_dump_all_stacks();
    }
    signal(sig, SIG_DFL);
    raise(sig);
}
#endif /* WT_TSAN */

static void on_timer(int sig) {
    (void)sig;
    if (dumping) {
        return;
    }
    dumping = 1;
    char buf[24];
    put("\nwatchdog: ");
    put(armed_what);
    put(" still running after ");
    put(utoa(armed_seconds, buf));
    put(" s: it hung\n");
    wt_dump_all_stacks();
    put("watchdog: aborting\n");
    abort();
}

static void find_gdb(void) {
    const char *limit = getenv("WT_WATCHDOG_GDB_SECONDS");
    if (limit != NULL && strtoul(limit, NULL, 10) > 0 && strtoul(limit, NULL, 10) < 3600) {
        gdb_seconds = (unsigned)strtoul(limit, NULL, 10);
    }
    const char *off = getenv("WT_WATCHDOG_NO_GDB");
    if (off != NULL && off[0] != '\0' && off[0] != '0') {
        return;
    }
    const char *path = getenv("PATH");
    if (path == NULL) {
        path = "/usr/bin:/bin";
    }
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        if (len > 0 && len + 5 < sizeof gdb_path) {
            memcpy(gdb_path, path, len);
            memcpy(gdb_path + len, "/gdb", 5);
            if (access(gdb_path, X_OK) == 0) {
                return;
            }
        }
        path += len;
        if (*path == ':') {
            path++;
        }
    }
    gdb_path[0] = '\0';
}

void wt_watchdog_install(void) {
    if (installed) {
        return;
    }
    installed = 1;
    find_gdb();
#ifdef PR_SET_PTRACER
    /* Under Yama ptrace_scope 1 a child may not attach to its parent unless allowed. */
    (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    void *warm[4];
    (void)backtrace(warm, 4); /* loads the unwinder now, not inside a signal handler */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_sigurg;
    sigaction(SIGURG, &sa, NULL);
#if !WT_TSAN
    sa.sa_handler = on_sigprof;
    sigaction(SIGPROF, &sa, NULL);
#endif /* WT_TSAN */
}

/* Linking this file is enough to get stacks on a Criterion timeout. */
__attribute__((constructor)) static void install_at_start(void) { wt_watchdog_install(); }

void wt_watchdog_arm(unsigned seconds, const char *what) {
    wt_watchdog_install();
    armed_what = what ? what : "test";
    armed_seconds = seconds;
    if (!timer_made) {
        /* SIGEV_SIGNAL, not SIGEV_THREAD: ThreadSanitizer does not know the C library's timer
         * thread and crashes in it. The dump is async-signal-safe, so a handler will do. */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sigemptyset(&sa.sa_mask);
        sa.sa_handler = on_timer;
        sigaction(SIGALRM, &sa, NULL);
        struct sigevent ev;
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_SIGNAL;
        ev.sigev_signo = SIGALRM;
        if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) {
            put("watchdog: timer_create failed; only the runner's timeout will dump stacks\n");
            return;
        }
        timer_made = 1;
    }
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    its.it_value.tv_sec = (time_t)seconds;
    timer_settime(timer, 0, &its, NULL);
}

void wt_watchdog_disarm(void) {
    if (!timer_made) {
        return;
    }
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    timer_settime(timer, 0, &its, NULL);
}
