/* libTH: strided CPU tensors of many dtypes, in C99.
 *
 * Conventions (see packages/th/README.md):
 *  - Functions returning `int` return TH_OK (0) or a th_status error code.
 *    Functions returning a pointer return NULL on error.  In both cases
 *    th_last_error() holds a message saying what went wrong (thread-local).
 *  - Functions returning a new `th_tensor *` hand the caller one reference;
 *    drop it with th_tensor_release().  Views share their storage.
 *  - Sizes and strides count elements, not bytes.  Strides may be zero
 *    (broadcast) or negative (reversed views).
 *  - `_out` functions write into an existing tensor whose shape must match
 *    the broadcast result; its dtype may differ (values are converted).
 *  - Scalars are passed as 0-d tensors, so integer values stay exact.
 *
 * This header holds plain declarations only, so that FFI tools can read it.
 */
#ifndef TH_H
#define TH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TH_ABI_VERSION_MAJOR 1
#define TH_ABI_VERSION_MINOR 3
#define TH_MAX_DIMS 16

/* ---- dtypes -------------------------------------------------------- */
typedef enum th_dtype {
    TH_FLOAT32 = 0,
    TH_FLOAT64 = 1,
    TH_FLOAT16 = 2,
    TH_BFLOAT16 = 3,
    TH_INT8 = 4,
    TH_UINT8 = 5,
    TH_INT16 = 6,
    TH_INT32 = 7,
    TH_INT64 = 8,
    TH_BOOL = 9,
    TH_NUM_DTYPES = 10
} th_dtype;

/* ---- status codes: each maps to one Python exception type ---------- */
typedef enum th_status {
    TH_OK = 0,
    TH_ERR_VALUE = 1,          /* ValueError */
    TH_ERR_INDEX = 2,          /* IndexError */
    TH_ERR_TYPE = 3,           /* TypeError */
    TH_ERR_RUNTIME = 4,        /* RuntimeError: shapes, sizes, state */
    TH_ERR_MEMORY = 5,         /* MemoryError */
    TH_ERR_NOT_IMPLEMENTED = 6 /* NotImplementedError */
} th_status;

/* ---- storages ------------------------------------------------------ */
typedef enum th_storage_kind {
    TH_STORAGE_HEAP = 0,     /* 64-byte aligned heap memory */
    TH_STORAGE_SHARED = 1,   /* POSIX shared memory, mapped */
    TH_STORAGE_FILE = 2,     /* a mapped file (fallback for small /dev/shm) */
    TH_STORAGE_EXTERNAL = 3  /* memory owned by someone else */
} th_storage_kind;

typedef void (*th_release_fn)(void *ctx, void *data);

typedef struct th_storage {
    void *data;
    int64_t nbytes;
    int64_t refcount;       /* atomic; use retain/release */
    int64_t version;        /* bumped by in-place writes through any view */
    int32_t kind;           /* th_storage_kind */
    int32_t flags;
    th_release_fn release;  /* TH_STORAGE_EXTERNAL only */
    void *release_ctx;
    char name[64];          /* shm name or file path tail, "" if none */
} th_storage;

typedef struct th_tensor {
    th_storage *storage;
    int64_t offset;                 /* elements */
    int64_t sizes[TH_MAX_DIMS];
    int64_t strides[TH_MAX_DIMS];   /* elements */
    int32_t ndim;
    int32_t dtype;                  /* th_dtype */
    int32_t flags;                  /* TH_TENSOR_* bits */
    int64_t refcount;               /* atomic; use retain/release */
} th_tensor;

/* flags: a 0-d tensor standing for a number of the calling language (a
 * Python float or int).  In type promotion it ranks below 0-d tensors, and a
 * floating one counts as the default dtype (so float64 can carry it
 * exactly), as PyTorch's "wrapped numbers". */
#define TH_TENSOR_WRAPPED_NUMBER 1

/* ---- elementwise operation codes ----------------------------------- */
typedef enum th_unary_op {
    TH_NEG = 0, TH_ABS, TH_SIGN, TH_EXP, TH_EXP2, TH_EXPM1, TH_LOG, TH_LOG2,
    TH_LOG10, TH_LOG1P, TH_SQRT, TH_RSQRT, TH_RECIPROCAL, TH_SIN, TH_COS,
    TH_TAN, TH_ASIN, TH_ACOS, TH_ATAN, TH_SINH, TH_COSH, TH_TANH, TH_ASINH,
    TH_ACOSH, TH_ATANH, TH_SIGMOID, TH_ERF, TH_ERFC, TH_ERFINV, TH_FLOOR,
    TH_CEIL, TH_ROUND, TH_TRUNC, TH_FRAC, TH_ISNAN, TH_ISINF, TH_ISFINITE,
    TH_LOGICAL_NOT, TH_BITWISE_NOT, TH_SQUARE, TH_ISPOSINF, TH_ISNEGINF,
    TH_NUM_UNARY_OPS
} th_unary_op;

typedef enum th_binary_op {
    TH_ADD = 0, TH_SUB, TH_MUL, TH_DIV, TH_FLOOR_DIVIDE, TH_TRUNC_DIVIDE,
    TH_REMAINDER, TH_FMOD, TH_POW, TH_ATAN2, TH_MAXIMUM, TH_MINIMUM,
    TH_EQ, TH_NE, TH_LT, TH_LE, TH_GT, TH_GE,
    TH_LOGICAL_AND, TH_LOGICAL_OR, TH_LOGICAL_XOR,
    TH_BITWISE_AND, TH_BITWISE_OR, TH_BITWISE_XOR,
    TH_LSHIFT, TH_RSHIFT, TH_HYPOT, TH_COPYSIGN,
    TH_NUM_BINARY_OPS
} th_binary_op;

typedef enum th_reduce_op {
    TH_RED_SUM = 0, TH_RED_PROD, TH_RED_MEAN, TH_RED_AMAX, TH_RED_AMIN,
    TH_RED_ALL, TH_RED_ANY, TH_RED_COUNT_NONZERO, TH_RED_LOGSUMEXP,
    TH_RED_NANSUM,
    TH_NUM_REDUCE_OPS
} th_reduce_op;

typedef enum th_scatter_reduce {
    TH_SCATTER_NONE = 0, TH_SCATTER_SUM, TH_SCATTER_PROD, TH_SCATTER_MEAN,
    TH_SCATTER_AMAX, TH_SCATTER_AMIN
} th_scatter_reduce;

/* ---- library facts, errors, threads -------------------------------- */
int th_abi_version_major(void);
int th_abi_version_minor(void);
const char *th_version(void);
int th_has_blas(void);
int th_has_openmp(void); /* 0: libTH no longer uses OpenMP (th_has_threads) */

const char *th_last_error(void);
int th_last_status(void);
void th_clear_error(void);

/* Threads: libTH's one thread pool (see the README's "Threads" section).
 * The count defaults to OMP_NUM_THREADS, else the usable cores. */
int th_get_num_threads(void);
int th_set_num_threads(int n);
/* 1 in the threaded build (0 with TH_NO_THREADS=1). */
int th_has_threads(void);
/* Calls fn(begin, end, ctx) over disjoint ranges that cover [0, n), of
 * about `grain` or more (serially when n < 2 * grain), on the pool's
 * threads and the caller's; returns when all are done.  With grain >= 64
 * every range but the last starts at a multiple of 64.  Ranges may run concurrently and in
 * any order, on any thread; a call made from inside fn runs serially.
 * Regions from different threads do not wait for each other: one that
 * finds the pool busy runs serially. */
typedef void (*th_range_fn)(int64_t begin, int64_t end, void *ctx);
void th_parallel_for(int64_t n, int64_t grain, th_range_fn fn, void *ctx);
/* 1 while the calling thread runs inside th_parallel_for. */
int th_in_parallel(void);
/* The pool's settings and counters, as text, into buf. */
int th_parallel_info(char *buf, int64_t size);

/* ---- dtypes -------------------------------------------------------- */
int64_t th_dtype_itemsize(int dtype);
const char *th_dtype_name(int dtype);
int th_dtype_is_floating(int dtype);
int th_dtype_is_integral(int dtype); /* bool excluded */
int th_promote_types(int a, int b);
/* PyTorch's result_type for two tensors: 0-d tensors only raise the
 * category (bool < integer < floating), never the width within it;
 * wrapped numbers rank below 0-d tensors (see TH_TENSOR_WRAPPED_NUMBER). */
int th_result_type(const th_tensor *a, const th_tensor *b);
int th_get_default_dtype(void);
int th_set_default_dtype(int dtype); /* float32 or float64 */

/* ---- storages ------------------------------------------------------ */
th_storage *th_storage_new(int64_t nbytes);
/* Creates a POSIX shm segment; its name is in storage->name. */
th_storage *th_storage_new_shared(int64_t nbytes);
th_storage *th_storage_open_shared(const char *name, int64_t nbytes);
/* Maps (and creates, if create != 0) a file of nbytes. */
th_storage *th_storage_new_file(const char *path, int64_t nbytes, int create);
int th_storage_unlink_shared(th_storage *s);
th_storage *th_storage_wrap(void *data, int64_t nbytes, th_release_fn release,
                            void *ctx);
void th_storage_retain(th_storage *s);
void th_storage_release(th_storage *s);

/* ---- tensors: lifetime and metadata -------------------------------- */
th_tensor *th_empty(int ndim, const int64_t *sizes, int dtype);
th_tensor *th_empty_strided(int ndim, const int64_t *sizes,
                            const int64_t *strides, int dtype);
th_tensor *th_tensor_from_storage(th_storage *s, int64_t offset, int ndim,
                                  const int64_t *sizes, const int64_t *strides,
                                  int dtype);
void th_tensor_retain(th_tensor *t);
void th_tensor_release(th_tensor *t);
int64_t th_numel(const th_tensor *t);
int th_is_contiguous(const th_tensor *t);
void *th_data_ptr(const th_tensor *t);
/* Reads element `linear` (row-major order) as double / int64. */
int th_get_double(const th_tensor *t, int64_t linear, double *out);
int th_get_int64(const th_tensor *t, int64_t linear, int64_t *out);

/* ---- creation ------------------------------------------------------ */
th_tensor *th_scalar_double(double v, int dtype);   /* 0-d */
th_tensor *th_scalar_int64(int64_t v, int dtype);   /* 0-d */
int th_fill(th_tensor *t, const th_tensor *value);  /* value: 0-d or 1 elt */
int th_fill_double(th_tensor *t, double v);
int th_zero(th_tensor *t);
th_tensor *th_arange(double start, double end, double step, int dtype);
th_tensor *th_linspace(double start, double end, int64_t steps, int dtype);
th_tensor *th_logspace(double start, double end, int64_t steps, double base,
                       int dtype);
th_tensor *th_eye(int64_t n, int64_t m, int dtype);

/* ---- views (share storage) ----------------------------------------- */
th_tensor *th_view(const th_tensor *t, int ndim, const int64_t *sizes);
th_tensor *th_reshape(const th_tensor *t, int ndim, const int64_t *sizes);
th_tensor *th_as_strided(const th_tensor *t, int ndim, const int64_t *sizes,
                         const int64_t *strides, int64_t offset);
th_tensor *th_transpose(const th_tensor *t, int d0, int d1);
th_tensor *th_permute(const th_tensor *t, int ndim, const int *dims);
th_tensor *th_narrow(const th_tensor *t, int dim, int64_t start, int64_t length);
th_tensor *th_select(const th_tensor *t, int dim, int64_t index);
th_tensor *th_slice(const th_tensor *t, int dim, int64_t start, int64_t stop,
                    int64_t step);
th_tensor *th_expand(const th_tensor *t, int ndim, const int64_t *sizes);
th_tensor *th_squeeze(const th_tensor *t, int dim); /* dim < 0 - ndim: all */
th_tensor *th_squeeze_all(const th_tensor *t);
th_tensor *th_unsqueeze(const th_tensor *t, int dim);
th_tensor *th_unfold(const th_tensor *t, int dim, int64_t size, int64_t step);
th_tensor *th_diagonal(const th_tensor *t, int64_t offset, int d0, int d1);
th_tensor *th_flip_view(const th_tensor *t, int ndim, const int *dims);
th_tensor *th_alias(const th_tensor *t);
/* Broadcast shapes; returns the result ndim or -1 on error. */
int th_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b,
                        int64_t *out);

/* ---- copies -------------------------------------------------------- */
th_tensor *th_contiguous(const th_tensor *t);  /* new ref, maybe same t */
th_tensor *th_clone(const th_tensor *t);       /* always a fresh copy */
th_tensor *th_to_dtype(const th_tensor *t, int dtype); /* always fresh */
int th_copy(th_tensor *dst, const th_tensor *src); /* broadcasts, converts */

/* ---- elementwise --------------------------------------------------- */
th_tensor *th_unary(int op, const th_tensor *a);
int th_unary_out(int op, th_tensor *out, const th_tensor *a);
th_tensor *th_binary(int op, const th_tensor *a, const th_tensor *b);
int th_binary_out(int op, th_tensor *out, const th_tensor *a,
                  const th_tensor *b);
/* a + alpha * b, with alpha a 0-d tensor */
th_tensor *th_add_scaled(const th_tensor *a, const th_tensor *b,
                         const th_tensor *alpha);
int th_add_scaled_out(th_tensor *out, const th_tensor *a, const th_tensor *b,
                      const th_tensor *alpha);
/* lo/hi may be NULL */
th_tensor *th_clamp(const th_tensor *a, const th_tensor *lo,
                    const th_tensor *hi);
int th_clamp_out(th_tensor *out, const th_tensor *a, const th_tensor *lo,
                 const th_tensor *hi);
th_tensor *th_lerp(const th_tensor *a, const th_tensor *b,
                   const th_tensor *w);
int th_lerp_out(th_tensor *out, const th_tensor *a, const th_tensor *b,
                const th_tensor *w);
th_tensor *th_where(const th_tensor *cond, const th_tensor *a,
                    const th_tensor *b);
int th_where_out(th_tensor *out, const th_tensor *cond, const th_tensor *a,
                 const th_tensor *b);
/* posinf/neginf NaN mean the dtype's largest/lowest finite value */
th_tensor *th_nan_to_num(const th_tensor *a, double nan, double posinf,
                         double neginf);
int th_nan_to_num_out(th_tensor *out, const th_tensor *a, double nan,
                      double posinf, double neginf);

/* ---- reductions ---------------------------------------------------- */
/* dims == NULL or ndims == 0 reduces over all dims.  dtype < 0 picks the
 * default (sum/prod of bool or integers give int64). */
th_tensor *th_reduce(int op, const th_tensor *a, int ndims, const int *dims,
                     int keepdim, int dtype);
th_tensor *th_var(const th_tensor *a, int ndims, const int *dims,
                  double correction, int keepdim, int take_sqrt);
th_tensor *th_norm(const th_tensor *a, double p, int ndims, const int *dims,
                   int keepdim);
/* max/min along one dim: values and int64 indices (first occurrence). */
int th_minmax_dim(const th_tensor *a, int dim, int keepdim, int is_max,
                  th_tensor **values, th_tensor **indices);
/* dim < -ndim means over the flattened tensor */
th_tensor *th_argminmax(const th_tensor *a, int dim, int keepdim, int is_max);
th_tensor *th_cumsum(const th_tensor *a, int dim, int dtype);
th_tensor *th_cumprod(const th_tensor *a, int dim, int dtype);

/* ---- linear algebra ------------------------------------------------ */
th_tensor *th_dot(const th_tensor *a, const th_tensor *b);
th_tensor *th_mv(const th_tensor *m, const th_tensor *v);
th_tensor *th_mm(const th_tensor *a, const th_tensor *b);
th_tensor *th_bmm(const th_tensor *a, const th_tensor *b);
th_tensor *th_matmul(const th_tensor *a, const th_tensor *b);
th_tensor *th_outer(const th_tensor *a, const th_tensor *b);
/* beta * input + alpha * (m1 @ m2); input broadcasts to the result */
th_tensor *th_addmm(const th_tensor *input, const th_tensor *m1,
                    const th_tensor *m2, double beta, double alpha);
th_tensor *th_addmv(const th_tensor *input, const th_tensor *m,
                    const th_tensor *v, double beta, double alpha);
th_tensor *th_baddbmm(const th_tensor *input, const th_tensor *b1,
                      const th_tensor *b2, double beta, double alpha);
th_tensor *th_addbmm(const th_tensor *input, const th_tensor *b1,
                     const th_tensor *b2, double beta, double alpha);
/* out = beta * out + alpha * a @ b for 2-d a (m,k), b (k,n), out (m,n) */
int th_gemm_out(th_tensor *out, const th_tensor *a, const th_tensor *b,
                double beta, double alpha);

/* ---- indexing and shaping ------------------------------------------ */
th_tensor *th_index_select(const th_tensor *a, int dim, const th_tensor *index);
th_tensor *th_gather(const th_tensor *a, int dim, const th_tensor *index);
/* In place on `self`.  reduce is a th_scatter_reduce; include_self as in
 * scatter_reduce (ignored for TH_SCATTER_NONE). */
int th_scatter_(th_tensor *self, int dim, const th_tensor *index,
                const th_tensor *src, int reduce, int include_self);
int th_index_add_(th_tensor *self, int dim, const th_tensor *index,
                  const th_tensor *src, const th_tensor *alpha);
int th_index_copy_(th_tensor *self, int dim, const th_tensor *index,
                   const th_tensor *src);
int th_index_fill_(th_tensor *self, int dim, const th_tensor *index,
                   const th_tensor *value);
int th_masked_fill_(th_tensor *self, const th_tensor *mask,
                    const th_tensor *value);
th_tensor *th_masked_select(const th_tensor *a, const th_tensor *mask);
int th_masked_scatter_(th_tensor *self, const th_tensor *mask,
                       const th_tensor *src);
th_tensor *th_nonzero(const th_tensor *a); /* (n, ndim) int64 */
th_tensor *th_take(const th_tensor *a, const th_tensor *index);
int th_put_(th_tensor *self, const th_tensor *index, const th_tensor *src,
            int accumulate);
/* a[i0, i1, ...] with integer index tensors (broadcast together) applied to
 * dims first_dim .. first_dim + n - 1; the result puts the indexed dims at
 * first_dim, like NumPy for adjacent advanced indices. */
th_tensor *th_index(const th_tensor *a, int first_dim, int n,
                    th_tensor *const *indices);
int th_index_put_(th_tensor *self, int first_dim, int n,
                  th_tensor *const *indices, const th_tensor *values,
                  int accumulate);
th_tensor *th_cat(int n, th_tensor *const *tensors, int dim);
th_tensor *th_flip(const th_tensor *a, int ndims, const int *dims);
th_tensor *th_roll(const th_tensor *a, int nshifts, const int64_t *shifts,
                   const int *dims);
th_tensor *th_repeat(const th_tensor *a, int nrep, const int64_t *repeats);
th_tensor *th_tril(const th_tensor *a, int64_t k);
th_tensor *th_triu(const th_tensor *a, int64_t k);
int th_sort(const th_tensor *a, int dim, int descending, int stable,
            th_tensor **values, th_tensor **indices);
int th_topk(const th_tensor *a, int64_t k, int dim, int largest, int sorted,
            th_tensor **values, th_tensor **indices);
int th_kthvalue(const th_tensor *a, int64_t k, int dim, int keepdim,
                th_tensor **values, th_tensor **indices);
/* Along dim: the most frequent value (the smallest on ties; NaNs never
 * equal) and the index of its last occurrence. */
int th_mode(const th_tensor *a, int dim, int keepdim, th_tensor **values,
            th_tensor **indices);
/* Over the flattened tensor; inverse/counts may be NULL (not computed). */
int th_unique(const th_tensor *a, int sorted, th_tensor **values,
              th_tensor **inverse, th_tensor **counts);
th_tensor *th_searchsorted(const th_tensor *sorted_seq, const th_tensor *v,
                           int right, int out_int32);
th_tensor *th_bincount(const th_tensor *a, const th_tensor *weights,
                       int64_t minlength);
th_tensor *th_histc(const th_tensor *a, int64_t bins, double min, double max);

/* ---- random -------------------------------------------------------- */
typedef struct th_generator {
    uint64_t seed;
    uint64_t offset;  /* Philox counter: 128-bit blocks consumed */
} th_generator;

th_generator *th_generator_new(uint64_t seed);
void th_generator_free(th_generator *g);
th_generator *th_default_generator(void);
void th_generator_set_seed(th_generator *g, uint64_t seed);
int th_uniform_(th_tensor *t, double low, double high, th_generator *g);
int th_normal_(th_tensor *t, double mean, double std, th_generator *g);
/* p: a tensor broadcastable to t, or NULL to use p_scalar */
int th_bernoulli_(th_tensor *t, const th_tensor *p, double p_scalar,
                  th_generator *g);
/* integers in [low, high) */
int th_randint_(th_tensor *t, int64_t low, int64_t high, th_generator *g);
th_tensor *th_randperm(int64_t n, int dtype, th_generator *g);
/* probs: 1-d or 2-d (rows are distributions); result int64 */
th_tensor *th_multinomial(const th_tensor *probs, int64_t num_samples,
                          int replacement, th_generator *g);
/* tensors of mean/std broadcast together */
int th_normal_tensor_(th_tensor *t, const th_tensor *mean,
                      const th_tensor *std, th_generator *g);

#ifdef __cplusplus
}
#endif

#endif /* TH_H */
