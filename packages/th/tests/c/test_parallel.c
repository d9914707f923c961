/* libTH's thread pool: th_parallel_for covers every index once, from one
 * thread or several at once, nested, and in a forked child. */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

typedef struct {
    int64_t n;
    unsigned char *hits; /* one counter per index */
    int64_t grain;
    int bad_range;       /* a range shorter than allowed, or misaligned */
} cover_ctx;

static void cover(int64_t b, int64_t e, void *p) {
    cover_ctx *c = p;
    if (b < 0 || e > c->n || b >= e)
        __atomic_store_n(&c->bad_range, 1, __ATOMIC_RELAXED);
    if (c->grain >= 64 && b % 64 != 0)
        __atomic_store_n(&c->bad_range, 1, __ATOMIC_RELAXED);
    for (int64_t i = b; i < e; i++)
        __atomic_add_fetch(&c->hits[i], 1, __ATOMIC_RELAXED);
}

/* 1 if every index of [0, n) was covered exactly once */
static int covers_once(int64_t n, int64_t grain) {
    cover_ctx c = {n, calloc((size_t)(n ? n : 1), 1), grain, 0};
    th_parallel_for(n, grain, cover, &c);
    int ok = !c.bad_range;
    for (int64_t i = 0; i < n; i++)
        ok &= c.hits[i] == 1;
    free(c.hits);
    return ok;
}

static void *cover_many(void *arg) {
    (void)arg;
    for (int r = 0; r < 200; r++)
        if (!covers_once(100000 + r, 1000))
            return (void *)1;
    return NULL;
}

typedef struct {
    int nested_ok;
} nest_ctx;

static void inner(int64_t b, int64_t e, void *p) {
    (void)b; (void)e; (void)p;
}

static void outer(int64_t b, int64_t e, void *p) {
    nest_ctx *c = p;
    if (!th_in_parallel())
        __atomic_store_n(&c->nested_ok, 0, __ATOMIC_RELAXED);
    for (int64_t i = b; i < e; i++)
        if (!covers_once(5000, 10)) /* a nested call runs serially */
            __atomic_store_n(&c->nested_ok, 0, __ATOMIC_RELAXED);
    th_parallel_for(100, 1, inner, NULL);
}

/* Two chunks that each wait (up to 5 s; 60 s under qemu-user, where
 * starting an emulated thread can take seconds) for the other to start:
 * they only finish when two threads take part. */
typedef struct {
    int started;
    int timed_out;
} pair_ctx;

static long partner_wait_s(void) { return getenv("TH_TEST_QEMU") ? 60 : 5; }

#include <time.h>
static void wait_for_partner(int64_t b, int64_t e, void *p) {
    pair_ctx *c = p;
    (void)e;
    __atomic_add_fetch(&c->started, 1, __ATOMIC_SEQ_CST);
    if (b != 0)
        return;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (__atomic_load_n(&c->started, __ATOMIC_SEQ_CST) < 2) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > partner_wait_s()) {
            __atomic_store_n(&c->timed_out, 1, __ATOMIC_SEQ_CST);
            return;
        }
    }
}

/* A region of two chunks where the worker holds one for SLOW_NS, on the
 * CPU (spinning) or off it (sleeping): the caller's chunk waits until the
 * worker has taken the other, so the caller then waits for the worker. */
#define SLOW_NS 20000000LL
typedef struct {
    pthread_t caller;
    int sleep; /* off the CPU, else spin */
    int worker_ran;
    int timed_out;
} slow_ctx;

static int64_t mono_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void slow_worker_chunk(int64_t b, int64_t e, void *p) {
    slow_ctx *c = p;
    if (e - b > 1) /* the region ran serially (backing off): nothing shown */
        return;
    if (pthread_equal(pthread_self(), c->caller)) {
        int64_t t0 = mono_ns();
        while (!__atomic_load_n(&c->worker_ran, __ATOMIC_SEQ_CST))
            if (mono_ns() - t0 > partner_wait_s() * 1000000000LL) {
                __atomic_store_n(&c->timed_out, 1, __ATOMIC_SEQ_CST);
                return;
            }
        return;
    }
    __atomic_store_n(&c->worker_ran, 1, __ATOMIC_SEQ_CST);
    if (c->sleep) {
        struct timespec d = {0, SLOW_NS};
        nanosleep(&d, NULL);
    } else {
        for (int64_t t0 = mono_ns(); mono_ns() - t0 < SLOW_NS;)
            ;
    }
}

static long long stall_count(void) {
    char info[2048];
    long long n = -1;
    if (th_parallel_info(info, sizeof info) != TH_OK)
        return -1;
    const char *at = strstr(info, "stalls");
    if (at && (at = strchr(at, ':')))
        sscanf(at + 1, "%lld", &n);
    return n;
}

/* the pool's width for the next region, from th_parallel_info */
static int width_now(void) {
    char info[2048];
    int w = -1;
    if (th_parallel_info(info, sizeof info) != TH_OK)
        return -1;
    const char *at = strstr(info, "width now:");
    if (at)
        sscanf(at + strlen("width now:"), "%d", &w);
    return w;
}

/* the other runnable threads the pool last saw (-1: not looked at) */
static int others_now(void) {
    char info[2048];
    int n = -1;
    if (th_parallel_info(info, sizeof info) != TH_OK)
        return -1;
    const char *at = strstr(info, "other runnable threads on the machine:");
    if (at)
        sscanf(at + strlen("other runnable threads on the machine:"), "%d", &n);
    return n;
}

/* runs a region every 5 ms (the pool looks at the load at most every 4)
 * for up to `seconds`, until the pool has seen at least `least` other
 * runnable threads (or, least < 0, fewer than -least); returns the last
 * count seen */
static int wait_for_others(int least, double seconds) {
    int n = -1;
    for (int64_t t0 = mono_ns(); mono_ns() - t0 < (int64_t)(seconds * 1e9);) {
        covers_once(1 << 16, 64);
        n = others_now();
        if (least >= 0 ? n >= least : (n >= 0 && n < -least))
            break;
        struct timespec gap = {0, 5000000};
        nanosleep(&gap, NULL);
    }
    return n;
}

/* 1 if a slow worker chunk was counted as a stall (-1: the worker never
 * took part, so nothing was shown) */
static int slow_region_stalls(int sleep) {
    slow_ctx c = {pthread_self(), sleep, 0, 0};
    long long before = stall_count();
    th_parallel_for(2, 1, slow_worker_chunk, &c);
    if (!c.worker_ran || c.timed_out)
        return -1;
    return stall_count() > before;
}

/* The pool looks at the machine's load: with every CPU kept busy by other
 * processes the next regions run on the caller alone, and the full width
 * comes back once they have gone.  Run in a child of its own, before the
 * parent turns the look off for the checks of the pool's mechanics (which
 * need a given width, whatever else the test machine runs).  Returns the
 * child's failed checks. */
static int check_load_look(void) {
    pid_t child = fork();
    if (child == 0) {
        alarm(60);
        CHECK(th_set_num_threads(2) == TH_OK);
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        pid_t hogs[64];
        int started = 0;
        for (long i = 0; i < cpus && i < 64; i++) {
            pid_t pid = fork();
            if (pid == 0) {
                alarm(20); /* ends it if this test dies first */
                for (volatile unsigned long spin = 0;; spin++)
                    ;
            }
            if (pid > 0)
                hogs[started++] = pid;
        }
        if (started == cpus) {
            CHECK(wait_for_others(started, 2.0) >= started);
            CHECK(width_now() == 1);
        }
        for (int i = 0; i < started; i++)
            kill(hogs[i], SIGKILL);
        for (int i = 0; i < started; i++)
            waitpid(hogs[i], NULL, 0);
        /* a busy test machine may keep a core or two taken for a while */
        int after = wait_for_others(-(int)cpus + 1, 3.0);
        CHECK(after >= 0 && after < cpus - 1);
        int width = 0; /* after any back-off the hogs caused (at most 1 s) */
        for (int i = 0; i < 150 && (width = width_now()) != 2; i++) {
            struct timespec gap = {0, 10000000};
            nanosleep(&gap, NULL);
        }
        CHECK(width == 2);
        _exit(check_failures ? 1 : 0);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child)
        return 1;
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void) {
    /* the look at the load first, in a child that still has it on (not
     * under qemu-user, whose /proc/loadavg is the host's) */
    if (th_has_threads() && !getenv("TH_TEST_QEMU") && !getenv("EMBER_LOAD_CHECK") &&
        sysconf(_SC_NPROCESSORS_ONLN) >= 2)
        CHECK(check_load_look() == 0);
    setenv("EMBER_LOAD_CHECK", "0", 1);

    /* settings */
    CHECK(th_get_num_threads() >= 1);
    CHECK(th_set_num_threads(0) == TH_ERR_VALUE);
    CHECK(th_set_num_threads(-3) == TH_ERR_VALUE);
    CHECK(th_set_num_threads(100000) == (th_has_threads() ? TH_ERR_VALUE : TH_OK));
    CHECK(th_set_num_threads(4) == TH_OK);
    CHECK(th_get_num_threads() == (th_has_threads() ? 4 : 1));
    CHECK(!th_in_parallel());

    /* a worker started for a region joins that region (it once waited
     * for the next one instead: OpenBLAS's first product then hung) */
    if (th_has_threads()) {
        for (int n = 2; n <= 4; n++) {
            CHECK(th_set_num_threads(n) == TH_OK);
            pair_ctx pc = {0, 0};
            th_parallel_for(2, 1, wait_for_partner, &pc);
            CHECK(!pc.timed_out);
        }
        CHECK(th_set_num_threads(4) == TH_OK);
    }

    /* coverage over sizes and grains, including tiny and unaligned ones */
    const int64_t sizes[] = {0, 1, 2, 63, 64, 65, 127, 1000, 4097, 100003, 1 << 20};
    const int64_t grains[] = {-5, 0, 1, 3, 64, 100, 32768};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t j = 0; j < sizeof grains / sizeof *grains; j++)
            CHECK(covers_once(sizes[i], grains[j]));

    /* several threads calling at once: one gets the pool, the others run
     * serially; every call still covers its range once */
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        CHECK(pthread_create(&th[i], NULL, cover_many, NULL) == 0);
    for (int i = 0; i < 3; i++) {
        void *rc;
        pthread_join(th[i], &rc);
        CHECK(rc == NULL);
    }

    /* nested regions */
    nest_ctx nc = {1};
    th_parallel_for(64, 1, outer, &nc);
    CHECK(nc.nested_ok);
    CHECK(!th_in_parallel());

    /* a forked child (the parent's pool is running) starts its own pool;
     * not under qemu-user (TH_TEST_QEMU set by embedded/aarch64.sh), which
     * aborts when a forked child of a threaded process starts a thread */
    CHECK(covers_once(1 << 20, 1000));
    if (getenv("TH_TEST_QEMU")) {
        printf("fork check skipped: qemu-user cannot start threads in a forked child\n");
    } else {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(30); /* a hang fails the test instead of blocking it */
            int ok = covers_once(1 << 20, 1000) && covers_once(777, 1);
            th_set_num_threads(2);
            ok &= covers_once(1 << 20, 1000);
            _exit(ok ? 0 : 1);
        }
        int status = 0;
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }

    /* a stall (the back-off under load) is a worker preempted, off the
     * CPU: a worker merely slower than the caller on the CPU (first-touch
     * page faults cost a worker milliseconds on a virtual machine) is not
     * one.  Busy CI cores may preempt the spinning worker now and then:
     * one of up to ten spinning regions must run without a stall. */
    if (th_has_threads()) {
        CHECK(th_set_num_threads(2) == TH_OK);
        int spin_clean = 0, spin_shown = 0;
        for (int i = 0; i < 10 && spin_clean == 0; i++) {
            struct timespec gap = {0, 50000000}; /* past a short back-off */
            nanosleep(&gap, NULL);
            int r = slow_region_stalls(0);
            spin_shown += r >= 0;
            spin_clean += r == 0;
        }
        CHECK(spin_shown > 0 && spin_clean > 0);
        /* the workers awake (a region just before waited for one, and it
           still spins): the one that sleeps in its chunk is a stall.  One
           of up to 20 tries must show it: a busy CI core can hold the
           worker back before it claims its chunk, and the caller's own
           chunk, which waits for it, then looks as slow as the wait */
        int sleep_stalled = -1;
        for (int i = 0; i < 20 && sleep_stalled != 1; i++) {
            struct timespec gap = {0, 50000000};
            nanosleep(&gap, NULL);
            if (slow_region_stalls(0) >= 0)
                sleep_stalled = slow_region_stalls(1);
        }
        CHECK(sleep_stalled == 1);
        /* a region that had to wake sleeping workers (the pool idle for
           50 ms, past the spin) does not count a late one as a stall: on a
           virtual machine waking them is slow */
        int woken_stalled = -1;
        for (int i = 0; i < 20 && woken_stalled < 0; i++) {
            struct timespec gap = {0, 50000000};
            nanosleep(&gap, NULL);
            woken_stalled = slow_region_stalls(1);
        }
        CHECK(woken_stalled == 0);
        CHECK(th_set_num_threads(4) == TH_OK);
    }

    char info[2048];
    CHECK(th_parallel_info(info, sizeof info) == TH_OK);
    CHECK(strstr(info, th_has_threads() ? "other runnable threads" : "single-threaded") != NULL);
    CHECK(strstr(info, th_has_threads() ? "thread pool" : "single-threaded") != NULL);
    CHECK(th_parallel_info(NULL, 10) == TH_ERR_VALUE);
    return check_report("test_parallel");
}
