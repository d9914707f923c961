/* Reductions: sum/prod/mean/amax/amin/all/any/count_nonzero/logsumexp/
 * nansum, var/std, vector norms, max/min with indices, argmax/argmin,
 * cumsum/cumprod.
 *
 * A reduction runs on a dense block of the input, in some order of its
 * dims, seen as A kept x K1 reduced x M kept x K2 reduced elements (see
 * make_layout): contiguous runs are reduced by "row" kernels, while a
 * leading reduced dim (sum(dim=0) of a matrix) accumulates whole rows with
 * "column" kernels, so neither needs a copy.  Inputs whose layout does not
 * fit get their reduced dims permuted to the end and copied.
 *
 * Accumulators are double for floating inputs (float32 sums use NumPy's
 * pairwise float summation on contiguous runs) and int64 for integers and
 * bool (wrapping like PyTorch's int64 arithmetic).  float16/bfloat16
 * inputs are converted to float32 first and results converted back. */
#include "th_internal.h"
#include "vecmath.h"

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

/* ---- double-accumulator op definitions ------------------------------ */
#define D_INIT_SUMD 0.0
#define D_STEP_SUMD(r, v, SH) r += v
#define D_INIT_NANSUM 0.0
#define D_STEP_NANSUM(r, v, SH) r += (v == v) ? v : 0.0
#define D_INIT_PROD 1.0
#define D_STEP_PROD(r, v, SH) r *= v
#define D_INIT_ALL 1.0
#define D_STEP_ALL(r, v, SH) r = (v != 0) ? r : 0.0
#define D_INIT_ANY 0.0
#define D_STEP_ANY(r, v, SH) r = (v != 0) ? 1.0 : r
#define D_INIT_COUNT 0.0
#define D_STEP_COUNT(r, v, SH) r += (v != 0) ? 1.0 : 0.0
#define D_INIT_SUMSQ 0.0
#define D_STEP_SUMSQ(r, v, SH) r += v * v
#define D_INIT_SUMABS 0.0
#define D_STEP_SUMABS(r, v, SH) r += fabs(v)
#define D_INIT_SUMPOW 0.0
#define D_STEP_SUMPOW(r, v, SH) r += pow(fabs(v), p)
/* max/min propagate NaN: a NaN accumulator never changes again */
#define D_INIT_MAXABS 0.0
#define D_STEP_MAXABS(r, v, SH) r = (fabs(v) > r || v != v) ? fabs(v) : r
#define D_INIT_MINABS INFINITY
#define D_STEP_MINABS(r, v, SH) r = (fabs(v) < r || v != v) ? fabs(v) : r
#define D_INIT_SUMEXP 0.0
#define D_STEP_SUMEXP(r, v, SH) r += exp(v - (SH))
#define D_INIT_SQDEV 0.0
#define D_STEP_SQDEV(r, v, SH) r += (v - (SH)) * (v - (SH))

/* Combines two partial results of op `kop` (double accumulators). */
static double comb_d(int kop, double a, double b) {
    switch (kop) {
    case K_PROD: return a * b;
    case K_MAX: case K_MAXABS: return (b > a || b != b) ? b : a;
    case K_MIN: case K_MINABS: return (b < a || b != b) ? b : a;
    case K_ALL: return (a != 0 && b != 0) ? 1.0 : 0.0;
    case K_ANY: return (a != 0 || b != 0) ? 1.0 : 0.0;
    default: return a + b;
    }
}

static double init_d(int kop) {
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

static int64_t comb_i(int kop, int64_t a, int64_t b) {
    switch (kop) {
    case K_PROD: I_STEP_PROD(a, b); return a;
    case K_MAX: return TH_MAX(a, b);
    case K_MIN: return TH_MIN(a, b);
    case K_ALL: return a && b;
    case K_ANY: return a || b;
    default: I_STEP_SUM(a, b); return a;
    }
}

static int64_t init_i(int kop) {
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
    static T NAME(const T *x, int64_t n) {                                    \
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
    static T NAME(const T *x, int64_t n) {                                    \
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

/* ---- kernels for floating inputs ------------------------------------ */
/* Rows: 8 independent lanes so that the compiler can vectorise.  LT is
 * the lane type: double, except float32 products, which round to float at
 * each step like PyTorch and NumPy (so that they overflow alike). */
#define FROW(OP, T, S, LT)                                                    \
    static void row_##OP##_##S(const char *xp, int64_t rows, int64_t n,       \
                               const kparam *kp, int64_t out0, void *accp) { \
        double *acc = accp;                                                   \
        const double p = kp->p;                                               \
        (void)p;                                                              \
        for (int64_t r = 0; r < rows; r++) {                                  \
            const T *x = (const T *)xp + r * n;                               \
            const double sh = kp->shift ? kp->shift[out0 + r] : 0.0;          \
            (void)sh;                                                         \
            LT l[8];                                                          \
            for (int j = 0; j < 8; j++) l[j] = D_INIT_##OP;                   \
            int64_t i = 0;                                                    \
            for (; i + 8 <= n; i += 8)                                        \
                for (int j = 0; j < 8; j++) {                                 \
                    double v = x[i + j];                                      \
                    D_STEP_##OP(l[j], v, sh);                                 \
                }                                                             \
            for (; i < n; i++) {                                              \
                double v = x[i];                                              \
                D_STEP_##OP(l[0], v, sh);                                     \
            }                                                                 \
            LT a = (LT)acc[r];                                                \
            for (int j = 0; j < 8; j++) a = (LT)comb_d(K_##OP, a, l[j]);      \
            acc[r] = a;                                                       \
        }                                                                     \
    }

#define FCOL(OP, T, S, LT)                                                    \
    static void col_##OP##_##S(const char *xp, int64_t rows, int64_t rstride, \
                               int64_t w, const kparam *kp, int64_t out0,     \
                               void *accp) {                                  \
        double *restrict acc = accp;                                          \
        const double p = kp->p;                                               \
        const double *sh = kp->shift ? kp->shift + out0 : NULL;               \
        (void)p;                                                              \
        (void)sh;                                                             \
        for (int64_t k = 0; k < rows; k++) {                                  \
            const T *restrict x = (const T *)(xp + k * rstride);              \
            for (int64_t j = 0; j < w; j++) {                                 \
                double v = x[j];                                              \
                LT r = (LT)acc[j];                                            \
                D_STEP_##OP(r, v, sh[j]);                                     \
                acc[j] = r;                                                   \
            }                                                                 \
        }                                                                     \
    }

#define F_OPS(X, T, S)                                                        \
    X(NANSUM, T, S)                                                           \
    X(ALL, T, S) X(ANY, T, S) X(COUNT, T, S) X(SUMSQ, T, S)                   \
    X(SUMABS, T, S) X(SUMPOW, T, S) X(MAXABS, T, S) X(MINABS, T, S)           \
    X(SQDEV, T, S)

#define F_KERNELS(OP, T, S) FROW(OP, T, S, double) FCOL(OP, T, S, double)
F_OPS(F_KERNELS, float, f32)
F_OPS(F_KERNELS, double, f64)
F_KERNELS(SUMEXP, double, f64)
FCOL(SUMEXP, float, f32, double)

/* float32 rows of logsumexp (log_softmax's forward): exp in float through
 * the vector math library, 16 float lanes summed over blocks of 1024
 * elements and the blocks added in double.  A double exp per element
 * cost five times the rest of the reduction; the terms are at most 1
 * (shifted by the row's max), so float lanes over a block lose nothing a
 * float32 result keeps. */
#define SUMEXP_BLOCK 1024
TH_CLONES
static void row_SUMEXP_f32(const char *xp, int64_t rows, int64_t n,
                           const kparam *kp, int64_t out0, void *accp) {
    double *acc = accp;
    for (int64_t r = 0; r < rows; r++) {
        const float *x = (const float *)xp + r * n;
        const float sh = (float)kp->shift[out0 + r];
        double total = acc[r];
        for (int64_t b = 0; b < n; b += SUMEXP_BLOCK) {
            const int64_t e = TH_MIN(n, b + SUMEXP_BLOCK);
            float l[16] = {0};
            int64_t i = b;
            for (; i + 16 <= e; i += 16)
                for (int j = 0; j < 16; j++)
                    l[j] += expf(x[i + j] - sh);
            double part = 0.0;
            for (; i < e; i++)
                part += expf(x[i] - sh);
            for (int j = 0; j < 16; j++)
                part += l[j];
            total += part;
        }
        acc[r] = total;
    }
}
FROW(SUMD, float, f32, double)
FROW(SUMD, double, f64, double)
FROW(PROD, float, f32, float)
FCOL(PROD, float, f32, float)
F_KERNELS(PROD, double, f64)

/* Column sums: 8 rows are first summed pairwise in the input type, then
 * added to the double accumulators: 8 loads per accumulator update. */
#define COL_SUM8(T, S)                                                        \
    static void col_SUM8_##S(const char *xp, int64_t rows, int64_t rstride,   \
                             int64_t w, const kparam *kp, int64_t out0,       \
                             void *accp) {                                    \
        (void)kp;                                                             \
        (void)out0;                                                           \
        double *restrict acc = accp;                                          \
        int64_t k = 0;                                                        \
        for (; k + 8 <= rows; k += 8) {                                       \
            const T *r0 = (const T *)(xp + k * rstride);                      \
            const T *r1 = (const T *)((const char *)r0 + rstride);            \
            const T *r2 = (const T *)((const char *)r1 + rstride);            \
            const T *r3 = (const T *)((const char *)r2 + rstride);            \
            const T *r4 = (const T *)((const char *)r3 + rstride);            \
            const T *r5 = (const T *)((const char *)r4 + rstride);            \
            const T *r6 = (const T *)((const char *)r5 + rstride);            \
            const T *r7 = (const T *)((const char *)r6 + rstride);            \
            for (int64_t j = 0; j < w; j++)                                   \
                acc[j] += ((r0[j] + r1[j]) + (r2[j] + r3[j])) +               \
                          ((r4[j] + r5[j]) + (r6[j] + r7[j]));                \
        }                                                                     \
        for (; k < rows; k++) {                                               \
            const T *r = (const T *)(xp + k * rstride);                       \
            for (int64_t j = 0; j < w; j++) acc[j] += r[j];                   \
        }                                                                     \
    }

/* Columns for max/min: GCC vectorises one NaN-aware select per element
 * but not a chain of them, so each block of columns is accumulated in the
 * input type on the stack, one row at a time. */
#define XCOL_W 1024
#define RED2_MAX(a, b) (((b) > (a)) | ((b) != (b)) ? (b) : (a))
#define RED2_MIN(a, b) (((b) < (a)) | ((b) != (b)) ? (b) : (a))
#define FCOLX(OP, RED2, T, S)                                                 \
    static void col_##OP##_##S(const char *xp, int64_t rows, int64_t rstride, \
                               int64_t w, const kparam *kp, int64_t out0,     \
                               void *accp) {                                  \
        (void)kp;                                                             \
        (void)out0;                                                           \
        double *acc = accp;                                                   \
        T m[XCOL_W];                                                          \
        for (int64_t j0 = 0; j0 < w; j0 += XCOL_W) {                          \
            int64_t n = TH_MIN(XCOL_W, w - j0);                               \
            for (int64_t j = 0; j < n; j++) m[j] = (T)acc[j0 + j];            \
            for (int64_t k = 0; k < rows; k++) {                              \
                const T *restrict r = (const T *)(xp + k * rstride) + j0;     \
                for (int64_t j = 0; j < n; j++) m[j] = RED2(m[j], r[j]);      \
            }                                                                 \
            for (int64_t j = 0; j < n; j++) acc[j0 + j] = m[j];               \
        }                                                                     \
    }
#define FCOLS_TYPED(E, T, S)                                                  \
    COL_SUM8(T, S) FCOLX(MAX, RED2_MAX, T, S) FCOLX(MIN, RED2_MIN, T, S)
TH_FOR_FLOAT_DTYPES(FCOLS_TYPED)

/* max/min rows in the input type, through the vectorised helpers */
#define XROW(OP, FN, T, S, ACC, COMB)                                         \
    static void row_##OP##_##S(const char *xp, int64_t rows, int64_t n,       \
                               const kparam *kp, int64_t out0, void *accp) { \
        (void)kp;                                                             \
        (void)out0;                                                           \
        ACC *acc = accp;                                                      \
        for (int64_t r = 0; r < rows; r++) {                                  \
            ACC v = (ACC)FN##_##S((const T *)xp + r * n, n);                  \
            acc[r] = COMB(K_##OP, acc[r], v);                                 \
        }                                                                     \
    }
#define XROWS(E, T, S, ACC, COMB)                                             \
    XROW(MAX, vmax, T, S, ACC, COMB) XROW(MIN, vmin, T, S, ACC, COMB)
XROWS(TH_FLOAT32, float, f32, double, comb_d)
XROWS(TH_FLOAT64, double, f64, double, comb_d)

/* NumPy's pairwise summation: blocks of up to 128 elements summed with 8
 * accumulators, halves combined recursively; error O(log n). */
#define PAIRWISE(T, S)                                                        \
    static T pairwise_##S(const T *a, int64_t n) {                           \
        if (n < 8) {                                                          \
            T res = 0;                                                        \
            for (int64_t i = 0; i < n; i++) res += a[i];                      \
            return res;                                                       \
        }                                                                     \
        if (n <= 128) {                                                       \
            T r[8];                                                           \
            for (int j = 0; j < 8; j++) r[j] = a[j];                          \
            int64_t i, stop = n - n % 8;                                      \
            for (i = 8; i < stop; i += 8)                                     \
                for (int j = 0; j < 8; j++) r[j] += a[i + j];                 \
            T res = ((r[0] + r[1]) + (r[2] + r[3])) +                         \
                    ((r[4] + r[5]) + (r[6] + r[7]));                          \
            for (; i < n; i++) res += a[i];                                   \
            return res;                                                       \
        }                                                                     \
        int64_t n2 = n / 2;                                                   \
        n2 -= n2 % 8;                                                         \
        return pairwise_##S(a, n2) + pairwise_##S(a + n2, n - n2);            \
    }                                                                         \
    static void row_SUM_##S(const char *xp, int64_t rows, int64_t n,          \
                            const kparam *kp, int64_t out0, void *accp) {     \
        (void)kp;                                                             \
        (void)out0;                                                           \
        double *acc = accp;                                                   \
        for (int64_t r = 0; r < rows; r++)                                    \
            acc[r] += (double)pairwise_##S((const T *)xp + r * n, n);         \
    }
PAIRWISE(float, f32)
PAIRWISE(double, f64)

/* ---- kernels for integer and bool inputs ---------------------------- */
#define IROW(OP, T, S)                                                        \
    static void row_##OP##_##S(const char *xp, int64_t rows, int64_t n,       \
                               const kparam *kp, int64_t out0, void *accp) { \
        (void)kp;                                                             \
        (void)out0;                                                           \
        int64_t *acc = accp;                                                  \
        for (int64_t r = 0; r < rows; r++) {                                  \
            const T *x = (const T *)xp + r * n;                               \
            int64_t l = I_INIT_##OP;                                          \
            for (int64_t i = 0; i < n; i++) {                                 \
                int64_t v = x[i];                                             \
                I_STEP_##OP(l, v);                                            \
            }                                                                 \
            acc[r] = comb_i(K_##OP, acc[r], l);                               \
        }                                                                     \
    }

#define ICOL(OP, T, S)                                                        \
    static void col_##OP##_##S(const char *xp, int64_t rows, int64_t rstride, \
                               int64_t w, const kparam *kp, int64_t out0,     \
                               void *accp) {                                  \
        (void)kp;                                                             \
        (void)out0;                                                           \
        int64_t *restrict acc = accp;                                         \
        for (int64_t k = 0; k < rows; k++) {                                  \
            const T *restrict x = (const T *)(xp + k * rstride);              \
            for (int64_t j = 0; j < w; j++) {                                 \
                int64_t v = x[j];                                             \
                I_STEP_##OP(acc[j], v);                                       \
            }                                                                 \
        }                                                                     \
    }

#define I_OPS(X, T, S)                                                        \
    X(SUM, T, S) X(PROD, T, S) X(ALL, T, S) X(ANY, T, S) X(COUNT, T, S)
#define I_KERNELS(OP, T, S) IROW(OP, T, S) ICOL(OP, T, S)
#define I_ALL_TYPES(E, T, S)                                                  \
    I_OPS(I_KERNELS, T, S) ICOL(MAX, T, S) ICOL(MIN, T, S)                    \
    XROWS(E, T, S, int64_t, comb_i)
TH_FOR_INT_DTYPES(I_ALL_TYPES)
I_ALL_TYPES(TH_BOOL, th_bool_t, b8)

/* ---- kernel tables -------------------------------------------------- */
#define F_ROW_ENTRY(OP, E, S) [K_##OP][E] = row_##OP##_##S,
#define F_COL_ENTRY(OP, E, S) [K_##OP][E] = col_##OP##_##S,
#define I_ROW_ENTRY(OP, E, S) [K_##OP][E] = row_##OP##_##S,
#define I_COL_ENTRY(OP, E, S) [K_##OP][E] = col_##OP##_##S,
/* integer sums need no NaN or precision variants */
#define I_EXTRA_ROW(E, S)                                                     \
    [K_SUMD][E] = row_SUM_##S, [K_NANSUM][E] = row_SUM_##S,
#define I_EXTRA_COL(E, S)                                                     \
    [K_SUMD][E] = col_SUM_##S, [K_NANSUM][E] = col_SUM_##S,                   \
    [K_SUM][E] = col_SUM_##S,

#define F_ROWS(E, T, S)                                                       \
    F_OPS(F_ROW_ENTRY, E, S) [K_SUM][E] = row_SUM_##S,                        \
    [K_SUMEXP][E] = row_SUMEXP_##S,                                           \
    [K_SUMD][E] = row_SUMD_##S, [K_PROD][E] = row_PROD_##S,                   \
    [K_MAX][E] = row_MAX_##S, [K_MIN][E] = row_MIN_##S,
#define F_COLS(E, T, S)                                                       \
    F_OPS(F_COL_ENTRY, E, S) [K_SUM][E] = col_SUM8_##S,                       \
    [K_SUMEXP][E] = col_SUMEXP_##S,                                           \
    [K_SUMD][E] = col_SUM8_##S,                                               \
    [K_PROD][E] = col_PROD_##S, [K_MAX][E] = col_MAX_##S,                     \
    [K_MIN][E] = col_MIN_##S,
#define I_ROWS(E, T, S)                                                       \
    I_ROW_ENTRY(SUM, E, S) I_ROW_ENTRY(PROD, E, S) I_ROW_ENTRY(MAX, E, S)     \
    I_ROW_ENTRY(MIN, E, S) I_ROW_ENTRY(ALL, E, S) I_ROW_ENTRY(ANY, E, S)      \
    I_ROW_ENTRY(COUNT, E, S) I_EXTRA_ROW(E, S)
#define I_COLS(E, T, S)                                                       \
    I_COL_ENTRY(PROD, E, S) I_COL_ENTRY(MAX, E, S) I_COL_ENTRY(MIN, E, S)     \
    I_COL_ENTRY(ALL, E, S) I_COL_ENTRY(ANY, E, S) I_COL_ENTRY(COUNT, E, S)    \
    I_EXTRA_COL(E, S)

static const row_fn row_fns[K_NUM][TH_NUM_DTYPES] = {
    TH_FOR_FLOAT_DTYPES(F_ROWS) TH_FOR_INT_DTYPES(I_ROWS)
    I_ROWS(TH_BOOL, th_bool_t, b8)};
static const col_fn col_fns[K_NUM][TH_NUM_DTYPES] = {
    TH_FOR_FLOAT_DTYPES(F_COLS) TH_FOR_INT_DTYPES(I_COLS)
    I_COLS(TH_BOOL, th_bool_t, b8)};

static int acc_kind(int dtype) {
    return th_dtype_is_floating(dtype) ? ACC_D : ACC_I;
}

/* ---- dims and shapes ------------------------------------------------ */
/* mask[d] = 1 for each reduced dim; all dims when dims is NULL/empty. */
static int parse_dims(const th_tensor *a, int ndims, const int *dims,
                      int *mask) {
    for (int d = 0; d < TH_MAX_DIMS; d++) mask[d] = 0;
    if (ndims < 0 || ndims > TH_MAX_DIMS)
        return th__error(TH_ERR_VALUE, "invalid number of reduction dims %d",
                         ndims);
    if (!dims || ndims == 0) {
        for (int d = 0; d < a->ndim; d++) mask[d] = 1;
        return TH_OK;
    }
    for (int i = 0; i < ndims; i++) {
        int d = th__wrap_dim(dims[i], a->ndim);
        if (d < 0) return th_last_status();
        if (mask[d])
            return th__error(TH_ERR_RUNTIME,
                             "dim %d appears multiple times in the list of "
                             "dims", d);
        mask[d] = 1;
    }
    return TH_OK;
}

static int out_shape(const th_tensor *a, const int *mask, int keepdim,
                     int64_t *sizes) {
    int n = 0;
    for (int d = 0; d < a->ndim; d++) {
        if (!mask[d]) sizes[n++] = a->sizes[d];
        else if (keepdim) sizes[n++] = 1;
    }
    return n;
}

static const char *dtype_title(int dtype) {
    static const char *t[TH_NUM_DTYPES] = {"Float", "Double", "Half",
                                           "BFloat16", "Char", "Byte",
                                           "Short", "Int", "Long", "Bool"};
    return dtype >= 0 && dtype < TH_NUM_DTYPES ? t[dtype] : "invalid";
}

/* Retained `t` converted to `dtype` and then, if half, to float32. */
static th_tensor *compute_copy(const th_tensor *t, int dtype) {
    th_tensor *x = th__cast(t, dtype);
    if (x && th__is_half(x->dtype)) {
        th_tensor *f = th_to_dtype(x, TH_FLOAT32);
        th_tensor_release(x);
        x = f;
    }
    return x;
}

/* ---- layout: the dense block (A, K1, M, K2) ------------------------- */
/* In some dense order the data is A kept x K1 reduced x M kept x K2
 * reduced elements (output index a * M + m), in one of three modes:
 *   rows    (A = K1 = 1, K2 > 1): M runs of K2 contiguous elements;
 *   columns (K2 = 1):             per a, K1 rows of M elements;
 *   mixed   (K1, K2 > 1):         per a and k1, M runs of K2 elements
 *                                 (e.g. dims 0, 2, 3 of an NCHW tensor). */
typedef struct {
    th_tensor *hold; /* keeps the data alive (may be a copy) */
    const char *base;
    int64_t A, K1, M, K2;
    int dtype;
} layout;

static void layout_free(layout *L) { th_tensor_release(L->hold); }

static void set_rows(layout *L, int64_t rows, int64_t n) {
    L->A = L->K1 = 1;
    L->M = rows;
    L->K2 = n;
}

/* Finds a dense order of x (by decreasing stride) of the form above with
 * the kept dims in their own order; else copies x with the reduced dims
 * moved last (rows mode). */
static int make_layout(const th_tensor *x, const int *mask, layout *L) {
    int nd = x->ndim;
    int64_t Mt = 1, Kt = 1;
    for (int d = 0; d < nd; d++) {
        if (mask[d]) Kt *= x->sizes[d];
        else Mt *= x->sizes[d];
    }
    L->dtype = x->dtype;
    L->hold = NULL;
    L->base = NULL;
    set_rows(L, Mt, Kt);
    if (Mt == 0 || Kt == 0) return TH_OK; /* no data is read */
    int order[TH_MAX_DIMS], n = 0;
    for (int d = 0; d < nd; d++)
        if (x->sizes[d] != 1) order[n++] = d;
    for (int i = 1; i < n; i++) /* stable sort, larger stride first */
        for (int j = i;
             j > 0 && x->strides[order[j]] > x->strides[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int ok = 1, last_kept = -1;
    int64_t expected = 1, part[4] = {1, 1, 1, 1}; /* A, K1, M, K2 */
    for (int i = n - 1; i >= 0 && ok; i--) {
        ok = x->strides[order[i]] == expected;
        expected *= x->sizes[order[i]];
    }
    /* state: the part being filled; kept dims go to parts 0 and 2,
     * reduced ones to parts 1 and 3 */
    int state = 0;
    for (int i = 0; i < n && ok; i++) {
        int d = order[i], red = mask[d];
        if (red && (state == 0 || state == 2)) state++;
        if (!red && state == 1) state = 2;
        if (!red && state == 3) ok = 0;
        if (!red) {
            if (d < last_kept) ok = 0;
            last_kept = d;
        }
        part[state] *= x->sizes[d];
    }
    if (ok) {
        th_tensor_retain((th_tensor *)x);
        L->hold = (th_tensor *)x;
        L->base = th__ptr(x);
        if (part[3] == 1 && part[2] == 1) {
            set_rows(L, part[0], part[1]);
        } else if (part[3] == 1) {
            L->A = part[0];
            L->K1 = part[1];
            L->M = part[2];
            L->K2 = 1;
        } else if (part[1] == 1) {
            set_rows(L, part[0] * part[2], part[3]);
        } else {
            L->A = part[0];
            L->K1 = part[1];
            L->M = part[2];
            L->K2 = part[3];
        }
        return TH_OK;
    }
    int perm[TH_MAX_DIMS], p = 0;
    for (int d = 0; d < nd; d++) if (!mask[d]) perm[p++] = d;
    for (int d = 0; d < nd; d++) if (mask[d]) perm[p++] = d;
    th_tensor *v = th_permute(x, nd, perm);
    th_tensor *c = v ? th_contiguous(v) : NULL;
    th_tensor_release(v);
    if (!c) return th_last_status();
    L->hold = c;
    L->base = th__ptr(c);
    return TH_OK;
}

/* ---- running a kernel over a layout --------------------------------- */
#define COL_W 1024     /* columns per task: argmax, cumsum (stack buffers) */
#define RED_COL_W 16384 /* columns per task: reductions (heap accumulators) */

typedef struct {
    const layout *L;
    row_fn row;
    col_fn col;
    const kparam *kp;
    int kop, kind;
    int64_t item, nb, nch, chunk_len;
    char *acc;      /* A * M accumulators */
    char *partial;  /* per-chunk accumulators */
    int64_t a;      /* row being split (rows mode) */
} run_ctx;

static void init_acc(int kop, int kind, void *acc, int64_t n) {
    if (kind == ACC_D) {
        double v = init_d(kop), *p = acc;
        for (int64_t i = 0; i < n; i++) p[i] = v;
    } else {
        int64_t v = init_i(kop), *p = acc;
        for (int64_t i = 0; i < n; i++) p[i] = v;
    }
}

/* acc[i] = comb(acc[i], other[i]) */
static void comb_acc(int kop, int kind, void *acc, const void *other,
                     int64_t n) {
    if (kind == ACC_D) {
        double *p = acc;
        const double *q = other;
        for (int64_t i = 0; i < n; i++) p[i] = comb_d(kop, p[i], q[i]);
    } else {
        int64_t *p = acc;
        const int64_t *q = other;
        for (int64_t i = 0; i < n; i++) p[i] = comb_i(kop, p[i], q[i]);
    }
}

/* Combines nch partial arrays of n accumulators into acc, in order. */
static void comb_partials(const run_ctx *c, int64_t n) {
    for (int64_t i = 0; i < c->nch; i++)
        comb_acc(c->kop, c->kind, c->acc, c->partial + i * n * 8, n);
}

/* rows mode: rows [b, e) */
static void rows_task(int64_t b, int64_t e, void *vc) {
    run_ctx *c = vc;
    int64_t K = c->L->K2;
    c->row(c->L->base + b * K * c->item, e - b, K, c->kp, b,
           c->acc + b * 8);
}

/* rows mode, one long row c->a split in chunks: chunk i -> partial[i] */
static void row_chunks_task(int64_t b, int64_t e, void *vc) {
    run_ctx *c = vc;
    int64_t K = c->L->K2;
    const char *row = c->L->base + c->a * K * c->item;
    for (int64_t i = b; i < e; i++) {
        int64_t k0 = i * c->chunk_len, k1 = TH_MIN(K, k0 + c->chunk_len);
        c->row(row + k0 * c->item, 1, k1 - k0, c->kp, c->a,
               c->partial + i * 8);
    }
}

/* columns mode: rows [k0, k1) of output block t = (a, column block) */
static void col_block(run_ctx *c, int64_t t, int64_t k0, int64_t k1,
                      char *acc) {
    const layout *L = c->L;
    int64_t a = t / c->nb, b0 = (t % c->nb) * RED_COL_W;
    int64_t w = TH_MIN(RED_COL_W, L->M - b0), out0 = a * L->M + b0;
    c->col(L->base + ((a * L->K1 + k0) * L->M + b0) * c->item, k1 - k0,
           L->M * c->item, w, c->kp, out0, acc + out0 * 8);
}

static void cols_task(int64_t b, int64_t e, void *vc) {
    run_ctx *c = vc;
    for (int64_t t = b; t < e; t++) col_block(c, t, 0, c->L->K1, c->acc);
}

/* mixed mode: outputs [o0, o1) over rows [k0, k1) of K1 */
static void mixed_block(run_ctx *c, int64_t o0, int64_t o1, int64_t k0,
                        int64_t k1, char *acc) {
    const layout *L = c->L;
    while (o0 < o1) {
        int64_t a = o0 / L->M, m0 = o0 % L->M;
        int64_t m1 = TH_MIN(L->M, m0 + (o1 - o0));
        for (int64_t k = k0; k < k1; k++)
            c->row(L->base + ((a * L->K1 + k) * L->M + m0) * L->K2 * c->item,
                   m1 - m0, L->K2, c->kp, o0, acc + o0 * 8);
        o0 += m1 - m0;
    }
}

static void mixed_task(int64_t b, int64_t e, void *vc) {
    run_ctx *c = vc;
    mixed_block(c, b, e, 0, c->L->K1, c->acc);
}

/* columns or mixed mode, reduced rows split in chunks over K1 */
static void k1_chunks_task(int64_t b, int64_t e, void *vc) {
    run_ctx *c = vc;
    const layout *L = c->L;
    int64_t n = L->A * L->M;
    for (int64_t i = b; i < e; i++) {
        int64_t k0 = i * c->chunk_len, k1 = TH_MIN(L->K1, k0 + c->chunk_len);
        char *part = c->partial + i * n * 8;
        if (L->K2 == 1)
            for (int64_t t = 0; t < L->A * c->nb; t++)
                col_block(c, t, k0, k1, part);
        else
            mixed_block(c, 0, n, k0, k1, part);
    }
}

/* Splits K1 into chunks with private accumulators, then combines them. */
static int run_k1_chunks(run_ctx *c, int64_t nch) {
    int64_t n = c->L->A * c->L->M;
    c->nch = nch;
    c->chunk_len = (c->L->K1 + nch - 1) / nch;
    c->partial = th__alloc(nch * n * 8);
    if (!c->partial) return th_last_status();
    init_acc(c->kop, c->kind, c->partial, nch * n);
    th_parallel_for(nch, 1, k1_chunks_task, c);
    comb_partials(c, n);
    th__free(c->partial);
    return TH_OK;
}

/* Fewer outputs than this split their reduced elements into chunks of
 * about TH_GRAIN (at most RED_MAX_CHUNKS), whatever the thread count. */
#define RED_FEW 4
#define RED_MAX_CHUNKS 64

/* Fills acc (A * M accumulators of 8 bytes) with the reduction of L. */
static int run_kernel(const layout *L, int kop, const kparam *kp, void *acc) {
    run_ctx c;
    memset(&c, 0, sizeof c);
    c.L = L;
    c.kp = kp;
    c.kop = kop;
    c.kind = acc_kind(L->dtype);
    c.item = th_dtype_itemsize(L->dtype);
    c.acc = acc;
    c.row = row_fns[kop][L->dtype];
    c.col = col_fns[kop][L->dtype];
    int64_t nout = L->A * L->M, K = L->K1 * L->K2;
    init_acc(kop, c.kind, acc, nout);
    if (nout == 0 || K == 0) return TH_OK;
    if (!c.row || !c.col)
        return th__error(TH_ERR_TYPE, "reduction not supported for %s",
                         th_dtype_name(L->dtype));
    /* How the work is split (and so the order of float additions) depends
     * on the shape only, never on the thread count, so results are the
     * same bits on any number of threads. */
    int big = nout * K >= 2 * TH_GRAIN;
    if (L->K1 == 1) { /* rows */
        if (!big || nout >= RED_FEW || K < 2 * TH_GRAIN) {
            th_parallel_for(nout, TH_MAX(1, TH_GRAIN / K), rows_task, &c);
            return TH_OK;
        }
        /* few long rows: split each row across threads */
        c.nch = TH_MIN(RED_MAX_CHUNKS, K / TH_GRAIN);
        c.chunk_len = (K + c.nch - 1) / c.nch;
        c.partial = th__alloc(c.nch * 8);
        if (!c.partial) return th_last_status();
        char *all = c.acc;
        for (c.a = 0; c.a < nout; c.a++) {
            init_acc(kop, c.kind, c.partial, c.nch);
            th_parallel_for(c.nch, 1, row_chunks_task, &c);
            c.acc = all + c.a * 8;
            comb_partials(&c, 1);
            c.acc = all;
        }
        th__free(c.partial);
        return TH_OK;
    }
    if (L->K2 == 1) { /* columns */
        c.nb = (L->M + RED_COL_W - 1) / RED_COL_W;
        int64_t tasks = L->A * c.nb;
        if (!big || tasks >= RED_FEW || L->K1 < 2 * RED_FEW)
            th_parallel_for(tasks, TH_MAX(1, TH_GRAIN / (L->K1 *
                                           TH_MIN(L->M, RED_COL_W))),
                             cols_task, &c);
        else /* few column blocks: split the reduced rows */
            return run_k1_chunks(&c, TH_MIN(TH_MIN(RED_MAX_CHUNKS, L->K1),
                                            nout * K / TH_GRAIN));
        return TH_OK;
    }
    /* mixed */
    if (!big || nout >= RED_FEW || L->K1 < RED_FEW)
        th_parallel_for(nout, TH_MAX(1, TH_GRAIN / K), mixed_task, &c);
    else
        return run_k1_chunks(&c, TH_MIN(TH_MIN(RED_MAX_CHUNKS, L->K1),
                                        nout * K / TH_GRAIN));
    return TH_OK;
}

/* ---- writing results ------------------------------------------------ */
#define FROM_D_f32(v) ((float)(v))
#define FROM_D_f64(v) (v)
#define FROM_D_i8(v) ((int8_t)(int64_t)(v))
#define FROM_D_u8(v) ((uint8_t)(int64_t)(v))
#define FROM_D_i16(v) ((int16_t)(int64_t)(v))
#define FROM_D_i32(v) ((int32_t)(int64_t)(v))
#define FROM_D_i64(v) ((int64_t)(v))
#define FROM_D_b8(v) ((th_bool_t)((v) != 0))
#define FROM_I_f32(v) ((float)(v))
#define FROM_I_f64(v) ((double)(v))
#define FROM_I_i8(v) ((int8_t)(v))
#define FROM_I_u8(v) ((uint8_t)(v))
#define FROM_I_i16(v) ((int16_t)(v))
#define FROM_I_i32(v) ((int32_t)(v))
#define FROM_I_i64(v) (v)
#define FROM_I_b8(v) ((th_bool_t)((v) != 0))

/* Converts n accumulators into the (contiguous) output tensor. */
static void write_acc(th_tensor *out, int kind, const void *acc, int64_t n) {
    char *o = th__ptr(out);
    const double *vd = acc;
    const int64_t *vi = acc;
    int bf = out->dtype == TH_BFLOAT16;
    switch (out->dtype) {
#define WRITE(E, T, S)                                                        \
    case E:                                                                   \
        if (kind == ACC_D)                                                    \
            for (int64_t i = 0; i < n; i++) ((T *)o)[i] = FROM_D_##S(vd[i]);  \
        else                                                                  \
            for (int64_t i = 0; i < n; i++) ((T *)o)[i] = FROM_I_##S(vi[i]);  \
        break;
        TH_FOR_NATIVE_DTYPES(WRITE)
#undef WRITE
    case TH_FLOAT16:
    case TH_BFLOAT16:
        for (int64_t i = 0; i < n; i++) {
            float f = kind == ACC_D ? (float)vd[i] : (float)vi[i];
            ((th_half_t *)o)[i] = bf ? th__float_to_bf16(f)
                                     : th__float_to_half(f);
        }
        break;
    }
}

/* ---- the shared driver ---------------------------------------------- */
typedef struct {
    int mask[TH_MAX_DIMS];
    int out_ndim;
    int64_t out_sizes[TH_MAX_DIMS];
    int64_t M, K;
} plan;

static int make_plan(const th_tensor *a, int ndims, const int *dims,
                     int keepdim, plan *P) {
    if (parse_dims(a, ndims, dims, P->mask)) return th_last_status();
    P->out_ndim = out_shape(a, P->mask, keepdim, P->out_sizes);
    P->M = P->K = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (P->mask[d]) P->K *= a->sizes[d];
        else P->M *= a->sizes[d];
    }
    return TH_OK;
}

/* Casts a for computing, builds the layout and allocates M accumulators.
 * On success the caller frees *acc and the layout. */
static int prepare(const th_tensor *a, const plan *P, int cast_to, layout *L,
                   void **acc) {
    th_tensor *x = compute_copy(a, cast_to);
    if (!x) return th_last_status();
    int rc = make_layout(x, P->mask, L);
    th_tensor_release(x);
    if (rc) return rc;
    *acc = th__alloc(TH_MAX(P->M, 1) * 8);
    if (!*acc) {
        layout_free(L);
        return th_last_status();
    }
    return TH_OK;
}

static th_tensor *finish(const plan *P, int out_dtype, int kind, void *acc,
                         layout *L) {
    th_tensor *out = th_empty(P->out_ndim, P->out_sizes, out_dtype);
    if (out) write_acc(out, kind, acc, P->M);
    th__free(acc);
    layout_free(L);
    return out;
}

/* A single reduction kop of a (cast to cast_to) into out_dtype. */
static th_tensor *simple_reduce(const th_tensor *a, const plan *P, int kop,
                                int cast_to, int out_dtype, double scale) {
    if (P->M == 0) return th_empty(P->out_ndim, P->out_sizes, out_dtype);
    layout L;
    void *acc;
    if (prepare(a, P, cast_to, &L, &acc)) return NULL;
    kparam kp = {0, NULL};
    if (run_kernel(&L, kop, &kp, acc)) {
        th__free(acc);
        layout_free(&L);
        return NULL;
    }
    int kind = acc_kind(L.dtype);
    if (scale != 1.0) { /* mean: kind is ACC_D */
        double *v = acc;
        for (int64_t i = 0; i < P->M; i++) v[i] *= scale;
    }
    return finish(P, out_dtype, kind, acc, &L);
}

static th_tensor *logsumexp(const th_tensor *a, const plan *P, int dtype) {
    if (P->M == 0) return th_empty(P->out_ndim, P->out_sizes, dtype);
    layout L;
    void *acc;
    if (prepare(a, P, dtype, &L, &acc)) return NULL;
    double *m = acc, *s = th__alloc(P->M * 8);
    kparam kp = {0, NULL};
    int rc = s ? run_kernel(&L, K_MAX, &kp, m) : th_last_status();
    if (rc == TH_OK) {
        /* shift by the max, but not by an infinite one (as PyTorch) */
        for (int64_t i = 0; i < P->M; i++)
            if (isinf(m[i])) m[i] = 0;
        kp.shift = m;
        rc = run_kernel(&L, K_SUMEXP, &kp, s);
    }
    if (rc) {
        th__free(s);
        th__free(acc);
        layout_free(&L);
        return NULL;
    }
    for (int64_t i = 0; i < P->M; i++) m[i] = log(s[i]) + m[i];
    th__free(s);
    return finish(P, dtype, ACC_D, acc, &L);
}

th_tensor *th_reduce(int op, const th_tensor *a, int ndims, const int *dims,
                     int keepdim, int dtype) {
    if (op < 0 || op >= TH_NUM_REDUCE_OPS)
        return th__error_null(TH_ERR_VALUE, "invalid reduction op %d", op);
    if (dtype >= TH_NUM_DTYPES)
        return th__error_null(TH_ERR_TYPE, "invalid dtype code %d", dtype);
    const char *name = th__op_name(TH_OP_REDUCE, op);
    int takes_dtype = (th__op_flags(TH_OP_REDUCE, op) & TH_OPF_TAKES_DTYPE) != 0;
    if (dtype >= 0 && !takes_dtype)
        return th__error_null(TH_ERR_TYPE, "%s() got an unexpected keyword "
                              "argument 'dtype'", name);
    plan P;
    if (make_plan(a, ndims, dims, keepdim, &P)) return NULL;
    int in = a->dtype, fl = th_dtype_is_floating(in);
    switch (op) {
    case TH_RED_SUM:
    case TH_RED_PROD:
    case TH_RED_NANSUM: {
        int cd = dtype >= 0 ? dtype : in;
        int od = dtype >= 0 ? dtype : fl ? in : TH_INT64;
        int kop = op == TH_RED_PROD ? K_PROD
                  : op == TH_RED_NANSUM ? K_NANSUM : K_SUM;
        return simple_reduce(a, &P, kop, cd, od, 1.0);
    }
    case TH_RED_MEAN:
        if (dtype >= 0 && !th_dtype_is_floating(dtype))
            return th__error_null(TH_ERR_RUNTIME,
                                  "mean(): could not infer output dtype. "
                                  "Optional dtype must be either a floating "
                                  "point or complex dtype. Got: %s",
                                  dtype_title(dtype));
        if (dtype < 0 && !fl)
            return th__error_null(TH_ERR_RUNTIME,
                                  "mean(): could not infer output dtype. "
                                  "Input dtype must be either a floating "
                                  "point or complex dtype. Got: %s",
                                  dtype_title(in));
        if (dtype < 0) dtype = in;
        /* a float16 result is computed from the float32 values (PyTorch) */
        return simple_reduce(a, &P, K_SUM,
                             th__is_half(dtype) && in != dtype ? TH_FLOAT32
                                                               : dtype,
                             dtype, P.K ? 1.0 / (double)P.K : NAN);
    case TH_RED_AMAX:
    case TH_RED_AMIN:
        if (th_numel(a) == 0) {
            if (!dims || ndims == 0)
                return th__error_null(TH_ERR_RUNTIME,
                                      "%s(): Expected reduction dim to be "
                                      "specified for input.numel() == 0. "
                                      "Specify the reduction dim with the "
                                      "'dim' argument.", name);
            for (int d = 0; d < a->ndim; d++)
                if (P.mask[d] && a->sizes[d] == 0)
                    return th__error_null(TH_ERR_INDEX,
                                          "%s(): Expected reduction dim %d to "
                                          "have non-zero size.", name, d);
        }
        return simple_reduce(a, &P, op == TH_RED_AMAX ? K_MAX : K_MIN, in, in,
                             1.0);
    case TH_RED_ALL:
    case TH_RED_ANY:
        /* uint8 keeps its dtype, as in PyTorch */
        return simple_reduce(a, &P, op == TH_RED_ALL ? K_ALL : K_ANY, in,
                             in == TH_UINT8 ? TH_UINT8 : TH_BOOL, 1.0);
    case TH_RED_COUNT_NONZERO:
        return simple_reduce(a, &P, K_COUNT, in, TH_INT64, 1.0);
    case TH_RED_LOGSUMEXP:
        return logsumexp(a, &P, fl ? in : th_get_default_dtype());
    }
    return NULL;
}

/* ---- var / std ------------------------------------------------------ */
th_tensor *th_var(const th_tensor *a, int ndims, const int *dims,
                  double correction, int keepdim, int take_sqrt) {
    plan P;
    if (make_plan(a, ndims, dims, keepdim, &P)) return NULL;
    if (!th_dtype_is_floating(a->dtype))
        return th__error_null(TH_ERR_RUNTIME, "std and var only support "
                              "floating point and complex dtypes");
    if (P.M == 0) return th_empty(P.out_ndim, P.out_sizes, a->dtype);
    layout L;
    void *acc;
    if (prepare(a, &P, a->dtype, &L, &acc)) return NULL;
    double *mean = acc, *m2 = th__alloc(P.M * 8);
    kparam kp = {0, NULL};
    /* two passes in double: the mean, then squared deviations from it */
    int rc = m2 ? run_kernel(&L, K_SUMD, &kp, mean) : th_last_status();
    if (rc == TH_OK) {
        for (int64_t i = 0; i < P.M; i++) mean[i] /= (double)P.K;
        kp.shift = mean;
        rc = run_kernel(&L, K_SQDEV, &kp, m2);
    }
    if (rc) {
        th__free(m2);
        th__free(acc);
        layout_free(&L);
        return NULL;
    }
    /* as PyTorch: divide by max(0, N - correction), giving inf or nan */
    double n = (double)P.K;
    double div = n > correction ? n - correction : 0.0;
    for (int64_t i = 0; i < P.M; i++) {
        double v = m2[i] / div;
        mean[i] = take_sqrt ? sqrt(v) : v;
    }
    th__free(m2);
    return finish(&P, a->dtype, ACC_D, acc, &L);
}

/* ---- vector norms --------------------------------------------------- */
th_tensor *th_norm(const th_tensor *a, double p, int ndims, const int *dims,
                   int keepdim) {
    plan P;
    if (make_plan(a, ndims, dims, keepdim, &P)) return NULL;
    if (!th_dtype_is_floating(a->dtype))
        return th__error_null(TH_ERR_RUNTIME, "linalg.vector_norm: Expected a "
                              "floating point or complex tensor as input. "
                              "Got %s", dtype_title(a->dtype));
    if ((p < 0 || isinf(p)) && th_numel(a) == 0) {
        /* max/min-like norms have no identity */
        if (!dims || ndims == 0)
            return th__error_null(TH_ERR_RUNTIME, "linalg.vector_norm cannot "
                                  "compute the %g norm on an empty tensor "
                                  "because the operation does not have an "
                                  "identity", p);
        for (int d = 0; d < a->ndim; d++)
            if (P.mask[d] && a->sizes[d] == 0)
                return th__error_null(TH_ERR_RUNTIME, "linalg.vector_norm "
                                      "cannot compute the %g norm on the "
                                      "dimension %d because this dimension "
                                      "is empty and the operation does not "
                                      "have an identity", p, d);
    }
    int kop = p == 2 ? K_SUMSQ : p == 1 ? K_SUMABS : p == 0 ? K_COUNT
              : p == INFINITY ? K_MAXABS : p == -INFINITY ? K_MINABS
              : K_SUMPOW;
    if (P.M == 0) return th_empty(P.out_ndim, P.out_sizes, a->dtype);
    layout L;
    void *acc;
    if (prepare(a, &P, a->dtype, &L, &acc)) return NULL;
    kparam kp = {p, NULL};
    if (run_kernel(&L, kop, &kp, acc)) {
        th__free(acc);
        layout_free(&L);
        return NULL;
    }
    double *v = acc;
    if (kop == K_SUMSQ)
        for (int64_t i = 0; i < P.M; i++) v[i] = sqrt(v[i]);
    else if (kop == K_SUMPOW)
        for (int64_t i = 0; i < P.M; i++) v[i] = pow(v[i], 1.0 / p);
    return finish(&P, a->dtype, ACC_D, acc, &L);
}

/* ---- max/min with indices ------------------------------------------- */
/* Index of the first extreme; a NaN is the extreme and the first one wins
 * (for integers `v != v` is false and folds away).  Rows are scanned in
 * blocks: a vectorised block extreme, then a scalar search of the block
 * only when it holds a better value (rare on long rows).  Columns keep a
 * running (best, index) per column. */
#define ARG_BLOCK 1024
#define ARG_KERNELS(E, T, S, NAME, CMP)                                       \
    static int64_t NAME##_row_##S(const T *x, int64_t n, T *best) {          \
        T b = x[0];                                                           \
        int64_t bi = 0;                                                       \
        for (int64_t i0 = 0; i0 < n && b == b; i0 += ARG_BLOCK) {             \
            int64_t m = TH_MIN(ARG_BLOCK, n - i0);                            \
            T v = v##NAME##_##S(x + i0, m);                                   \
            if (v != v) { /* the first NaN wins */                            \
                int64_t i = 0;                                                \
                while (x[i0 + i] == x[i0 + i]) i++;                           \
                b = x[i0 + i];                                                \
                bi = i0 + i;                                                  \
            } else if (v CMP b) {                                             \
                int64_t i = 0;                                                \
                while (x[i0 + i] != v) i++;                                   \
                b = v;                                                        \
                bi = i0 + i;                                                  \
            }                                                                 \
        }                                                                     \
        *best = b;                                                            \
        return bi;                                                            \
    }                                                                         \
    static void NAME##_col_##S(const T *x, int64_t K, int64_t B, int64_t w,   \
                               T *restrict best, int64_t *restrict idx) {     \
        for (int64_t j = 0; j < w; j++) {                                     \
            best[j] = x[j];                                                   \
            idx[j] = 0;                                                       \
        }                                                                     \
        for (int64_t k = 1; k < K; k++) {                                     \
            const T *row = x + k * B;                                         \
            for (int64_t j = 0; j < w; j++) {                                 \
                T v = row[j], b = best[j];                                    \
                if (v CMP b || (v != v && b == b)) {                          \
                    best[j] = v;                                              \
                    idx[j] = k;                                               \
                }                                                             \
            }                                                                 \
        }                                                                     \
    }                                                                         \
    /* (best, idx) of a later chunk replaces an earlier one if better */     \
    static void NAME##_merge_##S(T *b, int64_t *bi, T v, int64_t vi) {        \
        if (*b != *b) return;                                                 \
        if (v CMP *b || v != v) {                                             \
            *b = v;                                                           \
            *bi = vi;                                                         \
        }                                                                     \
    }

#define ARG_BOTH(E, T, S)                                                     \
    ARG_KERNELS(E, T, S, max, >) ARG_KERNELS(E, T, S, min, <)
TH_FOR_NATIVE_DTYPES(ARG_BOTH)

typedef struct {
    const char *x;
    char *vals;     /* may be NULL (argmax) */
    int64_t *idx;
    int64_t A, K, B, nb, item, chunk_len;
    int dtype, is_max;
    char *pvals;    /* per-chunk partials for a split row */
    int64_t *pidx;
    int64_t a;
} arg_ctx;

/* Rows [b, e) in row mode or blocks in column mode, typed on dtype. */
static void arg_task(int64_t b, int64_t e, void *vc) {
    arg_ctx *c = vc;
    switch (c->dtype) {
#define ARG_CASE(E, T, S)                                                     \
    case E: {                                                                 \
        const T *x = (const T *)c->x;                                         \
        T *vals = (T *)c->vals, tmp[COL_W];                                   \
        for (int64_t t = b; t < e; t++) {                                     \
            if (c->B == 1) {                                                  \
                T v;                                                          \
                c->idx[t] = c->is_max ? max_row_##S(x + t * c->K, c->K, &v)  \
                                      : min_row_##S(x + t * c->K, c->K, &v); \
                if (vals) vals[t] = v;                                        \
            } else {                                                          \
                int64_t a = t / c->nb, b0 = (t % c->nb) * COL_W;              \
                int64_t w = TH_MIN(COL_W, c->B - b0), o = a * c->B + b0;      \
                const T *xs = x + a * c->K * c->B + b0;                       \
                T *vo = vals ? vals + o : tmp;                                \
                if (c->is_max)                                                \
                    max_col_##S(xs, c->K, c->B, w, vo, c->idx + o);          \
                else                                                          \
                    min_col_##S(xs, c->K, c->B, w, vo, c->idx + o);          \
            }                                                                 \
        }                                                                     \
        break;                                                                \
    }
        TH_FOR_NATIVE_DTYPES(ARG_CASE)
#undef ARG_CASE
    }
}

/* chunks [b, e) of the long row c->a */
static void arg_chunk_task(int64_t b, int64_t e, void *vc) {
    arg_ctx *c = vc;
    switch (c->dtype) {
#define ARG_CHUNK(E, T, S)                                                    \
    case E:                                                                   \
        for (int64_t i = b; i < e; i++) {                                     \
            int64_t k0 = i * c->chunk_len;                                    \
            int64_t n = TH_MIN(c->K, k0 + c->chunk_len) - k0;                 \
            const T *x = (const T *)c->x + c->a * c->K + k0;                  \
            T *pv = (T *)c->pvals + i;                                        \
            c->pidx[i] = k0 + (c->is_max ? max_row_##S(x, n, pv)             \
                                         : min_row_##S(x, n, pv));           \
        }                                                                     \
        break;
        TH_FOR_NATIVE_DTYPES(ARG_CHUNK)
#undef ARG_CHUNK
    }
}

static void arg_merge_chunks(arg_ctx *c, int64_t nch) {
    switch (c->dtype) {
#define ARG_MERGE(E, T, S)                                                    \
    case E: {                                                                 \
        T *pv = (T *)c->pvals, best = pv[0];                                  \
        int64_t bi = c->pidx[0];                                              \
        for (int64_t i = 1; i < nch; i++) {                                   \
            if (c->is_max) max_merge_##S(&best, &bi, pv[i], c->pidx[i]);     \
            else min_merge_##S(&best, &bi, pv[i], c->pidx[i]);               \
        }                                                                     \
        c->idx[c->a] = bi;                                                    \
        if (c->vals) ((T *)c->vals)[c->a] = best;                             \
        break;                                                                \
    }
        TH_FOR_NATIVE_DTYPES(ARG_MERGE)
#undef ARG_MERGE
    }
}

/* Extreme values (into vals, compute dtype, may be NULL) and indices of
 * contiguous x seen as (A, K, B), K >= 1. */
static int arg_run(const th_tensor *x, int64_t A, int64_t K, int64_t B,
                   int is_max, char *vals, int64_t *idx) {
    arg_ctx c;
    memset(&c, 0, sizeof c);
    c.x = th__ptr(x);
    c.vals = vals;
    c.idx = idx;
    c.A = A;
    c.K = K;
    c.B = B;
    c.dtype = x->dtype;
    c.is_max = is_max;
    c.item = th_dtype_itemsize(x->dtype);
    int nt = th_get_num_threads();
    if (B > 1) {
        c.nb = (B + COL_W - 1) / COL_W;
        th_parallel_for(A * c.nb, TH_MAX(1, TH_GRAIN / (K * TH_MIN(B, COL_W))),
                         arg_task, &c);
        return TH_OK;
    }
    if (nt == 1 || A >= nt || K < 2 * TH_GRAIN) {
        th_parallel_for(A, TH_MAX(1, TH_GRAIN / K), arg_task, &c);
        return TH_OK;
    }
    int64_t nch = TH_MIN(nt, K / TH_GRAIN);
    c.chunk_len = (K + nch - 1) / nch;
    c.pvals = th__alloc(nch * 8);
    c.pidx = th__alloc(nch * 8);
    if (!c.pvals || !c.pidx) {
        th__free(c.pvals);
        th__free(c.pidx);
        return th_last_status();
    }
    for (c.a = 0; c.a < A; c.a++) {
        th_parallel_for(nch, 1, arg_chunk_task, &c);
        arg_merge_chunks(&c, nch);
    }
    th__free(c.pvals);
    th__free(c.pidx);
    return TH_OK;
}

/* Contiguous compute copy of a and its (A, K, B) split around dim. */
static th_tensor *split_dim(const th_tensor *a, int dim, int cast_to,
                            int64_t *A, int64_t *K, int64_t *B) {
    *A = *K = *B = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (d < dim) *A *= a->sizes[d];
        else if (d == dim) *K = a->sizes[d];
        else *B *= a->sizes[d];
    }
    th_tensor *x = compute_copy(a, cast_to);
    if (!x) return NULL;
    th_tensor *c = th_contiguous(x);
    th_tensor_release(x);
    return c;
}

/* Shared by th_minmax_dim and th_argminmax (want_values = 0). */
static int minmax_impl(const th_tensor *a, int dim, int keepdim, int is_max,
                       int want_values, const char *name, th_tensor **values,
                       th_tensor **indices) {
    int flat = dim < -TH_MAX(a->ndim, 1);
    const th_tensor *src = a;
    th_tensor *flat_view = NULL;
    int64_t osz[TH_MAX_DIMS];
    int ondim = 0;
    if (flat) {
        if (th_numel(a) == 0)
            return th__error(TH_ERR_INDEX, "%s(): Expected reduction dim to be "
                             "specified for input.numel() == 0.", name);
        int64_t n = th_numel(a);
        flat_view = th_reshape(a, 1, &n);
        if (!flat_view) return th_last_status();
        src = flat_view;
        dim = 0;
        if (keepdim)
            for (int d = 0; d < a->ndim; d++) osz[ondim++] = 1;
    } else {
        if ((dim = th__wrap_dim(dim, a->ndim)) < 0) return th_last_status();
        if (a->ndim > 0 && a->sizes[dim] == 0)
            return th__error(TH_ERR_INDEX, "%s(): Expected reduction dim %d to "
                             "have non-zero size.", name, dim);
        for (int d = 0; d < a->ndim; d++) {
            if (d != dim) osz[ondim++] = a->sizes[d];
            else if (keepdim) osz[ondim++] = 1;
        }
    }
    int64_t A, K, B;
    th_tensor *x = NULL, *v = NULL, *vh = NULL;
    th_tensor *ix = th_empty(ondim, osz, TH_INT64);
    int rc = ix ? TH_OK : th_last_status();
    if (rc == TH_OK && th_numel(ix) > 0) {
        x = split_dim(src, src->ndim ? dim : 0, src->dtype, &A, &K, &B);
        if (!x) rc = th_last_status();
        if (rc == TH_OK && want_values) {
            v = th_empty(ondim, osz, x->dtype);
            if (!v) rc = th_last_status();
        }
        if (rc == TH_OK)
            rc = arg_run(x, A, K, B, is_max, v ? th__ptr(v) : NULL,
                         (int64_t *)th__ptr(ix));
    } else if (rc == TH_OK && want_values) {
        v = th_empty(ondim, osz, a->dtype);
        if (!v) rc = th_last_status();
    }
    if (rc == TH_OK && v && v->dtype != a->dtype) {
        vh = th_to_dtype(v, a->dtype); /* back to float16/bfloat16 */
        if (!vh) rc = th_last_status();
        th_tensor_release(v);
        v = vh;
    }
    th_tensor_release(x);
    th_tensor_release(flat_view);
    if (rc) {
        th_tensor_release(v);
        th_tensor_release(ix);
        return rc;
    }
    if (want_values) *values = v;
    *indices = ix;
    return TH_OK;
}

int th_minmax_dim(const th_tensor *a, int dim, int keepdim, int is_max,
                  th_tensor **values, th_tensor **indices) {
    if (!values || !indices)
        return th__error(TH_ERR_VALUE, "%s(): values and indices must not be "
                         "NULL", is_max ? "max" : "min");
    if (th__wrap_dim(dim, a->ndim) < 0) return th_last_status();
    return minmax_impl(a, dim, keepdim, is_max, 1, is_max ? "max" : "min",
                       values, indices);
}

th_tensor *th_argminmax(const th_tensor *a, int dim, int keepdim, int is_max) {
    const char *name = is_max ? "argmax" : "argmin";
    if (a->dtype == TH_BOOL)
        return th__error_null(TH_ERR_RUNTIME, "%s(): does not support bool "
                              "input", name);
    th_tensor *idx = NULL;
    if (minmax_impl(a, dim, keepdim, is_max, 0, name, NULL, &idx)) return NULL;
    return idx;
}

/* ---- cumsum / cumprod ----------------------------------------------- */
/* Tasks: rows a (B == 1) or (a, column block).  Floats accumulate in
 * double, integers in int64 and write int64. */
#define CUM_KERNEL(NAME, TI, TO, TA, LOAD, INIT, OPEQ)                        \
    static void NAME(const char *xp, char *op, int64_t t0, int64_t t1,        \
                     int64_t K, int64_t B, int64_t nb) {                     \
        const TI *x = (const TI *)xp;                                         \
        TO *o = (TO *)op;                                                     \
        TA acc[COL_W];                                                        \
        for (int64_t t = t0; t < t1; t++) {                                   \
            int64_t a = t / nb, b0 = (t % nb) * COL_W;                        \
            int64_t w = TH_MIN(COL_W, B - b0), base = a * K * B + b0;         \
            for (int64_t j = 0; j < w; j++) acc[j] = INIT;                    \
            for (int64_t k = 0; k < K; k++) {                                 \
                const TI *xr = x + base + k * B;                              \
                TO *orow = o + base + k * B;                                  \
                for (int64_t j = 0; j < w; j++) {                             \
                    acc[j] OPEQ LOAD(xr[j]);                                  \
                    orow[j] = (TO)acc[j];                                     \
                }                                                             \
            }                                                                 \
        }                                                                     \
    }

#define LOAD_D(v) ((double)(v))
#define LOAD_U(v) ((uint64_t)(int64_t)(v))
#define CUM_FLOAT(E, T, S)                                                    \
    CUM_KERNEL(cumsum_##S, T, T, double, LOAD_D, 0.0, +=)                     \
    CUM_KERNEL(cumprod_##S, T, T, double, LOAD_D, 1.0, *=)
#define CUM_INT(E, T, S)                                                      \
    CUM_KERNEL(cumsum_##S, T, int64_t, uint64_t, LOAD_U, 0, +=)               \
    CUM_KERNEL(cumprod_##S, T, int64_t, uint64_t, LOAD_U, 1, *=)
TH_FOR_FLOAT_DTYPES(CUM_FLOAT)
TH_FOR_INT_DTYPES(CUM_INT)
CUM_INT(TH_BOOL, th_bool_t, b8)
/* float16/bfloat16 accumulate in float, as PyTorch (overflows alike) */
CUM_KERNEL(cumsum_half, float, float, float, LOAD_D, 0.0f, +=)
CUM_KERNEL(cumprod_half, float, float, float, LOAD_D, 1.0f, *=)

typedef void (*cum_fn)(const char *, char *, int64_t, int64_t, int64_t,
                       int64_t, int64_t);
#define CUM_ENTRY(E, T, S) [E] = {cumsum_##S, cumprod_##S},
static const cum_fn cum_fns[TH_NUM_DTYPES][2] = {
    TH_FOR_NATIVE_DTYPES(CUM_ENTRY)};

typedef struct {
    cum_fn fn;
    const char *x;
    char *o;
    int64_t K, B, nb;
} cum_ctx;

static void cum_task(int64_t b, int64_t e, void *vc) {
    const cum_ctx *c = vc;
    c->fn(c->x, c->o, b, e, c->K, c->B, c->nb);
}

static th_tensor *cumulative(const th_tensor *a, int dim, int dtype,
                             int is_prod) {
    const char *name = is_prod ? "cumprod" : "cumsum";
    if (dtype >= TH_NUM_DTYPES)
        return th__error_null(TH_ERR_TYPE, "invalid dtype code %d", dtype);
    if ((dim = th__wrap_dim(dim, a->ndim)) < 0) return NULL;
    if (dtype == TH_BOOL)
        return th__error_null(TH_ERR_NOT_IMPLEMENTED, "\"%s_out_cpu\" not "
                              "implemented for 'Bool'", name);
    int cd = dtype >= 0 ? dtype : a->dtype;
    int od = dtype >= 0 ? dtype : th_dtype_is_floating(a->dtype) ? a->dtype
                                                                 : TH_INT64;
    if (th_numel(a) == 0) return th_empty(a->ndim, a->sizes, od);
    int64_t A, K, B;
    th_tensor *x = split_dim(a, dim, cd, &A, &K, &B);
    if (!x) return NULL;
    int ct = x->dtype; /* compute dtype: integers produce int64 */
    th_tensor *o = th_empty(a->ndim, a->sizes,
                            th_dtype_is_floating(ct) ? ct : TH_INT64);
    if (!o) {
        th_tensor_release(x);
        return NULL;
    }
    cum_fn fn = cum_fns[ct][is_prod];
    if (th__is_half(cd)) fn = is_prod ? cumprod_half : cumsum_half;
    cum_ctx c = {fn, th__ptr(x), th__ptr(o), K, B, (B + COL_W - 1) / COL_W};
    th_parallel_for(A * c.nb, TH_MAX(1, TH_GRAIN / (K * TH_MIN(B, COL_W))),
                     cum_task, &c);
    th_tensor_release(x);
    if (o->dtype == od) return o;
    th_tensor *r = th_to_dtype(o, od);
    th_tensor_release(o);
    return r;
}

th_tensor *th_cumsum(const th_tensor *a, int dim, int dtype) {
    return cumulative(a, dim, dtype, 0);
}

th_tensor *th_cumprod(const th_tensor *a, int dim, int dtype) {
    return cumulative(a, dim, dtype, 1);
}
