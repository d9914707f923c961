/* Reduction kernels: the row and column kernels of each internal op and
 * dtype (see reduce.c for how they are run) and their tables. */
#include "reduce_internal.h"

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

const row_fn th__red_row_fns[K_NUM][TH_NUM_DTYPES] = {
    TH_FOR_FLOAT_DTYPES(F_ROWS) TH_FOR_INT_DTYPES(I_ROWS)
    I_ROWS(TH_BOOL, th_bool_t, b8)};
const col_fn th__red_col_fns[K_NUM][TH_NUM_DTYPES] = {
    TH_FOR_FLOAT_DTYPES(F_COLS) TH_FOR_INT_DTYPES(I_COLS)
    I_COLS(TH_BOOL, th_bool_t, b8)};
