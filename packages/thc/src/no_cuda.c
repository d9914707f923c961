/* The device entry points of a host-only build (EMBER_NO_CUDA=1).  By
 * default there is no device, and every device operation says why.  With
 * EMBER_THC_EMULATE=1 in the environment there is one emulated device (N
 * of them with EMBER_THC_EMULATE=N, to test multi-device logic) whose
 * memory is host memory and whose kernels run as host loops (the same
 * kernel sources, compiled by the host C++ compiler): the tests run the
 * whole library and its binding that way on machines without a GPU. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"
#include "thc_internal.h"

#ifdef THC_NO_CUDA
static const char no_cuda[] =
    "libTHC was built without CUDA (EMBER_NO_CUDA=1); rebuild ember-thc with nvcc";

THC_API int thc_has_cuda(void) { return 0; }

THC_API const char *thc_arch_list(void) { return ""; }

/* EMBER_THC_EMULATE=N (1 <= N <= 8): N emulated devices; anything else: none */
static int emulated_devices(void) {
    static int count = -1;
    if (count < 0) {
        const char *v = getenv("EMBER_THC_EMULATE");
        char *end = NULL;
        long n = v ? strtol(v, &end, 10) : 0;
        count = v && *v && end && *end == '\0' && n >= 1 && n <= 8 ? (int)n : 0;
    }
    return count;
}

static __thread int current_device;

THC_API int thc_is_emulated(void) { return emulated_devices() > 0; }

THC_API int thc_device_count(int *count) {
    if (!count) return thc__error(THC_ERR_VALUE, "thc_device_count: count is NULL");
    *count = emulated_devices();
    if (!*count) thc__set_cuda_error_text(no_cuda);
    return THC_OK;
}

THC_API int thc_get_device(int *device) {
    if (!device) return thc__error(THC_ERR_VALUE, "thc_get_device: device is NULL");
    if (!thc_is_emulated()) return thc__error(THC_ERR_RUNTIME, "thc_get_device: %s", no_cuda);
    *device = current_device;
    return THC_OK;
}

THC_API int thc_set_device(int device) {
    if (!thc_is_emulated()) return thc__error(THC_ERR_RUNTIME, "thc_set_device: %s", no_cuda);
    int n = emulated_devices();
    if (device < 0 || device >= n)
        return thc__error(THC_ERR_VALUE, "thc_set_device: device %d does not exist (%d device%s)",
                          device, n, n == 1 ? "" : "s");
    current_device = device;
    return THC_OK;
}

THC_API int thc_synchronize(void) {
    return thc_is_emulated() ? THC_OK
                             : thc__error(THC_ERR_RUNTIME, "thc_synchronize: %s", no_cuda);
}

THC_API const thc_device_ops *thc_cuda_device_ops(void) {
    return thc__error_null(THC_ERR_RUNTIME, "thc_cuda_device_ops: %s", no_cuda);
}

/* ---- the emulated device: 64-byte aligned host memory ----------------- */
static int emu_malloc(void *ctx, void **ptr, size_t nbytes) {
    (void)ctx;
    void *p = NULL;
    if (posix_memalign(&p, 64, nbytes ? nbytes : 64)) return THC_ERR_MEMORY;
    *ptr = p;
    return THC_OK;
}

static int emu_free(void *ctx, void *ptr) {
    (void)ctx;
    free(ptr);
    return THC_OK;
}

static int emu_sync(void *ctx, void *stream) {
    (void)ctx, (void)stream;
    return THC_OK;
}

static int emu_query(void *ctx, void *stream) {
    (void)ctx, (void)stream;
    return 1;
}

static const thc_device_ops emulated_ops = {NULL, emu_malloc, emu_free, emu_sync, emu_query,
                                            NULL};

const thc_device_ops *thc__device_ops(void) {
    if (thc_is_emulated()) return &emulated_ops;
    return thc__error_null(THC_ERR_RUNTIME, "%s", no_cuda);
}

int thc__memcpy(void *dst, const void *src, size_t nbytes, int kind, void *stream) {
    (void)kind, (void)stream;
    if (!thc_is_emulated()) return thc__error(THC_ERR_RUNTIME, "%s", no_cuda);
    memmove(dst, src, nbytes);
    return THC_OK;
}

int thc__memcpy_peer(void *dst, int dst_device, const void *src, int src_device, size_t nbytes,
                     void *stream) {
    (void)dst_device, (void)src_device;   /* every emulated device is host memory */
    return thc__memcpy(dst, src, nbytes, THC__D2D, stream);
}

int thc__stream_wait(void *stream) {
    (void)stream;
    return THC_OK;
}

/* The emulated device's work is done when queued: its events have always
 * happened (a non-NULL token stands for one). */
static char event_token;

static int emu_event_record(void *ctx, void *stream, void **event) {
    (void)ctx, (void)stream;
    *event = &event_token;
    return THC_OK;
}

static int emu_event_query(void *ctx, void *event) {
    (void)ctx, (void)event;
    return 1;
}

static int emu_event_done(void *ctx, void *event) {
    (void)ctx, (void)event;
    return THC_OK;
}

static const thc_event_ops emulated_event_ops = {NULL, emu_event_record, emu_event_query,
                                                 emu_event_done, emu_event_done};

const thc_event_ops *thc__event_ops(int device) {
    (void)device;
    return thc_is_emulated() ? &emulated_event_ops : NULL;
}

int thc__launch_status(const char *what) {
    (void)what;
    return THC_OK;
}
/* ---- what the emulated device is: the host's memory -------------------- */
static int64_t host_memory(int64_t *available) {
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES),
         size = sysconf(_SC_PAGESIZE);
    *available = (int64_t)avail * size;
    return (int64_t)pages * size;
}

THC_API int thc_device_properties(int device, thc_device_props *out) {
    if (!out) return thc__error(THC_ERR_VALUE, "thc_device_properties: out is NULL");
    if (!thc_is_emulated())
        return thc__error(THC_ERR_RUNTIME, "thc_device_properties: %s", no_cuda);
    int n = emulated_devices();
    if (device < 0 || device >= n)
        return thc__error(THC_ERR_VALUE, "device %d does not exist (%d device%s)", device, n,
                          n == 1 ? "" : "s");
    int64_t avail;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", "emulated device (host memory)");
    out->total_memory = host_memory(&avail);
    out->multi_processor_count = 1;
    return THC_OK;
}

THC_API int thc_mem_get_info(int64_t *free_bytes, int64_t *total_bytes) {
    if (!free_bytes || !total_bytes)
        return thc__error(THC_ERR_VALUE, "thc_mem_get_info: NULL argument");
    if (!thc_is_emulated()) return thc__error(THC_ERR_RUNTIME, "thc_mem_get_info: %s", no_cuda);
    *total_bytes = host_memory(free_bytes);
    return THC_OK;
}

/* ---- streams and events of the emulated device: work is done when it is
 * queued, so they only keep time ------------------------------------------ */
#include <time.h>

static int need_device(const char *what) {
    return thc_is_emulated() ? THC_OK : thc__error(THC_ERR_RUNTIME, "%s: %s", what, no_cuda);
}

THC_API int thc_stream_create(void **stream) {
    if (!stream) return thc__error(THC_ERR_VALUE, "thc_stream_create: stream is NULL");
    if (need_device("thc_stream_create")) return thc_last_status();
    *stream = malloc(1);   /* a distinct handle */
    return *stream ? THC_OK : thc__error(THC_ERR_MEMORY, "thc_stream_create: out of memory");
}

THC_API int thc_stream_destroy(void *stream) {
    free(stream);
    return THC_OK;
}

THC_API int thc_stream_synchronize(void *stream) {
    (void)stream;
    return need_device("thc_stream_synchronize");
}

THC_API int thc_stream_query(void *stream) {
    (void)stream;
    return need_device("thc_stream_query") ? -1 : 1;
}

THC_API int thc_stream_wait_event(void *stream, void *event) {
    (void)stream, (void)event;
    return need_device("thc_stream_wait_event");
}

THC_API int thc_event_create(void **event, int enable_timing) {
    (void)enable_timing;
    if (!event) return thc__error(THC_ERR_VALUE, "thc_event_create: event is NULL");
    if (need_device("thc_event_create")) return thc_last_status();
    *event = calloc(1, sizeof(double));   /* the time it was recorded */
    return *event ? THC_OK : thc__error(THC_ERR_MEMORY, "thc_event_create: out of memory");
}

THC_API int thc_event_destroy(void *event) {
    free(event);
    return THC_OK;
}

THC_API int thc_event_record(void *event, void *stream) {
    (void)stream;
    if (!event) return thc__error(THC_ERR_VALUE, "thc_event_record: event is NULL");
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *(double *)event = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
    return THC_OK;
}

THC_API int thc_event_synchronize(void *event) {
    (void)event;
    return THC_OK;
}

THC_API int thc_event_query(void *event) {
    (void)event;
    return 1;
}

THC_API int thc_event_elapsed_ms(void *start, void *end, float *ms) {
    if (!start || !end || !ms)
        return thc__error(THC_ERR_VALUE, "thc_event_elapsed_ms: NULL argument");
    *ms = (float)(*(double *)end - *(double *)start);
    return THC_OK;
}

THC_API int thc_host_alloc(void **ptr, size_t nbytes) {
    if (!ptr) return thc__error(THC_ERR_VALUE, "thc_host_alloc: ptr is NULL");
    if (need_device("thc_host_alloc")) return thc_last_status();
    return emu_malloc(NULL, ptr, nbytes) ? thc__error(THC_ERR_MEMORY, "thc_host_alloc: cannot "
                                                      "allocate %zu bytes", nbytes)
                                         : THC_OK;
}

THC_API int thc_host_free(void *ptr) {
    free(ptr);
    return THC_OK;
}
#else
/* keeps this translation unit non-empty, as ISO C requires */
typedef int thc__no_cuda_unused;
#endif
