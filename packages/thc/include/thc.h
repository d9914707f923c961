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

#define THC_ABI_VERSION_MAJOR 0
#define THC_ABI_VERSION_MINOR 1
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

const char *thc_last_error(void);
int thc_last_status(void);
void thc_clear_error(void);

/* ---- devices ------------------------------------------------------- */
/* Number of usable devices; 0 (and THC_OK) when there is no driver or no
 * GPU, or when built without CUDA.  The reason is kept for messages in
 * thc_cuda_error_text(). */
int thc_device_count(int *count);
const char *thc_cuda_error_text(void);
/* The calling thread's current device, and waiting for all its work. */
int thc_get_device(int *device);
int thc_set_device(int device);
int thc_synchronize(void);

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

/* ---- element-wise kernels (device memory; need a GPU) ---------------- */
/* Dtype codes are libTH's (th_dtype); these kernels take float32 and
 * float64. */
typedef enum thc_dtype {
    THC_FLOAT32 = 0,
    THC_FLOAT64 = 1
} thc_dtype;

typedef enum thc_binary_op {
    THC_ADD = 0,
    THC_MUL = 1
} thc_binary_op;

/* A strided view: sizes and strides in elements; a broadcast input has
 * stride 0 along the broadcast dims. */
typedef struct thc_layout {
    int32_t ndim;
    int64_t sizes[THC_MAX_DIMS];
    int64_t strides[THC_MAX_DIMS];
} thc_layout;

/* Checks a layout (ndim range, sizes >= 0) and gives its element count. */
int thc_layout_numel(const thc_layout *layout, int64_t *numel);

int thc_fill(void *data, int dtype, const thc_layout *layout, double value, void *stream);
/* dst and src have the same sizes and dtype. */
int thc_copy(void *dst, const thc_layout *dst_layout, const void *src,
             const thc_layout *src_layout, int dtype, void *stream);
/* out = a op b, all of out's sizes; a and b already broadcast to them. */
int thc_binary(int op, int dtype, void *out, const thc_layout *out_layout,
               const void *a, const thc_layout *a_layout,
               const void *b, const thc_layout *b_layout, void *stream);

#ifdef __cplusplus
}
#endif
#endif
