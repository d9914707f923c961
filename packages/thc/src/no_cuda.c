/* The device entry points of a host-only build (EMBER_NO_CUDA=1).  By
 * default there is no device, and every device operation says why.  With
 * EMBER_THC_EMULATE=1 in the environment there is one emulated device whose
 * memory is host memory and whose kernels run as host loops (the same
 * kernel sources, compiled by the host C++ compiler): the tests run the
 * whole library and its binding that way on machines without a GPU. */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "thc_internal.h"

#ifdef THC_NO_CUDA
static const char no_cuda[] =
    "libTHC was built without CUDA (EMBER_NO_CUDA=1); rebuild ember-thc with nvcc";

THC_API int thc_has_cuda(void) { return 0; }

THC_API int thc_is_emulated(void) {
    static int emulated = -1;
    if (emulated < 0) {
        const char *v = getenv("EMBER_THC_EMULATE");
        emulated = v && strcmp(v, "1") == 0;
    }
    return emulated;
}

THC_API int thc_device_count(int *count) {
    if (!count) return thc__error(THC_ERR_VALUE, "thc_device_count: count is NULL");
    *count = thc_is_emulated();
    if (!*count) thc__set_cuda_error_text(no_cuda);
    return THC_OK;
}

THC_API int thc_get_device(int *device) {
    if (!device) return thc__error(THC_ERR_VALUE, "thc_get_device: device is NULL");
    if (!thc_is_emulated()) return thc__error(THC_ERR_RUNTIME, "thc_get_device: %s", no_cuda);
    *device = 0;
    return THC_OK;
}

THC_API int thc_set_device(int device) {
    if (!thc_is_emulated()) return thc__error(THC_ERR_RUNTIME, "thc_set_device: %s", no_cuda);
    if (device != 0)
        return thc__error(THC_ERR_VALUE, "thc_set_device: device %d does not exist (1 device)",
                          device);
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

int thc__stream_wait(void *stream) {
    (void)stream;
    return THC_OK;
}

int thc__launch_status(const char *what) {
    (void)what;
    return THC_OK;
}
#else
/* keeps this translation unit non-empty, as ISO C requires */
typedef int thc__no_cuda_unused;
#endif
