/* Shared by libTHCUNN's sources: errors, argument checks and the
 * portable launch layer (the kernels compile with nvcc for the GPU, or
 * with the host C++ compiler against libTHC's emulated device).
 * Internal. */
#ifndef THCUNN_INTERNAL_H
#define THCUNN_INTERNAL_H
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "thcunn.h"

#define THCUNN_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif
/* Sets the thread-local error and returns `status`. */
int thcunn__error(int status, const char *fmt, ...);
/* Copies libTHC's last error (after a libTHC call failed). */
int thcunn__from_thc(void);
/* Errors unless this build of libTHCUNN can run on the loaded libTHC:
 * a CUDA build needs a CUDA libTHC, a host build libTHC's emulated
 * device. */
int thcunn__check_runtime(const char *what);
/* "[2, 3]" into buf (at least 256 bytes). */
const char *thcunn__shape_str(int ndim, const int64_t *sizes, char *buf);
/* Checks a device tensor argument (not NULL, on a device, float32/64 when
 * `floating`); `what` and `arg` name it in the message. */
int thcunn__check_tensor(const char *what, const char *arg, const thc_tensor *t, int floating);
/* Checks that an output has exactly this shape and is contiguous. */
int thcunn__check_output(const char *what, const char *arg, const thc_tensor *t, int ndim,
                         const int64_t *sizes, int dtype);
int64_t thcunn__numel(const thc_tensor *t);

/* Overflow-checked size arithmetic for output sizes and plane counts (the
 * rules of libTHNN's): 1 on overflow, else 0 and the result in *r. */
static inline int thcunn__mul_ovf(int64_t a, int64_t b, int64_t *r) {
    return __builtin_mul_overflow(a, b, r);
}
static inline int thcunn__add_ovf(int64_t a, int64_t b, int64_t *r) {
    return __builtin_add_overflow(a, b, r);
}
/* RuntimeError "<fn>: <what> overflows int64"; returns its status. */
int thcunn__size_overflow(const char *fn, const char *what);
/* The product of t's sizes [from, to) into *planes, or that error. */
int thcunn__planes(const char *fn, const thc_tensor *t, int from, int to, int64_t *planes);
/* Error unless in + 2 * padding and dilation * (kernel - 1) + 1 fit in
 * int64 (then a window's output-size formula cannot overflow); kernel,
 * dilation >= 1 and in, padding >= 0 are the caller's checks. */
int thcunn__window_fits(const char *fn, int64_t in, int64_t kernel, int64_t padding,
                        int64_t dilation);
/* The window arithmetic of every convolution and pooling: windows of a
 * kernel sliding over in + 2 * padding, ceil or floor, before pooling's
 * ceil-mode rule drops a last window starting in the right padding, for
 * arguments thcunn__window_fits accepted.  < 1 (or wrong, for a padded
 * input shorter than the dilated kernel) is the caller's error to raise. */
int64_t thcunn__window_count(int64_t in, int64_t kernel, int64_t stride, int64_t padding,
                             int64_t dilation, int ceil_mode);

/* Checks in libTHNN's words, shared by the kernel families (`fn` names
 * the kernel, `name` the argument). */
/* PyTorch's name of a dtype ("Float", "Long"; "?" if unknown). */
const char *thcunn__type_name(int dtype);
/* thcunn__shape_str of t's sizes. */
const char *thcunn__shape_of(const thc_tensor *t, char *buf);
/* After a failed libTHC call: its status and message, after `fn`. */
int thcunn__thc_failed(const char *fn);
/* Not NULL ("must not be NULL") and on a device. */
int thcunn__check_device(const char *fn, const char *name, const thc_tensor *t);
/* thcunn__check_device, then float32 or float64. */
int thcunn__check_float(const char *fn, const char *name, const thc_tensor *t);
/* An output: on a device, exactly this shape and dtype, contiguous. */
int thcunn__check_out(const char *fn, const char *name, const thc_tensor *t, int ndim,
                      const int64_t *sizes, int dtype);
/* thcunn__check_out with like's shape and dtype (like may be t). */
int thcunn__check_like(const char *fn, const char *name, const thc_tensor *t,
                       const thc_tensor *like);
/* An optional (NULL passes) vector of n elements of this dtype. */
int thcunn__check_vec(const char *fn, const char *name, const thc_tensor *t, int64_t n,
                      int dtype);
/* A contiguous reference to t (a new one); NULL with libTHC's error set. */
thc_tensor *thcunn__contig(const thc_tensor *t);
/* Releases n tensors (NULL ones too). */
void thcunn__release_all(thc_tensor **ts, int n);
#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
#ifdef __CUDACC__
#include <cuda_runtime.h>
#define THCUNN_HD __host__ __device__
#else
#define THCUNN_HD
#endif

namespace thcunn {

#ifdef __CUDACC__
template <typename F> __global__ void for_each_kernel(int64_t n, F f) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) f(i);
}

// f(i) for i in [0, n) on the device, on libTHC's current stream
template <typename F> int for_each(const char *what, int64_t n, const F &f) {
    if (n <= 0) return THC_OK;
    thc_launch_config cfg;
    if (thc_launch_config_for(n, 256, 65535 * 8, &cfg)) return thcunn__from_thc();
    for_each_kernel<<<(unsigned)cfg.grid, cfg.block, 0, (cudaStream_t)thc_current_stream()>>>(n, f);
    cudaError_t err = cudaGetLastError();
    return err == cudaSuccess ? THC_OK
                              : thcunn__error(THC_ERR_RUNTIME, "%s: kernel launch failed: %s",
                                              what, cudaGetErrorString(err));
}

template <typename T> __device__ inline void atomic_add(T *p, T v) { atomicAdd(p, v); }
#else
template <typename F> int for_each(const char *, int64_t n, const F &f) {
    for (int64_t i = 0; i < n; i++) f(i);
    return THC_OK;
}

template <typename T> inline void atomic_add(T *p, T v) { *p += v; }
#endif

template <typename T> inline T *data(const thc_tensor *t) {
    return (T *)thc_data_ptr(t);
}

// data<T> of an optional tensor (NULL stays NULL)
template <typename T> inline const T *cdata(const thc_tensor *t) {
    return t ? data<T>(t) : (const T *)NULL;
}
template <typename T> inline T *mdata(thc_tensor *t) { return t ? data<T>(t) : (T *)NULL; }

}  // namespace thcunn

// runs BODY with scalar_t = float or double for a float32/float64 dtype
#define THCUNN_FLOATING(DTYPE, ...)               \
    switch (DTYPE) {                              \
    case THC_FLOAT32: {                           \
        typedef float scalar_t;                   \
        __VA_ARGS__;                              \
    } break;                                      \
    default: {                                    \
        typedef double scalar_t;                  \
        __VA_ARGS__;                              \
    } break;                                      \
    }
#endif
#endif
