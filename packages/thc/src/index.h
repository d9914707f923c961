/* The strided offset rule shared by host code and CUDA kernels. */
#ifndef THC_INDEX_H
#define THC_INDEX_H
#include <stdint.h>

#ifdef __CUDACC__
#define THC_HOST_DEVICE __host__ __device__
#else
#define THC_HOST_DEVICE
#endif

/* Offset (elements) of row-major linear index `i`: peel dims from the
 * last, which varies fastest.  Callers check the range. */
static inline THC_HOST_DEVICE int64_t thc__offset_of(int ndim, const int64_t *sizes,
                                                     const int64_t *strides, int64_t i) {
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t s = sizes[d];
        off += (i % s) * strides[d];
        i /= s;
    }
    return off;
}
#endif
