/* The device entry points of a host-only build (EMBER_NO_CUDA=1): no
 * devices, and every device operation says why it cannot run. */
#include "thc_internal.h"

#ifdef THC_NO_CUDA
static const char no_cuda[] =
    "libTHC was built without CUDA (EMBER_NO_CUDA=1); rebuild ember-thc with nvcc";

THC_API int thc_has_cuda(void) { return 0; }

THC_API int thc_device_count(int *count) {
    if (!count) return thc__error(THC_ERR_VALUE, "thc_device_count: count is NULL");
    *count = 0;
    thc__set_cuda_error_text(no_cuda);
    return THC_OK;
}

THC_API int thc_get_device(int *device) {
    (void)device;
    return thc__error(THC_ERR_RUNTIME, "thc_get_device: %s", no_cuda);
}

THC_API int thc_set_device(int device) {
    (void)device;
    return thc__error(THC_ERR_RUNTIME, "thc_set_device: %s", no_cuda);
}

THC_API int thc_synchronize(void) {
    return thc__error(THC_ERR_RUNTIME, "thc_synchronize: %s", no_cuda);
}

THC_API const thc_device_ops *thc_cuda_device_ops(void) {
    return thc__error_null(THC_ERR_RUNTIME, "thc_cuda_device_ops: %s", no_cuda);
}

THC_API int thc_fill(void *data, int dtype, const thc_layout *layout, double value,
                     void *stream) {
    (void)data, (void)dtype, (void)layout, (void)value, (void)stream;
    return thc__error(THC_ERR_RUNTIME, "thc_fill: %s", no_cuda);
}

THC_API int thc_copy(void *dst, const thc_layout *dst_layout, const void *src,
                     const thc_layout *src_layout, int dtype, void *stream) {
    (void)dst, (void)dst_layout, (void)src, (void)src_layout, (void)dtype, (void)stream;
    return thc__error(THC_ERR_RUNTIME, "thc_copy: %s", no_cuda);
}

THC_API int thc_binary(int op, int dtype, void *out, const thc_layout *out_layout,
                       const void *a, const thc_layout *a_layout, const void *b,
                       const thc_layout *b_layout, void *stream) {
    (void)op, (void)dtype, (void)out, (void)out_layout, (void)a, (void)a_layout;
    (void)b, (void)b_layout, (void)stream;
    return thc__error(THC_ERR_RUNTIME, "thc_binary: %s", no_cuda);
}
#else
/* keeps this translation unit non-empty, as ISO C requires */
typedef int thc__no_cuda_unused;
#endif
