/* Shared pieces of reduce.c, reduce_kernels.c and reduce_index.c: the
 * internal kernel ops, the kernel signatures and tables, how partial
 * results combine, and the vectorised extremes.  Internal. */
#ifndef TH_REDUCE_INTERNAL_H
#define TH_REDUCE_INTERNAL_H
#include "th_internal.h"
#include "vecmath.h"

/* Helpers defined here for each file: plain static functions, so that gcc
 * inlines them exactly as before the split (an `inline` changes that);
 * unused in files that do not call them. */
#define RED_SHARED static __attribute__((unused))
/* The float extremes stay out of line, as when one file called each from
 * two places (row kernels and argmax). */
#define RED_OUTLINE static __attribute__((unused, noinline))

/* ---- internal kernel ops -------------------------------------------- */
enum {
    K_SUM,    /* float rows: pairwise in the input precision */
    K_SUMD,   /* sum accumulated in double */
    K_NANSUM, K_PROD, K_MAX, K_MIN, K_ALL, K_ANY, K_COUNT,
    K_SUMSQ, K_SUMABS, K_SUMPOW, K_MAXABS, K_MINABS, /* norms */
    K_SUMEXP, /* sum exp(x - shift[out]) (logsumexp) */
    K_SQDEV,  /* sum (x - shift[out])^2 (var) */
    K_NUM
};

enum { ACC_D, ACC_I }; /* double or int64 accumulators */

typedef struct {
    double p;            /* K_SUMPOW exponent */
    const double *shift; /* per-output shift for K_SUMEXP / K_SQDEV */
} kparam;

/* Reduces `rows` consecutive runs of n elements into acc[0 .. rows). */
typedef void (*row_fn)(const char *x, int64_t rows, int64_t n,
                       const kparam *kp, int64_t out0, void *acc);
/* acc[j] (j < w) accumulates x[k * rstride + j] for k < rows; rstride in
 * bytes; out0 is the output index of acc[0]. */
typedef void (*col_fn)(const char *x, int64_t rows, int64_t rstride,
                       int64_t w, const kparam *kp, int64_t out0, void *acc);

/* Combines two partial results of op `kop` (double accumulators). */
RED_SHARED double comb_d(int kop, double a, double b) {
    switch (kop) {
    case K_PROD: return a * b;
    case K_MAX: case K_MAXABS: return (b > a || b != b) ? b : a;
    case K_MIN: case K_MINABS: return (b < a || b != b) ? b : a;
    case K_ALL: return (a != 0 && b != 0) ? 1.0 : 0.0;
    case K_ANY: return (a != 0 || b != 0) ? 1.0 : 0.0;
    default: return a + b;
    }
}

RED_SHARED double init_d(int kop) {
    switch (kop) {
    case K_PROD: case K_ALL: return 1.0;
    case K_MAX: return -INFINITY;
    case K_MIN: case K_MINABS: return INFINITY;
    default: return 0.0;
    }
}

/* ---- int64-accumulator op definitions ------------------------------- */
/* sums and products wrap modulo 2^64 (unsigned arithmetic avoids UB) */
#define I_INIT_SUM 0
#define I_STEP_SUM(r, v) r = (int64_t)((uint64_t)r + (uint64_t)v)
#define I_INIT_PROD 1
#define I_STEP_PROD(r, v) r = (int64_t)((uint64_t)r * (uint64_t)v)
#define I_INIT_MAX INT64_MIN
#define I_STEP_MAX(r, v) r = v > r ? v : r
#define I_INIT_MIN INT64_MAX
#define I_STEP_MIN(r, v) r = v < r ? v : r
#define I_INIT_ALL 1
#define I_STEP_ALL(r, v) r &= (v != 0)
#define I_INIT_ANY 0
#define I_STEP_ANY(r, v) r |= (v != 0)
#define I_INIT_COUNT 0
#define I_STEP_COUNT(r, v) r += (v != 0)

RED_SHARED int64_t comb_i(int kop, int64_t a, int64_t b) {
    switch (kop) {
    case K_PROD: I_STEP_PROD(a, b); return a;
    case K_MAX: return TH_MAX(a, b);
    case K_MIN: return TH_MIN(a, b);
    case K_ALL: return a && b;
    case K_ANY: return a || b;
    default: I_STEP_SUM(a, b); return a;
    }
}

RED_SHARED int64_t init_i(int kop) {
    switch (kop) {
    case K_PROD: case K_ALL: return 1;
    case K_MAX: return INT64_MIN;
    case K_MIN: return INT64_MAX;
    default: return 0;
    }
}

/* ---- vectorised extremes --------------------------------------------- */
/* GCC/Clang vector extensions: the compiler does not vectorise a NaN-aware
 * max on its own, so it is spelled out with compares and bitwise blends on
 * 16-byte vectors (SSE2 / NEON width; wider ones lower badly without AVX). */
typedef float vf32 __attribute__((vector_size(16)));
typedef int32_t vm32 __attribute__((vector_size(16)));
typedef double vf64 __attribute__((vector_size(16)));
typedef int64_t vm64 __attribute__((vector_size(16)));

/* Max (min) of x[0 .. n); NaN if any element is NaN; -inf (inf) if n = 0.
 * Four vector accumulators; the blend keeps m where the compare fails, so
 * NaNs are tracked apart in `bad`. */
#define VEXTREME(NAME, T, VT, MT, CMP, INIT)                                  \
    RED_OUTLINE T NAME(const T *x, int64_t n) {                               \
        enum { L = 16 / sizeof(T) };                                          \
        VT m[4];                                                              \
        MT bad = {0};                                                         \
        for (int u = 0; u < 4; u++)                                           \
            for (int j = 0; j < L; j++) m[u][j] = INIT;                       \
        int64_t i = 0;                                                        \
        for (; i + 4 * L <= n; i += 4 * L)                                    \
            for (int u = 0; u < 4; u++) {                                     \
                VT a;                                                         \
                memcpy(&a, x + i + u * L, sizeof a);                          \
                MT g = a CMP m[u];                                            \
                m[u] = (VT)(((MT)a & g) | ((MT)m[u] & ~g));                   \
                bad |= a != a;                                                \
            }                                                                 \
        T r = INIT;                                                           \
        int nan = 0;                                                          \
        for (int j = 0; j < L; j++) {                                         \
            for (int u = 0; u < 4; u++) r = m[u][j] CMP r ? m[u][j] : r;      \
            nan |= bad[j] != 0;                                               \
        }                                                                     \
        for (; i < n; i++) {                                                  \
            T v = x[i];                                                       \
            r = v CMP r ? v : r;                                              \
            nan |= v != v;                                                    \
        }                                                                     \
        return nan ? (T)NAN : r;                                              \
    }
VEXTREME(vmax_f32, float, vf32, vm32, >, -INFINITY)
VEXTREME(vmin_f32, float, vf32, vm32, <, INFINITY)
VEXTREME(vmax_f64, double, vf64, vm64, >, -INFINITY)
VEXTREME(vmin_f64, double, vf64, vm64, <, INFINITY)

/* integers: plain loops that the compiler vectorises */
#define IEXTREME(NAME, T, CMP, INIT)                                          \
    RED_SHARED T NAME(const T *x, int64_t n) {                                \
        T r = INIT;                                                           \
        for (int64_t i = 0; i < n; i++) r = x[i] CMP r ? x[i] : r;            \
        return r;                                                             \
    }
#define IEXTREMES(S, T, LO, HI)                                               \
    IEXTREME(vmax_##S, T, >, LO) IEXTREME(vmin_##S, T, <, HI)
IEXTREMES(i8, int8_t, INT8_MIN, INT8_MAX)
IEXTREMES(u8, uint8_t, 0, UINT8_MAX)
IEXTREMES(i16, int16_t, INT16_MIN, INT16_MAX)
IEXTREMES(i32, int32_t, INT32_MIN, INT32_MAX)
IEXTREMES(i64, int64_t, INT64_MIN, INT64_MAX)
IEXTREMES(b8, th_bool_t, 0, 1)

/* ---- kernel tables (reduce_kernels.c) -------------------------------- */
/* [internal op][dtype]; NULL where the op does not take the dtype */
extern const row_fn th__red_row_fns[K_NUM][TH_NUM_DTYPES]
    __attribute__((visibility("hidden")));
extern const col_fn th__red_col_fns[K_NUM][TH_NUM_DTYPES]
    __attribute__((visibility("hidden")));

/* ---- compute copies --------------------------------------------------- */
/* Retained `t` converted to `dtype` and then, if half, to float32. */
RED_SHARED th_tensor *compute_copy(const th_tensor *t, int dtype) {
    th_tensor *x = th__cast(t, dtype);
    if (x && th__is_half(x->dtype)) {
        th_tensor *f = th_to_dtype(x, TH_FLOAT32);
        th_tensor_release(x);
        x = f;
    }
    return x;
}

#endif
