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

void *th__alloc(int64_t nbytes) {
    void *p = NULL;
    if (nbytes < 0)
        return th__error_null(TH_ERR_RUNTIME,
                              "cannot allocate a negative number of bytes "
                              "(%lld)", (long long)nbytes);
    size_t n = (size_t)(nbytes > 0 ? nbytes : 1);
    size_t align = n >= HUGE_THRESHOLD ? HUGE_ALIGN : TH_ALIGN;
    n = (n + align - 1) / align * align;
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
    s->data = th__alloc(nbytes);
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
    case TH_STORAGE_HEAP: th__free(s->data); break;
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
