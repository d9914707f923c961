/* libTHC: Ember's GPU backend, a C99 API over CUDA.
 *
 * Conventions (the same as libTH's, see packages/thc/README.md):
 *  - Functions returning `int` return THC_OK (0) or a thc_status error code.
 *    Functions returning a pointer return NULL on error.  In both cases
 *    thc_last_error() holds a message saying what went wrong (thread-local).
 *  - Streams are opaque pointers (a cudaStream_t on a real device); NULL is
 *    the default stream.
 *
 * This header holds plain declarations only, so that FFI tools can read it.
 */
#ifndef THC_H
#define THC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define THC_ABI_VERSION_MAJOR 1
#define THC_ABI_VERSION_MINOR 12
#define THC_MAX_DIMS 16

/* ---- status codes: each maps to one Python exception type ---------- */
typedef enum thc_status {
    THC_OK = 0,
    THC_ERR_VALUE = 1,          /* ValueError */
    THC_ERR_INDEX = 2,          /* IndexError */
    THC_ERR_TYPE = 3,           /* TypeError */
    THC_ERR_RUNTIME = 4,        /* RuntimeError: state, device failures */
    THC_ERR_MEMORY = 5,         /* out of device memory (MemoryError) */
    THC_ERR_NOT_IMPLEMENTED = 6 /* NotImplementedError */
} thc_status;

/* ---- library facts and errors -------------------------------------- */
int thc_abi_version_major(void);
int thc_abi_version_minor(void);
const char *thc_version(void);
int thc_has_cuda(void);           /* 1 if built with nvcc, 0 if EMBER_NO_CUDA */
/* The GPU code built in, space-separated ("sm_75 ... compute_90": machine
 * code per generation, PTX for later ones); "" without CUDA. */
const char *thc_arch_list(void);
/* 1 when a host-only build runs its kernels on emulated devices of host
 * memory (EMBER_THC_EMULATE=1 in the environment: one device; =N: N of
 * them, up to 8; for tests). */
int thc_is_emulated(void);

const char *thc_last_error(void);
int thc_last_status(void);
void thc_clear_error(void);

/* ---- devices ------------------------------------------------------- */
/* Number of usable devices; 0 (and THC_OK) when there is no driver or no
 * GPU, or when built without CUDA.  The reason is kept for messages in
 * thc_cuda_error_text(). */
int thc_device_count(int *count);
const char *thc_cuda_error_text(void);
/* What a device is: its name, memory and compute capability (the emulated
 * device reports host memory and capability 0.0). */
typedef struct thc_device_props {
    char name[256];
    int64_t total_memory;          /* bytes */
    int32_t major, minor;          /* compute capability */
    int32_t multi_processor_count;
} thc_device_props;

int thc_device_properties(int device, thc_device_props *out);
/* Free and total memory of the current device, in bytes. */
int thc_mem_get_info(int64_t *free_bytes, int64_t *total_bytes);
/* The calling thread's current device, and waiting for all its work. */
int thc_get_device(int *device);
int thc_set_device(int device);
int thc_synchronize(void);

/* ---- streams and events ---------------------------------------------- */
/* Streams and events are opaque handles (cudaStream_t, cudaEvent_t on a
 * GPU).  Every kernel and copy of libTHC is queued on the calling thread's
 * current stream of the current device (NULL, the default stream, until
 * set); set a stream current only on the device it was made on. */
int thc_stream_create(void **stream);
/* Only once nothing refers to the stream any more: no thread has it current
 * and no tensor freed on it or recorded for it (thc_tensor_record_stream)
 * is still waiting in the caching allocator, which keeps the handle
 * (ember.thc never destroys a stream: it reuses dropped ones). */
int thc_stream_destroy(void *stream);
int thc_stream_synchronize(void *stream);
/* 1 when all work queued on the stream has finished, 0 when not, -1 on
 * error */
int thc_stream_query(void *stream);
void *thc_current_stream(void);
int thc_set_current_stream(void *stream);
/* The stream waits (on the device) for the event's recorded work. */
int thc_stream_wait_event(void *stream, void *event);
int thc_event_create(void **event, int enable_timing);
int thc_event_destroy(void *event);
int thc_event_record(void *event, void *stream);
int thc_event_synchronize(void *event);
int thc_event_query(void *event);   /* as thc_stream_query */
int thc_event_elapsed_ms(void *start, void *end, float *ms);

/* ---- page-locked host memory (fast, asynchronous copies) --------------- */
int thc_host_alloc(void **ptr, size_t nbytes);
int thc_host_free(void *ptr);

/* ---- the device functions the allocator runs on --------------------- */
/* malloc returns THC_OK, THC_ERR_MEMORY when the device is full, or another
 * status for other failures (with thc_last_error set).  stream_query returns
 * 1 when all work queued on the stream so far has finished, 0 when not,
 * -1 on error.  mem_info may be NULL. */
typedef struct thc_device_ops {
    void *ctx;
    int (*malloc)(void *ctx, void **ptr, size_t nbytes);
    int (*free)(void *ctx, void *ptr);
    int (*stream_synchronize)(void *ctx, void *stream);
    int (*stream_query)(void *ctx, void *stream);
    int (*mem_info)(void *ctx, size_t *free_bytes, size_t *total_bytes);
} thc_device_ops;

/* The CUDA runtime's functions for the current device; NULL (with an error)
 * when built without CUDA. */
const thc_device_ops *thc_cuda_device_ops(void);

/* ---- caching allocator ---------------------------------------------- */
typedef struct thc_allocator thc_allocator;

typedef struct thc_alloc_stats {
    int64_t allocated_bytes;      /* held by live allocations (rounded sizes) */
    int64_t max_allocated_bytes;
    int64_t reserved_bytes;       /* obtained from the device (segments) */
    int64_t max_reserved_bytes;
    int64_t num_allocs;
    int64_t num_frees;
    int64_t num_segments;         /* live device allocations */
    int64_t num_device_mallocs;
    int64_t num_device_frees;
    int64_t num_ooms;             /* requests that failed for lack of memory */
    int64_t num_pending_frees;    /* freed blocks waiting on other streams */
} thc_alloc_stats;

thc_allocator *thc_allocator_new(const thc_device_ops *ops);
/* Events, if the device has them: a block freed after use on other streams
 * (thc_allocator_record_stream) then waits for an event recorded on each of
 * those streams at the free, not for the streams to fall idle (a stream
 * that never idles would keep it until an out-of-memory flush). */
typedef struct thc_event_ops {
    void *ctx;
    /* an event recorded on `stream` now, in *event */
    int (*record)(void *ctx, void *stream, void **event);
    int (*query)(void *ctx, void *event);       /* 1 done, 0 not yet, < 0 error */
    int (*synchronize)(void *ctx, void *event);
    int (*destroy)(void *ctx, void *event);
} thc_event_ops;
/* Before the first allocation; libTHC's own allocators have them. */
int thc_allocator_set_event_ops(thc_allocator *a, const thc_event_ops *ops);
/* Returns every segment to the device; live allocations are released too. */
void thc_allocator_delete(thc_allocator *a);

/* nbytes == 0 gives *ptr = NULL and THC_OK. */
int thc_allocator_malloc(thc_allocator *a, void **ptr, size_t nbytes, void *stream);
int thc_allocator_free(thc_allocator *a, void *ptr);
/* The allocation is also used by work on `stream`: once freed, its memory is
 * reused only after that stream's queued work has finished. */
int thc_allocator_record_stream(thc_allocator *a, void *ptr, void *stream);
/* Gives back to the device every cached segment with no live block in it. */
int thc_allocator_empty_cache(thc_allocator *a);
int thc_allocator_stats(thc_allocator *a, thc_alloc_stats *out);
int thc_allocator_reset_peak_stats(thc_allocator *a);
/* The size a request is rounded to (512-byte granularity). */
size_t thc_allocator_round_size(size_t nbytes);

/* ---- launch configuration and 64-bit index arithmetic --------------- */
typedef struct thc_launch_config {
    int64_t grid;        /* blocks (x) */
    int32_t block;       /* threads per block */
    int64_t per_thread;  /* elements each thread handles (grid-stride loop) */
} thc_launch_config;

/* A 1-D launch over n elements (n may exceed 2^31): blocks of
 * threads_per_block (a multiple of 32, at most 1024), at most max_grid
 * blocks; threads loop with a stride of grid*block. */
int thc_launch_config_for(int64_t n, int threads_per_block, int64_t max_grid,
                          thc_launch_config *out);
/* Element offset of row-major linear index `linear` (last dim fastest, as in
 * libTH's iteration) in a tensor of the given sizes and strides (elements). */
int thc_strided_offset(int ndim, const int64_t *sizes, const int64_t *strides,
                       int64_t linear, int64_t *offset);

/* ---- tensors -------------------------------------------------------- */
/* Dtype codes are libTH's (th_dtype), so the two libraries' tensors
 * convert without a table. */
typedef enum thc_dtype {
    THC_FLOAT32 = 0,
    THC_FLOAT64 = 1,
    THC_FLOAT16 = 2,
    THC_BFLOAT16 = 3,
    THC_INT8 = 4,
    THC_UINT8 = 5,
    THC_INT16 = 6,
    THC_INT32 = 7,
    THC_INT64 = 8,
    THC_BOOL = 9,
    THC_NUM_DTYPES = 10
} thc_dtype;

typedef void (*thc_release_fn)(void *ctx, void *data);

/* A storage is device memory from the device's caching allocator, memory
 * owned by someone else (wrapped, e.g. a CuPy array), or, for 0-d scalars
 * standing for host numbers, a few bytes of host memory (device == -1). */
typedef struct thc_storage {
    void *data;
    int64_t nbytes;
    int64_t refcount;       /* atomic; use retain/release */
    int64_t version;        /* bumped by in-place writes through any view */
    int32_t device;         /* device index, or -1 for host memory */
    int32_t flags;
    thc_release_fn release; /* wrapped memory only */
    void *release_ctx;
} thc_storage;

typedef struct thc_tensor {
    thc_storage *storage;
    int64_t offset;                  /* elements */
    int64_t sizes[THC_MAX_DIMS];
    int64_t strides[THC_MAX_DIMS];   /* elements */
    int32_t ndim;
    int32_t dtype;                   /* thc_dtype */
    int32_t flags;                   /* THC_TENSOR_* bits */
    int64_t refcount;                /* atomic; use retain/release */
} thc_tensor;

/* flags: a 0-d host tensor standing for a Python number (libTH's "wrapped
 * number" rule of type promotion). */
#define THC_TENSOR_WRAPPED_NUMBER 1

/* Operation codes: libTH's op vocabulary, th_ops.def (shipped with ember-th
 * beside th.h), with the THC_ prefix: the same values as th_unary_op,
 * th_binary_op and th_reduce_op.  The installed copy of this header has the
 * enumerators written out. */
typedef enum thc_unary_op {
#define TH_UNARY_OP(CODE, ...) THC_##CODE,
#include "th_ops.def"
    THC_NUM_UNARY_OPS
} thc_unary_op;

typedef enum thc_binary_op {
#define TH_BINARY_OP(CODE, ...) THC_##CODE,
#include "th_ops.def"
    THC_NUM_BINARY_OPS
} thc_binary_op;

typedef enum thc_reduce_op {
#define TH_REDUCE_OP(CODE, ...) THC_##CODE,
#include "th_ops.def"
    THC_NUM_REDUCE_OPS
} thc_reduce_op;

/* libTH's th_op_family, th_op_info and its TH_OPC_ and TH_OPF_ bits (th.h
 * says what they mean), as libTHC reports them through thc_op_get(). */
typedef enum thc_op_family {
    THC_OP_UNARY = 0, THC_OP_BINARY = 1, THC_OP_REDUCE = 2
} thc_op_family;
#define THC_OPC_FLOAT 1
#define THC_OPC_INT 2
#define THC_OPC_BOOL 4
#define THC_OPF_PREDICATE 1
#define THC_OPF_FLOAT 2
#define THC_OPF_FLOAT_ONLY 4
#define THC_OPF_VECTOR_MATH 8
#define THC_OPF_DIVISOR 16
#define THC_OPF_EXPONENT 32
#define THC_OPF_NO_INPLACE 64
#define THC_OPF_HIDDEN 128
#define THC_OPF_TAKES_DTYPE 256
typedef struct thc_op_info {
    const char *name;
    int32_t family;
    int32_t code;
    int32_t classes;
    int32_t flags;
    const char *expr[3];
} thc_op_info;
/* The op vocabulary as libTHC has it: how many ops a family has, and one
 * op's row (NULL, with an error set, for a bad family or code). */
int thc_op_count(int family);
const thc_op_info *thc_op_get(int family, int code);

/* ---- dtypes --------------------------------------------------------- */
int64_t thc_dtype_itemsize(int dtype);
const char *thc_dtype_name(int dtype);
int thc_dtype_is_floating(int dtype);
int thc_promote_types(int a, int b);
/* libTH's th_result_type rule (0-d tensors and wrapped numbers rank lower). */
int thc_result_type(const thc_tensor *a, const thc_tensor *b);
/* The dtype that floating results of integer inputs take: libTH's default
 * dtype (th_get_default_dtype), one setting for both libraries. */
int thc_get_default_dtype(void);
int thc_set_default_dtype(int dtype);

/* ---- storages and tensor lifetime ------------------------------------ */
/* Allocates on the current device from its caching allocator. */
thc_tensor *thc_empty(int ndim, const int64_t *sizes, int dtype);
thc_tensor *thc_empty_strided(int ndim, const int64_t *sizes,
                              const int64_t *strides, int dtype);
/* Device memory owned by someone else; `release(ctx, data)` runs when the
 * last tensor over it goes (release may be NULL). */
thc_storage *thc_storage_wrap(void *data, int64_t nbytes, int device,
                              thc_release_fn release, void *ctx);
thc_tensor *thc_tensor_from_storage(thc_storage *s, int64_t offset, int ndim,
                                    const int64_t *sizes,
                                    const int64_t *strides, int dtype);
void thc_storage_retain(thc_storage *s);
void thc_storage_release(thc_storage *s);
void thc_tensor_retain(thc_tensor *t);
void thc_tensor_release(thc_tensor *t);
int64_t thc_numel(const thc_tensor *t);
int thc_is_contiguous(const thc_tensor *t);
void *thc_data_ptr(const thc_tensor *t);
/* 0-d tensors in host memory standing for numbers: operands of the
 * element-wise ops (their value travels as a kernel argument). */
thc_tensor *thc_scalar_double(double v, int dtype);
thc_tensor *thc_scalar_int64(int64_t v, int dtype);
/* The caching allocator behind device `device`'s tensors (made on first
 * use); NULL with an error when the device does not exist. */
thc_allocator *thc_device_allocator(int device);

/* ---- copies between host and device ---------------------------------- */
/* host holds numel(dst) contiguous row-major elements of dst's dtype. */
int thc_copy_from_host(thc_tensor *dst, const void *host);
/* Writes numel(src) contiguous row-major elements of src's dtype; waits
 * for the device. */
int thc_copy_to_host(void *host, const thc_tensor *src);
/* The same transfers queued on the current stream without waiting for
 * them (non_blocking): truly asynchronous when `host` is page-locked
 * (thc_host_alloc), which must then stay valid and, for the upload,
 * unchanged until the stream has passed the copy (an event tells).  From
 * pageable memory CUDA finishes the host side before returning. */
int thc_copy_from_host_async(thc_tensor *dst, const void *host);
int thc_copy_to_host_async(void *host, const thc_tensor *src);
/* The tensor's memory is also used by work on `stream`: the allocator
 * reuses it only after that work (see thc_allocator_record_stream). */
int thc_tensor_record_stream(const thc_tensor *t, void *stream);
/* Reads element `linear` (row-major order) as double / int64. */
int thc_get_double(const thc_tensor *t, int64_t linear, double *out);
int thc_get_int64(const thc_tensor *t, int64_t linear, int64_t *out);

/* ---- views (share storage) ------------------------------------------ */
thc_tensor *thc_view(const thc_tensor *t, int ndim, const int64_t *sizes);
thc_tensor *thc_reshape(const thc_tensor *t, int ndim, const int64_t *sizes);
thc_tensor *thc_as_strided(const thc_tensor *t, int ndim, const int64_t *sizes,
                           const int64_t *strides, int64_t offset);
thc_tensor *thc_transpose(const thc_tensor *t, int d0, int d1);
thc_tensor *thc_permute(const thc_tensor *t, int ndim, const int *dims);
thc_tensor *thc_narrow(const thc_tensor *t, int dim, int64_t start,
                       int64_t length);
thc_tensor *thc_select(const thc_tensor *t, int dim, int64_t index);
thc_tensor *thc_slice(const thc_tensor *t, int dim, int64_t start,
                      int64_t stop, int64_t step);
thc_tensor *thc_expand(const thc_tensor *t, int ndim, const int64_t *sizes);
thc_tensor *thc_squeeze(const thc_tensor *t, int dim);
thc_tensor *thc_squeeze_all(const thc_tensor *t);
thc_tensor *thc_unsqueeze(const thc_tensor *t, int dim);
thc_tensor *thc_unfold(const thc_tensor *t, int dim, int64_t size,
                       int64_t step);
thc_tensor *thc_diagonal(const thc_tensor *t, int64_t offset, int d0, int d1);
thc_tensor *thc_flip_view(const thc_tensor *t, int ndim, const int *dims);
thc_tensor *thc_alias(const thc_tensor *t);
/* Returns the result ndim, or -1 on error. */
int thc_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b,
                         int64_t *out);

/* ---- device copies and fills ----------------------------------------- */
thc_tensor *thc_contiguous(const thc_tensor *t); /* new ref, maybe same t */
thc_tensor *thc_clone(const thc_tensor *t);
thc_tensor *thc_to_dtype(const thc_tensor *t, int dtype);
/* dst = src broadcast to dst's shape, converted to dst's dtype.  src may be
 * on another device: one peer copy (src/peer.c), queued after the work on
 * both devices' current streams and before later work on dst's. */
int thc_copy(thc_tensor *dst, const thc_tensor *src);
int thc_fill(thc_tensor *t, const thc_tensor *value);  /* value: 1 element */
int thc_fill_double(thc_tensor *t, double v);
int thc_zero(thc_tensor *t);

/* ---- element-wise (libTH's semantics and promotion) ------------------- */
thc_tensor *thc_unary(int op, const thc_tensor *a);
int thc_unary_out(int op, thc_tensor *out, const thc_tensor *a);
thc_tensor *thc_binary(int op, const thc_tensor *a, const thc_tensor *b);
int thc_binary_out(int op, thc_tensor *out, const thc_tensor *a,
                   const thc_tensor *b);
/* a + alpha * b; alpha a 0-d (host) tensor */
thc_tensor *thc_add_scaled(const thc_tensor *a, const thc_tensor *b,
                           const thc_tensor *alpha);
int thc_add_scaled_out(thc_tensor *out, const thc_tensor *a,
                       const thc_tensor *b, const thc_tensor *alpha);
/* lo and hi may be NULL */
thc_tensor *thc_clamp(const thc_tensor *a, const thc_tensor *lo,
                      const thc_tensor *hi);
int thc_clamp_out(thc_tensor *out, const thc_tensor *a, const thc_tensor *lo,
                  const thc_tensor *hi);
thc_tensor *thc_where(const thc_tensor *cond, const thc_tensor *a,
                      const thc_tensor *b);

/* ---- reductions ------------------------------------------------------- */
/* dims == NULL or ndims == 0 reduces over every dim; dtype < 0 picks the
 * default (sum and prod of bool and integers give int64). */
thc_tensor *thc_reduce(int op, const thc_tensor *a, int ndims, const int *dims,
                       int keepdim, int dtype);
thc_tensor *thc_var(const thc_tensor *a, int ndims, const int *dims,
                    double correction, int keepdim, int take_sqrt);
/* max/min along one dim: values and int64 indices (first occurrence; NaN
 * wins). */
int thc_minmax_dim(const thc_tensor *a, int dim, int keepdim, int is_max,
                   thc_tensor **values, thc_tensor **indices);
/* dim < -ndim: over the flattened tensor */
thc_tensor *thc_argminmax(const thc_tensor *a, int dim, int keepdim,
                          int is_max);

/* ---- indexing (libTH's semantics: negative indices count from the end;
 * an index out of range is an IndexError, found on the device and read
 * back after the kernel) ---------------------------------------------- */
typedef enum thc_scatter_reduce {
    THC_SCATTER_NONE = 0, THC_SCATTER_SUM, THC_SCATTER_PROD, THC_SCATTER_MEAN,
    THC_SCATTER_AMAX, THC_SCATTER_AMIN
} thc_scatter_reduce;

/* index: int64 or int32 */
thc_tensor *thc_index_select(const thc_tensor *a, int dim,
                             const thc_tensor *index);
thc_tensor *thc_gather(const thc_tensor *a, int dim, const thc_tensor *index);
/* In place on self; src may be a host scalar.  reduce: THC_SCATTER_NONE,
 * _SUM, _PROD, _AMAX or _AMIN (a NaN wins amax/amin; _MEAN is composed by
 * the caller).  With include_self == 0, every element an index names
 * starts from the reduction's identity (ignored for NONE and SUM). */
int thc_scatter_(thc_tensor *self, int dim, const thc_tensor *index,
                 const thc_tensor *src, int reduce, int include_self);
int thc_index_add_(thc_tensor *self, int dim, const thc_tensor *index,
                   const thc_tensor *src, const thc_tensor *alpha);
int thc_index_copy_(thc_tensor *self, int dim, const thc_tensor *index,
                    const thc_tensor *src);
int thc_index_fill_(thc_tensor *self, int dim, const thc_tensor *index,
                    const thc_tensor *value);
/* value: a host scalar or a one-element device tensor */
int thc_masked_fill_(thc_tensor *self, const thc_tensor *mask,
                     const thc_tensor *value);
thc_tensor *thc_masked_select(const thc_tensor *a, const thc_tensor *mask);
thc_tensor *thc_nonzero(const thc_tensor *a);  /* (n, ndim) int64 */
/* dtype < 0: the input's, int64 for bool and integers */
thc_tensor *thc_cumsum(const thc_tensor *a, int dim, int dtype);
thc_tensor *thc_cumprod(const thc_tensor *a, int dim, int dtype);

/* ---- sorting (libTH's semantics: stable, NaN above every number) ------ */
int thc_sort(const thc_tensor *a, int dim, int descending, int stable,
             thc_tensor **values, thc_tensor **indices);
int thc_topk(const thc_tensor *a, int64_t k, int dim, int largest, int sorted,
             thc_tensor **values, thc_tensor **indices);
int thc_kthvalue(const thc_tensor *a, int64_t k, int dim, int keepdim,
                 thc_tensor **values, thc_tensor **indices);

/* ---- searching, counting and order statistics (libTH's semantics) ------- */
/* Over the flattened tensor, always sorted (NaNs are distinct values);
 * inverse (int64, a's shape) and counts (int64) may be NULL (not computed). */
int thc_unique(const thc_tensor *a, int sorted, thc_tensor **values,
               thc_tensor **inverse, thc_tensor **counts);
/* Positions in the rows of sorted_seq (1-d, or matching v's leading dims)
 * where v's elements would go; int64, or int32 when out_int32. */
thc_tensor *thc_searchsorted(const thc_tensor *sorted_seq, const thc_tensor *v,
                             int right, int out_int32);
/* Counts (or sums of weights: float32 for float32 weights, else float64)
 * of the values of a 1-d non-negative integer tensor; weights may be NULL. */
thc_tensor *thc_bincount(const thc_tensor *a, const thc_tensor *weights,
                         int64_t minlength);
/* A histogram of `bins` equal bins over [min, max] (the data's range when
 * min == max); floating inputs, a's dtype. */
thc_tensor *thc_histc(const thc_tensor *a, int64_t bins, double min, double max);
/* The lower median of all elements (0-d; NaN propagates; NaN when empty). */
thc_tensor *thc_median(const thc_tensor *a);
/* Along one dim: the lower median (a NaN propagates: the row's first NaN)
 * and its index. */
int thc_median_dim(const thc_tensor *a, int dim, int keepdim,
                   thc_tensor **values, thc_tensor **indices);
/* Along one dim: the most frequent value (the smallest on ties) and the
 * index of its last occurrence. */
int thc_mode(const thc_tensor *a, int dim, int keepdim, thc_tensor **values,
             thc_tensor **indices);

/* ---- matrix products (floating dtypes) -------------------------------- */
thc_tensor *thc_mm(const thc_tensor *a, const thc_tensor *b);
thc_tensor *thc_bmm(const thc_tensor *a, const thc_tensor *b);
/* beta * input + alpha * (m1 @ m2); input broadcasts to the result */
thc_tensor *thc_addmm(const thc_tensor *input, const thc_tensor *m1,
                      const thc_tensor *m2, double beta, double alpha);
thc_tensor *thc_baddbmm(const thc_tensor *input, const thc_tensor *b1,
                        const thc_tensor *b2, double beta, double alpha);

/* cuBLAS runs the products of float32, float64, float16 and bfloat16 when
 * it can be loaded (from `path` if set before the first product, else
 * libcublas.so.13 through the dynamic linker; EMBER_THC_CUBLAS=0 turns it
 * off); otherwise libTHC's own kernel does. */
int thc_cublas_set_path(const char *path);
int thc_cublas_available(void);
const char *thc_cublas_error_text(void);  /* why it is not available */
/* Whether float32 products through cuBLAS may round their inputs to TF32
 * (10-bit mantissas, float32 sums) on GPUs with TF32 tensor cores; off by
 * default (float32 throughout).  Process-wide; libTHC's own GEMM kernel
 * always computes in float32. */
int thc_set_float32_matmul_tf32(int allow);
int thc_float32_matmul_tf32(void);

/* ---- random: a counter-based (Philox 4x32-10) generator ----------------- */
typedef struct thc_generator {
    uint64_t seed;
    uint64_t offset;  /* 128-bit Philox blocks consumed */
} thc_generator;

thc_generator *thc_default_generator(void);
void thc_generator_set_seed(thc_generator *g, uint64_t seed);
int thc_uniform_(thc_tensor *t, double low, double high, thc_generator *g);
int thc_normal_(thc_tensor *t, double mean, double std, thc_generator *g);
int thc_bernoulli_(thc_tensor *t, double p, thc_generator *g);
/* integers in [low, high) */
int thc_randint_(thc_tensor *t, int64_t low, int64_t high, thc_generator *g);
/* probs: 1-d or 2-d (rows are distributions, float64-checked for inf, NaN,
 * negatives and zero sums); int64 category indices, num_samples per row. */
thc_tensor *thc_multinomial(const thc_tensor *probs, int64_t num_samples,
                            int replacement, thc_generator *g);

#ifdef __cplusplus
}
#endif
#endif
