/* Shared pieces of the element-wise families (unary.c, unary_math.c,
 * binary.c, ternary.c).  Internal. */
#ifndef TH_ELEMENTWISE_H
#define TH_ELEMENTWISE_H
#include "th_internal.h"
/* th_ops.def's TH_IF_<class>_<classes>() helpers */
#define TH_OPS_CLASS_MACROS
#include "th_ops.def"

/* Fills `view` (a stack struct, storage borrowed, not retained) with t
 * broadcast to (ndim, sizes).  The caller has checked compatibility. */
static inline void th__broadcast_view(th_tensor *view, const th_tensor *t,
                                      int ndim, const int64_t *sizes) {
    int lead = ndim - t->ndim;
    view->storage = t->storage;
    view->offset = t->offset;
    view->dtype = t->dtype;
    view->ndim = ndim;
    view->flags = 0;
    view->refcount = 1;
    for (int i = 0; i < ndim; i++) {
        int j = i - lead;
        view->sizes[i] = sizes[i];
        view->strides[i] =
            (j < 0 || t->sizes[j] != sizes[i]) ? 0 : t->strides[j];
    }
}

/* 1 if `out` (result of dtype `from`) may store into dtype `to` under
 * PyTorch's rules (no float -> integer, no integer -> bool). */
int th__can_cast(int from, int to);
/* Checks that out has exactly the broadcast shape and no element that
 * several indices write (a broadcast dim). */
int th__check_out_shape(const th_tensor *out, int ndim, const int64_t *sizes);
/* 1 if a and b's memory overlaps without being the same layout. */
int th__partial_overlap(const th_tensor *a, const th_tensor *b);

/* Math loops compiled with vector math (unary_math.c); NULL if op is not
 * a transcendental op.  dtype is TH_FLOAT32 or TH_FLOAT64. */
th_loop_fn th__unary_math_loop(int op, int dtype);
/* complex.c's loops for a complex dtype; NULL where the op has none.
 * The cast loop's ctx points at {source dtype, destination dtype}. */
th_loop_fn th__complex_unary_loop(int op, int dtype);
th_loop_fn th__complex_binary_loop(int op, int dtype);
th_loop_fn th__complex_cast_loop(int src, int dst);
/* 1 if the op maps integers to the default float dtype. */
int th__unary_is_float_op(int op);

/* A row's kind as TH_OPF_ bits */
#define TH_KIND_KEEP 0
#define TH_KIND_FLOAT TH_OPF_FLOAT
#define TH_KIND_MATH (TH_OPF_FLOAT | TH_OPF_VECTOR_MATH)
#define TH_KIND_ONLYF TH_OPF_FLOAT_ONLY
#define TH_KIND_PRED TH_OPF_PREDICATE

/* the helpers of th_ops.def's scalar expressions (installed: the code
 * ember.compile generates uses them too) */
#include "th_ops_expr.h"

/* Dtype lists that pass extra arguments through to X. */
#define TH_FLOATS_A(X, ...)                   \
    X(TH_FLOAT32, float, f32, __VA_ARGS__)    \
    X(TH_FLOAT64, double, f64, __VA_ARGS__)
#define TH_INTS_A(X, ...)                     \
    X(TH_INT8, int8_t, i8, __VA_ARGS__)       \
    X(TH_UINT8, uint8_t, u8, __VA_ARGS__)     \
    X(TH_INT16, int16_t, i16, __VA_ARGS__)    \
    X(TH_INT32, int32_t, i32, __VA_ARGS__)    \
    X(TH_INT64, int64_t, i64, __VA_ARGS__)
#define TH_BOOL_A(X, ...) X(TH_BOOL, th_bool_t, b8, __VA_ARGS__)
#define TH_ALL_A(X, ...)                      \
    TH_FLOATS_A(X, __VA_ARGS__)               \
    TH_INTS_A(X, __VA_ARGS__)                 \
    TH_BOOL_A(X, __VA_ARGS__)

/* Loop-table rows by dtype set: NULL where the op has no loop. */
#define TH_ROW_FLOAT(N) [TH_FLOAT32] = N##_f32, [TH_FLOAT64] = N##_f64
#define TH_ROW_INT(N)                                                       \
    [TH_INT8] = N##_i8, [TH_UINT8] = N##_u8, [TH_INT16] = N##_i16,          \
    [TH_INT32] = N##_i32, [TH_INT64] = N##_i64
#define TH_ROW_BOOL(N) [TH_BOOL] = N##_b8

#endif
