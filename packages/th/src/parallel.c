/* libTH's thread pool: the one set of worker threads in the process.
 *
 * th_parallel_for splits [0, n) into chunks; the calling thread and the
 * pool's workers claim chunks from one shared counter until none is left.
 * The caller never waits for a worker that has not started: a late worker
 * (asleep, or preempted because the cores are busy) finds nothing left to
 * claim, and the caller has done its share.  It only waits for chunks that
 * a worker claimed and has not finished.
 *
 * No collapse under load, first by looking: every few milliseconds a
 * region's caller reads how many threads the machine has runnable
 * (/proc/loadavg), and a region uses no more threads than the cores the
 * other processes leave free (a look costs ~5 us; three looks in a row
 * must agree, so a daemon waking for a moment, or one of the pool's own
 * workers still on its way out of sleep, does not narrow the pool; after
 * an idle spell the first look decides alone).  Then
 * by noticing what the look misses (a cgroup's CPU quota, load that comes
 * and goes faster than the looks):
 * when the caller waited much longer for such a
 * chunk than its own chunks took, and the worker holding it spent much of
 * that wait off the CPU (it was preempted: a chunk that is merely slower,
 * first touching fresh pages say, is not a sign of load), the region
 * "stalled" (for OpenBLAS's jobs, which wait for each other by
 * yielding the CPU, also when the caller spent over a quarter of its job
 * off the CPU); the following regions run on half as many threads
 * for a back-off period that doubles while stalls recur soon after it
 * ends (10 ms to 1 s; a worker slow to join OpenBLAS's jobs only 10 ms)
 * and starts again at 10 ms after a quiet spell.  A
 * busy machine so settles on the caller alone, probing the full width
 * about once a second; a quiet one never backs off.
 *
 * Waiting: a worker spins for a short while after each region (the next
 * op usually follows within microseconds) and then sleeps on a condition
 * variable, so an idle pool costs no CPU.
 *
 * OpenBLAS's parallel sections run here too (th__blas_sync and the threads
 * callback at the end of this file): its jobs wait for each other, so they
 * need as many threads at once as there are jobs.
 *
 * fork(): the child has only the forking thread, so pthread_atfork's child
 * handler forgets the parent's workers; the child starts its own pool the
 * first time it needs one. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "th_internal.h"

#include <stdio.h>

#ifndef TH_NO_THREADS
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#endif

#ifndef TH_NO_BLAS
void scipy_openblas_set_num_threads(int n);
int scipy_openblas_get_num_threads(void);
#endif

/* chunks per thread: small enough that a preempted worker holds little */
#define CHUNKS_PER_THREAD 4
/* the most threads one region can use (the join counter has 8 bits) */
#define MAX_THREADS 256

static __thread int in_region; /* this thread runs a chunk or is a worker */

int th_in_parallel(void) { return in_region; }

#ifdef TH_NO_THREADS

int th_get_num_threads(void) { return 1; }
int th_has_threads(void) { return 0; }

int th_set_num_threads(int n) {
    if (n < 1)
        return th__error(TH_ERR_VALUE,
                         "set_num_threads expects a positive integer, got %d",
                         n);
    return TH_OK;
}

void th_parallel_for(int64_t n, int64_t grain, th_range_fn fn, void *ctx) {
    (void)grain;
    if (n <= 0)
        return;
    int was = in_region;
    in_region = 1;
    fn(0, n, ctx);
    in_region = was;
}

int th_parallel_info(char *buf, int64_t size) {
    if (!buf || size < 1)
        return th__error(TH_ERR_VALUE, "parallel_info: no buffer");
    snprintf(buf, (size_t)size,
             "libTH %s: single-threaded build (TH_NO_THREADS)\n",
             TH_VERSION_STRING);
    size_t used = strlen(buf);
    th__cache_describe(buf + used, (size_t)size - used);
    return TH_OK;
}

void th__blas_sync(double work) { (void)work; }
void th__blas_in_region(void) {}

#else /* threaded build */

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CPU time this thread has run: what it falls behind the wall clock by
 * is time spent off the CPU (preempted, or yielded to another process). */
static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ---- settings ------------------------------------------------------- */

static int num_threads;        /* 0: not yet read from the environment */
static int64_t spin_ns = 2000000; /* how long idle workers spin (EMBER_SPIN_US) */

int th_has_threads(void) { return 1; }

static int online_cpus(void) {
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return n;
    }
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static int env_int(const char *name, int fallback) {
    const char *s = getenv(name);
    if (!s || !*s)
        return fallback;
    char *end;
    long v = strtol(s, &end, 10);
    return (*end == '\0' && v >= 0 && v <= 1000000000) ? (int)v : fallback;
}

int th_get_num_threads(void) {
    int n = __atomic_load_n(&num_threads, __ATOMIC_RELAXED);
    if (n == 0) { /* first use: OMP_NUM_THREADS, as PyTorch reads it */
        n = env_int("OMP_NUM_THREADS", 0);
        if (n < 1)
            n = online_cpus();
        if (n > MAX_THREADS)
            n = MAX_THREADS;
        int unset = 0; /* a concurrent th_set_num_threads wins */
        if (!__atomic_compare_exchange_n(&num_threads, &unset, n, 0,
                                         __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            n = unset;
        spin_ns = (int64_t)env_int("EMBER_SPIN_US", 2000) * 1000;
    }
    return n;
}

int th_set_num_threads(int n) {
    if (n < 1)
        return th__error(TH_ERR_VALUE,
                         "set_num_threads expects a positive integer, got %d",
                         n);
    if (n > MAX_THREADS)
        return th__error(TH_ERR_VALUE,
                         "set_num_threads: at most %d threads, got %d",
                         MAX_THREADS, n);
    th_get_num_threads(); /* reads the environment's settings once */
    __atomic_store_n(&num_threads, n, __ATOMIC_RELAXED);
    return TH_OK;
}

/* ---- the pool ------------------------------------------------------- */

/* The ticket word: generation (32 bits) | threads joined (8) | next chunk
 * (24).  Claiming a chunk or joining is one compare-and-swap on it, so a
 * worker that read an old job's fields can never claim in a newer job. */
#define T_GEN(t) ((uint32_t)((t) >> 32))
#define T_JOINED(t) ((int)(((t) >> 24) & 0xff))
#define T_NEXT(t) ((int64_t)((t) & 0xffffff))
#define T_MAKE(g, j, c) (((uint64_t)(g) << 32) | ((uint64_t)(j) << 24) | (uint64_t)(c))

typedef struct pool {
    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* idle workers sleep here */
    pthread_cond_t done_cv; /* the caller sleeps here for claimed chunks */
    int nworkers;           /* started */
    int busy;               /* a caller owns the pool */
    uint64_t ticket;
    /* the current job, written before its ticket is published */
    th_range_fn fn;
    void *ctx;
    int64_t n, nchunks, grain;
    int limit;              /* workers that may join */
    int64_t done;           /* chunks finished */
    int64_t all_joined_ns;  /* when the last worker joined */
    int64_t worker_off_ns;  /* the most time a worker spent off the CPU */
    int sleepers;           /* workers in cond_wait */
    int caller_waiting;
    /* adaptive width */
    int64_t backoff_until, backoff_ns, last_stall_ns;
    int reduced_width;
    /* statistics */
    int64_t regions, serial_busy, stalls, gangs, gang_spawned;
} pool;

static pool P = {.mu = PTHREAD_MUTEX_INITIALIZER,
                 .work_cv = PTHREAD_COND_INITIALIZER,
                 .done_cv = PTHREAD_COND_INITIALIZER};

#define BACKOFF_MIN_NS 10000000   /* 10 ms */
#define BACKOFF_MAX_NS 1000000000 /* 1 s */

/* Chunk c's start.  With a grain of at least ALIGN, starts are multiples
 * of ALIGN, so a kernel's vector loop groups elements as in a serial run
 * (only the last chunk has a scalar tail): element-wise results do not
 * depend on the thread count. */
#define ALIGN 64
static int64_t chunk_start(int64_t n, int64_t nchunks, int64_t grain,
                           int64_t c) {
    if (c >= nchunks)
        return n;
    int64_t b = n / nchunks * c + TH_MIN(c, n % nchunks);
    return grain >= ALIGN ? b - b % ALIGN : b;
}

static void run_chunk(th_range_fn fn, void *ctx, int64_t n, int64_t nchunks,
                      int64_t grain, int64_t c) {
    int64_t b = chunk_start(n, nchunks, grain, c);
    int64_t e = chunk_start(n, nchunks, grain, c + 1);
    if (b < e)
        fn(b, e, ctx);
}

static void finish_chunks(int64_t count, int64_t nchunks) {
    int64_t d = __atomic_add_fetch(&P.done, count, __ATOMIC_ACQ_REL);
    if (d == nchunks && __atomic_load_n(&P.caller_waiting, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&P.mu);
        pthread_cond_signal(&P.done_cv);
        pthread_mutex_unlock(&P.mu);
    }
}

/* A worker's part in the job of generation `gen`: join, then claim chunks. */
static void work_on(uint32_t gen) {
    uint64_t t = __atomic_load_n(&P.ticket, __ATOMIC_ACQUIRE);
    if (T_GEN(t) != gen)
        return;
    th_range_fn fn = __atomic_load_n(&P.fn, __ATOMIC_RELAXED);
    void *ctx = __atomic_load_n(&P.ctx, __ATOMIC_RELAXED);
    int64_t n = __atomic_load_n(&P.n, __ATOMIC_RELAXED);
    int64_t nchunks = __atomic_load_n(&P.nchunks, __ATOMIC_RELAXED);
    int64_t grain = __atomic_load_n(&P.grain, __ATOMIC_RELAXED);
    int limit = __atomic_load_n(&P.limit, __ATOMIC_RELAXED);
    for (;;) { /* join */
        if (T_GEN(t) != gen || T_JOINED(t) >= limit || T_NEXT(t) >= nchunks)
            return;
        if (__atomic_compare_exchange_n(&P.ticket, &t, t + (1u << 24), 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            break;
    }
    t += 1u << 24;
    int64_t w0 = now_ns(), c0 = thread_cpu_ns();
    if (T_JOINED(t) == limit)
        __atomic_store_n(&P.all_joined_ns, w0, __ATOMIC_RELAXED);
    for (;;) { /* claim */
        if (T_GEN(t) != gen || T_NEXT(t) >= nchunks)
            return;
        if (__atomic_compare_exchange_n(&P.ticket, &t, t + 1, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            run_chunk(fn, ctx, n, nchunks, grain, T_NEXT(t));
            /* time off the CPU since joining, told before the chunk counts
             * as done (the caller reads it once all are); measured only
             * when that time could matter */
            int64_t w = now_ns();
            if (w - w0 > 100000 && c0 >= 0) {
                int64_t off = (w - w0) - (thread_cpu_ns() - c0);
                int64_t seen = __atomic_load_n(&P.worker_off_ns, __ATOMIC_RELAXED);
                while (off > seen &&
                       !__atomic_compare_exchange_n(&P.worker_off_ns, &seen, off, 0,
                                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                    ;
            }
            finish_chunks(1, nchunks);
            t = __atomic_load_n(&P.ticket, __ATOMIC_ACQUIRE);
        }
    }
}

static void *worker_main(void *arg) {
    in_region = 1; /* kernels called here never start nested regions */
    /* the generation when the owner started us, before it published the
     * job we are started for: reading the ticket here could already see
     * that job and wait past it */
    uint32_t seen = (uint32_t)(uintptr_t)arg;
    for (;;) {
        uint32_t gen = seen;
        int64_t until = now_ns() + spin_ns;
        for (int i = 0;; i++) {
            gen = T_GEN(__atomic_load_n(&P.ticket, __ATOMIC_ACQUIRE));
            if (gen != seen || ((i & 63) == 63 && now_ns() > until))
                break;
            cpu_relax();
        }
        if (gen == seen) {
            pthread_mutex_lock(&P.mu);
            __atomic_add_fetch(&P.sleepers, 1, __ATOMIC_SEQ_CST);
            while ((gen = T_GEN(__atomic_load_n(&P.ticket, __ATOMIC_SEQ_CST))) == seen)
                pthread_cond_wait(&P.work_cv, &P.mu);
            __atomic_sub_fetch(&P.sleepers, 1, __ATOMIC_SEQ_CST);
            pthread_mutex_unlock(&P.mu);
        }
        seen = gen;
        work_on(gen);
    }
    return NULL;
}

/* Starts workers up to `want` (called by the pool's owner). */
static int ensure_workers(int want) {
    while (P.nworkers < want) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_t th;
        uint32_t gen = T_GEN(__atomic_load_n(&P.ticket, __ATOMIC_RELAXED));
        int rc = pthread_create(&th, &attr, worker_main, (void *)(uintptr_t)gen);
        pthread_attr_destroy(&attr);
        if (rc != 0)
            break; /* run with the workers there are */
        P.nworkers++;
    }
    return P.nworkers;
}

static int acquire_pool(void) {
    int free_ = 0;
    return __atomic_compare_exchange_n(&P.busy, &free_, 1, 0, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

static void release_pool(void) { __atomic_store_n(&P.busy, 0, __ATOMIC_RELEASE); }

/* ---- the machine's load ---------------------------------------------- */

/* Threads of other processes (and this one's other threads) runnable at
 * each of the last LOOKS looks, and when each was taken.  A busy process
 * is runnable at every look; a daemon waking for a moment, or a worker
 * signalled but not yet running (still counted asleep), at one or two: on
 * a quiet 2-core VM one look in twenty saw such a thread, two in a row
 * narrowed a region in a hundred (summing 2^24 floats, 20 of ~300
 * regions), three in a row none.  Looks older than LOOK_RECENT_NS do not
 * count: after an idle spell the first look decides alone for one
 * interval (a training step that starts beside busy processes runs narrow
 * at once; a daemon seen then narrows 4 ms). */
#define LOOKS 3
#define LOAD_INTERVAL_NS 4000000 /* 4 ms: reading costs ~5 us */
#define LOOK_RECENT_NS (2 * LOOKS * LOAD_INTERVAL_NS)
static int load_others[LOOKS] = {-1, -1, -1};
static int64_t load_at[LOOKS];
static int64_t load_read_ns; /* when /proc/loadavg was last read */
static int load_check = -1;  /* EMBER_LOAD_CHECK, read on first use */

/* the fewest other runnable threads over the recent looks (-1: none) */
static int seen_others(int64_t now) {
    int least = -1;
    for (int i = 0; i < LOOKS; i++) {
        int n = __atomic_load_n(&load_others[i], __ATOMIC_RELAXED);
        int64_t at = __atomic_load_n(&load_at[i], __ATOMIC_RELAXED);
        if (n >= 0 && now - at <= LOOK_RECENT_NS && (least < 0 || n < least))
            least = n;
    }
    return least;
}

/* The running count of /proc/loadavg ("0.1 0.2 0.3 R/T last-pid"): the
 * threads on a CPU or waiting for one, system-wide, right now. */
static int runnable_now(void) {
#ifdef __linux__
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[128];
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0)
        return -1;
    buf[got] = '\0';
    const char *slash = strchr(buf, '/');
    if (!slash)
        return -1;
    const char *p = slash;
    while (p > buf && p[-1] >= '0' && p[-1] <= '9')
        p--;
    return p < slash ? atoi(p) : -1;
#else
    return -1;
#endif
}

/* Cores free for this process's pool: the online CPUs (all of them, not
 * this process's affinity set: /proc/loadavg counts every CPU's threads)
 * less the runnable threads that are not the pool's.  Looked up at most
 * every LOAD_INTERVAL_NS by whichever caller finds it due. */
static int cores_free(int nt) {
    int check = __atomic_load_n(&load_check, __ATOMIC_RELAXED);
    if (check < 0) { /* (callers on several threads read the same setting) */
        check = env_int("EMBER_LOAD_CHECK", 1) != 0;
        __atomic_store_n(&load_check, check, __ATOMIC_RELAXED);
    }
    if (!check)
        return nt;
    int64_t now = now_ns(), last = __atomic_load_n(&load_read_ns, __ATOMIC_RELAXED);
    if (now - last >= LOAD_INTERVAL_NS &&
        __atomic_compare_exchange_n(&load_read_ns, &last, now, 0,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        int running = runnable_now();
        /* ours: this thread and the workers not asleep (spinning) */
        int awake = __atomic_load_n(&P.nworkers, __ATOMIC_RELAXED) -
                    __atomic_load_n(&P.sleepers, __ATOMIC_RELAXED);
        int others = running < 0 ? -1 : TH_MAX(0, running - 1 - TH_MAX(0, awake));
        for (int i = 0; i < LOOKS - 1; i++) {
            __atomic_store_n(&load_others[i], __atomic_load_n(&load_others[i + 1], __ATOMIC_RELAXED),
                             __ATOMIC_RELAXED);
            __atomic_store_n(&load_at[i], __atomic_load_n(&load_at[i + 1], __ATOMIC_RELAXED),
                             __ATOMIC_RELAXED);
        }
        __atomic_store_n(&load_others[LOOKS - 1], others, __ATOMIC_RELAXED);
        __atomic_store_n(&load_at[LOOKS - 1], now, __ATOMIC_RELAXED);
    }
    int others = seen_others(now);
    if (others < 0)
        return nt;
    static int online;
    int cpus = __atomic_load_n(&online, __ATOMIC_RELAXED);
    if (!cpus) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        cpus = c > 0 ? (int)c : 1;
        __atomic_store_n(&online, cpus, __ATOMIC_RELAXED);
    }
    return TH_MAX(1, cpus - others);
}

/* Width for the next region: the thread count, no more than the cores the
 * machine's load leaves free, halved while backing off. */
static int current_width(void) {
    int nt = th_get_num_threads();
    if (nt > 1)
        nt = TH_MIN(nt, cores_free(nt));
    int64_t until = __atomic_load_n(&P.backoff_until, __ATOMIC_RELAXED);
    if (until && now_ns() < until)
        nt = TH_MIN(nt, __atomic_load_n(&P.reduced_width, __ATOMIC_RELAXED));
    return nt;
}

/* How a region ended (run_job's verdict): well; a stall that shows a
 * preempted worker (a claimed chunk waited for, or a join over 2 ms); a
 * slow join (0.5-2 ms). */
enum { RAN_WELL, STALL_CHUNK, STALL_JOIN };

/* A chunk stall (the caller waited for a chunk a preempted worker held)
 * that comes soon after the last back-off ended means the load is still
 * there: the back-off doubles; one after a quiet spell starts again at the
 * minimum.  One good region is no evidence that the load has gone (a
 * preempted worker holds a chunk in only some regions), so it does not
 * end the back-off.  A slow join (OpenBLAS's jobs waited 0.5-2 ms for a
 * worker to start) backs off for the minimum only: on a quiet virtual
 * machine a sleeping worker is sometimes that slow to wake, and doubling
 * on those ran ResNet's products on one thread for seconds. */
static void note_outcome(int width, int outcome) {
    if (outcome == RAN_WELL)
        return;
    int64_t now = now_ns();
    P.stalls++;
    __atomic_store_n(&P.reduced_width, TH_MAX(1, width / 2), __ATOMIC_RELAXED);
    int64_t length = BACKOFF_MIN_NS;
    if (outcome == STALL_CHUNK) {
        int recurring = P.backoff_ns &&
                        now - P.last_stall_ns < 2 * P.backoff_ns + BACKOFF_MIN_NS;
        P.backoff_ns = recurring ? TH_MIN(2 * P.backoff_ns, BACKOFF_MAX_NS)
                                 : BACKOFF_MIN_NS;
        P.last_stall_ns = now;
        length = P.backoff_ns;
    }
    __atomic_store_n(&P.backoff_until, now + length, __ATOMIC_RELAXED);
}

/* Runs a job of `nchunks` chunks on `width` threads (caller included);
 * the pool is owned by the caller.  Returns how it went (RAN_WELL,
 * STALL_CHUNK, STALL_JOIN). */
static int run_job(th_range_fn fn, void *ctx, int64_t n, int64_t grain,
                   int64_t nchunks, int width, int gang) {
    int workers = ensure_workers(width - 1);
    int limit = TH_MIN(width - 1, workers);
    __atomic_store_n(&P.fn, fn, __ATOMIC_RELAXED);
    __atomic_store_n(&P.ctx, ctx, __ATOMIC_RELAXED);
    __atomic_store_n(&P.n, n, __ATOMIC_RELAXED);
    __atomic_store_n(&P.nchunks, nchunks, __ATOMIC_RELAXED);
    __atomic_store_n(&P.grain, grain, __ATOMIC_RELAXED);
    __atomic_store_n(&P.limit, limit, __ATOMIC_RELAXED);
    __atomic_store_n(&P.done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&P.all_joined_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&P.worker_off_ns, 0, __ATOMIC_RELAXED);
    int64_t t0 = now_ns();
    int64_t cpu0 = gang ? thread_cpu_ns() : -1;
    uint64_t t = __atomic_load_n(&P.ticket, __ATOMIC_RELAXED);
    uint32_t gen = T_GEN(t) + 1;
    __atomic_store_n(&P.ticket, T_MAKE(gen, 0, 0), __ATOMIC_SEQ_CST);
    int sleepers = __atomic_load_n(&P.sleepers, __ATOMIC_SEQ_CST);
    if (sleepers > 0 && limit > 0) {
        pthread_mutex_lock(&P.mu);
        for (int i = 0; i < TH_MIN(sleepers, limit); i++)
            pthread_cond_signal(&P.work_cv);
        pthread_mutex_unlock(&P.mu);
    }
    /* the caller claims chunks too */
    int64_t own = 0;
    t = __atomic_load_n(&P.ticket, __ATOMIC_ACQUIRE);
    for (;;) {
        if (T_NEXT(t) >= nchunks)
            break;
        if (__atomic_compare_exchange_n(&P.ticket, &t, t + 1, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            run_chunk(fn, ctx, n, nchunks, grain, T_NEXT(t));
            own++;
            t = __atomic_load_n(&P.ticket, __ATOMIC_ACQUIRE);
        }
    }
    int64_t t1 = now_ns();
    int64_t cpu1 = cpu0 >= 0 ? thread_cpu_ns() : -1;
    if (own)
        finish_chunks(own, nchunks);
    /* wait for the chunks that workers claimed: spin, then sleep */
    int64_t spin_until = t1 + 50000;
    for (int i = 0; __atomic_load_n(&P.done, __ATOMIC_ACQUIRE) != nchunks; i++) {
        if ((i & 63) == 63 && now_ns() > spin_until) {
            pthread_mutex_lock(&P.mu);
            __atomic_store_n(&P.caller_waiting, 1, __ATOMIC_SEQ_CST);
            while (__atomic_load_n(&P.done, __ATOMIC_SEQ_CST) != nchunks)
                pthread_cond_wait(&P.done_cv, &P.mu);
            __atomic_store_n(&P.caller_waiting, 0, __ATOMIC_RELAXED);
            pthread_mutex_unlock(&P.mu);
            break;
        }
        cpu_relax();
    }
    /* a region that had to wake sleeping workers (the pool sat idle for
     * over spin_ns; the pool's other workers may sleep on, unused): their
     * waking, not load, explains a late start.  On a
     * virtual machine the caller of such a region lost a 4 ms host tick
     * off the CPU, and backing off for it ran the next 10 ms on one thread
     * (a convolution's forward and backward after each 50 ms pause: 13 ->
     * 29 ms on 2 threads, slower than on 1).  Load shows in the regions
     * that follow, whose workers are awake, and in the look at the
     * machine's load. */
    if (limit > 0 && workers - sleepers < limit) /* fewer awake than it used */
        return RAN_WELL;
    /* stalled: the caller waited much longer for a claimed chunk than its
     * own chunks took, or (OpenBLAS's jobs, which wait for each other) the
     * workers took over half a millisecond to join */
    int64_t waited = now_ns() - t1;
    int64_t per_chunk = own ? (t1 - t0) / own : (t1 - t0);
    if (waited > 200000 && waited > 4 * per_chunk &&
        __atomic_load_n(&P.worker_off_ns, __ATOMIC_ACQUIRE) > waited / 2)
        return STALL_CHUNK;
    if (!gang || limit == 0)
        return RAN_WELL;
    /* OpenBLAS's jobs wait for each other yielding the CPU: with the cores
     * busy, a gang member that waits gives its core to another process for
     * a timeslice, and the product takes several times its work.  The
     * caller's time off the CPU while it ran its job (a wait for the
     * workers' jobs above may sleep; this part never does) shows it: over a
     * quarter of the job, and half a millisecond, is a stall. */
    if (cpu0 >= 0 && cpu1 >= 0) {
        int64_t off = (t1 - t0) - (cpu1 - cpu0);
        if (off > 500000 && off > (t1 - t0) / 4)
            return STALL_CHUNK;
    }
    /* a worker that took a scheduler timeslice (over 2 ms) to join was
     * preempted; 0.5-2 ms may be a sleeping worker slow to wake */
    int64_t joined = __atomic_load_n(&P.all_joined_ns, __ATOMIC_RELAXED);
    int64_t late = joined ? joined - t0 : now_ns() - t0;
    return late > 2000000 ? STALL_CHUNK : late > 500000 ? STALL_JOIN : RAN_WELL;
}

void th_parallel_for(int64_t n, int64_t grain, th_range_fn fn, void *ctx) {
    if (n <= 0)
        return;
    if (grain < 1)
        grain = 1;
    int64_t max_chunks = n / grain;
    /* (a region too small to split never reads the clock for the width) */
    int width = in_region || max_chunks < 2 ? 1 : current_width();
    if (width > max_chunks)
        width = (int)max_chunks;
    int serial = width <= 1;
    /* a parallel region's tasks may call BLAS (a convolution's samples
     * side by side): their products run on one thread each; the next
     * product outside a region sets the width back.  A serial region
     * leaves OpenBLAS alone: setting its width starts its own threads
     * when it has none (a forked DataLoader worker), which then spin. */
    if (!serial)
        th__blas_sync(0);
    if (!serial && !acquire_pool()) { /* another thread's region has the cores */
        __atomic_add_fetch(&P.serial_busy, 1, __ATOMIC_RELAXED);
        serial = 1;
    }
    if (serial) {
        int was = in_region;
        in_region = 1;
        fn(0, n, ctx);
        in_region = was;
        return;
    }
    int64_t nchunks = TH_MIN(max_chunks, (int64_t)width * CHUNKS_PER_THREAD);
    in_region = 1;
    P.regions++;
    int outcome = run_job(fn, ctx, n, grain, nchunks, width, 0);
    in_region = 0;
    note_outcome(width, outcome);
    release_pool();
}

/* ---- OpenBLAS on the pool ------------------------------------------- */
#ifndef TH_NO_BLAS
typedef void (*blas_dojob_fn)(int, void *, int);
typedef void (*blas_threads_fn)(int, blas_dojob_fn, int, size_t, void *, int);
void scipy_openblas_set_threads_callback_function(blas_threads_fn);

typedef struct {
    blas_dojob_fn dojob;
    char *jobdata;
    size_t elsize;
    int arg;
} blas_gang;

static void blas_range(int64_t b, int64_t e, void *ctx) {
    blas_gang *g = ctx;
    for (int64_t i = b; i < e; i++)
        g->dojob((int)i, g->jobdata + (size_t)i * g->elsize, g->arg);
}

typedef struct {
    blas_gang *g;
    int64_t i;
} blas_one;

static void *blas_thread(void *arg) {
    blas_one *o = arg;
    in_region = 1;
    blas_range(o->i, o->i + 1, o->g);
    return NULL;
}

/* Starts a thread, retrying for a while when the system is out of them
 * (EAGAIN is usually transient). */
static int start_thread(pthread_t *th, void *(*fn)(void *), void *arg) {
    for (int tries = 0; tries < 2000; tries++) {
        if (pthread_create(th, NULL, fn, arg) == 0)
            return 1;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return 0;
}

/* OpenBLAS's jobs wait for each other, so all must run at once.  They run
 * on the pool, waiting for another thread's region to end if need be;
 * only a call from inside a region (OpenBLAS keeps products that small
 * on one thread, so this is rare) gets threads made for it. */
static void blas_threads(int sync, blas_dojob_fn dojob, int numjobs,
                         size_t elsize, void *jobdata, int arg) {
    (void)sync;
    blas_gang g = {dojob, jobdata, elsize, arg};
    if (numjobs <= 1) {
        blas_range(0, numjobs, &g);
        return;
    }
    if (!in_region && numjobs <= MAX_THREADS) {
        while (!acquire_pool())
            sched_yield();
        if (ensure_workers(numjobs - 1) >= numjobs - 1) {
            in_region = 1;
            P.gangs++;
            int outcome = run_job(blas_range, &g, numjobs, 1, numjobs, numjobs, 1);
            in_region = 0;
            note_outcome(numjobs, outcome);
            release_pool();
            return;
        }
        release_pool();
    }
    __atomic_add_fetch(&P.gang_spawned, 1, __ATOMIC_RELAXED);
    pthread_t th[MAX_THREADS];
    blas_one one[MAX_THREADS];
    int started = 1; /* job 0 runs on this thread */
    for (int i = 1; i < numjobs && i < MAX_THREADS; i++) {
        one[i] = (blas_one){&g, i};
        if (!start_thread(&th[i], blas_thread, &one[i]))
            break;
        started++;
    }
    if (started < numjobs) {
        /* OpenBLAS's jobs would wait for each other forever, and its
         * callback has no way to report an error: the one place libTH
         * ends the process, after two seconds without a thread */
        fprintf(stderr, "libTH: cannot start threads for an OpenBLAS product "
                        "(system thread limit reached)\n");
        abort();
    }
    int was = in_region;
    in_region = 1;
    blas_range(0, 1, &g);
    in_region = was;
    for (int i = 1; i < started; i++)
        pthread_join(th[i], NULL);
}

/* OpenBLAS splits a product into as many jobs as its thread count: keep
 * that at the pool's current width (1 inside a region, and as one
 * starts: th_parallel_for). */
static int blas_width_set;

/* Below TH_BLAS_THREAD_WORK multiply-adds OpenBLAS runs a product on one
 * thread: it splits from about 2^18, but its jobs wait for each other, and
 * for a job of a few hundred microseconds that costs more than it gains
 * (a LeNet conv's banded products were slower on 2 threads than on 1);
 * linalg.c splits such products into independent parts instead. */
void th__blas_sync(double work) {
    int w = in_region || work < TH_BLAS_THREAD_WORK ? 1 : current_width();
    if (__atomic_load_n(&blas_width_set, __ATOMIC_RELAXED) != w) {
        scipy_openblas_set_num_threads(w);
        __atomic_store_n(&blas_width_set, w, __ATOMIC_RELAXED);
    }
}

/* A region that ran serially (one thread set, a busy machine, a small
 * loop) leaves OpenBLAS's width as it was, maybe above 1: its products
 * would then call blas_threads from inside the region, which makes
 * threads for each one.  The width is set only when it is above 1 (asked
 * of OpenBLAS the first time), since setting it starts OpenBLAS's own
 * threads in a forked child that has none. */
void th__blas_in_region(void) {
    int w = __atomic_load_n(&blas_width_set, __ATOMIC_RELAXED);
    if (w == 1)
        return;
    if (w == 0 && scipy_openblas_get_num_threads() <= 1) {
        __atomic_store_n(&blas_width_set, 1, __ATOMIC_RELAXED);
        return;
    }
    scipy_openblas_set_num_threads(1);
    __atomic_store_n(&blas_width_set, 1, __ATOMIC_RELAXED);
}
#else
void th__blas_sync(double work) { (void)work; }
void th__blas_in_region(void) {}
#endif

/* ---- fork ----------------------------------------------------------- */

static void atfork_child(void) {
    /* the parent's workers do not exist here: start afresh */
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv1 = PTHREAD_COND_INITIALIZER, cv2 = PTHREAD_COND_INITIALIZER;
    P.mu = mu;
    P.work_cv = cv1;
    P.done_cv = cv2;
    P.nworkers = 0;
    P.busy = 0;
    P.sleepers = 0;
    P.caller_waiting = 0;
    P.backoff_until = 0;
    P.backoff_ns = 0;
    P.last_stall_ns = 0;
    P.regions = P.serial_busy = P.stalls = P.gangs = P.gang_spawned = 0;
    in_region = 0;
    th__cache_after_fork();
    /* blas_width_set stays: OpenBLAS's own width setting is inherited
     * too, and setting it again would start OpenBLAS's threads here */
}

__attribute__((constructor)) static void pool_init(void) {
    pthread_atfork(NULL, NULL, atfork_child);
#ifndef TH_NO_BLAS
    scipy_openblas_set_threads_callback_function(blas_threads);
#endif
}

int th_parallel_info(char *buf, int64_t size) {
    if (!buf || size < 1)
        return th__error(TH_ERR_VALUE, "parallel_info: no buffer");
    int64_t now = now_ns();
    int backing_off = P.backoff_until && now < P.backoff_until;
    int width = current_width();
    char load_text[64];
    int others = seen_others(now);
    if (__atomic_load_n(&load_check, __ATOMIC_RELAXED) == 0)
        snprintf(load_text, sizeof load_text, "not looked at (EMBER_LOAD_CHECK=0)");
    else if (others < 0)
        snprintf(load_text, sizeof load_text, "not looked at lately");
    else
        snprintf(load_text, sizeof load_text, "%d (of %d CPUs)", others,
                 (int)sysconf(_SC_NPROCESSORS_ONLN));
    snprintf(buf, (size_t)size,
             "libTH %s thread pool\n"
             "\tthreads (th_get_num_threads): %d\n"
             "\tworkers started: %d\n"
             "\tidle spin before sleeping: %lld us\n"
             "\tregions run: %lld (%lld OpenBLAS)\n"
             "\tOpenBLAS products on threads made for them: %lld\n"
             "\tregions run serially (pool busy in another thread): %lld\n"
             "\tstalls (a worker preempted mid-chunk): %lld\n"
             "\twidth now: %d%s\n"
             "\tother runnable threads on the machine: %s\n"
             "\tOpenBLAS: %s\n",
             TH_VERSION_STRING, th_get_num_threads(), P.nworkers,
             (long long)(spin_ns / 1000), (long long)P.regions,
             (long long)P.gangs, (long long)P.gang_spawned, (long long)P.serial_busy,
             (long long)P.stalls, width,
             backing_off ? " (backing off: the cores are busy)" : "",
             load_text,
#ifdef TH_NO_BLAS
             "not built in (TH_NO_BLAS)"
#else
             "runs its parallel sections on this pool"
#endif
    );
    size_t used = strlen(buf);
    th__cache_describe(buf + used, (size_t)size - used);
    return TH_OK;
}
#endif
