/* Shared pieces of lapack.c and lapack_spectral.c: the LAPACK entry
 * points, argument checks in PyTorch's words, column-major working
 * copies and the batch runner.  Internal. */
#ifndef TH_LAPACK_INTERNAL_H
#define TH_LAPACK_INTERNAL_H
#include <limits.h>
#include <stdio.h>

#include "th_internal.h"

#ifndef TH_NO_BLAS
enum { COLMAJOR = 102 };
enum { CB_LEFT = 141, CB_UPPER = 121, CB_LOWER = 122, CB_NOTRANS = 111,
       CB_TRANS = 112, CB_NONUNIT = 131, CB_UNIT = 132 };
#define LAPACK_DECL(T, P)                                                     \
    int scipy_LAPACKE_##P##getrf_work(int, int, int, T *, int, int *);        \
    int scipy_LAPACKE_##P##getrs_work(int, char, int, int, const T *, int,    \
                                      const int *, T *, int);                 \
    int scipy_LAPACKE_##P##potrf_work(int, char, int, T *, int);              \
    int scipy_LAPACKE_##P##geqrf_work(int, int, int, T *, int, T *, T *, int);\
    int scipy_LAPACKE_##P##orgqr_work(int, int, int, int, T *, int,           \
                                      const T *, T *, int);                   \
    int scipy_LAPACKE_##P##gesdd_work(int, char, int, int, T *, int, T *,     \
                                      T *, int, T *, int, T *, int, int *);   \
    int scipy_LAPACKE_##P##syevd_work(int, char, char, int, T *, int, T *,    \
                                      T *, int, int *, int);                  \
    int scipy_LAPACKE_##P##geev_work(int, char, char, int, T *, int, T *, T *, \
                                     T *, int, T *, int, T *, int);           \
    int scipy_LAPACKE_##P##gelsd_work(int, int, int, int, T *, int, T *, int, \
                                      T *, T, int *, T *, int, int *);        \
    int scipy_LAPACKE_##P##sytrf_work(int, char, int, T *, int, int *, T *,    \
                                      int);                                   \
    int scipy_LAPACKE_##P##sytrs_work(int, char, int, int, const T *, int,    \
                                      const int *, T *, int);                 \
    void scipy_cblas_##P##trsm(int, int, int, int, int, int, int, T,          \
                               const T *, int, T *, int);
LAPACK_DECL(float, s)
LAPACK_DECL(double, d)
/* the complex routines bound (LU, Cholesky, triangular solves): elements
 * are (re, im) pairs, passed as void pointers */
#define LAPACK_CDECL(P)                                                       \
    int scipy_LAPACKE_##P##getrf_work(int, int, int, void *, int, int *);     \
    int scipy_LAPACKE_##P##getrs_work(int, char, int, int, const void *, int, \
                                      const int *, void *, int);              \
    int scipy_LAPACKE_##P##potrf_work(int, char, int, void *, int);           \
    void scipy_cblas_##P##trsm(int, int, int, int, int, int, int,             \
                               const void *, const void *, int, void *, int); \
    int scipy_LAPACKE_##P##heevd_work(int, char, char, int, void *, int,      \
                                      void *, void *, int, void *, int, int *,\
                                      int);                                   \
    int scipy_LAPACKE_##P##gesdd_work(int, char, int, int, void *, int,       \
                                      void *, void *, int, void *, int,       \
                                      void *, int, void *, int *);            \
    int scipy_LAPACKE_##P##geqrf_work(int, int, int, void *, int, void *,     \
                                      void *, int);                           \
    int scipy_LAPACKE_##P##ungqr_work(int, int, int, int, void *, int,        \
                                      const void *, void *, int);             \
    int scipy_LAPACKE_##P##geev_work(int, char, char, int, void *, int,       \
                                     void *, void *, int, void *, int, void *,\
                                     int, void *);                            \
    int scipy_LAPACKE_##P##sytrf_work(int, char, int, void *, int, int *,     \
                                      void *, int);                           \
    int scipy_LAPACKE_##P##hetrf_work(int, char, int, void *, int, int *,     \
                                      void *, int);                           \
    int scipy_LAPACKE_##P##sytrs_work(int, char, int, int, const void *, int, \
                                      const int *, void *, int);              \
    int scipy_LAPACKE_##P##hetrs_work(int, char, int, int, const void *, int, \
                                      const int *, void *, int);
LAPACK_CDECL(c)
LAPACK_CDECL(z)
/* gelsd's rcond is a float for c, a double for z */
int scipy_LAPACKE_cgelsd_work(int, int, int, int, void *, int, void *, int, float *, float,
                              int *, void *, int, float *, int *);
int scipy_LAPACKE_zgelsd_work(int, int, int, int, void *, int, void *, int, double *, double,
                              int *, void *, int, double *, int *);
enum { CB_CONJTRANS = 113 };
#endif

/* ---- messages and checks ------------------------------------------- */
static inline const char *scalar_name(int dtype) { return th__dtype_title(dtype); }

/* Error unless `a` is a float32/float64/complex64/complex128 batch of
 * matrices (square when asked) whose size LAPACK's 32-bit indices can
 * address.  Complex matrices need LAPACK: the portable kernels are real. */
static inline int check_matrix(const char *fn, const char *name, const th_tensor *a,
                               int square) {
    if (a->ndim < 2)
        return th__error(TH_ERR_RUNTIME, "%s: The input tensor %s must have at "
                         "least 2 dimensions.", fn, name);
    if (a->dtype == TH_FLOAT16 || a->dtype == TH_BFLOAT16)
        return th__error(TH_ERR_RUNTIME, "%s: Low precision dtypes not "
                         "supported. Got %s", fn, scalar_name(a->dtype));
#ifdef TH_NO_BLAS
    if (th_dtype_is_complex(a->dtype))
        return th__error(TH_ERR_NOT_IMPLEMENTED, "%s: complex matrices (%s) need "
                         "LAPACK, which this build of libTH (TH_NO_BLAS=1) does not "
                         "have", fn, scalar_name(a->dtype));
#endif
    if (a->dtype != TH_FLOAT32 && a->dtype != TH_FLOAT64 && !th_dtype_is_complex(a->dtype))
        return th__error(TH_ERR_RUNTIME, "%s: Expected a floating point or "
                         "complex tensor as input. Got %s", fn,
                         scalar_name(a->dtype));
    int64_t m = a->sizes[a->ndim - 2], n = a->sizes[a->ndim - 1], mn;
    if (square && m != n)
        return th__error(TH_ERR_RUNTIME, "%s: %s must be batches of square "
                         "matrices, but they are %lld by %lld matrices", fn,
                         name, (long long)m, (long long)n);
    if (th__mul_ovf(m, n, &mn) || mn > INT_MAX)
        return th__error(TH_ERR_RUNTIME, "%s: matrices of %lld by %lld "
                         "elements are too large for LAPACK (at most 2^31 - 1 "
                         "elements)", fn, (long long)m, (long long)n);
    return TH_OK;
}

static inline int check_same_dtype(const char *fn, const th_tensor *a,
                            const th_tensor *b) {
    if (a->dtype == b->dtype) return TH_OK;
    return th__error(TH_ERR_RUNTIME, "%s: Expected A and B to have the same "
                     "dtype, but found A of type %s and B of type %s instead",
                     fn, scalar_name(a->dtype), scalar_name(b->dtype));
}

static inline int no_lapack(const char *fn) {
    return th__error(TH_ERR_NOT_IMPLEMENTED, "%s: not available in this "
                     "build of libTH (TH_NO_BLAS=1, no LAPACK); it offers LU, "
                     "solve, inverse, determinants, Cholesky, QR (with geqrf "
                     "and Householder products) and triangular solves", fn);
}

/* "(Batch element 3): " for batched inputs, "" for a single matrix. */
static inline const char *batch_prefix(char *buf, size_t size, int ndim, int64_t b) {
    if (ndim <= 2) return "";
    snprintf(buf, size, "(Batch element %lld): ", (long long)b);
    return buf;
}

/* The broadcast of two batch shapes (the dims before the last two). */
static inline int broadcast_batch(const th_tensor *a, const th_tensor *b, int *nb,
                           int64_t *sizes) {
    int na = a->ndim - 2, nbb = b->ndim - 2;
    *nb = TH_MAX(na, nbb);
    for (int i = 0; i < *nb; i++) {
        int ia = i - (*nb - na), ib = i - (*nb - nbb);
        int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return th__error(TH_ERR_RUNTIME, "The size of tensor a (%lld) must "
                             "match the size of tensor b (%lld) at "
                             "non-singleton dimension %d", (long long)sa,
                             (long long)sb, i);
        sizes[i] = sa == 1 ? sb : sa;
    }
    return TH_OK;
}

/* Copies src into the fresh column-major t (same shape and dtype, no
 * broadcasting, small matrices) matrix by matrix: a tight loop where the
 * generic copy walks a batch of tiny transposed matrices slowly.  0 when it does not
 * apply (the caller then uses th_copy). */
static inline int colmajor_fill(th_tensor *t, const th_tensor *src) {
    if (src->dtype != t->dtype || src->ndim != t->ndim ||
        (t->dtype != TH_FLOAT32 && t->dtype != TH_FLOAT64))
        return 0;
    int nd = t->ndim, nb = nd - 2;
    for (int i = 0; i < nd; i++)
        if (src->sizes[i] != t->sizes[i]) return 0;
    int64_t rows = t->sizes[nb], cols = t->sizes[nb + 1];
    int64_t rs = src->strides[nb], cs = src->strides[nb + 1], per = rows * cols;
    if (per > 1024) return 0; /* large matrices: th_copy's blocked walk */
    int64_t nbatch = th__prod(nb, t->sizes), idx[TH_MAX_DIMS] = {0};
    int f64 = t->dtype == TH_FLOAT64;
    char *dst = th__ptr(t);
    const char *base = th__ptr(src);
    for (int64_t b = 0; b < nbatch; b++) {
        int64_t off = 0;
        for (int i = 0; i < nb; i++) off += idx[i] * src->strides[i];
        for (int64_t c = 0; c < cols; c++)
            for (int64_t r = 0; r < rows; r++) {
                int64_t from = off + r * rs + c * cs, to = b * per + c * rows + r;
                if (f64) ((double *)dst)[to] = ((const double *)base)[from];
                else ((float *)dst)[to] = ((const float *)base)[from];
            }
        for (int i = nb - 1; i >= 0; i--) { /* next batch index */
            if (++idx[i] < t->sizes[i]) break;
            idx[i] = 0;
        }
    }
    return 1;
}

/* A fresh (batch..., rows, cols) tensor, each matrix column-major and the
 * matrices one after another; filled from src (broadcast) when given. */
static inline th_tensor *colmajor(int nb, const int64_t *bsizes, int64_t rows,
                           int64_t cols, int dtype, const th_tensor *src) {
    int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
    if (nb + 2 > TH_MAX_DIMS)
        return th__error_null(TH_ERR_RUNTIME, "too many dimensions");
    for (int i = 0; i < nb; i++) sizes[i] = bsizes[i];
    sizes[nb] = rows;
    sizes[nb + 1] = cols;
    int64_t step = rows * cols; /* fits: checked by the caller's sizes */
    strides[nb] = 1;
    strides[nb + 1] = TH_MAX(rows, 1);
    for (int i = nb - 1; i >= 0; i--) {
        if (step == 0) step = 1; /* empty matrices: any stride, but not 0 */
        strides[i] = step;
        if (th__mul_ovf(step, TH_MAX(sizes[i], 1), &step))
            return th__error_null(TH_ERR_RUNTIME, "numel: integer "
                                  "multiplication overflow");
    }
    th_tensor *t = th_empty_strided(nb + 2, sizes, strides, dtype);
    if (!t || !src) return t;
    if (!colmajor_fill(t, src) && th_copy(t, src) != TH_OK) {
        th_tensor_release(t);
        return NULL;
    }
    return t;
}

/* A contiguous tensor of shape (batch..., extra...) (extra may be none). */
static inline th_tensor *batched(int nb, const int64_t *bsizes, int nextra,
                          const int64_t *extra, int dtype) {
    int64_t sizes[TH_MAX_DIMS];
    for (int i = 0; i < nb; i++) sizes[i] = bsizes[i];
    for (int i = 0; i < nextra; i++) sizes[nb + i] = extra[i];
    return th_empty(nb + nextra, sizes, dtype);
}

static inline void release_all(th_tensor **ts, int n) {
    for (int i = 0; i < n; i++) {
        th_tensor_release(ts[i]);
        ts[i] = NULL;
    }
}

/* The real dtype of a complex one (the dtype itself when real). */
static inline int real_dtype(int dtype) {
    return dtype == TH_COMPLEX128 ? TH_FLOAT64 : dtype == TH_COMPLEX64 ? TH_FLOAT32 : dtype;
}

/* ---- the batch runner ---------------------------------------------- */
typedef struct lp_job lp_job;
/* Works on matrix b; returns LAPACK's info (< 0 only for a bad argument,
 * which is a bug here; >= 0 is the routine's own report). */
typedef int (*lp_fn)(lp_job *j, int64_t b, void *work, int *iwork);

struct lp_job {
    int dtype;
    int64_t nbatch;
    char *p[6];      /* operand base pointers */
    int64_t bs[6];   /* bytes between consecutive matrices of each operand */
    int m, n, k;     /* routine-specific sizes */
    int f[3];        /* routine-specific flags */
    double rcond;
    int64_t lwork;   /* workspace per thread, in elements of dtype */
    int64_t lrwork;  /* real workspace per thread (complex routines), reals */
    int64_t liwork;  /* integer workspace per thread */
    int32_t *info;   /* nbatch entries, or NULL */
    lp_fn fn;
    int failed;      /* a status set by a worker (memory, bad argument) */
};

/* Operands hold their matrices one after another: the last `nmat` dims
 * (2 for matrices, 1 for vectors, 0 for scalars) are one matrix. */
static inline void bind(lp_job *j, int slot, const th_tensor *t, int nmat) {
    j->p[slot] = th__ptr(t);
    int64_t per = 1;
    for (int i = t->ndim - nmat; i < t->ndim; i++) per *= t->sizes[i];
    j->bs[slot] = per * th_dtype_itemsize(t->dtype);
}

static inline char *mat(const lp_job *j, int slot, int64_t b) {
    return j->p[slot] + b * j->bs[slot];
}

/* Bytes of a worker's buffer before its real and its integer workspaces. */
static inline int64_t work_bytes(const lp_job *j) {
    return (j->lwork * th_dtype_itemsize(j->dtype) + 15) / 16 * 16;
}

/* The real workspace (j->lrwork reals) that follows work. */
static inline void *rwork_of(const lp_job *j, void *work) {
    return (char *)work + work_bytes(j);
}

static inline void run_range(int64_t begin, int64_t end, void *vctx) {
    lp_job *j = vctx;
    char *work = NULL;
    int *iwork = NULL;
    if (j->lwork + j->lrwork + j->liwork > 0) {
        int64_t rbytes = (j->lrwork * th_dtype_itemsize(real_dtype(j->dtype)) + 15) / 16 * 16;
        work = malloc((size_t)(work_bytes(j) + rbytes + j->liwork * 4 + 64));
        if (!work) {
            __atomic_store_n(&j->failed, TH_ERR_MEMORY, __ATOMIC_RELAXED);
            return;
        }
        iwork = (int *)(work + work_bytes(j) + rbytes);
    }
    for (int64_t b = begin; b < end; b++) {
        int info = j->fn(j, b, work, iwork);
        if (info < 0) {
            __atomic_store_n(&j->failed, TH_ERR_RUNTIME, __ATOMIC_RELAXED);
            break;
        }
        if (j->info) j->info[b] = info;
    }
    free(work);
}

/* Runs j->fn over the batch; `flops` estimates one matrix's work. */
static inline int run(lp_job *j, const char *fn, double flops) {
    if (j->nbatch == 0) return TH_OK;
    if (j->nbatch == 1 || th_in_parallel()) {
        if (!th_in_parallel()) th__blas_sync(flops);
        else th__blas_in_region();
        run_range(0, j->nbatch, j);
    } else {
        th__blas_sync(0); /* one thread per LAPACK call inside the region */
        int64_t grain = TH_MAX(1, (int64_t)(1e5 / (flops + 1)));
        th_parallel_for(j->nbatch, grain, run_range, j);
    }
    if (j->failed == TH_ERR_MEMORY)
        return th__error(TH_ERR_MEMORY, "%s: not enough memory for the "
                         "LAPACK workspace", fn);
    if (j->failed)
        return th__error(TH_ERR_RUNTIME, "%s: LAPACK rejected an argument "
                         "(internal error)", fn);
    return TH_OK;
}

/* The first failed matrix (info != 0), or -1. */
static inline int64_t first_failure(const th_tensor *info) {
    const int32_t *v = (const int32_t *)th__ptr(info);
    int64_t n = th_numel(info);
    for (int64_t i = 0; i < n; i++)
        if (v[i] != 0) return i;
    return -1;
}

static inline int is_f64(const lp_job *j) {
    return j->dtype == TH_FLOAT64 || j->dtype == TH_COMPLEX128;
}

/* A workspace query's answer (the real part of its first element). */
static inline int64_t query_size(const void *w, int dtype) {
    double v = real_dtype(dtype) == TH_FLOAT64 ? *(const double *)w : *(const float *)w;
    return (int64_t)v + 1;
}

static inline int lda_of(int rows) { return rows > 0 ? rows : 1; }

static inline int has_nonfinite(int f64, const void *a, int64_t n) {
    if (f64) {
        const double *v = a;
        for (int64_t i = 0; i < n; i++) if (!isfinite(v[i])) return 1;
    } else {
        const float *v = a;
        for (int64_t i = 0; i < n; i++) if (!isfinite(v[i])) return 1;
    }
    return 0;
}

/* lapack_small.c: inverses of order 1..4 (A checked by the caller). */
int th__small_inv(const th_tensor *A, th_tensor **X, th_tensor **info);

#endif
