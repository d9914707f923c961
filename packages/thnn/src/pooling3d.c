/* max_pool3d (with indices, dilation, ceil_mode) and avg_pool3d
 * (ceil_mode, count_include_pad, divisor_override).  Volumes (n, c) are
 * independent: they run on libTH's thread pool. */
#include <math.h>

#include "max_pool_grad.h"

typedef struct pool3d_geom {
    int64_t planes;
    int64_t in[3], out[3];           /* (D, H, W), (OD, OH, OW) */
    int64_t k[3], s[3], p[3], dl[3]; /* kernel, stride, padding, dilation */
} pool3d_geom;

static int pool3d_geometry(const char *fn, const th_tensor *input,
                           const int64_t *kernel, const int64_t *stride,
                           const int64_t *padding, const int64_t *dilation,
                           int ceil_mode, pool3d_geom *g) {
    char a[256];
    int rc = thnn__check_float(fn, "input", input);
    if (rc) return rc;
    if (!kernel || !stride || !padding)
        return thnn__error(TH_ERR_VALUE, "%s: kernel, stride and padding must "
                           "not be NULL", fn);
    const int d = input->ndim;
    if (d != 4 && d != 5)
        return thnn__error(TH_ERR_RUNTIME, "%s: Expected 4D or 5D (batch mode) "
                           "tensor for input, but got: %s", fn, thnn__shape(input, a));
    for (int i = d - 4; i < d; i++)
        if (input->sizes[i] < 1)
            return thnn__error(TH_ERR_RUNTIME, "%s: Expected input's non-batch "
                               "dimensions to have positive length, but input has a "
                               "shape of %s and non-batch dimension %d has length zero!",
                               fn, thnn__shape(input, a), i);
    g->planes = input->sizes[0];
    if (d == 5 && thnn__mul_ovf(input->sizes[0], input->sizes[1], &g->planes))
        return thnn__size_overflow(fn, "the number of planes");
    for (int i = 0; i < 3; i++) {
        g->in[i] = input->sizes[d - 3 + i];
        g->k[i] = kernel[i];
        g->s[i] = stride[i];
        g->p[i] = padding[i];
        g->dl[i] = dilation ? dilation[i] : 1;
    }
    for (int i = 0; i < 3; i++)
        if (g->k[i] >= 1 && g->p[i] > g->k[i] / 2) /* pad * 2 > kernel */
            return thnn__error(TH_ERR_RUNTIME, "%s: pad should be at most half of "
                               "kernel size, but got padding [%lld, %lld, %lld] and "
                               "kernel_size [%lld, %lld, %lld]", fn,
                               (long long)g->p[0], (long long)g->p[1], (long long)g->p[2],
                               (long long)g->k[0], (long long)g->k[1], (long long)g->k[2]);
    for (int i = 0; i < 3; i++) {
        g->out[i] = thnn_window_output_size(g->in[i], g->k[i], g->s[i], g->p[i],
                                            g->dl[i], ceil_mode);
        if (g->out[i] < 0) return thnn_last_status();
    }
    return TH_OK;
}

static void out_shape(const th_tensor *input, const pool3d_geom *g, int64_t *s) {
    const int d = input->ndim;
    for (int i = 0; i < d - 3; i++) s[i] = input->sizes[i];
    for (int i = 0; i < 3; i++) s[d - 3 + i] = g->out[i];
}

/* the window of output (od, oh, ow) for average pooling, clipped to the
 * input in [lo, hi); returns its divisor (0: the window is empty), a double
 * since a huge kernel's padded volume overflows int64 */
static inline double avg_window(const pool3d_geom *g, const int64_t *o,
                                int count_include_pad, int64_t divisor_override,
                                int64_t *lo, int64_t *hi) {
    double padded = 1, inside = 1;
    for (int i = 0; i < 3; i++) {
        int64_t start = o[i] * g->s[i] - g->p[i], end = start + g->k[i];
        if (end > g->in[i] + g->p[i]) end = g->in[i] + g->p[i];
        padded *= (double)(end - start);
        lo[i] = start < 0 ? 0 : start;
        hi[i] = end > g->in[i] ? g->in[i] : end;
        if (hi[i] <= lo[i]) return 0;
        inside *= (double)(hi[i] - lo[i]);
    }
    if (divisor_override) return (double)divisor_override;
    return count_include_pad ? padded : inside;
}

/* one call's data and geometry, for the per-volume range functions */
typedef struct pool3d_ctx {
    void *out;         /* output, or grad_input (written) in the backward */
    int64_t *ind;      /* max indices */
    const void *x;     /* input, or grad_output in the backward */
    const pool3d_geom *g;
    int cip;           /* count_include_pad */
    int64_t divisor_override;
} pool3d_ctx;

/* unpacks a pool3d_ctx into the loops' names */
#define POOL3D_LOCALS(T)                                                       \
    const pool3d_ctx *c = ctx;                                                 \
    const pool3d_geom *g = c->g;                                               \
    const int cip = c->cip;                                                    \
    const int64_t divisor_override = c->divisor_override;                      \
    const int64_t vol = g->in[0] * g->in[1] * g->in[2];                        \
    const int64_t ovol = g->out[0] * g->out[1] * g->out[2];                    \
    (void)cip; (void)divisor_override

#define DEFINE_POOL3D(T)                                                       \
    static void maxpool3d_##T(int64_t p0, int64_t p1, void *ctx) {             \
        POOL3D_LOCALS(T);                                                      \
        T *out = c->out;                                                       \
        int64_t *ind = c->ind;                                                 \
        const T *x = c->x;                                                     \
        for (int64_t p = p0; p < p1; p++) {                                    \
            const T *xp = x + p * vol;                                         \
            for (int64_t oi = 0; oi < ovol; oi++) {                            \
                const int64_t o[3] = {oi / (g->out[1] * g->out[2]),            \
                                      oi / g->out[2] % g->out[1],              \
                                      oi % g->out[2]};                         \
                T best = -INFINITY;                                            \
                int64_t bi = -1;                                               \
                for (int64_t i = 0; i < g->k[0]; i++) {                        \
                    const int64_t id = o[0] * g->s[0] - g->p[0] + i * g->dl[0];\
                    if (id < 0 || id >= g->in[0]) continue;                    \
                    for (int64_t j = 0; j < g->k[1]; j++) {                    \
                        const int64_t ih = o[1] * g->s[1] - g->p[1] + j * g->dl[1]; \
                        if (ih < 0 || ih >= g->in[1]) continue;                \
                        for (int64_t l = 0; l < g->k[2]; l++) {                \
                            const int64_t iw = o[2] * g->s[2] - g->p[2] + l * g->dl[2]; \
                            if (iw < 0 || iw >= g->in[2]) continue;            \
                            const int64_t at = (id * g->in[1] + ih) * g->in[2] + iw; \
                            const T v = xp[at];                                \
                            if (bi < 0 || v > best || isnan(v)) {              \
                                best = v;                                      \
                                bi = at;                                       \
                                if (isnan(v)) goto found_##T; /* NaN wins */   \
                            }                                                  \
                        }                                                      \
                    }                                                          \
                }                                                              \
            found_##T:                                                         \
                out[p * ovol + oi] = best;                                     \
                ind[p * ovol + oi] = bi;                                       \
            }                                                                  \
        }                                                                      \
    }                                                                          \
    static void avgpool3d_##T(int64_t p0, int64_t p1, void *ctx) {             \
        POOL3D_LOCALS(T);                                                      \
        T *out = c->out;                                                       \
        const T *x = c->x;                                                     \
        for (int64_t p = p0; p < p1; p++) {                                    \
            const T *xp = x + p * vol;                                         \
            for (int64_t oi = 0; oi < ovol; oi++) {                            \
                const int64_t o[3] = {oi / (g->out[1] * g->out[2]),            \
                                      oi / g->out[2] % g->out[1],              \
                                      oi % g->out[2]};                         \
                int64_t lo[3], hi[3];                                          \
                const double n = avg_window(g, o, cip, divisor_override, lo, hi);  \
                T s = 0;                                                       \
                if (n)                                                         \
                    for (int64_t id = lo[0]; id < hi[0]; id++)                 \
                        for (int64_t ih = lo[1]; ih < hi[1]; ih++)             \
                            for (int64_t iw = lo[2]; iw < hi[2]; iw++)         \
                                s += xp[(id * g->in[1] + ih) * g->in[2] + iw]; \
                out[p * ovol + oi] = n ? s / (T)n : 0;                         \
            }                                                                  \
        }                                                                      \
    }                                                                          \
    /* gin (zeroed) += gout spread evenly over each window */                  \
    static void avgpool3d_bwd_##T(int64_t p0, int64_t p1, void *ctx) {         \
        POOL3D_LOCALS(T);                                                      \
        T *gin = c->out;                                                       \
        const T *gout = c->x;                                                  \
        for (int64_t p = p0; p < p1; p++) {                                    \
            T *gp = gin + p * vol;                                             \
            for (int64_t oi = 0; oi < ovol; oi++) {                            \
                const int64_t o[3] = {oi / (g->out[1] * g->out[2]),            \
                                      oi / g->out[2] % g->out[1],              \
                                      oi % g->out[2]};                         \
                int64_t lo[3], hi[3];                                          \
                const double n = avg_window(g, o, cip, divisor_override, lo, hi);  \
                if (!n) continue;                                              \
                const T v = gout[p * ovol + oi] / (T)n;                        \
                for (int64_t id = lo[0]; id < hi[0]; id++)                     \
                    for (int64_t ih = lo[1]; ih < hi[1]; ih++)                 \
                        for (int64_t iw = lo[2]; iw < hi[2]; iw++)             \
                            gp[(id * g->in[1] + ih) * g->in[2] + iw] += v;     \
            }                                                                  \
        }                                                                      \
    }
DEFINE_POOL3D(float)
DEFINE_POOL3D(double)

/* runs a pooling loop over the volumes: each costs a window per output */
static void pool3d_run(pool3d_ctx *c, int dtype, th_range_fn f32, th_range_fn f64) {
    const pool3d_geom *g = c->g;
    /* capped: a huge kernel's window count overflows int64 */
    const int64_t cost = thnn__work(thnn__work(g->out[0] * g->out[1], g->out[2]),
                                    thnn__work(g->k[0] * g->k[1], g->k[2]));
    th_parallel_for(g->planes, thnn__grain(cost), dtype == TH_FLOAT32 ? f32 : f64, c);
}

THNN_API int thnn_max_pool3d_forward(th_tensor *output, th_tensor *indices,
                                     const th_tensor *input,
                                     const int64_t *kernel,
                                     const int64_t *stride,
                                     const int64_t *padding,
                                     const int64_t *dilation, int ceil_mode) {
    static const char fn[] = "max_pool3d";
    pool3d_geom g;
    int64_t os[5];
    int rc;
    if (!dilation)
        return thnn__error(TH_ERR_VALUE, "%s: dilation must not be NULL", fn);
    if ((rc = pool3d_geometry(fn, input, kernel, stride, padding, dilation, ceil_mode, &g)))
        return rc;
    out_shape(input, &g, os);
    if ((rc = thnn__check_out(fn, "output", output, input->ndim, os, input->dtype))) return rc;
    if ((rc = thnn__check_out(fn, "indices", indices, input->ndim, os, TH_INT64))) return rc;
    th_tensor *x = thnn__contig(input);
    if (!x) return thnn_last_status();
    pool3d_ctx c = {.out = thnn__data(output), .ind = thnn__data(indices),
                    .x = thnn__data(x), .g = &g};
    pool3d_run(&c, x->dtype, maxpool3d_float, maxpool3d_double);
    thnn__release(x);
    return TH_OK;
}

THNN_API int thnn_max_pool3d_backward_input(th_tensor *grad_input,
                                            const th_tensor *grad_output,
                                            const th_tensor *indices) {
    return thnn__max_pool_backward("max_pool3d_backward_input", grad_input,
                                   grad_output, indices, 3);
}

THNN_API int thnn_avg_pool3d_forward(th_tensor *output, const th_tensor *input,
                                     const int64_t *kernel,
                                     const int64_t *stride,
                                     const int64_t *padding, int ceil_mode,
                                     int count_include_pad,
                                     int64_t divisor_override) {
    static const char fn[] = "avg_pool3d";
    pool3d_geom g;
    int64_t os[5];
    int rc = pool3d_geometry(fn, input, kernel, stride, padding, NULL, ceil_mode, &g);
    if (rc) return rc;
    out_shape(input, &g, os);
    if ((rc = thnn__check_out(fn, "output", output, input->ndim, os, input->dtype))) return rc;
    th_tensor *x = thnn__contig(input);
    if (!x) return thnn_last_status();
    pool3d_ctx c = {.out = thnn__data(output), .x = thnn__data(x), .g = &g,
                    .cip = count_include_pad, .divisor_override = divisor_override};
    pool3d_run(&c, x->dtype, avgpool3d_float, avgpool3d_double);
    thnn__release(x);
    return TH_OK;
}

THNN_API int thnn_avg_pool3d_backward_input(th_tensor *grad_input,
                                            const th_tensor *grad_output,
                                            const int64_t *kernel,
                                            const int64_t *stride,
                                            const int64_t *padding,
                                            int ceil_mode,
                                            int count_include_pad,
                                            int64_t divisor_override) {
    static const char fn[] = "avg_pool3d_backward_input";
    pool3d_geom g;
    int64_t os[5];
    int rc;
    if ((rc = thnn__check_float(fn, "grad_input", grad_input))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, grad_input))) return rc;
    if ((rc = pool3d_geometry(fn, grad_input, kernel, stride, padding, NULL, ceil_mode, &g)))
        return rc;
    out_shape(grad_input, &g, os);
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    int ok = grad_output->ndim == grad_input->ndim;
    for (int i = 0; ok && i < grad_input->ndim; i++) ok = grad_output->sizes[i] == os[i];
    if (!ok) {
        char a[256], b[256];
        th_tensor want = {.ndim = grad_input->ndim};  /* only to print the shape */
        for (int i = 0; i < want.ndim; i++) want.sizes[i] = os[i];
        return thnn__error(TH_ERR_RUNTIME, "%s: expected grad_output of shape %s "
                           "but got %s", fn, thnn__shape(&want, b),
                           thnn__shape(grad_output, a));
    }
    if (grad_output->dtype != grad_input->dtype)
        return thnn__error(TH_ERR_TYPE, "%s: grad_output type (%s) and grad_input "
                           "type (%s) should be the same", fn,
                           thnn__dtype_name(grad_output->dtype),
                           thnn__dtype_name(grad_input->dtype));
    th_tensor *go = thnn__contig(grad_output);
    if (!go) return thnn_last_status();
    if (th_zero(grad_input)) { thnn__release(go); return thnn__from_th(fn); }
    pool3d_ctx c = {.out = thnn__data(grad_input), .x = thnn__data(go), .g = &g,
                    .cip = count_include_pad, .divisor_override = divisor_override};
    pool3d_run(&c, go->dtype, avgpool3d_bwd_float, avgpool3d_bwd_double);
    thnn__release(go);
    return TH_OK;
}
