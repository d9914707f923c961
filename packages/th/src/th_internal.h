/* Internal helpers shared by libTH's source files.  Not installed. */
#ifndef TH_INTERNAL_H
#define TH_INTERNAL_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Everything declared in th.h is exported; the rest stays hidden
 * (the library is built with -fvisibility=hidden). */
#pragma GCC visibility push(default)
#include "th.h"
#include "th_meta.h"
#pragma GCC visibility pop
#include "checked.h"

/* Saved tensor files (ember.save, the C examples' data files) hold raw
 * little-endian bytes, which a big-endian build would misread: such a
 * target is refused here instead (see README "Platforms"). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "libTH supports little-endian targets only (x86-64, aarch64, riscv64, ...); this one is big-endian"
#endif

/* Exports the hidden function `hidden` also as th_meta.h's `exported`,
 * without a wrapper: calls inside libTH stay direct. */
#define TH_EXPORT_AS(exported, hidden) \
    extern __typeof__(hidden) exported \
        __attribute__((alias(#hidden), visibility("default")))

#define TH_PI 3.14159265358979323846
#define TH_ALIGN 64
/* Elements per thread below which a loop runs serially. */
#define TH_GRAIN 32768

#define TH_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TH_MAX(a, b) ((a) > (b) ? (a) : (b))

typedef uint8_t th_bool_t;  /* bool elements are stored as 0/1 bytes */
typedef uint16_t th_half_t; /* float16 and bfloat16 bit patterns */
/* a complex128 element, for the kernels that only move elements */
typedef struct { uint64_t lo, hi; } th_u128;

/* ---- errors (error.c) ---------------------------------------------- */
/* Set the thread-local message and return `status`. */
int th__error(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Same, returning NULL for pointer-returning functions. */
void *th__error_null(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "[2, 3]" into buf (at least 256 bytes); returns buf. */
const char *th__shape_str(int ndim, const int64_t *sizes, char *buf);
/* Wraps dim into [0, ndim); sets an IndexError and returns -1 if out of
 * range.  For ndim == 0, dims -1 and 0 are accepted (as PyTorch). */
int th__wrap_dim(int dim, int ndim);

/* ---- the op vocabulary (ops.c) ------------------------------------ */
/* An op's name and TH_OPF_* flags by family (TH_OP_*) and code. */
const char *th__op_name(int family, int code);
int th__op_flags(int family, int code);

/* ---- memory -------------------------------------------------------- */
void *th__alloc(int64_t nbytes); /* 64-byte aligned, error set on failure */
void th__free(void *p);

/* ---- half precision conversion (dtype.c) --------------------------- */
float th__half_to_float(th_half_t h);
th_half_t th__float_to_half(float f);
float th__bf16_to_float(th_half_t h);
th_half_t th__float_to_bf16(float f);

/* ---- tensor internals (tensor.c) ----------------------------------- */
static inline char *th__ptr(const th_tensor *t) {
    return (char *)t->storage->data + t->offset * th_dtype_itemsize(t->dtype);
}
/* A tensor struct over `s` (retained); no bounds checks. */
th_tensor *th__wrap(th_storage *s, int64_t offset, int ndim,
                    const int64_t *sizes, const int64_t *strides, int dtype);
void th__contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides);
int th__is_contiguous(int ndim, const int64_t *sizes, const int64_t *strides);
/* t's geometry, and a tensor over t's storage with geometry m (new ref) */
void th__meta_of(const th_tensor *t, th_meta *m);
th_tensor *th__wrap_meta(const th_tensor *t, const th_meta *m);
int64_t th__prod(int n, const int64_t *v);
th_tensor *th__empty_like(const th_tensor *t, int dtype); /* contiguous */
/* Retained `t` if it already has `dtype`, else a converted copy. */
th_tensor *th__cast(const th_tensor *t, int dtype);
/* Returns a view of t expanded to (ndim, sizes); error if impossible. */
th_tensor *th__expand_to(const th_tensor *t, int ndim, const int64_t *sizes);
int th__same_shape(const th_tensor *a, const th_tensor *b);
/* Error if a dim of size > 1 has stride 0 (one element written twice). */
int th__check_internal_overlap(const th_tensor *out);
static inline void th__bump_version(th_tensor *t) {
    __atomic_add_fetch(&t->storage->version, 1, __ATOMIC_RELAXED);
}
/* Category for type promotion: 0 bool, 1 integer, 2 floating, 3 complex. */
int th__dtype_category(int dtype);
/* PyTorch spells dtypes in messages as Float, Long, ... */
const char *th__dtype_title(int dtype);
/* Reads/writes element of any dtype at p as double. */
double th__load_double(const char *p, int dtype);
void th__store_double(char *p, int dtype, double v);
int64_t th__load_int64(const char *p, int dtype);
/* TH_ERR_TYPE "\"<op>_cpu\" not implemented for 'ComplexFloat'" when
 * dtype is complex (the ops with no complex loop refuse at their entry),
 * else TH_OK */
int th__refuse_complex(const char *op, int dtype);
/* complex.c: any dtype as (re, im); real destinations keep re */
void th__load_complex(const char *p, int dtype, double *re, double *im);
void th__store_complex(char *p, int dtype, double re, double im);
/* Value of a 0-d (or one-element) tensor. */
double th__scalar_double(const th_tensor *t);
int64_t th__scalar_int64(const th_tensor *t);

/* storage.c's block cache: its lock, reset in a forked child; a line
 * for th_parallel_info (budget and bytes held, or why it is off) */
void th__cache_after_fork(void);
void th__cache_describe(char *buf, size_t size);

/* ---- parallel loops (parallel.c; th_parallel_for is public) -------- */
/* Sets OpenBLAS's job count for a product of m*n*k multiply-adds: the
 * pool's current width, or 1 below BLAS_THREAD_WORK (before a BLAS call
 * from outside a region). */
void th__blas_sync(double work);
/* Before a BLAS call from inside a region (serial ones included): OpenBLAS
 * on one job, as it would otherwise make threads for each product. */
void th__blas_in_region(void);
/* Multiply-adds from which OpenBLAS runs a product on the pool's width. */
#define TH_BLAS_THREAD_WORK (1 << 22)

/* ---- strided iteration (iter.c) ------------------------------------ */
#define TH_ITER_MAX_OPS 5
/* A 1-d inner loop over n elements; strides are in bytes, one per op. */
typedef void (*th_loop_fn)(char **data, const int64_t *strides, int64_t n,
                           void *ctx);
typedef struct th_iter {
    int nops;
    int ndim;                                   /* after coalescing */
    int64_t shape[TH_MAX_DIMS];                 /* innermost last */
    int64_t strides[TH_ITER_MAX_OPS][TH_MAX_DIMS]; /* bytes */
    char *data[TH_ITER_MAX_OPS];
    int64_t numel;
} th_iter;
/* All ops must already have the same shape (expand first).  Dims are
 * reordered by op 0's strides and coalesced where possible. */
void th__iter_init(th_iter *it, int nops, const th_tensor *const *ops);
/* Calls fn over every element; threads split the work when `parallel`
 * is set and the iteration is large (op 0 must then not alias itself
 * with zero strides). */
void th__iter_run(const th_iter *it, th_loop_fn fn, void *ctx, int parallel);
/* 1 if every op is contiguous in the iteration order (single inner run). */
int th__iter_is_1d(const th_iter *it);

/* ---- dtype dispatch ------------------------------------------------ */
/* X(enum, ctype, suffix) for the dtypes with native C arithmetic. */
#define TH_FOR_NATIVE_DTYPES(X) \
    X(TH_FLOAT32, float, f32)   \
    X(TH_FLOAT64, double, f64)  \
    X(TH_INT8, int8_t, i8)      \
    X(TH_UINT8, uint8_t, u8)    \
    X(TH_INT16, int16_t, i16)   \
    X(TH_INT32, int32_t, i32)   \
    X(TH_INT64, int64_t, i64)   \
    X(TH_BOOL, th_bool_t, b8)

#define TH_FOR_FLOAT_DTYPES(X) \
    X(TH_FLOAT32, float, f32)  \
    X(TH_FLOAT64, double, f64)

#define TH_FOR_INT_DTYPES(X)   \
    X(TH_INT8, int8_t, i8)     \
    X(TH_UINT8, uint8_t, u8)   \
    X(TH_INT16, int16_t, i16)  \
    X(TH_INT32, int32_t, i32)  \
    X(TH_INT64, int64_t, i64)

static inline int th__is_half(int dtype) {
    return dtype == TH_FLOAT16 || dtype == TH_BFLOAT16;
}

#endif
