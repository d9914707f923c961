/* softmax and log_softmax along any dim, numerically stable (max
 * subtracted); the tensor is seen as (outer, n, inner), and its
 * outer * inner lines of n run on libTH's thread pool.  float32 over the
 * last dim (inner == 1, the classifier case) has its own vectorized rows;
 * the other cases use libm's exp in double. */
#include <math.h>

#include "thnn_internal.h"
#include "vexp.h"

/* one call's data: fwd y = f(x); bwd gx from gy and y */
typedef struct softmax_ctx {
    void *out;            /* y, or gx */
    const void *in, *gy;  /* x, or y */
    int64_t n, inner;
    int log_mode;
} softmax_ctx;

#define DEFINE_SOFTMAX(T)                                                      \
    static void softmax_fwd_##T(int64_t l0, int64_t l1, void *ctx) {           \
        const softmax_ctx *c = ctx;                                            \
        T *y = c->out;                                                         \
        const T *x = c->in;                                                    \
        const int64_t n = c->n, inner = c->inner;                              \
        const int log_mode = c->log_mode;                                      \
        for (int64_t oi = l0; oi < l1; oi++) {                                 \
            const int64_t o = oi / inner, i = oi % inner;                      \
            const T *xp = x + o * n * inner + i;                               \
            T *yp = y + o * n * inner + i;                                     \
            T m = -INFINITY;                                                   \
            for (int64_t k = 0; k < n; k++)                                    \
                if (xp[k * inner] > m || isnan(xp[k * inner])) m = xp[k * inner]; \
            if (isinf(m) && m < 0) m = 0;                                      \
            double s = 0;                                                      \
            for (int64_t k = 0; k < n; k++) s += exp((double)(xp[k * inner] - m)); \
            if (log_mode) {                                                    \
                const T ls = (T)log(s);                                        \
                for (int64_t k = 0; k < n; k++)                                \
                    yp[k * inner] = xp[k * inner] - m - ls;                    \
            } else {                                                           \
                const double r = 1.0 / s;                                      \
                for (int64_t k = 0; k < n; k++)                                \
                    yp[k * inner] = (T)(exp((double)(xp[k * inner] - m)) * r); \
            }                                                                  \
        }                                                                      \
    }                                                                          \
    static void softmax_bwd_##T(int64_t l0, int64_t l1, void *ctx) {           \
        const softmax_ctx *c = ctx;                                            \
        T *gx = c->out;                                                        \
        const T *y = c->in, *gy = c->gy;                                       \
        const int64_t n = c->n, inner = c->inner;                              \
        const int log_mode = c->log_mode;                                      \
        for (int64_t oi = l0; oi < l1; oi++) {                                 \
            const int64_t base = (oi / inner) * n * inner + oi % inner;        \
            double s = 0;                                                      \
            for (int64_t k = 0; k < n; k++)                                    \
                s += log_mode ? (double)gy[base + k * inner]                   \
                              : (double)gy[base + k * inner] * y[base + k * inner]; \
            for (int64_t k = 0; k < n; k++) {                                  \
                const int64_t j = base + k * inner;                            \
                gx[j] = log_mode ? (T)(gy[j] - exp((double)y[j]) * s)          \
                                 : (T)(y[j] * (gy[j] - s));                    \
            }                                                                  \
        }                                                                      \
    }
DEFINE_SOFTMAX(float)
DEFINE_SOFTMAX(double)


/* float32 rows over the last dim: max and exp in float (thnn__exp_f),
 * sums in double; each row is done by one thread, so results do not
 * depend on the thread count. */
THNN_VEC_CLONES static void softmax_fwd_rows_f(int64_t r0, int64_t r1, void *ctx) {
    const softmax_ctx *c = ctx;
    const int64_t n = c->n;
    for (int64_t r = r0; r < r1; r++) {
        const float *x = (const float *)c->in + r * n;
        float *y = (float *)c->out + r * n;
        float m = -INFINITY;
        int nan = 0;
#pragma omp simd reduction(max : m) reduction(| : nan)
        for (int64_t k = 0; k < n; k++) {
            m = x[k] > m ? x[k] : m;
            nan |= x[k] != x[k];
        }
        if (nan) m = NAN;
        else if (m == -INFINITY) m = 0; /* a row all -inf then gives NaN */
        double s = 0;
        if (c->log_mode) {
            for (int64_t b = 0; b < n; b += 1024) { /* float partial sums of <= 1024 terms */
                const int64_t e = b + 1024 < n ? b + 1024 : n;
                float fs = 0;
#pragma omp simd reduction(+ : fs)
                for (int64_t k = b; k < e; k++) fs += thnn__exp_f(x[k] - m);
                s += fs;
            }
            const float ls = (float)log(s);
            for (int64_t k = 0; k < n; k++) y[k] = x[k] - m - ls;
        } else {
            /* y holds exp(x - m) until scaled */
#pragma omp simd reduction(+ : s)
            for (int64_t k = 0; k < n; k++) {
                const float e = thnn__exp_f(x[k] - m);
                y[k] = e;
                s += (double)e;
            }
            const float inv = (float)(1.0 / s);
            for (int64_t k = 0; k < n; k++) y[k] *= inv;
        }
    }
}

THNN_VEC_CLONES static void softmax_bwd_rows_f(int64_t r0, int64_t r1, void *ctx) {
    const softmax_ctx *c = ctx;
    const int64_t n = c->n;
    for (int64_t r = r0; r < r1; r++) {
        const float *y = (const float *)c->in + r * n, *gy = (const float *)c->gy + r * n;
        float *gx = (float *)c->out + r * n;
        double s = 0;
        if (c->log_mode) {
#pragma omp simd reduction(+ : s)
            for (int64_t k = 0; k < n; k++) s += (double)gy[k];
            const float sf = (float)s;
            for (int64_t k = 0; k < n; k++) gx[k] = gy[k] - thnn__exp_f(y[k]) * sf;
        } else {
#pragma omp simd reduction(+ : s)
            for (int64_t k = 0; k < n; k++) s += (double)gy[k] * (double)y[k];
            const float sf = (float)s;
            for (int64_t k = 0; k < n; k++) gx[k] = y[k] * (gy[k] - sf);
        }
    }
}

static int split(const char *fn, const th_tensor *t, int dim, int64_t *outer,
                 int64_t *n, int64_t *inner) {
    int nd = t->ndim > 0 ? t->ndim : 1;
    if (dim < -nd || dim >= nd)
        return thnn__error(TH_ERR_INDEX, "%s: Dimension out of range (expected "
                           "to be in range of [%d, %d], but got %d)", fn, -nd,
                           nd - 1, dim);
    if (dim < 0) dim += nd;
    *outer = 1; *inner = 1; *n = t->ndim ? t->sizes[dim] : 1;
    for (int i = 0; i < dim; i++) *outer *= t->sizes[i];
    for (int i = dim + 1; i < t->ndim; i++) *inner *= t->sizes[i];
    return TH_OK;
}

static int forward(const char *fn, th_tensor *output, const th_tensor *input,
                   int dim, int log_mode) {
    int64_t outer = 1, n = 1, inner = 1;
    int rc;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = split(fn, input, dim, &outer, &n, &inner))) return rc;
    if ((rc = thnn__check_like(fn, "output", output, input))) return rc;
    th_tensor *x = thnn__contig(input);
    if (!x) return thnn_last_status();
    softmax_ctx c = {thnn__data(output), thnn__data(x), NULL, n, inner, log_mode};
    th_parallel_for(outer * inner, thnn__grain(n),
                    x->dtype == TH_FLOAT64 ? softmax_fwd_double
                    : inner == 1 ? softmax_fwd_rows_f : softmax_fwd_float, &c);
    th_tensor_release(x);
    return TH_OK;
}

static int backward(const char *fn, th_tensor *grad_input,
                    const th_tensor *grad_output, const th_tensor *output,
                    int dim, int log_mode) {
    int64_t outer = 1, n = 1, inner = 1;
    int rc;
    char a[256], b[256];
    if ((rc = thnn__check_float(fn, "output", output))) return rc;
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    if ((rc = split(fn, output, dim, &outer, &n, &inner))) return rc;
    int ok = grad_output->ndim == output->ndim && grad_output->dtype == output->dtype;
    for (int i = 0; ok && i < output->ndim; i++) ok = grad_output->sizes[i] == output->sizes[i];
    if (!ok)
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output %s does not match "
                           "output %s", fn, thnn__shape(grad_output, a),
                           thnn__shape(output, b));
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, output))) return rc;
    th_tensor *gy = thnn__contig(grad_output), *y = thnn__contig(output);
    if (!gy || !y) { thnn__release(gy); thnn__release(y); return thnn_last_status(); }
    softmax_ctx c = {thnn__data(grad_input), thnn__data(y), thnn__data(gy), n, inner, log_mode};
    th_parallel_for(outer * inner, thnn__grain(n),
                    y->dtype == TH_FLOAT64 ? softmax_bwd_double
                    : inner == 1 ? softmax_bwd_rows_f : softmax_bwd_float, &c);
    th_tensor_release(gy); th_tensor_release(y);
    return TH_OK;
}

THNN_API int thnn_softmax_forward(th_tensor *output, const th_tensor *input, int dim) {
    return forward("softmax", output, input, dim, 0);
}
THNN_API int thnn_log_softmax_forward(th_tensor *output, const th_tensor *input, int dim) {
    return forward("log_softmax", output, input, dim, 1);
}
THNN_API int thnn_softmax_backward_input(th_tensor *grad_input,
                                         const th_tensor *grad_output,
                                         const th_tensor *output, int dim) {
    return backward("softmax_backward_input", grad_input, grad_output, output, dim, 0);
}
THNN_API int thnn_log_softmax_backward_input(th_tensor *grad_input,
                                             const th_tensor *grad_output,
                                             const th_tensor *output, int dim) {
    return backward("log_softmax_backward_input", grad_input, grad_output, output, dim, 1);
}
