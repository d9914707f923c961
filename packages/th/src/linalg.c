/* Linear algebra: dot, mv, mm, bmm, matmul, outer and the add* forms.
 *
 * Every product goes through gemm_nd(): C = beta * C + alpha * A @ B over
 * any number of leading batch dims, with A, B and C as strided views.
 * float32/float64 call OpenBLAS (dot, gemv or gemm by shape), or the
 * portable kernels of gemm_blocked.c when built with TH_NO_BLAS;
 * float16/bfloat16 compute through float32; integers and bool use plain
 * loops with 64-bit accumulation and keep their dtype. */
#include "th_internal.h"
#include "gemm_blocked.h"

#ifndef TH_NO_BLAS
/* OpenBLAS from the scipy-openblas32 wheel: LP64 CBLAS, prefixed names. */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
void scipy_cblas_sgemm(int order, int transA, int transB, int M, int N, int K,
                       float alpha, const float *A, int lda, const float *B,
                       int ldb, float beta, float *C, int ldc);
void scipy_cblas_dgemm(int order, int transA, int transB, int M, int N, int K,
                       double alpha, const double *A, int lda, const double *B,
                       int ldb, double beta, double *C, int ldc);
void scipy_cblas_sgemv(int order, int trans, int M, int N, float alpha,
                       const float *A, int lda, const float *x, int incx,
                       float beta, float *y, int incy);
void scipy_cblas_dgemv(int order, int trans, int M, int N, double alpha,
                       const double *A, int lda, const double *x, int incx,
                       double beta, double *y, int incy);
float scipy_cblas_sdot(int n, const float *x, int incx, const float *y,
                       int incy);
double scipy_cblas_ddot(int n, const double *x, int incx, const double *y,
                        int incy);
#endif

/* Multiply-adds per batch below which batches run in parallel (and each
 * product on one thread); above it the product itself is threaded.
 * Below these sizes OpenBLAS also stays on the calling thread (its own
 * limits are m*n*k <= 2^18 for gemm, m*n < 9216 for gemv, n <= 10000 for
 * dot); called inside our parallel region, it must not start threads. */
#define SMALL_PRODUCT (1 << 18)
#define SMALL_VECTOR_PRODUCT 4096
/* Columns of C accumulated at once by the integer loops. */
#define INT_COLS 256

/* ---- messages ------------------------------------------------------ */
/* PyTorch names dtypes as C++ types in some messages ... */
static const char *cpp_name(int dtype) {
    static const char *names[TH_NUM_DTYPES] = {
        "float",       "double",        "c10::Half", "c10::BFloat16",
        "signed char", "unsigned char", "short int", "int",
        "long int",    "bool",          "c10::complex<float>",
        "c10::complex<double>"};
    return dtype >= 0 && dtype < TH_NUM_DTYPES ? names[dtype] : "invalid";
}

/* ... and as ScalarType names in others. */
static const char *title_name(int dtype) { return th__dtype_title(dtype); }

static int check_mm_dtypes(const th_tensor *a, const th_tensor *b) {
    if (a->dtype == b->dtype) return TH_OK;
    return th__error(TH_ERR_RUNTIME,
                     "expected m1 and m2 to have the same dtype, but got: "
                     "%s != %s", cpp_name(a->dtype), cpp_name(b->dtype));
}

static int check_bmm_dtypes(const th_tensor *a, const th_tensor *b) {
    if (a->dtype == b->dtype) return TH_OK;
    return th__error(TH_ERR_RUNTIME, "expected scalar type %s but found %s",
                     title_name(a->dtype), title_name(b->dtype));
}

/* The `input` of the add* forms must share the operands' dtype. */
static int check_input_dtype(const th_tensor *input, const th_tensor *b,
                             const char *bname) {
    if (input->dtype == b->dtype) return TH_OK;
    return th__error(TH_ERR_RUNTIME,
                     "self and %s must have the same dtype, but got %s and %s",
                     bname, title_name(input->dtype), title_name(b->dtype));
}

/* ---- small helpers ------------------------------------------------- */
/* Fills the stack struct `v` with a view of t's storage.  It borrows the
 * storage: never retain or release it. */
static void make_view(th_tensor *v, const th_tensor *t, int64_t offset,
                      int ndim, const int64_t *sizes, const int64_t *strides) {
    v->storage = t->storage;
    v->offset = offset;
    v->dtype = t->dtype;
    v->ndim = ndim;
    v->refcount = 1;
    for (int i = 0; i < ndim; i++) {
        v->sizes[i] = sizes[i];
        v->strides[i] = strides[i];
    }
}

/* Do the memory ranges of a and b intersect? */
static int may_overlap(const th_tensor *a, const th_tensor *b) {
    if (a->storage != b->storage || th_numel(a) == 0 || th_numel(b) == 0)
        return 0;
    int64_t lo[2], hi[2];
    const th_tensor *ts[2] = {a, b};
    for (int t = 0; t < 2; t++) {
        int64_t item = th_dtype_itemsize(ts[t]->dtype);
        lo[t] = hi[t] = ts[t]->offset * item;
        for (int i = 0; i < ts[t]->ndim; i++) {
            int64_t span = (ts[t]->sizes[i] - 1) * ts[t]->strides[i] * item;
            if (span > 0) hi[t] += span; else lo[t] += span;
        }
        hi[t] += item;
    }
    return lo[0] < hi[1] && lo[1] < hi[0];
}

/* Saturating double -> int64 for the integer alpha/beta. */
static int64_t to_i64(double v) {
    if (v != v) return 0;
    if (v >= 9.2e18) return INT64_MAX;
    if (v <= -9.2e18) return INT64_MIN;
    return (int64_t)v;
}

/* ---- C *= beta (beta == 0 writes zeros, ignoring NaNs) ------------- */
typedef struct {
    double beta;
    uint64_t ibeta; /* for integers: beta truncated, wrapping */
    int dtype;
} scale_ctx;

#define SCALE_FLOAT(x, c, T) ((T)((x) * (T)(c)->beta))
#define SCALE_INT(x, c, T) ((T)(int64_t)((uint64_t)(int64_t)(x) * (c)->ibeta))
#define DEF_SCALE(E, T, S, HOW)                                              \
    static void scale_##S(char **d, const int64_t *st, int64_t n,            \
                          void *vctx) {                                      \
        const scale_ctx *c = vctx;                                           \
        char *p = d[0];                                                      \
        for (int64_t i = 0; i < n; i++, p += st[0])                          \
            *(T *)p = HOW(*(T *)p, c, T);                                    \
    }
#define DEF_SCALE_FLOAT(E, T, S) DEF_SCALE(E, T, S, SCALE_FLOAT)
#define DEF_SCALE_INT(E, T, S) DEF_SCALE(E, T, S, SCALE_INT)
TH_FOR_FLOAT_DTYPES(DEF_SCALE_FLOAT)
TH_FOR_INT_DTYPES(DEF_SCALE_INT)

static void scale_half(char **d, const int64_t *st, int64_t n, void *vctx) {
    const scale_ctx *c = vctx;
    char *p = d[0];
    for (int64_t i = 0; i < n; i++, p += st[0])
        th__store_double(p, c->dtype, th__load_double(p, c->dtype) * c->beta);
}

static int scale_(th_tensor *c, double beta) {
    if (th__refuse_complex("addmm_impl", c->dtype)) return th_last_status();
    if (beta == 1 || th_numel(c) == 0) return TH_OK;
    if (beta == 0) return th_zero(c);
    if (c->dtype == TH_BOOL) return TH_OK; /* nonzero beta keeps the value */
    th_iter it;
    const th_tensor *ops[1] = {c};
    th__iter_init(&it, 1, ops);
    scale_ctx sc = {beta, (uint64_t)to_i64(beta), c->dtype};
    switch (c->dtype) {
#define SCALE_CASE(E, T, S) case E: th__iter_run(&it, scale_##S, &sc, 1); break;
        TH_FOR_FLOAT_DTYPES(SCALE_CASE)
        TH_FOR_INT_DTYPES(SCALE_CASE)
#undef SCALE_CASE
    default: th__iter_run(&it, scale_half, &sc, 1); break;
    }
    return TH_OK;
}

/* ---- the batched product ------------------------------------------- */
typedef struct {
    int dtype;
    int nb;                              /* batch dims */
    int64_t bsizes[TH_MAX_DIMS];
    int64_t bstrides[3][TH_MAX_DIMS];    /* A, B, C, in elements */
    char *data[3];
    int64_t rs[3], cs[3];                /* row / column strides */
    int64_t m, n, k;
    double alpha, beta;
    int failed;                          /* set by a worker on error */
} mm_job;

/* Element offsets of batch `t` (row-major over the batch dims). */
static void batch_offsets(const mm_job *j, int64_t t, int64_t *off) {
    off[0] = off[1] = off[2] = 0;
    for (int d = j->nb - 1; d >= 0 && t > 0; d--) {
        int64_t i = t % j->bsizes[d];
        t /= j->bsizes[d];
        for (int w = 0; w < 3; w++) off[w] += i * j->bstrides[w][d];
    }
}

#ifndef TH_NO_BLAS
/* Can a rows x cols matrix with strides (rs, cs) be handed to row-major
 * BLAS, either as is (*trans = 0) or as the transpose of a row-major
 * matrix (*trans = 1)?  Strides of size-1 dims do not matter. */
static int blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                       int *trans, int64_t *ld) {
    if (cols <= 1 || cs == 1) {
        int64_t l = rows <= 1 ? TH_MAX(cols, 1) : rs;
        if (l >= TH_MAX(cols, 1) && l <= INT32_MAX) {
            *trans = 0;
            *ld = l;
            return 1;
        }
    }
    if (rows <= 1 || rs == 1) {
        int64_t l = cols <= 1 ? TH_MAX(rows, 1) : cs;
        if (l >= TH_MAX(rows, 1) && l <= INT32_MAX) {
            *trans = 1;
            *ld = l;
            return 1;
        }
    }
    return 0;
}

static int blas_ok(const th_tensor *t) {
    int trans;
    int64_t ld;
    int nd = t->ndim;
    return blas_layout(t->sizes[nd - 2], t->sizes[nd - 1], t->strides[nd - 2],
                       t->strides[nd - 1], &trans, &ld);
}

/* One float product through CBLAS.  Layouts were checked by gemm_nd, so
 * every vector increment below is positive. */
#define DEF_MM_FLOAT(T, S, P)                                                \
    static int mm_one_##S(const mm_job *j, const T *a, const T *b, T *c) {   \
        int m = (int)j->m, n = (int)j->n, k = (int)j->k;                     \
        T alpha = (T)j->alpha, beta = (T)j->beta;                            \
        int ta = 0, tb = 0, tc = 0;                                          \
        int64_t lda = 1, ldb = 1, ldc = 1;                                   \
        blas_layout(m, k, j->rs[0], j->cs[0], &ta, &lda);                    \
        blas_layout(k, n, j->rs[1], j->cs[1], &tb, &ldb);                    \
        blas_layout(m, n, j->rs[2], j->cs[2], &tc, &ldc);                    \
        if (m == 1 && n == 1) {                                              \
            T s = scipy_cblas_##P##dot(k, a, k > 1 ? (int)j->cs[0] : 1, b,   \
                                       k > 1 ? (int)j->rs[1] : 1);           \
            *c = beta == 0 ? alpha * s : beta * *c + alpha * s;              \
            return TH_OK;                                                    \
        }                                                                    \
        if (m == 1 || n == 1) {                                              \
            /* y = op(M) @ x: for n == 1, M = A, x = B's column, y = C's     \
             * column; for m == 1, M = B^T, x = A's row, y = C's row. */     \
            int rows = n == 1 ? m : n, mt = n == 1 ? ta : !tb;               \
            const T *mat = n == 1 ? a : b;                                   \
            int ld = (int)(n == 1 ? lda : ldb);                              \
            const T *x = n == 1 ? b : a;                                     \
            int incx = k <= 1 ? 1 : (int)(n == 1 ? j->rs[1] : j->cs[0]);     \
            int incy = rows <= 1 ? 1 : (int)(n == 1 ? j->rs[2] : j->cs[2]);  \
            if (beta == 0) /* BLAS may scale NaN by 0 */                     \
                for (int i = 0; i < rows; i++) c[(int64_t)i * incy] = 0;     \
            if (!mt)                                                         \
                scipy_cblas_##P##gemv(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, rows, \
                                      k, alpha, mat, ld, x, incx, beta, c,   \
                                      incy);                                 \
            else                                                             \
                scipy_cblas_##P##gemv(CBLAS_ROW_MAJOR, CBLAS_TRANS, k, rows, \
                                      alpha, mat, ld, x, incx, beta, c,      \
                                      incy);                                 \
            return TH_OK;                                                    \
        }                                                                    \
        if (!tc)                                                             \
            scipy_cblas_##P##gemm(CBLAS_ROW_MAJOR,                           \
                                  ta ? CBLAS_TRANS : CBLAS_NO_TRANS,         \
                                  tb ? CBLAS_TRANS : CBLAS_NO_TRANS, m, n, k,\
                                  alpha, a, (int)lda, b, (int)ldb, beta, c,  \
                                  (int)ldc);                                 \
        else /* C is column-major: compute C^T = B^T @ A^T */                \
            scipy_cblas_##P##gemm(CBLAS_ROW_MAJOR,                           \
                                  tb ? CBLAS_NO_TRANS : CBLAS_TRANS,         \
                                  ta ? CBLAS_NO_TRANS : CBLAS_TRANS, n, m, k,\
                                  alpha, b, (int)ldb, a, (int)lda, beta, c,  \
                                  (int)ldc);                                 \
        return TH_OK;                                                        \
    }
DEF_MM_FLOAT(float, f32, s)
DEF_MM_FLOAT(double, f64, d)
#else
/* One float product through the portable kernels (any strides). */
#define DEF_MM_FLOAT(T, S)                                                   \
    static int mm_one_##S(const mm_job *j, const T *a, const T *b, T *c) {   \
        int64_t m = j->m, n = j->n, k = j->k;                                \
        T alpha = (T)j->alpha, beta = (T)j->beta;                            \
        if (m == 1 && n == 1) {                                              \
            T s = th__dot_blocked_##S(k, a, j->cs[0], b, j->rs[1]);          \
            *c = beta == 0 ? alpha * s : beta * *c + alpha * s;              \
        } else if (n == 1) {                                                 \
            th__gemv_blocked_##S(m, k, alpha, a, j->rs[0], j->cs[0], b,      \
                                 j->rs[1], beta, c, j->rs[2]);               \
        } else if (m == 1) {                                                 \
            th__gemv_blocked_##S(n, k, alpha, b, j->cs[1], j->rs[1], a,      \
                                 j->cs[0], beta, c, j->cs[2]);               \
        } else {                                                             \
            return th__gemm_blocked_##S(m, n, k, alpha, a, j->rs[0],         \
                                        j->cs[0], b, j->rs[1], j->cs[1],     \
                                        beta, c, j->rs[2], j->cs[2]);        \
        }                                                                    \
        return TH_OK;                                                        \
    }
DEF_MM_FLOAT(float, f32)
DEF_MM_FLOAT(double, f64)
#endif

/* Rows [i0, i1) of one integer product.  Sums wrap around like
 * PyTorch's: they are kept in unsigned ACC arithmetic (64-bit, or 32-bit
 * for dtypes of at most 32 bits, which gives the same narrowed result and
 * vectorises better), then narrowed to the dtype. */
#define NARROW_INT(v, T) ((T)(int64_t)(v))
#define NARROW_BOOL(v, T) ((T)((v) != 0))
#define DEF_MM_INT(E, T, S, ACC, NARROW)                                     \
    static void mm_rows_##S(const mm_job *j, const T *a, const T *b, T *c,   \
                            int64_t i0, int64_t i1) {                        \
        int is_bool = E == TH_BOOL;                                          \
        ACC alpha = is_bool ? j->alpha != 0 : (ACC)to_i64(j->alpha);         \
        ACC beta = is_bool ? j->beta != 0 : (ACC)to_i64(j->beta);            \
        int64_t rsa = j->rs[0], csa = j->cs[0], rsb = j->rs[1];              \
        int64_t csb = j->cs[1], rsc = j->rs[2], csc = j->cs[2];              \
        ACC acc[INT_COLS];                                                   \
        for (int64_t i = i0; i < i1; i++) {                                  \
            for (int64_t j0 = 0; j0 < j->n; j0 += INT_COLS) {                \
                int64_t nb = TH_MIN(INT_COLS, j->n - j0);                    \
                for (int64_t q = 0; q < nb; q++) acc[q] = 0;                 \
                for (int64_t l = 0; l < j->k; l++) {                         \
                    ACC ail = (ACC)(int64_t)a[i * rsa + l * csa];            \
                    const T *brow = b + l * rsb + j0 * csb;                  \
                    if (ail == 0) continue;                                  \
                    if (csb == 1)                                            \
                        for (int64_t q = 0; q < nb; q++)                     \
                            acc[q] += ail * (ACC)(int64_t)brow[q];           \
                    else                                                     \
                        for (int64_t q = 0; q < nb; q++)                     \
                            acc[q] += ail * (ACC)(int64_t)brow[q * csb];     \
                }                                                            \
                T *crow = c + i * rsc + j0 * csc;                            \
                for (int64_t q = 0; q < nb; q++) {                           \
                    ACC v = alpha * acc[q];                                  \
                    if (beta) v += beta * (ACC)(int64_t)crow[q * csc];       \
                    crow[q * csc] = NARROW(v, T);                            \
                }                                                            \
            }                                                                \
        }                                                                    \
    }
DEF_MM_INT(TH_INT8, int8_t, i8, uint32_t, NARROW_INT)
DEF_MM_INT(TH_UINT8, uint8_t, u8, uint32_t, NARROW_INT)
DEF_MM_INT(TH_INT16, int16_t, i16, uint32_t, NARROW_INT)
DEF_MM_INT(TH_INT32, int32_t, i32, uint32_t, NARROW_INT)
DEF_MM_INT(TH_INT64, int64_t, i64, uint64_t, NARROW_INT)
DEF_MM_INT(TH_BOOL, th_bool_t, b8, uint64_t, NARROW_BOOL)

/* Worker over batches (floating dtypes). */
static void float_batches(int64_t begin, int64_t end, void *vctx) {
    mm_job *j = vctx;
    int64_t off[3];
    for (int64_t t = begin; t < end; t++) {
        batch_offsets(j, t, off);
        int rc;
        if (j->dtype == TH_FLOAT32)
            rc = mm_one_f32(j, (const float *)j->data[0] + off[0],
                            (const float *)j->data[1] + off[1],
                            (float *)j->data[2] + off[2]);
        else
            rc = mm_one_f64(j, (const double *)j->data[0] + off[0],
                            (const double *)j->data[1] + off[1],
                            (double *)j->data[2] + off[2]);
        if (rc != TH_OK) {
            __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
            return;
        }
    }
}

/* Worker over (batch, row) pairs (integer dtypes and bool). */
static void int_rows(int64_t begin, int64_t end, void *vctx) {
    const mm_job *j = vctx;
    int64_t off[3];
    while (begin < end) {
        int64_t t = begin / j->m, i0 = begin % j->m;
        int64_t i1 = TH_MIN(j->m, i0 + (end - begin));
        batch_offsets(j, t, off);
        switch (j->dtype) {
#define INT_CASE(E, T, S)                                                    \
    case E:                                                                  \
        mm_rows_##S(j, (const T *)j->data[0] + off[0],                       \
                    (const T *)j->data[1] + off[1], (T *)j->data[2] + off[2], \
                    i0, i1);                                                 \
        break;
            TH_FOR_INT_DTYPES(INT_CASE)
            INT_CASE(TH_BOOL, th_bool_t, b8)
#undef INT_CASE
        default: break;
        }
        begin += i1 - i0;
    }
}

#ifndef TH_NO_BLAS
/* A mid-sized product (too small for OpenBLAS's own threads, whose jobs
 * wait for each other) runs as independent products over bands of C's
 * columns (or rows, when C has more rows), one band per task of the pool:
 * no task waits for another, so a preempted worker delays only its band.
 * Bands are multiples of SPLIT_BAND wide and hold at least SPLIT_TASK
 * multiply-adds. */
#define SPLIT_BAND 16
#define SPLIT_TASK (1 << 18)

typedef struct {
    mm_job *j;   /* the whole product; its `failed` is set by a band */
    int by_cols; /* bands of columns, else of rows */
} mm_split;

static void split_bands(int64_t b0, int64_t b1, void *vctx) {
    const mm_split *s = vctx;
    mm_job part = *s->j;
    int64_t dim = s->by_cols ? part.n : part.m;
    int64_t lo = b0 * SPLIT_BAND, hi = TH_MIN(dim, b1 * SPLIT_BAND);
    size_t es = (size_t)th_dtype_itemsize(part.dtype);
    char *a = part.data[0], *b = part.data[1], *c = part.data[2];
    if (s->by_cols) {
        part.n = hi - lo;
        b += (size_t)(lo * part.cs[1]) * es;
        c += (size_t)(lo * part.cs[2]) * es;
    } else {
        part.m = hi - lo;
        a += (size_t)(lo * part.rs[0]) * es;
        c += (size_t)(lo * part.rs[2]) * es;
    }
    int rc = part.dtype == TH_FLOAT32
                 ? mm_one_f32(&part, (const float *)a, (const float *)b, (float *)c)
                 : mm_one_f64(&part, (const double *)a, (const double *)b, (double *)c);
    if (rc != TH_OK)
        __atomic_store_n(&s->j->failed, 1, __ATOMIC_RELAXED);
}

/* Runs one product as bands on the pool when that pays; 0 when it does
 * not (the caller runs it whole). */
static int split_product(mm_job *j, double work) {
    if (j->m < 2 || j->n < 2 || work < 2.0 * SPLIT_TASK ||
        work >= TH_BLAS_THREAD_WORK || th_in_parallel() ||
        th_get_num_threads() < 2)
        return 0;
    mm_split s = {j, j->n >= j->m};
    int64_t dim = s.by_cols ? j->n : j->m;
    int64_t bands = (dim + SPLIT_BAND - 1) / SPLIT_BAND;
    double per_band = work / (double)dim * SPLIT_BAND;
    int64_t grain = (int64_t)(SPLIT_TASK / per_band) + 1;
    if (bands < 2 * grain)
        return 0;
    th_parallel_for(bands, grain, split_bands, &s);
    return 1;
}
#endif

static int run_job(th_tensor *C, const th_tensor *A, const th_tensor *B,
                   double beta, double alpha) {
    int nd = C->ndim;
    mm_job j;
    memset(&j, 0, sizeof j);
    j.dtype = C->dtype;
    j.nb = nd - 2;
    const th_tensor *ops[3] = {A, B, C};
    for (int w = 0; w < 3; w++) {
        j.data[w] = th__ptr(ops[w]);
        j.rs[w] = ops[w]->strides[nd - 2];
        j.cs[w] = ops[w]->strides[nd - 1];
        for (int d = 0; d < j.nb; d++) j.bstrides[w][d] = ops[w]->strides[d];
    }
    for (int d = 0; d < j.nb; d++) j.bsizes[d] = C->sizes[d];
    j.m = C->sizes[nd - 2];
    j.n = C->sizes[nd - 1];
    j.k = A->sizes[nd - 1];
    j.alpha = alpha;
    j.beta = beta;
    int64_t nbatch = th__prod(j.nb, j.bsizes);
    double work = (double)j.m * (double)j.n * (double)j.k;
    if (th_dtype_is_floating(j.dtype)) {
        if (!th_in_parallel())
            th__blas_sync(work);
        else
            th__blas_in_region();
        double small = j.m == 1 || j.n == 1 ? SMALL_VECTOR_PRODUCT
                                            : SMALL_PRODUCT;
        if (nbatch > 1 && work < small) /* >= 64K multiply-adds a task */
            th_parallel_for(nbatch, TH_MAX(1, (int64_t)(65536 / work)),
                             float_batches, &j);
#ifndef TH_NO_BLAS
        else if (nbatch == 1 && split_product(&j, work))
            ;
#endif
        else
            float_batches(0, nbatch, &j);
        if (j.failed)
            return th__error(TH_ERR_MEMORY,
                             "not enough memory for the matrix product");
    } else {
        int64_t per_row = TH_MAX(1, j.n * j.k);
        th_parallel_for(nbatch * j.m, TH_MAX(1, TH_GRAIN / per_row),
                         int_rows, &j);
    }
    return TH_OK;
}

static int gemm_nd(th_tensor *C, const th_tensor *A, const th_tensor *B,
                   double beta, double alpha);

/* float16/bfloat16: compute in float32, round once at the end. */
static int gemm_half(th_tensor *C, const th_tensor *A, const th_tensor *B,
                     double beta, double alpha) {
    th_tensor *a = th_to_dtype(A, TH_FLOAT32);
    th_tensor *b = a ? th_to_dtype(B, TH_FLOAT32) : NULL;
    th_tensor *c = NULL;
    if (b)
        c = beta != 0 ? th_to_dtype(C, TH_FLOAT32)
                      : th_empty(C->ndim, C->sizes, TH_FLOAT32);
    int rc = c ? gemm_nd(c, a, b, beta, alpha) : th_last_status();
    if (rc == TH_OK) rc = th_copy(C, c);
    th_tensor_release(a);
    th_tensor_release(b);
    th_tensor_release(c);
    return rc;
}

/* C = beta * C + alpha * A @ B.  A (..., m, k), B (..., k, n) and
 * C (..., m, n) have the same ndim (>= 2), batch sizes and dtype; A and B
 * may broadcast (zero strides); C must not overlap them. */
static int gemm_nd(th_tensor *C, const th_tensor *A, const th_tensor *B,
                   double beta, double alpha) {
    int nd = C->ndim;
    if (th__refuse_complex("addmm_impl", C->dtype) ||
        th__refuse_complex("addmm_impl", A->dtype))
        return th_last_status();
    if (th_numel(C) == 0) return TH_OK;
    if (A->sizes[nd - 1] == 0 || alpha == 0) return scale_(C, beta);
    if (th__is_half(C->dtype)) return gemm_half(C, A, B, beta, alpha);
#ifndef TH_NO_BLAS
    if (th_dtype_is_floating(C->dtype)) {
        const int64_t dims[3] = {C->sizes[nd - 2], C->sizes[nd - 1],
                                 A->sizes[nd - 1]};
        for (int i = 0; i < 3; i++)
            if (dims[i] > INT32_MAX)
                return th__error(TH_ERR_RUNTIME,
                                 "matrix product: size %lld exceeds the "
                                 "32-bit BLAS interface (at most %d)",
                                 (long long)dims[i], INT32_MAX);
        /* BLAS wants one unit stride per matrix: copy the others */
        th_tensor *a = NULL, *b = NULL, *c = NULL;
        int rc = TH_OK;
        if (!blas_ok(A) && !(a = th_clone(A))) rc = th_last_status();
        if (rc == TH_OK && !blas_ok(B) && !(b = th_clone(B)))
            rc = th_last_status();
        if (rc == TH_OK && !blas_ok(C)) {
            c = beta != 0 ? th_clone(C) : th_empty(nd, C->sizes, C->dtype);
            if (!c) rc = th_last_status();
        }
        if (rc == TH_OK)
            rc = run_job(c ? c : C, a ? a : A, b ? b : B, beta, alpha);
        if (rc == TH_OK && c) rc = th_copy(C, c);
        th_tensor_release(a);
        th_tensor_release(b);
        th_tensor_release(c);
        return rc;
    }
#endif
    return run_job(C, A, B, beta, alpha);
}

/* Copies `input` (broadcast) into the fresh result r unless beta == 0,
 * where PyTorch ignores it (NaNs included). */
static int init_from_input(th_tensor *r, const th_tensor *e, double beta) {
    return beta != 0 ? th_copy(r, e) : TH_OK;
}

/* ---- public functions ---------------------------------------------- */
th_tensor *th_dot(const th_tensor *a, const th_tensor *b) {
    if (a->ndim != 1 || b->ndim != 1)
        return th__error_null(TH_ERR_RUNTIME,
                              "1D tensors expected, but got %dD and %dD "
                              "tensors", a->ndim, b->ndim);
    if (a->dtype != b->dtype)
        return th__error_null(TH_ERR_RUNTIME,
                              "dot : expected both vectors to have same "
                              "dtype, but found %s and %s",
                              title_name(a->dtype), title_name(b->dtype));
    int64_t k = a->sizes[0];
    if (k != b->sizes[0])
        return th__error_null(TH_ERR_RUNTIME,
                              "inconsistent tensor size, expected tensor "
                              "[%lld] and src [%lld] to have the same number "
                              "of elements, but got %lld and %lld elements "
                              "respectively", (long long)k,
                              (long long)b->sizes[0], (long long)k,
                              (long long)b->sizes[0]);
    th_tensor *r = th_empty(0, NULL, a->dtype);
    if (!r) return NULL;
    /* (1 x k) @ (k x 1) -> (1 x 1) */
    th_tensor av, bv, cv;
    make_view(&av, a, a->offset, 2, (int64_t[]){1, k},
              (int64_t[]){1, a->strides[0]});
    make_view(&bv, b, b->offset, 2, (int64_t[]){k, 1},
              (int64_t[]){b->strides[0], 1});
    make_view(&cv, r, r->offset, 2, (int64_t[]){1, 1}, (int64_t[]){1, 1});
    if (gemm_nd(&cv, &av, &bv, 0.0, 1.0) != TH_OK) {
        th_tensor_release(r);
        return NULL;
    }
    return r;
}

static int check_mv(const th_tensor *input, const th_tensor *m,
                    const th_tensor *v) {
    int in_dim = input ? input->ndim : 1;
    if (m->ndim != 2 || v->ndim != 1 || in_dim > 1)
        return th__error(TH_ERR_RUNTIME,
                         "vector + matrix @ vector expected, got %d, %d, %d",
                         in_dim, m->ndim, v->ndim);
    int64_t in_numel = input ? th_numel(input) : m->sizes[0];
    if (m->sizes[1] != v->sizes[0] ||
        (in_numel != m->sizes[0] && in_numel != 1))
        return th__error(TH_ERR_RUNTIME,
                         "size mismatch, got input (%lld), mat (%lldx%lld), "
                         "vec (%lld)", (long long)in_numel,
                         (long long)m->sizes[0], (long long)m->sizes[1],
                         (long long)v->sizes[0]);
    if (check_mm_dtypes(m, v) != TH_OK) return th_last_status();
    if (input && check_input_dtype(input, v, "vec") != TH_OK)
        return th_last_status();
    return TH_OK;
}

/* r (m) = beta * r + alpha * mat @ vec */
static int mv_into(th_tensor *r, const th_tensor *mat, const th_tensor *vec,
                   double beta, double alpha) {
    th_tensor bv, cv;
    make_view(&bv, vec, vec->offset, 2, (int64_t[]){vec->sizes[0], 1},
              (int64_t[]){vec->strides[0], 1});
    make_view(&cv, r, r->offset, 2, (int64_t[]){r->sizes[0], 1},
              (int64_t[]){r->strides[0], 1});
    return gemm_nd(&cv, mat, &bv, beta, alpha);
}

th_tensor *th_mv(const th_tensor *m, const th_tensor *v) {
    if (check_mv(NULL, m, v) != TH_OK) return NULL;
    th_tensor *r = th_empty(1, m->sizes, m->dtype);
    if (r && mv_into(r, m, v, 0.0, 1.0) != TH_OK) {
        th_tensor_release(r);
        return NULL;
    }
    return r;
}

th_tensor *th_addmv(const th_tensor *input, const th_tensor *m,
                    const th_tensor *v, double beta, double alpha) {
    if (check_mv(input, m, v) != TH_OK) return NULL;
    th_tensor *e = th_expand(input, 1, m->sizes);
    if (!e) return NULL;
    th_tensor *r = th_empty(1, m->sizes, m->dtype);
    if (r && (init_from_input(r, e, beta) != TH_OK ||
              mv_into(r, m, v, beta, alpha) != TH_OK)) {
        th_tensor_release(r);
        r = NULL;
    }
    th_tensor_release(e);
    return r;
}

static int check_mm(const th_tensor *a, const th_tensor *b) {
    if (a->ndim != 2)
        return th__error(TH_ERR_RUNTIME,
                         "mat1 must be a matrix, got %d-D tensor", a->ndim);
    if (b->ndim != 2)
        return th__error(TH_ERR_RUNTIME,
                         "mat2 must be a matrix, got %d-D tensor", b->ndim);
    if (a->sizes[1] != b->sizes[0])
        return th__error(TH_ERR_RUNTIME,
                         "mat1 and mat2 shapes cannot be multiplied "
                         "(%lldx%lld and %lldx%lld)", (long long)a->sizes[0],
                         (long long)a->sizes[1], (long long)b->sizes[0],
                         (long long)b->sizes[1]);
    return check_mm_dtypes(a, b);
}

th_tensor *th_mm(const th_tensor *a, const th_tensor *b) {
    if (check_mm(a, b) != TH_OK) return NULL;
    th_tensor *r = th_empty(2, (int64_t[]){a->sizes[0], b->sizes[1]},
                            a->dtype);
    if (r && gemm_nd(r, a, b, 0.0, 1.0) != TH_OK) {
        th_tensor_release(r);
        return NULL;
    }
    return r;
}

th_tensor *th_addmm(const th_tensor *input, const th_tensor *m1,
                    const th_tensor *m2, double beta, double alpha) {
    if (check_mm(m1, m2) != TH_OK ||
        check_input_dtype(input, m2, "mat2") != TH_OK)
        return NULL;
    int64_t sizes[2] = {m1->sizes[0], m2->sizes[1]};
    th_tensor *e = th_expand(input, 2, sizes);
    if (!e) return NULL;
    th_tensor *r = th_empty(2, sizes, m1->dtype);
    if (r && (init_from_input(r, e, beta) != TH_OK ||
              gemm_nd(r, m1, m2, beta, alpha) != TH_OK)) {
        th_tensor_release(r);
        r = NULL;
    }
    th_tensor_release(e);
    return r;
}

int th_gemm_out(th_tensor *out, const th_tensor *a, const th_tensor *b,
                double beta, double alpha) {
    if (check_mm(a, b) != TH_OK) return th_last_status();
    int64_t m = a->sizes[0], n = b->sizes[1];
    if (out->ndim != 2 || out->sizes[0] != m || out->sizes[1] != n) {
        char buf[256];
        return th__error(TH_ERR_RUNTIME,
                         "gemm_out: expected out of shape [%lld, %lld] but "
                         "got %s", (long long)m, (long long)n,
                         th__shape_str(out->ndim, out->sizes, buf));
    }
    for (int d = 0; d < 2; d++)
        if (out->sizes[d] > 1 && out->strides[d] == 0)
            return th__error(TH_ERR_RUNTIME,
                             "unsupported operation: more than one element "
                             "of the written-to tensor refers to a single "
                             "memory location. Please clone() the tensor "
                             "before performing the operation.");
    th__bump_version(out);
    if (out->dtype != a->dtype) {
        /* compute in the operands' dtype, then convert */
        th_tensor *t = beta != 0 ? th_to_dtype(out, a->dtype)
                                 : th_empty(2, out->sizes, a->dtype);
        int rc = t ? gemm_nd(t, a, b, beta, alpha) : th_last_status();
        if (rc == TH_OK) rc = th_copy(out, t);
        th_tensor_release(t);
        return rc;
    }
    /* out may alias an operand (e.g. x = x @ w): read from copies */
    th_tensor *ac = may_overlap(out, a) ? th_clone(a) : NULL;
    th_tensor *bc = may_overlap(out, b) ? th_clone(b) : NULL;
    int rc = TH_OK;
    if ((may_overlap(out, a) && !ac) || (may_overlap(out, b) && !bc))
        rc = th_last_status();
    else
        rc = gemm_nd(out, ac ? ac : a, bc ? bc : b, beta, alpha);
    th_tensor_release(ac);
    th_tensor_release(bc);
    return rc;
}

static int check_bmm(const th_tensor *b1, const th_tensor *b2) {
    if (b1->ndim != 3)
        return th__error(TH_ERR_RUNTIME, "batch1 must be a 3D tensor");
    if (b2->ndim != 3)
        return th__error(TH_ERR_RUNTIME, "batch2 must be a 3D tensor");
    if (b2->sizes[0] != b1->sizes[0] || b2->sizes[1] != b1->sizes[2])
        return th__error(TH_ERR_RUNTIME,
                         "Expected size for first two dimensions of batch2 "
                         "tensor to be: [%lld, %lld] but got: [%lld, %lld].",
                         (long long)b1->sizes[0], (long long)b1->sizes[2],
                         (long long)b2->sizes[0], (long long)b2->sizes[1]);
    return check_bmm_dtypes(b1, b2);
}

th_tensor *th_bmm(const th_tensor *a, const th_tensor *b) {
    if (check_bmm(a, b) != TH_OK) return NULL;
    int64_t sizes[3] = {a->sizes[0], a->sizes[1], b->sizes[2]};
    th_tensor *r = th_empty(3, sizes, a->dtype);
    if (r && gemm_nd(r, a, b, 0.0, 1.0) != TH_OK) {
        th_tensor_release(r);
        return NULL;
    }
    return r;
}

th_tensor *th_baddbmm(const th_tensor *input, const th_tensor *b1,
                      const th_tensor *b2, double beta, double alpha) {
    if (check_bmm(b1, b2) != TH_OK ||
        check_input_dtype(input, b2, "batch2") != TH_OK)
        return NULL;
    int64_t sizes[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
    th_tensor *e = th_expand(input, 3, sizes);
    if (!e) return NULL;
    th_tensor *r = th_empty(3, sizes, b1->dtype);
    if (r && (init_from_input(r, e, beta) != TH_OK ||
              gemm_nd(r, b1, b2, beta, alpha) != TH_OK)) {
        th_tensor_release(r);
        r = NULL;
    }
    th_tensor_release(e);
    return r;
}

/* beta * input + alpha * sum over b of b1[b] @ b2[b]: one product per
 * batch, accumulating into the result (beta applies to the first). */
th_tensor *th_addbmm(const th_tensor *input, const th_tensor *b1,
                     const th_tensor *b2, double beta, double alpha) {
    if (b1->ndim != 3)
        return th__error_null(TH_ERR_RUNTIME, "batch1 must be a 3D tensor");
    if (b2->ndim != 3)
        return th__error_null(TH_ERR_RUNTIME, "batch2 must be a 3D tensor");
    if (b1->sizes[0] != b2->sizes[0])
        return th__error_null(TH_ERR_RUNTIME,
                              "batch1 and batch2 must have same number of "
                              "batches, got %lld and %lld",
                              (long long)b1->sizes[0], (long long)b2->sizes[0]);
    if (b1->sizes[2] != b2->sizes[1])
        return th__error_null(TH_ERR_RUNTIME,
                              "Incompatible matrix sizes for bmm (%lldx%lld "
                              "and %lldx%lld)", (long long)b1->sizes[1],
                              (long long)b1->sizes[2], (long long)b2->sizes[1],
                              (long long)b2->sizes[2]);
    if (check_bmm_dtypes(b1, b2) != TH_OK ||
        check_input_dtype(input, b2, "batch2") != TH_OK)
        return NULL;
    int64_t sizes[2] = {b1->sizes[1], b2->sizes[2]};
    th_tensor *e = th_expand(input, 2, sizes);
    if (!e) return NULL;
    th_tensor *r = th_empty(2, sizes, b1->dtype);
    int rc = r ? init_from_input(r, e, beta) : th_last_status();
    th_tensor_release(e);
    if (rc == TH_OK && b1->sizes[0] == 0) rc = scale_(r, beta);
    for (int64_t t = 0; rc == TH_OK && t < b1->sizes[0]; t++) {
        th_tensor av, bv;
        make_view(&av, b1, b1->offset + t * b1->strides[0], 2, b1->sizes + 1,
                  b1->strides + 1);
        make_view(&bv, b2, b2->offset + t * b2->strides[0], 2, b2->sizes + 1,
                  b2->strides + 1);
        rc = gemm_nd(r, &av, &bv, t == 0 ? beta : 1.0, alpha);
    }
    if (rc != TH_OK) {
        th_tensor_release(r);
        return NULL;
    }
    return r;
}

/* Like PyTorch (a[:, None] * b), outer promotes mixed dtypes. */
th_tensor *th_outer(const th_tensor *a, const th_tensor *b) {
    if (a->ndim != 1)
        return th__error_null(TH_ERR_RUNTIME,
                              "outer: Expected 1-D argument self, but got "
                              "%d-D", a->ndim);
    if (b->ndim != 1)
        return th__error_null(TH_ERR_RUNTIME,
                              "outer: Expected 1-D argument vec2, but got "
                              "%d-D", b->ndim);
    int dtype = th_promote_types(a->dtype, b->dtype);
    th_tensor *ac = th__cast(a, dtype);
    th_tensor *bc = ac ? th__cast(b, dtype) : NULL;
    th_tensor *r = NULL;
    if (bc) r = th_empty(2, (int64_t[]){a->sizes[0], b->sizes[0]}, dtype);
    if (r) {
        /* (m x 1) @ (1 x n) */
        th_tensor av, bv;
        make_view(&av, ac, ac->offset, 2, (int64_t[]){a->sizes[0], 1},
                  (int64_t[]){ac->strides[0], 1});
        make_view(&bv, bc, bc->offset, 2, (int64_t[]){1, b->sizes[0]},
                  (int64_t[]){1, bc->strides[0]});
        if (gemm_nd(r, &av, &bv, 0.0, 1.0) != TH_OK) {
            th_tensor_release(r);
            r = NULL;
        }
    }
    th_tensor_release(ac);
    th_tensor_release(bc);
    return r;
}

/* (..., n, m) @ 2-d or 1-d b: one big product over the folded rows. */
static th_tensor *matmul_fold(const th_tensor *a, const th_tensor *b) {
    int da = a->ndim;
    int64_t rows = th__prod(da - 1, a->sizes);
    th_tensor *a2 = th_reshape(a, 2, (int64_t[]){rows, a->sizes[da - 1]});
    if (!a2) return NULL;
    th_tensor *r2 = b->ndim == 2 ? th_mm(a2, b) : th_mv(a2, b);
    th_tensor_release(a2);
    if (!r2) return NULL;
    int64_t shape[TH_MAX_DIMS];
    for (int i = 0; i < da - 1; i++) shape[i] = a->sizes[i];
    if (b->ndim == 2) shape[da - 1] = b->sizes[1];
    th_tensor *r = th_view(r2, b->ndim == 2 ? da : da - 1, shape);
    th_tensor_release(r2);
    return r;
}

/* The general case: broadcast batch dims, then one product per batch.
 * A 1-d a is treated as (1, m) and a 1-d b as (m, 1); the added dim is
 * left out of the result. */
static th_tensor *matmul_batched(const th_tensor *a, const th_tensor *b) {
    int da = a->ndim, db = b->ndim;
    int64_t n = da > 1 ? a->sizes[da - 2] : 1, m1 = a->sizes[da - 1];
    int64_t m2 = db > 1 ? b->sizes[db - 2] : b->sizes[0];
    int64_t p = db > 1 ? b->sizes[db - 1] : 1;
    int nba = TH_MAX(da - 2, 0), nbb = TH_MAX(db - 2, 0);
    int64_t batch[TH_MAX_DIMS];
    int nb = th_broadcast_shapes(nba, a->sizes, nbb, b->sizes, batch);
    if (nb < 0) return NULL;
    if (nb + 2 > TH_MAX_DIMS)
        return th__error_null(TH_ERR_VALUE, "matmul: too many dimensions");
    if (check_bmm_dtypes(a, b) != TH_OK) return NULL;
    if (m1 != m2) {
        int64_t bs = th__prod(nb, batch);
        return th__error_null(TH_ERR_RUNTIME,
                              "Expected size for first two dimensions of "
                              "batch2 tensor to be: [%lld, %lld] but got: "
                              "[%lld, %lld].", (long long)bs, (long long)m1,
                              (long long)bs, (long long)m2);
    }
    /* views of a and b with the broadcast batch dims (zero strides) */
    int64_t sz[TH_MAX_DIMS], sa[TH_MAX_DIMS], sb[TH_MAX_DIMS];
    for (int d = 0; d < nb; d++) {
        int ia = d - (nb - nba), ib = d - (nb - nbb);
        sz[d] = batch[d];
        sa[d] = ia >= 0 && a->sizes[ia] == batch[d] ? a->strides[ia] : 0;
        sb[d] = ib >= 0 && b->sizes[ib] == batch[d] ? b->strides[ib] : 0;
    }
    th_tensor av, bv, cv;
    sz[nb] = n;
    sz[nb + 1] = m1;
    sa[nb] = da > 1 ? a->strides[da - 2] : 1;
    sa[nb + 1] = a->strides[da - 1];
    make_view(&av, a, a->offset, nb + 2, sz, sa);
    sz[nb] = m2;
    sz[nb + 1] = p;
    sb[nb] = db > 1 ? b->strides[db - 2] : b->strides[0];
    sb[nb + 1] = db > 1 ? b->strides[db - 1] : 1;
    make_view(&bv, b, b->offset, nb + 2, sz, sb);
    /* result: batch + [n if a is 2-d+] + [p if b is 2-d+] */
    int64_t out_shape[TH_MAX_DIMS];
    int nr = nb;
    memcpy(out_shape, batch, sizeof(int64_t) * (size_t)nb);
    if (da > 1) out_shape[nr++] = n;
    if (db > 1) out_shape[nr++] = p;
    th_tensor *r = th_empty(nr, out_shape, a->dtype);
    if (!r) return NULL;
    int64_t cst[TH_MAX_DIMS];
    sz[nb] = n;
    sz[nb + 1] = p;
    th__contiguous_strides(nb + 2, sz, cst);
    make_view(&cv, r, r->offset, nb + 2, sz, cst);
    if (gemm_nd(&cv, &av, &bv, 0.0, 1.0) != TH_OK) {
        th_tensor_release(r);
        return NULL;
    }
    return r;
}

th_tensor *th_matmul(const th_tensor *a, const th_tensor *b) {
    int da = a->ndim, db = b->ndim;
    if (da == 0 || db == 0)
        return th__error_null(TH_ERR_RUNTIME,
                              "both arguments to matmul need to be at least "
                              "1D, but they are %dD and %dD", da, db);
    if (da == 1 && db == 1) return th_dot(a, b);
    if (da == 2 && db == 1) return th_mv(a, b);
    if (da == 2 && db == 2) return th_mm(a, b);
    if (da == 1 && db == 2) {
        /* (m) @ (m, p): as (1, m) @ (m, p), then drop the 1 */
        th_tensor av;
        make_view(&av, a, a->offset, 2, (int64_t[]){1, a->sizes[0]},
                  (int64_t[]){1, a->strides[0]});
        th_tensor *r2 = th_mm(&av, b);
        if (!r2) return NULL;
        th_tensor *r = th_view(r2, 1, r2->sizes + 1);
        th_tensor_release(r2);
        return r;
    }
    if (da >= 3 && db <= 2) return matmul_fold(a, b);
    return matmul_batched(a, b);
}
