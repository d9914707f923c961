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
#define TH_ABI_VERSION_MINOR 9
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
    TH_COMPLEX64 = 10,  /* float real part, then float imaginary part */
    TH_COMPLEX128 = 11, /* the same in double */
    TH_NUM_DTYPES = 12
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

/* ---- the op vocabulary --------------------------------------------- */
/* Op codes come from th_ops.def, installed beside this header: one row per
 * op (see that file).  The installed copy of this header has the
 * enumerators written out. */
typedef enum th_unary_op {
#define TH_UNARY_OP(CODE, ...) TH_##CODE,
#include "th_ops.def"
    TH_NUM_UNARY_OPS
} th_unary_op;

typedef enum th_binary_op {
#define TH_BINARY_OP(CODE, ...) TH_##CODE,
#include "th_ops.def"
    TH_NUM_BINARY_OPS
} th_binary_op;

typedef enum th_reduce_op {
#define TH_REDUCE_OP(CODE, ...) TH_##CODE,
#include "th_ops.def"
    TH_NUM_REDUCE_OPS
} th_reduce_op;

typedef enum th_op_family {
    TH_OP_UNARY = 0, TH_OP_BINARY = 1, TH_OP_REDUCE = 2
} th_op_family;

/* th_op_info.classes: the compute dtypes with a loop */
#define TH_OPC_FLOAT 1
#define TH_OPC_INT 2
#define TH_OPC_BOOL 4
/* th_op_info.flags: PREDICATE bool result; FLOAT integers and bool compute
 * in the default float dtype; FLOAT_ONLY integers and bool are refused;
 * VECTOR_MATH float loops use libm's vector variants; DIVISOR integer
 * divisors are checked for zero; EXPONENT integer exponents are checked for
 * negatives; NO_INPLACE no in-place form (the is* predicates); HIDDEN
 * reached through another function; TAKES_DTYPE a reduction with a dtype=
 * argument. */
#define TH_OPF_PREDICATE 1
#define TH_OPF_FLOAT 2
#define TH_OPF_FLOAT_ONLY 4
#define TH_OPF_VECTOR_MATH 8
#define TH_OPF_DIVISOR 16
#define TH_OPF_EXPONENT 32
#define TH_OPF_NO_INPLACE 64
#define TH_OPF_HIDDEN 128
#define TH_OPF_TAKES_DTYPE 256

/* One row of th_ops.def.  expr[0..2]: the scalar C expression of the
 * float, integer and bool loops (NULL where that class has none); for a
 * reduction, expr[0] is its combine step in (a, x) and expr[1] its
 * identity. */
typedef struct th_op_info {
    const char *name;
    int32_t family;
    int32_t code;
    int32_t classes;
    int32_t flags;
    const char *expr[3];
} th_op_info;

typedef enum th_scatter_reduce {
    TH_SCATTER_NONE = 0, TH_SCATTER_SUM, TH_SCATTER_PROD, TH_SCATTER_MEAN,
    TH_SCATTER_AMAX, TH_SCATTER_AMIN
} th_scatter_reduce;

/* ---- library facts, errors, threads -------------------------------- */
int th_abi_version_major(void);
int th_abi_version_minor(void);
/* The op vocabulary: how many ops a family has, and one op's row (NULL,
 * with an error set, for a bad family or code). */
int th_op_count(int family);
const th_op_info *th_op_get(int family, int code);
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
int th_dtype_is_complex(int dtype);
/* complex64 <-> float32, complex128 <-> float64; -1 for the others */
int th_complex_part_dtype(int dtype);
int th_promote_types(int a, int b);
/* PyTorch's result_type for two tensors: 0-d tensors only raise the
 * category (bool < integer < floating < complex), never the width within it;
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
/* Reads element `linear` (row-major order) as double / int64 (of a complex
 * element: its real part; th_get_complex reads both). */
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

/* ---- complex numbers ----------------------------------------------- */
/* Element `linear` (row-major order) as real and imaginary parts (real
 * dtypes: im = 0). */
int th_get_complex(const th_tensor *t, int64_t linear, double *re, double *im);
th_tensor *th_scalar_complex(double re, double im, int dtype); /* 0-d */
int th_fill_complex(th_tensor *t, double re, double im); /* real t: im must be 0 */
/* A complex tensor as its real dtype with a last dim of 2 (re, im), and
 * back (last dim of size 2 and stride 1, other strides and the offset
 * even); both are views sharing the storage. */
th_tensor *th_view_as_real(const th_tensor *t);
th_tensor *th_view_as_complex(const th_tensor *t);
/* arg z in the real dtype (abs is th_unary(TH_ABS)); conj: a fresh tensor
 * (a clone for real dtypes) */
th_tensor *th_complex_angle(const th_tensor *t);
th_tensor *th_conj(const th_tensor *t);

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

/* ---- dense linear algebra: LAPACK (ABI 1.4) ------------------------ */
/* Inputs are float32/float64 batches of matrices (*, m, n); operands with
 * a B broadcast their batch dims.  Matrix results are fresh tensors, each
 * matrix column-major (strides (1, m)) as LAPACK and PyTorch give them.
 * `info` results are int32 tensors of the batch shape (0: success; k > 0:
 * LAPACK's report, e.g. the first zero pivot, 1-based); pass NULL where
 * not wanted.  With check_errors set, a singular or non-positive-definite
 * matrix is a TH_ERR_RUNTIME in PyTorch's words instead.  The TH_NO_BLAS
 * build has portable LU, solve, inverse, det, Cholesky, QR and triangular
 * solves (and, ABI 1.6, geqrf and Householder products); SVD, eigh and
 * lstsq return TH_ERR_NOT_IMPLEMENTED there. */
int th_has_lapack(void); /* 0 in the TH_NO_BLAS build */
/* LU with partial pivoting: LU (*, m, n), pivots (*, min(m, n)) int32,
 * 1-based as LAPACK's. */
int th_linalg_lu_factor(const th_tensor *A, th_tensor **LU, th_tensor **pivots,
                        th_tensor **info);
/* Solves A X = B (trans: A^T X = B) from lu_factor's LU and pivots. */
int th_linalg_lu_solve(const th_tensor *LU, const th_tensor *pivots,
                       const th_tensor *B, int trans, th_tensor **X);
/* A (*, n, n), B (*, n, k) */
int th_linalg_solve(const th_tensor *A, const th_tensor *B, int check_errors,
                    th_tensor **X, th_tensor **info);
int th_linalg_inv(const th_tensor *A, int check_errors, th_tensor **X,
                  th_tensor **info);
/* (*) results; a singular matrix gives det 0, sign 0, logabsdet -inf */
int th_linalg_det(const th_tensor *A, th_tensor **det);
int th_linalg_slogdet(const th_tensor *A, th_tensor **sign,
                      th_tensor **logabsdet);
/* L (upper: U) with zeros in the other triangle; only the lower (upper)
 * triangle of A is read. */
int th_linalg_cholesky(const th_tensor *A, int upper, int check_errors,
                       th_tensor **L, th_tensor **info);
/* op(A) X = B for triangular A (upper or lower triangle read; trans: A^T;
 * unitriangular: the diagonal is taken as ones).  No singularity check. */
int th_linalg_solve_triangular(const th_tensor *A, const th_tensor *B,
                               int upper, int trans, int unitriangular,
                               th_tensor **X);
/* mode 0 reduced (Q (*, m, k), R (*, k, n)), 1 complete (Q (*, m, m),
 * R (*, m, n)), 2 R only (Q is an empty (0,) tensor); k = min(m, n). */
int th_linalg_qr(const th_tensor *A, int mode, th_tensor **Q, th_tensor **R);
/* S (*, k) descending; U, Vh only when compute_uv (reduced or full). */
int th_linalg_svd(const th_tensor *A, int full_matrices, int compute_uv,
                  th_tensor **U, th_tensor **S, th_tensor **Vh);
/* Eigenvalues W (*, n) ascending and eigenvectors V (columns) of the
 * symmetric matrix in A's lower (upper) triangle. */
int th_linalg_eigh(const th_tensor *A, int upper, int compute_v,
                   th_tensor **W, th_tensor **V);
/* Eigenvalues W (*, n) and right eigenvectors V (columns, unit 2-norm,
 * largest component real) of a general real matrix, both complex
 * (complex64 for float32); LAPACK's order (conjugate pairs together). */
int th_linalg_eig(const th_tensor *A, int compute_v, th_tensor **W, th_tensor **V);
/* Minimum-norm least squares through the SVD (gelsd): X (*, n, k), the
 * effective rank (*) int64 (singular values <= rcond * largest are
 * dropped; rcond < 0: machine precision) and the singular values
 * (*, min(m, n)). */
int th_linalg_lstsq(const th_tensor *A, const th_tensor *B, double rcond,
                    th_tensor **X, th_tensor **rank, th_tensor **S);

/* ---- dense linear algebra, continued (ABI 1.6) --------------------- */
/* Q (*, m, n), the first n columns of H_1 ... H_k from the Householder
 * reflectors below A's diagonal (*, m, n), m >= n >= k, and their scales
 * tau (*, k) (LAPACK orgqr, PyTorch's householder_product); the portable
 * build has it too. */
int th_linalg_householder_product(const th_tensor *A, const th_tensor *tau,
                                  th_tensor **Q);
/* QR (*, m, n) holding R on and above the diagonal and the Householder
 * reflectors below it, and their scales tau (*, min(m, n)) (LAPACK geqrf,
 * PyTorch's geqrf); the portable build has it too. */
int th_linalg_geqrf(const th_tensor *A, th_tensor **QR, th_tensor **tau);
/* LDL^T of the symmetric matrix in A's lower triangle (Bunch-Kaufman,
 * LAPACK sytrf; PyTorch's ldl_factor_ex): LD (*, n, n) holds L below the
 * diagonal and D's 1x1 and 2x2 blocks on and just under it, pivots
 * (*, n) int32 are LAPACK's (k > 0: rows i and k swapped; equal negative
 * pairs: a 2x2 block), info > 0 a zero block of D.  hermitian is accepted
 * for PyTorch's signature (the same for real matrices).  ldl_solve solves
 * A X = B from them.  TH_ERR_NOT_IMPLEMENTED in the TH_NO_BLAS build. */
int th_linalg_ldl_factor(const th_tensor *A, int hermitian, int check_errors,
                         th_tensor **LD, th_tensor **pivots, th_tensor **info);
int th_linalg_ldl_solve(const th_tensor *LD, const th_tensor *pivots,
                        const th_tensor *B, int hermitian, th_tensor **X);

/* ---- Fourier transforms along one dim (fft.c, ABI 1.9) -------------- */
/* Unnormalised DFTs times `scale`, each a new contiguous tensor:
 * c2c: complex x, out[k] = scale * sum_j x[j] e^{-+2 pi i jk/n} (the sign
 *      + when inverse);
 * r2c: float32/float64 x of length n, the n/2 + 1 non-negative frequencies
 *      of its forward transform (complex64/complex128);
 * c2r: complex x holding (at least) frequencies 0 .. n/2 of a Hermitian
 *      spectrum, the n real values of its inverse transform (the imaginary
 *      parts of frequency 0, and n/2 for even n, are ignored).
 * Lengths whose prime factors are all <= 61 are taken: th_fft_supported
 * says whether a complex (real = 0) or real (real = 1) transform of
 * length n is; TH_ERR_NOT_IMPLEMENTED for the others.  Lines run side by
 * side in vector lanes, a long transform in four steps, on the pool. */
int th_fft_supported(int64_t n, int real);
th_tensor *th_fft_c2c(const th_tensor *x, int dim, int inverse, double scale);
th_tensor *th_fft_r2c(const th_tensor *x, int dim, double scale);
th_tensor *th_fft_c2r(const th_tensor *x, int dim, int64_t n, double scale);

#ifdef __cplusplus
}
#endif

#endif /* TH_H */
