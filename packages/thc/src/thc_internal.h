/* Helpers shared by libTHC's C and CUDA sources.  Tensor metadata (views,
 * promotion, dtype facts, checked sizes, the error message) is libTH's,
 * through th_meta.h: libTHC links libTH, so both libraries follow the same
 * rules with the same words. */
#ifndef THC_INTERNAL_H
#define THC_INTERNAL_H
#include <stdarg.h>
#include "thc.h"
#include "th_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

#define THC_API __attribute__((visibility("default")))
#define THC_MIN(a, b) ((a) < (b) ? (a) : (b))
#define THC_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Sets the thread-local error (libTH's, read by thc_last_error()) and
 * returns `status` (or NULL). */
int thc__error(int status, const char *fmt, ...);
void *thc__error_null(int status, const char *fmt, ...);
/* THC_OK for a dtype libTHC has kernels for; otherwise the error: libTH's
 * complex64/complex128 (codes past THC's) THC_ERR_NOT_IMPLEMENTED, any
 * other code THC_ERR_TYPE "invalid dtype code". */
int thc__check_dtype(int dtype);
/* Keeps the CUDA runtime's text for the last device failure. */
void thc__set_cuda_error_text(const char *text);
/* libTH's helpers under the names libTHC's sources use. */
static inline const char *thc__shape_str(int ndim, const int64_t *sizes, char *buf) {
    return th_shape_str(ndim, sizes, buf);
}
static inline int thc__wrap_dim(int dim, int ndim) { return th_wrap_dim(dim, ndim); }

/* ---- dtypes (libTH's tables; thc_dtype codes are th_dtype's) -------- */
typedef uint16_t thc_half_t;   /* float16 and bfloat16 bit patterns */
static inline int thc__is_half(int dtype) {
    return dtype == THC_FLOAT16 || dtype == THC_BFLOAT16;
}
static inline int thc_dtype_is_integral(int dtype) { return th_dtype_is_integral(dtype); }
static inline int thc__dtype_category(int dtype) { return th_dtype_category(dtype); }
static inline const char *thc__dtype_title(int dtype) { return th_dtype_title(dtype); }
static inline float thc__half_to_float(thc_half_t h) { return th_half_to_float(h); }
static inline thc_half_t thc__float_to_half(float f) { return th_float_to_half(f); }
static inline float thc__bf16_to_float(thc_half_t h) { return th_bf16_to_float(h); }
static inline thc_half_t thc__float_to_bf16(float f) { return th_float_to_bf16(f); }
/* host memory */
static inline double thc__load_double(const char *p, int dtype) { return th_load_double(p, dtype); }
static inline int64_t thc__load_int64(const char *p, int dtype) { return th_load_int64(p, dtype); }
static inline void thc__store_double(char *p, int dtype, double v) { th_store_double(p, dtype, v); }

/* ---- storages and tensors (storage.c, tensor.c) --------------------- */
/* nbytes on the current device (from its allocator). */
thc_storage *thc__storage_new(int64_t nbytes);
static inline char *thc__ptr(const thc_tensor *t) {
    return (char *)t->storage->data + t->offset * thc_dtype_itemsize(t->dtype);
}
static inline int thc__on_host(const thc_tensor *t) { return t->storage->device < 0; }
thc_tensor *thc__wrap(thc_storage *s, int64_t offset, int ndim,
                      const int64_t *sizes, const int64_t *strides, int dtype);
static inline void thc__contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides) {
    th_contiguous_strides(ndim, sizes, strides);
}
static inline int64_t thc__prod(int n, const int64_t *v) { return th_prod(n, v); }
thc_tensor *thc__empty_like(const thc_tensor *t, int dtype);  /* contiguous */
int thc__same_shape(const thc_tensor *a, const thc_tensor *b);
thc_tensor *thc__expand_to(const thc_tensor *t, int ndim, const int64_t *sizes);
/* The value of a one-element tensor on the host or the device. */
double thc__scalar_double(const thc_tensor *t);
int64_t thc__scalar_int64(const thc_tensor *t);
static inline void thc__bump_version(thc_tensor *t) {
    __atomic_add_fetch(&t->storage->version, 1, __ATOMIC_RELAXED);
}
/* Error unless t is on a device (host scalars are operands only). */
int thc__check_device(const char *what, const char *arg, const thc_tensor *t);
/* The calling thread's current stream, on which kernels are queued. */
void *thc__stream(void);

/* ---- cuBLAS (cublas.c) --------------------------------------------- */
/* out (batch, m, n) contiguous = alpha * A B + beta * out; returns -1
 * (no error set) when cuBLAS is missing or the layout does not suit it. */
int thc__cublas_gemm(int dtype, int64_t batch, int64_t m, int64_t n, int64_t k, double alpha,
                     const void *a, int64_t ars, int64_t acs, int64_t abs_,
                     const void *b, int64_t brs, int64_t bcs, int64_t bbs, double beta, void *c,
                     void *stream);

/* ---- element-wise helpers (pointwise.cu) --------------------------- */
/* Retained t if it already has `dtype`, else a converted device copy. */
thc_tensor *thc__cast(const thc_tensor *t, int dtype);
int thc__check_out_shape(const thc_tensor *out, int ndim, const int64_t *sizes);
/* copy_ from a tensor on another device (src/peer.c); dst's device is current */
int thc__copy_between_devices(thc_tensor *dst, const thc_tensor *src);
int thc__can_cast(int from, int to);
int thc__partial_overlap(const thc_tensor *a, const thc_tensor *b);

#ifdef __cplusplus
}
#endif
#endif
