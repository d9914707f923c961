/* Reference-counted storages: aligned heap, POSIX shared memory, mapped
 * files and wrapped external memory. */
/* MADV_HUGEPAGE is a Linux extension outside POSIX */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "th_internal.h"

/* Large blocks are 2 MiB aligned and marked for transparent huge pages,
 * so first touch costs one fault per 2 MiB instead of per 4 KiB. */
#define HUGE_THRESHOLD (4 << 20)
#define HUGE_ALIGN (2 << 20)

/* The size th__alloc gives a request of nbytes (>= 0): a whole number of
 * its alignment (the block cache matches blocks by it). */
static size_t block_size(int64_t nbytes) {
    size_t n = (size_t)(nbytes > 0 ? nbytes : 1);
    size_t align = n >= HUGE_THRESHOLD ? HUGE_ALIGN : TH_ALIGN;
    return (n + align - 1) / align * align;
}

void *th__alloc(int64_t nbytes) {
    void *p = NULL;
    if (nbytes < 0)
        return th__error_null(TH_ERR_RUNTIME,
                              "cannot allocate a negative number of bytes "
                              "(%lld)", (long long)nbytes);
    size_t n = block_size(nbytes);
    size_t align = n >= HUGE_THRESHOLD ? HUGE_ALIGN : TH_ALIGN;
    if (posix_memalign(&p, align, n) != 0)
        return th__error_null(TH_ERR_MEMORY,
                              "not enough memory: you tried to allocate "
                              "%lld bytes", (long long)nbytes);
#ifdef MADV_HUGEPAGE
    if (align == HUGE_ALIGN) madvise(p, n, MADV_HUGEPAGE);
#endif
    return p;
}

void th__free(void *p) { free(p); }

/* ---- the block cache ------------------------------------------------
 * Freeing a large block returns its pages to the system (glibc unmaps
 * or trims it), and the next tensor of that size faults every page in
 * again: on a virtual machine each fault costs microseconds, and a
 * training step that frees and reallocates the same activations each
 * time spent a tenth of its time there.  So storages of at least
 * CACHE_MIN bytes go, when released, to a small cache of blocks that the
 * next allocation of the same rounded size takes back (most recent
 * first; else the smallest block of up to twice the size), up to a
 * budget: EMBER_CPU_CACHE_MB, else 1/16 of the physical memory and at
 * most 512 MiB; 0 turns it off.  The oldest blocks leave first; an
 * allocation that fails empties the cache and tries again.
 * CACHE_MIN is 64 KiB: glibc maps blocks from 128 KiB (its first
 * threshold) and trims its heap top, so an LSTM cell's 128 KiB
 * temporaries, freed and made again each step, faulted 96-128 pages a
 * call (64x512: 336 -> 97 us with the cache taking them).  Sanitizer
 * builds do not cache (a reused block would hide a use-after-free). */
#define CACHE_MIN (64 << 10)
#define CACHE_SLOTS 128

#if defined(__SANITIZE_ADDRESS__)
#define TH_NO_BLOCK_CACHE
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TH_NO_BLOCK_CACHE
#endif
#endif

#ifdef TH_NO_BLOCK_CACHE
static void *cache_take(size_t n) { (void)n; return NULL; }
static int cache_keep(void *p, size_t n) { (void)p; (void)n; return 0; }
static int cache_drop_all(void) { return 0; }
void th__cache_after_fork(void) {}
void th__cache_describe(char *buf, size_t size) {
    if (size > 0)
        snprintf(buf, size, "\tblock cache: off (sanitizer build)\n");
}
#else
typedef struct {
    void *p;
    size_t n;
    uint64_t tick;
} cached_block;

static struct {
    char lock; /* a spinlock: held for a few loads and stores */
    int64_t budget; /* -1 until read from the environment */
    int64_t held;
    uint64_t tick;
    cached_block slot[CACHE_SLOTS];
    cached_block lent[CACHE_SLOTS]; /* larger blocks given to smaller storages */
} C = {.budget = -1};

static void cache_lock(void) {
    while (__atomic_test_and_set(&C.lock, __ATOMIC_ACQUIRE))
        ;
}
static void cache_unlock(void) { __atomic_clear(&C.lock, __ATOMIC_RELEASE); }

void th__cache_after_fork(void) { __atomic_clear(&C.lock, __ATOMIC_RELAXED); }

static int64_t cache_budget(void) {
    if (C.budget >= 0)
        return C.budget;
    const char *env = getenv("EMBER_CPU_CACHE_MB");
    int64_t b;
    if (env && *env) {
        char *end;
        long long mb = strtoll(env, &end, 10);
        b = *end || mb < 0 ? 0 : (mb > ((int64_t)1 << 40) ? (int64_t)1 << 60 : (int64_t)mb << 20);
    } else {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        b = pages > 0 && page > 0 ? (int64_t)pages / 16 * page : 0;
        if (b > ((int64_t)512 << 20)) b = (int64_t)512 << 20;
    }
    C.budget = b;
    return b;
}

/* A cached block for a storage of n bytes, or NULL: one of exactly n
 * bytes (the most recent), else the smallest of up to 2n, so that memory
 * held for one size serves the next size too (a training step's sizes
 * vary from layer to layer); a larger block's size is noted in `lent`. */
static void *cache_take(size_t n) {
    if (n < CACHE_MIN || __atomic_load_n(&C.held, __ATOMIC_RELAXED) == 0)
        return NULL;
    void *p = NULL;
    cache_lock();
    int best = -1, lent = -1;
    for (int i = 0; i < CACHE_SLOTS; i++) {
        size_t m = C.slot[i].n;
        if (!C.slot[i].p || m < n || m / 2 > n)
            continue;
        if (best < 0)
            best = i;
        else if (m != C.slot[best].n ? m < C.slot[best].n : C.slot[i].tick > C.slot[best].tick)
            best = i;
    }
    if (best >= 0 && C.slot[best].n != n) {
        for (int i = 0; i < CACHE_SLOTS && lent < 0; i++)
            if (!C.lent[i].p)
                lent = i;
        if (lent < 0)
            best = -1; /* no room to note its size: allocate afresh */
    }
    if (best >= 0) {
        p = C.slot[best].p;
        if (lent >= 0)
            C.lent[lent] = C.slot[best];
        C.slot[best].p = NULL;
        __atomic_store_n(&C.held, C.held - (int64_t)C.slot[best].n, __ATOMIC_RELAXED);
    }
    cache_unlock();
    return p;
}

/* Keeps the block p of n bytes; 0 when it must be freed instead. */
static int cache_keep(void *p, size_t n) {
    if (n < CACHE_MIN)
        return 0;
    cache_lock();
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (C.lent[i].p == p) { /* a larger block than the storage asked for */
            n = C.lent[i].n;
            C.lent[i].p = NULL;
            break;
        }
    int64_t budget = cache_budget();
    if ((int64_t)n > budget) {
        cache_unlock();
        return 0;
    }
    void *evicted[CACHE_SLOTS];
    int nev = 0, free_slot = -1;
    for (;;) {
        int oldest = -1;
        free_slot = -1;
        for (int i = 0; i < CACHE_SLOTS; i++) {
            if (!C.slot[i].p) { if (free_slot < 0) free_slot = i; continue; }
            if (oldest < 0 || C.slot[i].tick < C.slot[oldest].tick) oldest = i;
        }
        if (free_slot >= 0 && C.held + (int64_t)n <= budget)
            break;
        /* over budget or no slot: the oldest block leaves */
        evicted[nev++] = C.slot[oldest].p;
        C.held -= (int64_t)C.slot[oldest].n;
        C.slot[oldest].p = NULL;
    }
    C.slot[free_slot] = (cached_block){p, n, ++C.tick};
    __atomic_store_n(&C.held, C.held + (int64_t)n, __ATOMIC_RELAXED);
    cache_unlock();
    for (int i = 0; i < nev; i++)
        free(evicted[i]);
    return 1;
}

/* Frees every cached block (an allocation failed: make room). */
static int cache_drop_all(void) {
    void *blocks[CACHE_SLOTS];
    int nb = 0;
    cache_lock();
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (C.slot[i].p) {
            blocks[nb++] = C.slot[i].p;
            C.slot[i].p = NULL;
        }
    __atomic_store_n(&C.held, 0, __ATOMIC_RELAXED);
    cache_unlock();
    for (int i = 0; i < nb; i++)
        free(blocks[i]);
    return nb;
}

void th__cache_describe(char *buf, size_t size) {
    if (size < 1)
        return;
    cache_lock();
    int64_t budget = cache_budget(), held = C.held;
    cache_unlock();
    if (budget == 0)
        snprintf(buf, size, "\tblock cache: off (EMBER_CPU_CACHE_MB)\n");
    else
        snprintf(buf, size, "\tblock cache: %lld KiB held of %lld KiB (EMBER_CPU_CACHE_MB)\n",
                 (long long)(held >> 10), (long long)(budget >> 10));
}
#endif /* TH_NO_BLOCK_CACHE */

/* A storage's block: from the cache when one of its size is there. */
static void *storage_alloc(int64_t nbytes) {
    if (nbytes >= 0) {
        void *p = cache_take(block_size(nbytes));
        if (p)
            return p;
    }
    void *p = th__alloc(nbytes);
    if (!p && nbytes >= 0 && cache_drop_all() > 0) {
        th_clear_error();
        p = th__alloc(nbytes);
    }
    return p;
}

static void storage_free(void *p, int64_t nbytes) {
    if (p && !cache_keep(p, block_size(nbytes)))
        free(p);
}

static th_storage *new_struct(void) {
    th_storage *s = calloc(1, sizeof *s);
    if (!s)
        th__error(TH_ERR_MEMORY, "not enough memory for a storage header");
    else
        s->refcount = 1;
    return s;
}

th_storage *th_storage_new(int64_t nbytes) {
    th_storage *s = new_struct();
    if (!s) return NULL;
    s->data = storage_alloc(nbytes);
    if (!s->data) {
        free(s);
        return NULL;
    }
    s->nbytes = nbytes;
    s->kind = TH_STORAGE_HEAP;
    return s;
}

static int shm_counter = 0;

/* Maps fd (nbytes) into s; closes fd. */
static int map_fd(th_storage *s, int fd, int64_t nbytes, const char *what) {
    void *p = mmap(NULL, nbytes > 0 ? (size_t)nbytes : 1,
                   PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (p == MAP_FAILED)
        return th__error(TH_ERR_RUNTIME, "could not map %s (%lld bytes): %s",
                         what, (long long)nbytes, strerror(err));
    s->data = p;
    s->nbytes = nbytes;
    return TH_OK;
}

/* Grows fd to nbytes, with the actual space reserved, so that a full
 * /dev/shm is reported now instead of as SIGBUS on first touch. */
static int reserve(int fd, int64_t nbytes, const char *what) {
    if (nbytes == 0) return TH_OK;
    int rc = posix_fallocate(fd, 0, (off_t)nbytes);
    if (rc == EINVAL || rc == EOPNOTSUPP)
        rc = ftruncate(fd, (off_t)nbytes) == 0 ? 0 : errno;
    if (rc != 0)
        return th__error(rc == ENOSPC ? TH_ERR_MEMORY : TH_ERR_RUNTIME,
                         "could not reserve %lld bytes for %s: %s%s",
                         (long long)nbytes, what, strerror(rc),
                         rc == ENOSPC ? " (the shared-memory file system, "
                                        "usually /dev/shm, is too small; "
                                        "enlarge it, e.g. docker "
                                        "--shm-size, or use the file "
                                        "sharing strategy)" : "");
    return TH_OK;
}

th_storage *th_storage_new_shared(int64_t nbytes) {
    if (nbytes < 0)
        return th__error_null(TH_ERR_VALUE, "negative storage size %lld",
                              (long long)nbytes);
    th_storage *s = new_struct();
    if (!s) return NULL;
    int fd = -1;
    for (int attempt = 0; attempt < 64 && fd < 0; attempt++) {
        int n = __atomic_add_fetch(&shm_counter, 1, __ATOMIC_RELAXED);
        snprintf(s->name, sizeof s->name, "/ember_%d_%d_%d", (int)getpid(),
                 n, rand() & 0xffff);
        fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        int err = errno;
        free(s);
        return th__error_null(TH_ERR_RUNTIME,
                              "could not create shared memory: %s",
                              strerror(err));
    }
    if (reserve(fd, nbytes, "shared memory") != TH_OK ||
        map_fd(s, fd, nbytes, "shared memory") != TH_OK) {
        close(fd);
        shm_unlink(s->name);
        free(s);
        return NULL;
    }
    s->kind = TH_STORAGE_SHARED;
    return s;
}

th_storage *th_storage_open_shared(const char *name, int64_t nbytes) {
    if (nbytes < 0)
        return th__error_null(TH_ERR_VALUE, "negative storage size %lld",
                              (long long)nbytes);
    th_storage *s = new_struct();
    if (!s) return NULL;
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) {
        int err = errno;
        free(s);
        return th__error_null(TH_ERR_RUNTIME,
                              "could not open shared memory %s: %s", name,
                              strerror(err));
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size < nbytes) {
        close(fd);
        free(s);
        return th__error_null(TH_ERR_RUNTIME,
                              "shared memory %s holds %lld bytes, fewer "
                              "than the %lld expected", name,
                              (long long)st.st_size, (long long)nbytes);
    }
    if (map_fd(s, fd, nbytes, name) != TH_OK) {
        free(s);
        return NULL;
    }
    snprintf(s->name, sizeof s->name, "%s", name);
    s->kind = TH_STORAGE_SHARED;
    return s;
}

th_storage *th_storage_new_file(const char *path, int64_t nbytes, int create) {
    if (nbytes < 0)
        return th__error_null(TH_ERR_VALUE, "negative storage size %lld",
                              (long long)nbytes);
    th_storage *s = new_struct();
    if (!s) return NULL;
    int fd = open(path, O_RDWR | (create ? O_CREAT : 0), 0600);
    if (fd < 0) {
        int err = errno;
        free(s);
        return th__error_null(TH_ERR_RUNTIME, "could not open %s: %s", path,
                              strerror(err));
    }
    if ((create && reserve(fd, nbytes, path) != TH_OK) ||
        map_fd(s, fd, nbytes, path) != TH_OK) {
        if (create) close(fd);
        free(s);
        return NULL;
    }
    /* keep the tail of the path for diagnostics */
    size_t len = strlen(path);
    snprintf(s->name, sizeof s->name, "%s",
             len >= sizeof s->name ? path + len - sizeof s->name + 1 : path);
    s->kind = TH_STORAGE_FILE;
    return s;
}

int th_storage_unlink_shared(th_storage *s) {
    if (!s || s->kind != TH_STORAGE_SHARED)
        return th__error(TH_ERR_VALUE, "storage is not in shared memory");
    if (shm_unlink(s->name) != 0 && errno != ENOENT)
        return th__error(TH_ERR_RUNTIME, "could not unlink %s: %s", s->name,
                         strerror(errno));
    return TH_OK;
}

th_storage *th_storage_wrap(void *data, int64_t nbytes, th_release_fn release,
                            void *ctx) {
    if (!data && nbytes > 0)
        return th__error_null(TH_ERR_VALUE, "cannot wrap a NULL pointer");
    if (nbytes < 0)
        return th__error_null(TH_ERR_VALUE, "negative storage size %lld",
                              (long long)nbytes);
    th_storage *s = new_struct();
    if (!s) return NULL;
    s->data = data;
    s->nbytes = nbytes;
    s->kind = TH_STORAGE_EXTERNAL;
    s->release = release;
    s->release_ctx = ctx;
    return s;
}

void th_storage_retain(th_storage *s) {
    if (s) __atomic_add_fetch(&s->refcount, 1, __ATOMIC_RELAXED);
}

void th_storage_release(th_storage *s) {
    if (!s || __atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    switch (s->kind) {
    case TH_STORAGE_HEAP: storage_free(s->data, s->nbytes); break;
    case TH_STORAGE_SHARED:
    case TH_STORAGE_FILE:
        munmap(s->data, s->nbytes > 0 ? (size_t)s->nbytes : 1);
        break;
    case TH_STORAGE_EXTERNAL:
        if (s->release) s->release(s->release_ctx, s->data);
        break;
    }
    free(s);
}
