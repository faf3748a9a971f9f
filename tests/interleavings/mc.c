/* mc.c: the interleaving checker (see mc.h for what it explores and why).
 *
 * DESIGN: one process-wide exploration at a time, on the OS thread that called
 * mc_explore. Modelled threads are fibers on that thread (mc_fiber.c); only the one named
 * by `cur` runs. It enters the checker at each visible operation, lets the checker pick
 * who performs the next operation, and switches to that fiber when it is someone else.
 * Choices are recorded in `trace`; a new execution replays a prefix of them and then takes
 * default choices (go on with the running thread, read the newest store), which makes the
 * exploration a depth-first walk over choice sequences. An execution that failed is
 * abandoned: its fibers are never resumed (the next exploration restarts them on their
 * stacks), so nothing unwinds through the code under test.
 *
 * The memory model. Each thread has a vector clock `vc`; a store records its thread and
 * clock and, when it is a release (or follows a release fence, or is an RMW continuing a
 * release sequence), the clock it publishes (`rel`). A load may read a store of the kept
 * history unless a newer store happens-before the load (its clock is covered by the
 * reader's) or the reader already saw a newer one (coherence). An acquire load joins `rel`
 * into the reader's clock; a relaxed one keeps it for a later acquire fence. */
#define _GNU_SOURCE 1

#include "mc.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/platform/atomic.h"
#include "mc_fiber.h"
#include "mc_platform.h"

typedef uint32_t vc_t[MC_MAX_THREADS];

#define MAX_HISTORY 8
#define MAX_LOCS 8192
#define MAX_MUTEXES 64
#define MAX_PLAIN 256
#define MAX_RETIRED 512
#define MAX_NAMES 64
#define LOG_CAP 20000

typedef struct store_ent {
    uint64_t val; /* the value (masked to the location's size) */
    uint64_t mo;  /* position in the location's modification order */
    uint64_t seq; /* position among all stores of the execution (0: first-seen value) */
    int tid;      /* storing thread, -1 for a location's first-seen value */
    uint32_t clk; /* the storing thread's own clock at the store */
    vc_t rel;     /* clock an acquire reading this store joins */
} store_ent_t;

typedef struct loc {
    size_t size;
    int nh;                         /* stores kept, oldest first */
    store_ent_t h[MAX_HISTORY];     /* the newest `nh` stores in modification order */
    uint64_t next_mo;               /* mo of the next store */
    uint64_t floor[MC_MAX_THREADS]; /* oldest mo each thread may still read (coherence) */
} loc_t;

typedef struct mutex_shadow {
    uintptr_t addr;
    int owner; /* -1 when free */
    vc_t vc;   /* clock of the last unlock */
} mutex_shadow_t;

typedef struct plain_cell {
    uintptr_t addr;
    int wtid;                      /* last writer, -1 none */
    uint32_t wclk;                 /* its clock at the write */
    uint32_t rclk[MC_MAX_THREADS]; /* each thread's clock at its last read (0: none) */
} plain_cell_t;

enum { TS_FREE, TS_RUNNABLE, TS_BLOCK_MUTEX, TS_BLOCK_COND, TS_BLOCK_JOIN, TS_DONE };

typedef struct mthread {
    int state;
    uintptr_t wait_obj;   /* mutex (BLOCK_MUTEX) or condition variable (BLOCK_COND) */
    uintptr_t cond_mutex; /* BLOCK_COND: the mutex to take again */
    uint64_t cond_seq;    /* BLOCK_COND: arrival order (signal wakes the oldest) */
    int join_id;          /* BLOCK_JOIN: the thread waited for */
    vc_t vc, fence_rel, acq_pending;
    mc_fn_t fn;
    void *arg;
} mthread_t;

enum { CH_SCHED = 1, CH_READ = 2, CH_CHOOSE = 3 };

typedef struct choice {
    uint8_t kind;
    uint8_t n;
    uint8_t chosen;
} choice_t;

/* Sleep sets. A footprint is what one step of a thread touched (address ranges read or
 * written; `all`: anything, e.g. a thread start; `read_all`: every location, as a spin's
 * pause or a seq_cst fence reads). Two steps commute unless one writes what the other
 * touches. */
#define FP_MAX 16
enum { NOTE_RANGE, NOTE_READ_ALL, NOTE_ALL };

typedef struct fp_ent {
    uintptr_t lo, hi;
    bool write;
} fp_ent_t;

typedef struct fp {
    uint8_t n;
    bool all, read_all;
    fp_ent_t e[FP_MAX];
} fp_t;

/* Per scheduling choice: the thread each option runs, the threads asleep on arrival, and
 * the union of the footprints of each option's first step over the executions below it. */
typedef struct sinfo {
    int8_t tid[MC_MAX_THREADS + 1];
    uint8_t asleep;
    fp_t *fp;
} sinfo_t;

typedef struct log_ent {
    int tid;
    bool has_site;
    weft__mc_site_t site; /* copied: call sites pass compound literals */
    uintptr_t addr;
    uint64_t val;
    uint64_t val2;
    int mark;   /* 1 pre-empted before, 2 stale read */
    bool plant; /* the order was weakened by the plant */
    const char *what;
} log_ent_t;

static struct {
    bool exploring;
    pthread_t explorer; /* the OS thread the fibers run on */
    mc_fiber_t main;    /* its own context, which mc_explore runs in */
    int cur;            /* the running modelled thread, -1 in mc_explore */
    int nthreads;
    mthread_t th[MC_MAX_THREADS];
    mc_fiber_t fib[MC_MAX_THREADS];
    bool exec_done, failed;
    char message[512];
    const mc_options_t *o;
    /* choices */
    choice_t *trace;
    sinfo_t *sinfo; /* beside trace, same index */
    size_t trace_len, trace_cap, replay_len, point;
    /* sleep sets (off when replaying or when the options say so) */
    bool reduce, redundant;
    uint8_t sleep_mask;
    fp_t sleep_fp[MC_MAX_THREADS];
    long step_point; /* the choice whose option the running step belongs to, -1 none */
    int step_opt, step_tid;
    /* per thread: steps given to it that have not yet seen its first visible operation (a
     * thread resumed after a pause or a block does its next one at a later choice) */
    struct {
        long pt;
        int opt;
    } pend[MC_MAX_THREADS][4];
    int npend[MC_MAX_THREADS];
    int used_pre, used_stale;
    int pending_mark;
    bool pending_plant;
    /* shadow state, reset per execution */
    loc_t *locs;
    uintptr_t *loc_key; /* beside locs: the address each slot shadows, 0 free */
    int nlocs;
    int *used; /* indices of the slots in use, so a reset clears only those */
    mutex_shadow_t mutexes[MAX_MUTEXES];
    plain_cell_t plain[MAX_PLAIN];
    struct {
        uintptr_t lo, hi;
        const char *name;
        int by;
    } retired[MAX_RETIRED];
    int nretired;
    struct {
        uintptr_t addr;
        const char *name;
    } names[MAX_NAMES];
    int nnames;
    uint64_t steps;
    uint64_t store_seq;             /* stores so far in the execution */
    uint64_t fresh[MC_MAX_THREADS]; /* store_seq when each thread last saw all newest */
    uint64_t cond_seq;
    int weakened;
    log_ent_t *log;
    size_t nlog;
} S = {.cur = -1};

/* Code under test calls in here from a modelled thread (a fiber of the exploration);
 * anything else (setup before mc_explore, another OS thread) takes the plain paths. */
static bool modelled(void) {
    return S.exploring && S.cur >= 0 && pthread_equal(pthread_self(), S.explorer);
}

static void vc_join(vc_t a, const vc_t b) {
    for (int i = 0; i < MC_MAX_THREADS; ++i) {
        a[i] = a[i] > b[i] ? a[i] : b[i];
    }
}

static uint64_t mask(uint64_t v, size_t size) {
    return size >= 8 ? v : v & ((UINT64_C(1) << (size * 8)) - 1u);
}

static const char *name_of(uintptr_t a) {
    for (int i = 0; i < S.nnames; ++i) {
        if (S.names[i].addr == a) {
            return S.names[i].name;
        }
    }
    return NULL;
}

static const char *base_name(const char *f) {
    const char *s = strrchr(f, '/');
    return s ? s + 1 : f;
}

static void print_log(FILE *out) {
    size_t from = S.nlog > 400 ? S.nlog - 400 : 0;
    fprintf(out,
            "schedule (%zu operations%s; thread, function, site, operation, location, "
            "value):\n",
            S.nlog, from ? ", the last 400 shown" : "");
    for (size_t i = from; i < S.nlog; ++i) {
        const log_ent_t *e = &S.log[i];
        char loc[64] = "";
        if (e->addr) {
            const char *n = name_of(e->addr);
            if (n) {
                snprintf(loc, sizeof loc, " [%s]", n);
            } else {
                snprintf(loc, sizeof loc, " [%#" PRIxPTR "]", e->addr);
            }
        }
        if (e->has_site && e->site.line == 0) {
            fprintf(out, "  %5zu T%d %s%s %s%s = %#" PRIx64 "\n", i, e->tid,
                    e->mark == 1 ? "<pre-empts> " : "", e->site.func, e->site.op, loc, e->val);
        } else if (e->has_site) {
            fprintf(out, "  %5zu T%d %s%s (%s:%d) %s%s%s%s = %#" PRIx64 "%s\n", i, e->tid,
                    e->mark == 1 ? "<pre-empts> " : "", e->site.func, base_name(e->site.file),
                    e->site.line, e->site.op, e->plant ? " (planted: relaxed)" : "", e->what, loc,
                    e->val, e->mark == 2 ? " (stale: a newer store was not yet visible)" : "");
        } else {
            fprintf(out, "  %5zu T%d %s%s%s\n", i, e->tid, e->mark == 1 ? "<pre-empts> " : "",
                    e->what, loc);
        }
    }
}

static void add_log(const weft__mc_site_t *site, const char *what, uintptr_t addr, uint64_t v) {
    if (S.nlog == LOG_CAP) {
        memmove(S.log, S.log + LOG_CAP / 2, (LOG_CAP / 2) * sizeof *S.log);
        S.nlog = LOG_CAP / 2;
    }
    log_ent_t *e = &S.log[S.nlog++];
    e->tid = S.cur;
    e->has_site = site != NULL;
    if (site) {
        e->site = *site;
    }
    e->addr = addr;
    e->val = v;
    e->val2 = 0;
    e->mark = S.pending_mark;
    e->plant = S.pending_plant;
    e->what = what;
    S.pending_plant = false;
    S.pending_mark = 0;
}

/* The running fiber ends the execution: back to mc_explore, never to resume. */
static _Noreturn void leave_execution(void) {
    int me = S.cur;
    S.exec_done = true;
    S.cur = -1;
    mc_fiber_exit(&S.fib[me], &S.main);
}

/* Abandon the execution: report, go back to mc_explore. */
static _Noreturn void fail_locked(const char *fmt, ...) {
    if (!S.failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(S.message, sizeof S.message, fmt, ap);
        va_end(ap);
        S.failed = true;
        if (!S.o->quiet) {
            fprintf(stderr, "\n[mc] %s: failing execution: %s\n",
                    S.o->name ? S.o->name : "scenario", S.message);
            print_log(stderr);
            /* the non-default choices as point=option; every other point took option 0 */
            fprintf(stderr, "choices (mc_options_t.replay): \"");
            bool first = true;
            for (size_t i = 0; i < S.point && i < S.trace_len; ++i) {
                if (S.trace[i].chosen) {
                    fprintf(stderr, "%s%zu=%u", first ? "" : ",", i, S.trace[i].chosen);
                    first = false;
                }
            }
            fprintf(stderr, "\"\n");
        }
    }
    leave_execution();
}

static bool enabled(int t) {
    const mthread_t *m = &S.th[t];
    switch (m->state) {
    case TS_RUNNABLE:
        return true;
    case TS_BLOCK_MUTEX:
        for (int i = 0; i < MAX_MUTEXES; ++i) {
            if (S.mutexes[i].addr == m->wait_obj) {
                return S.mutexes[i].owner < 0;
            }
        }
        return true;
    case TS_BLOCK_JOIN:
        return S.th[m->join_id].state == TS_DONE;
    default:
        return false;
    }
}

static void grow_trace(void) {
    if (S.trace_len < S.trace_cap) {
        return;
    }
    size_t old = S.trace_cap;
    S.trace_cap = S.trace_cap ? S.trace_cap * 2 : 1024;
    S.trace = realloc(S.trace, S.trace_cap * sizeof *S.trace);
    S.sinfo = realloc(S.sinfo, S.trace_cap * sizeof *S.sinfo);
    if (!S.trace || !S.sinfo) {
        abort();
    }
    memset(S.sinfo + old, 0, (S.trace_cap - old) * sizeof *S.sinfo);
}

/* A choice among n options: replayed from the trace or taken as `def` and recorded. */
static int take_choice_def(int kind, int n, int def) {
    if (n <= 1 || S.redundant) {
        return 0;
    }
    if (S.point < S.replay_len) {
        choice_t *c = &S.trace[S.point++];
        if (c->kind == 0 && c->chosen < n) { /* a replayed choice: adopt this point */
            c->kind = (uint8_t)kind;
            c->n = (uint8_t)n;
        }
        if (S.o->replay && (c->kind != kind || c->n != n)) {
            S.replay_len = S.point - 1; /* the code changed here: defaults from now on */
            S.trace_len = S.replay_len;
            S.point = S.replay_len;
        } else if (c->kind != kind || c->n != n) {
            fail_locked("the scenario is not deterministic: choice %zu was kind %d of %d "
                        "options, now kind %d of %d",
                        S.point - 1, c->kind, c->n, kind, n);
        } else {
            return c->chosen;
        }
    }
    grow_trace();
    S.trace[S.trace_len++] = (choice_t){(uint8_t)kind, (uint8_t)n, (uint8_t)def};
    S.point = S.trace_len;
    S.replay_len = S.trace_len;
    return def;
}

static int take_choice(int kind, int n) { return take_choice_def(kind, n, 0); }

/* ---- sleep sets ------------------------------------------------------------------- */

static void fp_add(fp_t *f, int kind, uintptr_t lo, uintptr_t hi, bool write) {
    if (kind == NOTE_ALL) {
        f->all = true;
    } else if (kind == NOTE_READ_ALL) {
        f->read_all = true;
    }
    if (f->all || kind != NOTE_RANGE) {
        return;
    }
    for (int i = 0; i < f->n; ++i) {
        if (f->e[i].lo == lo && f->e[i].hi == hi) {
            f->e[i].write |= write;
            return;
        }
    }
    if (f->n == FP_MAX) {
        f->all = true;
        return;
    }
    f->e[f->n++] = (fp_ent_t){lo, hi, write};
}

static bool fp_conflicts(const fp_t *f, int kind, uintptr_t lo, uintptr_t hi, bool write) {
    if (f->all || kind == NOTE_ALL) {
        return true;
    }
    if (kind == NOTE_READ_ALL) {
        for (int i = 0; i < f->n; ++i) {
            if (f->e[i].write) {
                return true;
            }
        }
        return false;
    }
    if (f->read_all && write) {
        return true;
    }
    for (int i = 0; i < f->n; ++i) {
        if (f->e[i].lo < hi && lo < f->e[i].hi && (f->e[i].write || write)) {
            return true;
        }
    }
    return false;
}

/* The running thread does something visible (G held): add it to the footprint of the step
 * it belongs to, and wake the sleepers whose next step does not commute with it. */
static void note(int kind, uintptr_t lo, uintptr_t hi, bool write) {
    if (!S.reduce || S.redundant) {
        return;
    }
    if ((S.sleep_mask >> S.cur) & 1u) {
        S.redundant = true; /* a sleeping thread runs: an explored execution, reordered */
        return;
    }
    for (int i = 0; i < S.npend[S.cur]; ++i) {
        fp_add(&S.sinfo[S.pend[S.cur][i].pt].fp[S.pend[S.cur][i].opt], kind, lo, hi, write);
    }
    S.npend[S.cur] = 0;
    if (S.step_point >= 0 && S.step_tid == S.cur) {
        fp_add(&S.sinfo[S.step_point].fp[S.step_opt], kind, lo, hi, write);
    }
    for (int t = 0; t < S.nthreads; ++t) {
        if (((S.sleep_mask >> t) & 1u) && fp_conflicts(&S.sleep_fp[t], kind, lo, hi, write)) {
            S.sleep_mask &= (uint8_t) ~(1u << t);
        }
    }
}

static void note_range(const volatile void *p, size_t size, bool write) {
    note(NOTE_RANGE, (uintptr_t)p, (uintptr_t)p + size, write);
}

/* A scheduling choice among n options, option k running thread tids[k] (G held). With
 * sleep sets: options whose thread is asleep are never taken (an execution where it runs
 * next reorders one explored before); when every option's is, the execution is redundant
 * and runs on without recording choices. The threads of the options explored before the
 * chosen one go to sleep with their steps' footprints. */
static int sched_choice(const int *tids, int n) {
    if (!S.reduce) {
        return take_choice(CH_SCHED, n);
    }
    S.step_point = -1;
    if (S.redundant) {
        return 0;
    }
    int def = -1;
    for (int k = 0; k < n && def < 0; ++k) {
        if (!((S.sleep_mask >> tids[k]) & 1u)) {
            def = k;
        }
    }
    if (def < 0) {
        S.redundant = true;
        return 0;
    }
    if (n <= 1) {
        return 0;
    }
    bool fresh = S.point >= S.replay_len;
    uint8_t entry = S.sleep_mask;
    int k = take_choice_def(CH_SCHED, n, def);
    if (S.redundant) {
        return k;
    }
    size_t idx = S.point - 1;
    sinfo_t *si = &S.sinfo[idx];
    if (fresh) {
        for (int o = 0; o < n; ++o) {
            si->tid[o] = (int8_t)tids[o];
        }
        si->asleep = entry;
        free(si->fp);
        si->fp = calloc((size_t)n, sizeof *si->fp);
        if (!si->fp) {
            abort();
        }
    }
    for (int o = 0; o < k; ++o) {
        int t = si->tid[o];
        if (!((si->asleep >> t) & 1u)) {
            S.sleep_mask |= (uint8_t)(1u << t);
            S.sleep_fp[t] = si->fp[o];
        }
    }
    S.step_point = (long)idx;
    S.step_opt = k;
    S.step_tid = tids[k];
    int t = tids[k];
    if (S.npend[t] < 4) {
        S.pend[t][S.npend[t]].pt = (long)idx;
        S.pend[t][S.npend[t]].opt = k;
        S.npend[t]++;
    } else {
        si->fp[k].all = true;
    }
    return k;
}

/* The option to explore after `chosen` at choice i: the next whose thread was awake. */
static int next_option(size_t i) {
    const choice_t *c = &S.trace[i];
    int o = c->chosen + 1;
    if (S.reduce && c->kind == CH_SCHED) {
        const sinfo_t *si = &S.sinfo[i];
        while (o < c->n && ((si->asleep >> si->tid[o]) & 1u)) {
            ++o;
        }
    }
    return o;
}

/* Hand the turn to `next`; returns when some thread hands it back to this one. */
static void switch_to(int next) {
    int me = S.cur;
    if (next == me) {
        return;
    }
    S.cur = next;
    mc_fiber_switch(&S.fib[me], &S.fib[next]);
}

/* Candidates in order S.cur+1, S.cur+2, ... (wrapping), optionally including S.cur last. */
static int candidates(int *out, bool with_self) {
    int n = 0;
    for (int k = 1; k <= S.nthreads; ++k) {
        int t = (S.cur + k) % S.nthreads;
        if (t == S.cur && !with_self) {
            continue;
        }
        if (enabled(t)) {
            out[n++] = t;
        }
    }
    return n;
}

/* The running thread cannot go on (blocked or finished): pick who runs next; -1 when every
 * thread has finished. */
static int pick_other(void) {
    int cand[MC_MAX_THREADS];
    int n = candidates(cand, false);
    if (n == 0) {
        bool all_done = true;
        char who[256] = "";
        size_t len = 0;
        for (int t = 0; t < S.nthreads; ++t) {
            if (S.th[t].state != TS_DONE) {
                all_done = false;
                static const char *const st[] = {"free",          "runnable",
                                                 "waits a mutex", "waits a condition",
                                                 "waits a join",  "done"};
                len += (size_t)snprintf(who + len, len < sizeof who ? sizeof who - len : 0,
                                        " T%d %s;", t, st[S.th[t].state]);
            }
        }
        if (all_done) {
            return -1;
        }
        fail_locked("deadlock: no thread can run (%s) — a lost wake-up or a lock cycle", who);
    }
    return cand[sched_choice(cand, n)];
}

/* Scheduling point before a visible operation of the running (enabled) thread. */
static void sched_point(void) {
    if (++S.steps > S.o->max_steps) {
        fail_locked("livelock: more than %" PRIu64 " operations in one execution", S.o->max_steps);
    }
    if (S.used_pre >= S.o->preemptions) {
        return;
    }
    int cand[MC_MAX_THREADS];
    int n = candidates(cand, false);
    if (n == 0) {
        return;
    }
    /* option 0: go on; option k: pre-empt in favour of cand[k-1] */
    int tids[MC_MAX_THREADS + 1];
    tids[0] = S.cur;
    memcpy(tids + 1, cand, (size_t)n * sizeof *cand);
    int k = sched_choice(tids, n + 1);
    if (k > 0) {
        S.used_pre++;
        S.pending_mark = 1; /* marks the next logged operation, the other thread's */
        switch_to(cand[k - 1]);
    }
}

/* Block the running thread (state already set) until it is enabled and chosen again. */
static void block_here(void) {
    switch_to(pick_other()); /* not -1: this thread has not finished */
    S.th[S.cur].state = TS_RUNNABLE;
}

/* ---- shadow locations -------------------------------------------------------------- */

/* The slot of `a` in the shadow table, or the free slot where it goes. The probe reads only
 * the dense key array: most lookups are of locations that have no shadow yet (a job
 * system's initialisations), and the table itself is megabytes. */
static size_t probe_loc(uintptr_t a) {
    size_t h = (a >> 3) * 0x9E3779B97F4A7C15u >> 51; /* 13 bits */
    for (size_t i = 0; i < MAX_LOCS; ++i) {
        size_t k = (h + i) & (MAX_LOCS - 1);
        if (S.loc_key[k] == a || S.loc_key[k] == 0) {
            return k;
        }
    }
    abort();
}

static loc_t *find_loc(uintptr_t a) {
    size_t k = probe_loc(a);
    if (S.loc_key[k] == 0) {
        if (S.nlocs >= MAX_LOCS / 2) {
            abort(); /* more than MAX_LOCS / 2 locations in one execution */
        }
        S.used[S.nlocs++] = (int)k;
    }
    return &S.locs[k];
}

/* The real memory behind a modelled atomic. Only the explorer's OS thread touches it (the
 * fibers run on it), so relaxed accesses suffice; the checker decides what a load returns. */
static void raw_write(volatile void *p, size_t size, uint64_t v) {
    switch (size) {
    case 1:
        __atomic_store_n((volatile uint8_t *)p, (uint8_t)v, __ATOMIC_RELAXED);
        break;
    case 2:
        __atomic_store_n((volatile uint16_t *)p, (uint16_t)v, __ATOMIC_RELAXED);
        break;
    case 4:
        __atomic_store_n((volatile uint32_t *)p, (uint32_t)v, __ATOMIC_RELAXED);
        break;
    default:
        __atomic_store_n((volatile uint64_t *)p, v, __ATOMIC_RELAXED);
        break;
    }
}

static uint64_t raw_read(const volatile void *p, size_t size) {
    switch (size) {
    case 1:
        return __atomic_load_n((const volatile uint8_t *)p, __ATOMIC_RELAXED);
    case 2:
        return __atomic_load_n((const volatile uint16_t *)p, __ATOMIC_RELAXED);
    case 4:
        return __atomic_load_n((const volatile uint32_t *)p, __ATOMIC_RELAXED);
    default:
        return __atomic_load_n((const volatile uint64_t *)p, __ATOMIC_RELAXED);
    }
}

/* The shadow of `a`, or NULL when it has none yet. */
static loc_t *lookup_loc(uintptr_t a) {
    size_t k = probe_loc(a);
    return S.loc_key[k] ? &S.locs[k] : NULL;
}

static loc_t *get_loc(const volatile void *p, size_t size) {
    loc_t *l = find_loc((uintptr_t)p);
    if (S.loc_key[l - S.locs] == 0) {
        S.loc_key[l - S.locs] = (uintptr_t)p;
        memset(l, 0, sizeof *l);
        l->size = size;
        l->nh = 1;
        l->h[0].val = raw_read(p, size);
        l->h[0].tid = -1;
        l->next_mo = 1;
    }
    return l;
}

static void check_retired(const volatile void *p) {
    uintptr_t a = (uintptr_t)p;
    for (int i = 0; i < S.nretired; ++i) {
        if (a >= S.retired[i].lo && a < S.retired[i].hi) {
            fail_locked("T%d touched %s after T%d let it go (its last touch must be the "
                        "operation that released it)",
                        S.cur, S.retired[i].name, S.retired[i].by);
        }
    }
}

static void push_store(loc_t *l, uint64_t v, const vc_t rel) {
    if (l->nh == MAX_HISTORY || l->nh >= S.o->history) {
        memmove(&l->h[0], &l->h[1], (size_t)(l->nh - 1) * sizeof l->h[0]);
        l->nh--;
    }
    store_ent_t *e = &l->h[l->nh++];
    e->val = mask(v, l->size);
    e->mo = l->next_mo++;
    e->seq = ++S.store_seq;
    e->tid = S.cur;
    e->clk = S.th[S.cur].vc[S.cur];
    memcpy(e->rel, rel, sizeof(vc_t));
    l->floor[S.cur] = e->mo;
}

static int weaken(int mo, const weft__mc_site_t *site) {
    const char *w = S.o->weaken;
    if (!w || mo == WEFT__MO_RELAXED) {
        return mo;
    }
    /* "function:op", or several joined by '|' */
    size_t fl = strlen(site->func), ol = strlen(site->op);
    for (const char *t = w; *t;) {
        const char *bar = strchr(t, '|');
        size_t len = bar ? (size_t)(bar - t) : strlen(t);
        if (len == fl + 1 + ol && strncmp(t, site->func, fl) == 0 && t[fl] == ':' &&
            strncmp(t + fl + 1, site->op, ol) == 0) {
            S.weakened++;
            S.pending_plant = true;
            return WEFT__MO_RELAXED;
        }
        t += len + (bar ? 1 : 0);
    }
    return mo;
}

static bool is_acq(int mo) {
    return mo == WEFT__MO_ACQUIRE || mo == WEFT__MO_ACQ_REL || mo == WEFT__MO_SEQ_CST;
}
static bool is_rel(int mo) {
    return mo == WEFT__MO_RELEASE || mo == WEFT__MO_ACQ_REL || mo == WEFT__MO_SEQ_CST;
}

static void begin_op(const volatile void *p) {
    sched_point();
    if (p) {
        check_retired(p); /* after the pre-emption point: the owner may let go meanwhile */
    }
    S.th[S.cur].vc[S.cur]++;
}

/* The oldest store of `l` the running thread may still read (coherence): the newest it
 * read or wrote, or the newest there was when it last saw every location afresh. */
static uint64_t floor_of(const loc_t *l) {
    uint64_t f = l->floor[S.cur];
    for (int i = l->nh - 1; i >= 0; --i) {
        if (l->h[i].seq <= S.fresh[S.cur]) {
            return l->h[i].mo > f ? l->h[i].mo : f;
        }
    }
    return f;
}

/* The store a load reads: from the newest back to the oldest one still visible. */
static const store_ent_t *read_from(loc_t *l, int mo) {
    mthread_t *t = &S.th[S.cur];
    int lo = 0;
    uint64_t floor = floor_of(l);
    for (int i = l->nh - 1; i >= 0; --i) {
        const store_ent_t *e = &l->h[i];
        if (e->tid < 0 || e->clk <= t->vc[e->tid] || e->mo <= floor) {
            lo = i;
            break;
        }
    }
    int k = 0;
    if (mo != WEFT__MO_SEQ_CST && S.used_stale < S.o->stale_reads) {
        k = take_choice(CH_READ, l->nh - lo);
    }
    const store_ent_t *e = &l->h[l->nh - 1 - k];
    if (k > 0) {
        S.used_stale++;
        S.pending_mark = 2;
    }
    if (e->mo > l->floor[S.cur]) {
        l->floor[S.cur] = e->mo;
    }
    if (is_acq(mo)) {
        vc_join(t->vc, e->rel);
    } else {
        vc_join(t->acq_pending, e->rel);
    }
    return e;
}

void weft__mc_atomic_init(volatile void *p, size_t size, uint64_t v) {
    if (!modelled()) {
        raw_write(p, size, v);
        return;
    }
    note_range(p, size, true);
    raw_write(p, size, v);
    /* A location no one has accessed yet needs no shadow: its first access reads this
     * value as its oldest store, visible to everyone, which is what an initialisation is.
     * Most of a job system's atomics are initialised and never shared in an execution. */
    loc_t *l = lookup_loc((uintptr_t)p);
    if (l) {
        l->size = size;
        l->nh = 0;
        vc_t none = {0};
        push_store(l, v, none);
        for (int i = 0; i < MC_MAX_THREADS; ++i) {
            l->floor[i] = l->h[0].mo;
        }
    }
}

uint64_t weft__mc_load(const volatile void *p, size_t size, int mo, const weft__mc_site_t *site) {
    if (!modelled()) {
        return raw_read(p, size);
    }
    begin_op(p);
    mo = weaken(mo, site);
    loc_t *l = get_loc(p, size);
    note_range(p, size, false);
    uint64_t v = read_from(l, mo)->val;
    add_log(site, "", (uintptr_t)p, v);
    return v;
}

void weft__mc_store(volatile void *p, size_t size, uint64_t v, int mo,
                    const weft__mc_site_t *site) {
    if (!modelled()) {
        raw_write(p, size, v);
        return;
    }
    begin_op(p);
    mo = weaken(mo, site);
    loc_t *l = get_loc(p, size);
    note_range(p, size, true);
    mthread_t *t = &S.th[S.cur];
    push_store(l, v, is_rel(mo) ? t->vc : t->fence_rel);
    raw_write(p, size, v);
    add_log(site, "", (uintptr_t)p, mask(v, size));
}

static uint64_t apply(int op, uint64_t old, uint64_t v) {
    switch (op) {
    case WEFT__RMW_XCHG:
        return v;
    case WEFT__RMW_ADD:
        return old + v;
    case WEFT__RMW_SUB:
        return old - v;
    case WEFT__RMW_AND:
        return old & v;
    default:
        return old | v;
    }
}

/* A read-modify-write reads the newest store and continues its release sequence. */
static uint64_t rmw_locked(loc_t *l, volatile void *p, uint64_t nv_fn_v, int op, int mo) {
    mthread_t *t = &S.th[S.cur];
    const store_ent_t *e = &l->h[l->nh - 1];
    uint64_t old = e->val;
    vc_t prev_rel;
    memcpy(prev_rel, e->rel, sizeof prev_rel);
    if (is_acq(mo)) {
        vc_join(t->vc, prev_rel);
    } else {
        vc_join(t->acq_pending, prev_rel);
    }
    vc_t rel;
    memcpy(rel, is_rel(mo) ? t->vc : t->fence_rel, sizeof rel);
    vc_join(rel, prev_rel);
    uint64_t nv = mask(apply(op, old, nv_fn_v), l->size);
    push_store(l, nv, rel);
    raw_write(p, l->size, nv);
    return old;
}

uint64_t weft__mc_rmw(volatile void *p, size_t size, int op, uint64_t v, int mo,
                      const weft__mc_site_t *site) {
    if (!modelled()) {
        uint64_t old = raw_read(p, size);
        raw_write(p, size, mask(apply(op, old, v), size));
        return old;
    }
    begin_op(p);
    mo = weaken(mo, site);
    loc_t *l = get_loc(p, size);
    note_range(p, size, true);
    uint64_t old = rmw_locked(l, p, v, op, mo);
    add_log(site, " (old)", (uintptr_t)p, old);
    return old;
}

bool weft__mc_cas(volatile void *p, size_t size, void *expected, uint64_t desired, int mo_ok,
                  int mo_fail, const weft__mc_site_t *site) {
    uint64_t exp = 0;
    memcpy(&exp, expected, size);
    if (!modelled()) {
        uint64_t cur = raw_read(p, size);
        if (cur == exp) {
            raw_write(p, size, desired);
            return true;
        }
        memcpy(expected, &cur, size);
        return false;
    }
    begin_op(p);
    mo_ok = weaken(mo_ok, site);
    mo_fail = weaken(mo_fail, site);
    loc_t *l = get_loc(p, size);
    const store_ent_t *e = &l->h[l->nh - 1];
    bool ok = e->val == mask(exp, size);
    note_range(p, size, ok);
    if (ok) {
        (void)rmw_locked(l, p, desired, WEFT__RMW_XCHG, mo_ok);
        add_log(site, " ok, was", (uintptr_t)p, exp);
    } else {
        mthread_t *t = &S.th[S.cur];
        uint64_t cur = e->val;
        if (is_acq(mo_fail)) {
            vc_join(t->vc, e->rel);
        } else {
            vc_join(t->acq_pending, e->rel);
        }
        l->floor[S.cur] = e->mo;
        memcpy(expected, &cur, size);
        add_log(site, " failed, saw", (uintptr_t)p, cur);
    }
    return ok;
}

/* From now on the running thread reads no store older than the newest of each location
 * (floor_of() applies it when a location is read). */
static void floors_to_latest(void) { S.fresh[S.cur] = S.store_seq; }

void weft__mc_fence(int mo, const weft__mc_site_t *site) {
    if (!modelled()) {
        return; /* outside an exploration nothing runs concurrently with the caller */
    }
    begin_op(NULL);
    mo = weaken(mo, site);
    mthread_t *t = &S.th[S.cur];
    if (is_acq(mo)) {
        vc_join(t->vc, t->acq_pending);
    }
    if (is_rel(mo)) {
        memcpy(t->fence_rel, t->vc, sizeof(vc_t));
    }
    if (mo == WEFT__MO_SEQ_CST) {
        note(NOTE_READ_ALL, 0, 0, false);
        floors_to_latest(); /* stronger than C11: no weak outcome across a seq_cst fence */
    }
    add_log(site, "", 0, 0);
}

/* Let the next runnable thread go (free, not a pre-emption); `fresh`: afterwards the caller
 * sees the newest stores. */
static void pass_turn(const weft__mc_site_t *site, bool fresh) {
    if (!modelled()) {
        return;
    }
    if (++S.steps > S.o->max_steps) {
        fail_locked("livelock: more than %" PRIu64 " operations in one execution", S.o->max_steps);
    }
    if (fresh) {
        note(NOTE_READ_ALL, 0, 0, false);
        floors_to_latest();
    }
    int cand[MC_MAX_THREADS];
    if (candidates(cand, false) > 0) {
        add_log(site, "", 0, 0);
        /* a forced switch: the step ends; running a sleeping thread makes the rest
         * redundant */
        S.step_point = -1;
        if (S.reduce && ((S.sleep_mask >> cand[0]) & 1u)) {
            S.redundant = true;
        }
        switch_to(cand[0]);
    }
}

/* A spinning thread sees the newest stores after its pause: spins never wait on a stale
 * read for ever. */
void weft__mc_yield(const weft__mc_site_t *site) { pass_turn(site, true); }

void mc_pause(void) {
    static const weft__mc_site_t site_pause = {"mc", "scenario", 0, "pause"};
    pass_turn(&site_pause, false);
}

/* ---- mutexes, condition variables, threads ---------------------------------------- */

static mutex_shadow_t *get_mutex(const void *m) {
    uintptr_t a = (uintptr_t)m;
    for (int i = 0; i < MAX_MUTEXES; ++i) {
        if (S.mutexes[i].addr == a) {
            return &S.mutexes[i];
        }
    }
    for (int i = 0; i < MAX_MUTEXES; ++i) {
        if (S.mutexes[i].addr == 0) {
            S.mutexes[i].addr = a;
            S.mutexes[i].owner = -1;
            memset(S.mutexes[i].vc, 0, sizeof(vc_t));
            return &S.mutexes[i];
        }
    }
    abort();
}

static const weft__mc_site_t site_lock = {"mc", "mutex", 0, "lock"};
static const weft__mc_site_t site_unlock = {"mc", "mutex", 0, "unlock"};
static const weft__mc_site_t site_wait = {"mc", "cond", 0, "wait"};
static const weft__mc_site_t site_woken = {"mc", "cond", 0, "woken"};
static const weft__mc_site_t site_signal = {"mc", "cond", 0, "signal"};
static const weft__mc_site_t site_bcast = {"mc", "cond", 0, "broadcast"};
static const weft__mc_site_t site_start = {"mc", "thread", 0, "start"};
static const weft__mc_site_t site_join = {"mc", "thread", 0, "join"};
static const weft__mc_site_t site_end = {"mc", "thread", 0, "end"};

static void lock_locked(mutex_shadow_t *m) {
    while (m->owner >= 0) {
        if (m->owner == S.cur) {
            fail_locked("T%d locks a mutex it already holds", S.cur);
        }
        S.th[S.cur].state = TS_BLOCK_MUTEX;
        S.th[S.cur].wait_obj = m->addr;
        block_here();
    }
    m->owner = S.cur;
    vc_join(S.th[S.cur].vc, m->vc);
}

void mc_mutex_init(void *m) {
    if (!modelled()) {
        return;
    }
    mutex_shadow_t *s = get_mutex(m);
    s->owner = -1;
}

void mc_mutex_lock(void *mp) {
    begin_op(NULL);
    mutex_shadow_t *m = get_mutex(mp);
    lock_locked(m);
    note_range(mp, 1, true);
    add_log(&site_lock, "", (uintptr_t)mp, 0);
}

static void unlock_locked(mutex_shadow_t *m) {
    if (m->owner != S.cur) {
        fail_locked("T%d unlocks a mutex it does not hold", S.cur);
    }
    m->owner = -1;
    memcpy(m->vc, S.th[S.cur].vc, sizeof(vc_t));
}

void mc_mutex_unlock(void *mp) {
    begin_op(NULL);
    unlock_locked(get_mutex(mp));
    note_range(mp, 1, true);
    add_log(&site_unlock, "", (uintptr_t)mp, 0);
}

void mc_cond_wait(void *c, void *mp) {
    begin_op(NULL);
    mutex_shadow_t *m = get_mutex(mp);
    unlock_locked(m);
    note_range(mp, 1, true);
    note_range(c, 1, true);
    add_log(&site_wait, "", (uintptr_t)c, 0);
    mthread_t *t = &S.th[S.cur];
    t->state = TS_BLOCK_COND;
    t->wait_obj = (uintptr_t)c;
    t->cond_mutex = m->addr;
    t->cond_seq = ++S.cond_seq;
    block_here(); /* back when signalled and the mutex was free */
    lock_locked(m);
    note_range(mp, 1, true);
    note_range(c, 1, true);
    add_log(&site_woken, "", (uintptr_t)c, 0);
}

static void wake(void *c, bool all) {
    begin_op(NULL);
    note_range(c, 1, true);
    for (;;) {
        int best = -1;
        for (int i = 0; i < S.nthreads; ++i) {
            mthread_t *t = &S.th[i];
            if (t->state == TS_BLOCK_COND && t->wait_obj == (uintptr_t)c &&
                (best < 0 || t->cond_seq < S.th[best].cond_seq)) {
                best = i;
            }
        }
        if (best < 0) {
            break;
        }
        S.th[best].state = TS_BLOCK_MUTEX;
        S.th[best].wait_obj = S.th[best].cond_mutex;
        (void)get_mutex((void *)S.th[best].cond_mutex);
        if (!all) {
            break;
        }
    }
    add_log(all ? &site_bcast : &site_signal, "", (uintptr_t)c, 0);
}

void mc_cond_signal(void *c) { wake(c, false); }
void mc_cond_broadcast(void *c) { wake(c, true); }

/* The running thread has finished: returns the fiber to run next (mc_explore's when the
 * execution is over), which mc_fiber.c then switches to for good. */
static mc_fiber_t *finish_locked(void) {
    int me = S.cur;
    S.th[me].vc[me]++;
    S.th[me].state = TS_DONE;
    note(NOTE_ALL, 0, 0, false);
    add_log(&site_end, "", 0, 0);
    int next = pick_other();
    if (next < 0) {
        S.exec_done = true;
        S.cur = -1;
        return &S.main;
    }
    S.cur = next;
    return &S.fib[next];
}

/* A modelled thread's fiber, started afresh in every execution (with zeroed thread-locals:
 * jobs/worker.c's bindings must not pass from one execution to the next). */
static mc_fiber_t *fiber_entry(void) {
    mthread_t *t = &S.th[S.cur];
    t->fn(t->arg);
    return finish_locked();
}

static int start_locked(mc_fn_t fn, void *arg, bool ordered) {
    if (S.nthreads == MC_MAX_THREADS) {
        fail_locked("more than %d modelled threads", MC_MAX_THREADS);
    }
    int id = S.nthreads++;
    mthread_t *t = &S.th[id];
    t->state = TS_RUNNABLE;
    t->fn = fn;
    t->arg = arg;
    t->join_id = -1;
    memset(t->fence_rel, 0, sizeof(vc_t));
    memset(t->acq_pending, 0, sizeof(vc_t));
    if (ordered && S.cur >= 0) {
        memcpy(t->vc, S.th[S.cur].vc, sizeof(vc_t));
    } else {
        memset(t->vc, 0, sizeof(vc_t));
    }
    t->vc[id]++;
    mc_fiber_prepare(&S.fib[id], fiber_entry);
    return id;
}

static int thread_start(mc_fn_t fn, void *arg, bool ordered) {
    begin_op(NULL);
    note(NOTE_ALL, 0, 0, false);
    int id = start_locked(fn, arg, ordered);
    add_log(&site_start, "", 0, (uint64_t)id);
    return id;
}

int mc_thread_start(mc_fn_t fn, void *arg) { return thread_start(fn, arg, true); }
int mc_thread_start_unordered(mc_fn_t fn, void *arg) { return thread_start(fn, arg, false); }

void mc_thread_join(int id) {
    begin_op(NULL);
    if (S.th[id].state != TS_DONE) {
        S.th[S.cur].state = TS_BLOCK_JOIN;
        S.th[S.cur].join_id = id;
        block_here();
    }
    vc_join(S.th[S.cur].vc, S.th[id].vc);
    note(NOTE_ALL, 0, 0, false);
    add_log(&site_join, "", 0, (uint64_t)id);
}

int mc_thread_id(void) { return S.cur; }

/* ---- scenario helpers ------------------------------------------------------------ */

void mc_check_impl(bool cond, const char *expr, const char *file, int line, const char *fmt, ...) {
    if (cond) {
        return;
    }
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!modelled()) {
        fprintf(stderr, "mc_check outside a modelled thread failed at %s:%d: %s (%s)\n",
                base_name(file), line, expr, msg);
        abort();
    }
    fail_locked("T%d: check failed at %s:%d: %s (%s)", S.cur, base_name(file), line, expr, msg);
}

static plain_cell_t *get_plain(const void *p) {
    for (int i = 0; i < MAX_PLAIN; ++i) {
        if (S.plain[i].addr == (uintptr_t)p) {
            return &S.plain[i];
        }
    }
    for (int i = 0; i < MAX_PLAIN; ++i) {
        if (S.plain[i].addr == 0) {
            memset(&S.plain[i], 0, sizeof S.plain[i]);
            S.plain[i].addr = (uintptr_t)p;
            S.plain[i].wtid = -1;
            return &S.plain[i];
        }
    }
    abort();
}

/* A plain access: races with another thread's write (and, for a write, with another
 * thread's read) that happens-before does not order. */
static void plain_access(const void *p, const char *name, bool write) {
    if (!modelled()) {
        return;
    }
    mthread_t *t = &S.th[S.cur];
    t->vc[S.cur]++;
    plain_cell_t *c = get_plain(p);
    note_range(p, 1, write);
    const char *verb = write ? "writes" : "reads";
    if (c->wtid >= 0 && c->wtid != S.cur && c->wclk > t->vc[c->wtid]) {
        fail_locked("data race on %s: T%d %s it, unordered with T%d's write (a missing "
                    "release/acquire pair)",
                    name, S.cur, verb, c->wtid);
    }
    for (int u = 0; write && u < S.nthreads; ++u) {
        if (u != S.cur && c->rclk[u] > t->vc[u]) {
            fail_locked("data race on %s: T%d writes it, unordered with T%d's read", name, S.cur,
                        u);
        }
    }
    if (write) {
        c->wtid = S.cur;
        c->wclk = t->vc[S.cur];
    } else {
        c->rclk[S.cur] = t->vc[S.cur];
    }
    add_log(NULL, write ? "plain write" : "plain read", (uintptr_t)p, 0);
}

void mc_plain_write(const void *p, const char *name) { plain_access(p, name, true); }
void mc_plain_read(const void *p, const char *name) { plain_access(p, name, false); }

void mc_retire(const void *p, size_t size, const char *name) {
    if (!modelled()) {
        return;
    }
    note_range(p, size, true);
    if (S.nretired < MAX_RETIRED) {
        S.retired[S.nretired].lo = (uintptr_t)p;
        S.retired[S.nretired].hi = (uintptr_t)p + size;
        S.retired[S.nretired].name = name;
        S.retired[S.nretired].by = S.cur;
        S.nretired++;
    }
}

void mc_name(const void *p, const char *name) {
    if (S.nnames < MAX_NAMES) {
        S.names[S.nnames].addr = (uintptr_t)p;
        S.names[S.nnames].name = name;
        S.nnames++;
    }
}

bool weft__mc_planted(const char *name) {
    if (!modelled() || !S.o->plant || strcmp(S.o->plant, name) != 0) {
        return false;
    }
    S.weakened++;
    return true;
}

int mc_choose(int n) {
    int k = take_choice(CH_CHOOSE, n);
    return k;
}

/* ---- exploration ------------------------------------------------------------------ */

static void reset_execution(void) {
    mc_arena_reset();
    for (int i = 0; i < S.nlocs; ++i) {
        S.loc_key[S.used[i]] = 0;
    }
    S.nlocs = 0;
    memset(S.mutexes, 0, sizeof S.mutexes);
    memset(S.plain, 0, sizeof S.plain);
    S.nretired = 0;
    S.nnames = 0;
    S.steps = 0;
    S.store_seq = 0;
    memset(S.fresh, 0, sizeof S.fresh);
    S.cond_seq = 0;
    S.weakened = 0;
    S.nlog = 0;
    S.point = 0;
    S.used_pre = 0;
    S.used_stale = 0;
    S.pending_mark = 0;
    S.pending_plant = false;
    S.nthreads = 0;
    S.exec_done = false;
    S.redundant = false;
    S.sleep_mask = 0;
    S.step_point = -1;
    memset(S.npend, 0, sizeof S.npend);
    for (int i = 0; i < MC_MAX_THREADS; ++i) {
        S.th[i].state = TS_FREE;
    }
}

mc_result_t mc_explore(const mc_options_t *o, mc_fn_t main, void *arg) {
    mc_result_t r;
    memset(&r, 0, sizeof r);
    mc_options_t opt = *o;
    if (opt.history < 1) {
        opt.history = 1;
    }
    if (opt.history > MAX_HISTORY) {
        opt.history = MAX_HISTORY;
    }
    if (opt.max_steps == 0) {
        opt.max_steps = 100000;
    }
    if (!S.locs) {
        S.locs = calloc(MAX_LOCS, sizeof *S.locs);
        S.loc_key = calloc(MAX_LOCS, sizeof *S.loc_key);
        S.log = calloc(LOG_CAP, sizeof *S.log);
        S.used = calloc(MAX_LOCS, sizeof *S.used);
    }
    S.explorer = pthread_self();
    mc_fiber_init_main(&S.main);
    S.o = &opt;
    S.failed = false;
    S.message[0] = '\0';
    S.trace_len = 0;
    S.replay_len = 0;
    for (const char *c = opt.replay; c && *c;) {
        char *end;
        unsigned long at = strtoul(c, &end, 10);
        if (end == c || *end != '=') {
            break; /* not "point=option": the rest is ignored */
        }
        unsigned long v = strtoul(end + 1, &end, 10);
        while (S.trace_len <= at) {
            grow_trace();
            /* the point's kind and options are learnt when the execution reaches it */
            S.trace[S.trace_len++] = (choice_t){0, 0, 0};
        }
        S.trace[at].chosen = (uint8_t)v;
        c = *end == ',' ? end + 1 : end;
    }
    S.replay_len = S.trace_len;
    S.reduce = !opt.replay && !opt.no_reduction;
    S.exploring = true;
    for (;;) {
        reset_execution();
        (void)start_locked(main, arg, true);
        S.cur = 0;
        mc_fiber_switch(&S.main, &S.fib[0]); /* back when the execution ended */
        r.executions++;
        r.redundant += S.redundant;
        if (S.trace_len > r.max_depth) {
            r.max_depth = S.trace_len;
        }
        r.weakened = S.weakened > r.weakened ? S.weakened : r.weakened;
        if (S.failed) {
            break;
        }
        if (opt.replay) {
            break;
        }
        /* backtrack: the deepest choice with an untried option */
        size_t i = S.trace_len;
        while (i > 0 && next_option(i - 1) >= S.trace[i - 1].n) {
            --i;
        }
        if (i == 0) {
            r.exhaustive = true;
            break;
        }
        S.trace[i - 1].chosen = (uint8_t)next_option(i - 1);
        S.trace_len = i;
        S.replay_len = i;
        if (opt.max_executions && r.executions >= opt.max_executions) {
            break;
        }
    }
    r.failed = S.failed;
    snprintf(r.message, sizeof r.message, "%s", S.message);
    S.exploring = false; /* the fibers of a failed execution are never resumed */
    if (!o->quiet) {
        fprintf(stderr,
                "[mc] %s: %s after %" PRIu64 " executions (%" PRIu64 " cut by sleep sets%s; "
                "pre-emption bound %d, stale-read "
                "bound %d, history %d, deepest %" PRIu64 " choices)%s%s\n",
                o->name ? o->name : "scenario",
                r.failed ? "FAILED" : (r.exhaustive ? "exhaustive, no failure" : "stopped"),
                r.executions, r.redundant, S.reduce ? "" : ", off", opt.preemptions,
                opt.stale_reads, opt.history, r.max_depth, r.failed ? ": " : "",
                r.failed ? r.message : "");
    }
    return r;
}
