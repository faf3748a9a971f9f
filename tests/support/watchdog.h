/* watchdog.h: hangs fail loudly — print every thread's stack when a test runs too long.
 *
 * Two triggers, both ending in the same dump:
 * - wt_watchdog_arm(seconds, what): a POSIX timer whose expiry (SIGALRM, handled by the
 *   watchdog) prints "watchdog: <what> still running after N s", dumps every thread's stack
 *   and aborts the process (so a hung Criterion test is reported as a crash, and a plain
 *   program exits non-zero). A test that arms it must not use SIGALRM itself.
 * - Criterion's `.timeout`: Criterion (BoxFort) stops a test that runs too long by sending it
 *   SIGPROF. Once wt_watchdog_install() ran (the first wt_watchdog_arm does it, and so does
 *   a constructor in watchdog.c: linking the file is enough), SIGPROF dumps the stacks first
 *   and then dies of SIGPROF as before, so Criterion still reports "Timed out". Not under
 *   ThreadSanitizer, which defers the signal so that the test would never die: there only
 *   the armed timer prints stacks.
 *
 * The dump runs `gdb -batch -p <pid> -ex "thread apply all bt"` when gdb is on PATH (set
 * WT_WATCHDOG_NO_GDB=1 to skip it) under a hard limit of 30 s (WT_WATCHDOG_GDB_SECONDS=N
 * changes it): a gdb still running then is killed from outside this process, which it has
 * stopped, and "watchdog: gdb timed out" is printed. When gdb is missing, fails or times out,
 * every thread found in /proc/self/task is signalled (SIGURG) and prints its own backtrace()
 * with backtrace_symbols_fd(). Output goes to stderr.
 *
 * Thread: arm/disarm from the test's main thread; the dump may run on any thread. */
#ifndef WEFT_TESTS_WATCHDOG_H
#define WEFT_TESTS_WATCHDOG_H

/* Install the SIGPROF and SIGURG handlers and resolve gdb's path (idempotent). */
void wt_watchdog_install(void);

/* Abort with every thread's stack printed unless wt_watchdog_disarm() runs within `seconds`.
 * Re-arming replaces the previous deadline. `what` names the test in the message (static
 * storage). The timer is per process (Criterion runs each test in its own process). */
void wt_watchdog_arm(unsigned seconds, const char *what);

/* Cancel the deadline set by wt_watchdog_arm (no-op when none). */
void wt_watchdog_disarm(void);

/* Print every thread's stack to stderr now (gdb, else backtrace()). Returns the number of
 * thread stacks printed by the fallback, or -1 when gdb printed them. Async-signal-safe. */
int wt_dump_all_stacks(void);

#endif /* WEFT_TESTS_WATCHDOG_H */
