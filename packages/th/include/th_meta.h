/* libTH's metadata API, for libraries built on libTH (libTHC).
 *
 * A tensor library with its own storages (device memory, ...) keeps its
 * shapes by libTH's rules through these functions instead of a copy of
 * them: it fills a th_meta from its tensor, calls a th_meta_* function and
 * wraps the result over its own storage.  Here are the views, creation
 * checks, broadcasting (th_broadcast_shapes in th.h), type promotion, the
 * dtype facts and conversions, overflow-checked size arithmetic and the
 * error plumbing (the thread-local message of th_last_error()).
 *
 * Exported, versioned with th.h (TH_ABI_VERSION, abi/th.abi) and
 * installed beside it; not part of the Python binding.  Every function
 * returns TH_OK or a status with th_last_error() set, like th.h's, unless
 * its comment says otherwise.  Plain declarations only.
 */
#ifndef TH_META_H
#define TH_META_H

#include "th.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor's geometry without its storage. */
typedef struct th_meta {
    int64_t offset;                  /* elements */
    int64_t sizes[TH_MAX_DIMS];
    int64_t strides[TH_MAX_DIMS];    /* elements */
    int32_t ndim;
    int32_t dtype;                   /* th_dtype */
    int32_t flags;                   /* TH_TENSOR_* bits; views get 0 */
    int64_t storage_nbytes;          /* the storage's size: views stay inside */
} th_meta;

/* ---- errors -------------------------------------------------------- */
/* Sets the calling thread's th_last_error() message and status; returns
 * status. */
int th_error_set(int status, const char *message);
/* "[2, 3]" into buf (at least 256 bytes); returns buf. */
const char *th_shape_str(int ndim, const int64_t *sizes, char *buf);
/* dim wrapped into [0, ndim) (ndim 0 takes -1 and 0), or -1 with an
 * IndexError set. */
int th_wrap_dim(int dim, int ndim);

/* ---- dtypes -------------------------------------------------------- */
/* 0 bool, 1 integer, 2 floating, 3 complex (the categories of type
 * promotion). */
int th_dtype_category(int dtype);
/* PyTorch's scalar type names: "Float", "Long", ... */
const char *th_dtype_title(int dtype);
/* th_result_type over a tensor's parts: dtype, ndim and flags of each
 * operand (a_dtype or b_dtype < 0: no such operand). */
int th_result_type_of(int a_dtype, int a_ndim, int a_flags, int b_dtype,
                      int b_ndim, int b_flags);
/* IEEE binary16 and bfloat16 <-> float, rounding to nearest even. */
float th_half_to_float(uint16_t h);
uint16_t th_float_to_half(float f);
float th_bf16_to_float(uint16_t h);
uint16_t th_float_to_bf16(float f);
/* One element of `dtype` at host address p, as double / int64. */
double th_load_double(const char *p, int dtype);
int64_t th_load_int64(const char *p, int dtype);
void th_store_double(char *p, int dtype, double v);

/* ---- size arithmetic ----------------------------------------------- */
/* Product of v[0..n) (wrapping where another size is 0). */
int64_t th_prod(int n, const int64_t *v);
/* Row-major strides for sizes (size-0/1 dims count as 1). */
void th_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides);
/* 1 when sizes/strides lay the elements out row-major without gaps. */
int th_strides_are_contiguous(int ndim, const int64_t *sizes,
                              const int64_t *strides);
/* Element count; "numel: integer multiplication overflow" when it does
 * not fit in int64. */
int th_checked_numel(int ndim, const int64_t *sizes, int64_t *numel);
/* Bytes of a storage for sizes (contiguous when strides is NULL); "Storage
 * size calculation overflowed" when they do not fit in int64. */
int th_storage_nbytes(int ndim, const int64_t *sizes, const int64_t *strides,
                      int dtype, int64_t *nbytes);
/* Error unless sizes/strides/offset address only elements inside a storage
 * of nbytes bytes (`what` names the caller in the message). */
int th_check_in_storage(const char *what, int ndim, const int64_t *sizes,
                        const int64_t *strides, int64_t offset, int dtype,
                        int64_t nbytes);
/* stride * k for a view's new stride (wraps when size <= 1). */
int th_view_stride(int64_t stride, int64_t k, int64_t size, int64_t *out);

/* ---- creation and views -------------------------------------------- */
/* A fresh tensor's geometry (strides NULL: contiguous); out->storage_nbytes
 * is the storage to allocate.  The checks of th_empty/th_empty_strided. */
int th_meta_new(th_meta *out, int ndim, const int64_t *sizes,
                const int64_t *strides, int dtype);
/* Geometry over an existing storage of nbytes (strides NULL: contiguous):
 * the checks of th_tensor_from_storage, alignment aside. */
int th_meta_on_storage(th_meta *out, int64_t nbytes, int64_t offset, int ndim,
                       const int64_t *sizes, const int64_t *strides,
                       int dtype);
/* The views of th.h on geometry: *out is the view of *t (out may be t).
 * th_meta_reshape sets *copy when no view can have the shape: *out is then
 * the contiguous geometry (offset 0) to give a copy of t. */
int th_meta_alias(th_meta *out, const th_meta *t);
int th_meta_view(th_meta *out, const th_meta *t, int ndim,
                 const int64_t *sizes);
int th_meta_reshape(th_meta *out, const th_meta *t, int ndim,
                    const int64_t *sizes, int *copy);
int th_meta_transpose(th_meta *out, const th_meta *t, int d0, int d1);
int th_meta_permute(th_meta *out, const th_meta *t, int ndim,
                    const int *dims);
int th_meta_narrow(th_meta *out, const th_meta *t, int dim, int64_t start,
                   int64_t length);
int th_meta_select(th_meta *out, const th_meta *t, int dim, int64_t index);
int th_meta_slice(th_meta *out, const th_meta *t, int dim, int64_t start,
                  int64_t stop, int64_t step);
int th_meta_expand(th_meta *out, const th_meta *t, int ndim,
                   const int64_t *sizes);
int th_meta_squeeze(th_meta *out, const th_meta *t, int dim);
int th_meta_squeeze_all(th_meta *out, const th_meta *t);
int th_meta_unsqueeze(th_meta *out, const th_meta *t, int dim);
int th_meta_unfold(th_meta *out, const th_meta *t, int dim, int64_t size,
                   int64_t step);
int th_meta_diagonal(th_meta *out, const th_meta *t, int64_t offset, int d0,
                     int d1);
int th_meta_flip(th_meta *out, const th_meta *t, int ndim, const int *dims);

#ifdef __cplusplus
}
#endif
#endif
