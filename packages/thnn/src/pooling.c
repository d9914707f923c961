/* max_pool2d (with indices) and avg_pool2d (ceil_mode, count_include_pad).
 * Planes (n, c) are independent: they run on libTH's thread pool. */
#include <math.h>
#include <string.h>

#include "thnn_internal.h"

typedef struct pool_geom {
    int64_t planes, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw;
} pool_geom;

static int pool_geometry(const char *fn, const th_tensor *input,
                         const int64_t *kernel, const int64_t *stride,
                         const int64_t *padding, const int64_t *dilation,
                         int ceil_mode, pool_geom *g) {
    char a[256];
    int rc = thnn__check_float(fn, "input", input);
    if (rc) return rc;
    if (!kernel || !stride || !padding)
        return thnn__error(TH_ERR_VALUE, "%s: kernel, stride and padding must "
                           "not be NULL", fn);
    if (input->ndim != 3 && input->ndim != 4)
        return thnn__error(TH_ERR_RUNTIME, "%s: Expected 3D or 4D (batch mode) "
                           "tensor for input, but got: %s", fn, thnn__shape(input, a));
    int d = input->ndim;
    g->planes = input->sizes[0];
    if (d == 4 && thnn__mul_ovf(input->sizes[0], input->sizes[1], &g->planes))
        return thnn__size_overflow(fn, "the number of planes");
    g->H = input->sizes[d - 2]; g->W = input->sizes[d - 1];
    g->kh = kernel[0]; g->kw = kernel[1];
    g->sh = stride[0]; g->sw = stride[1];
    g->ph = padding[0]; g->pw = padding[1];
    g->dh = dilation ? dilation[0] : 1; g->dw = dilation ? dilation[1] : 1;
    /* pad * 2 > kernel, without the product (pad may be huge) */
    if (g->ph > g->kh / 2 || g->pw > g->kw / 2)
        return thnn__error(TH_ERR_RUNTIME, "%s: pad should be at most half of "
                           "effective kernel size, but got pad=%lld, kernel_size=%lld",
                           fn, (long long)(g->ph > g->pw ? g->ph : g->pw),
                           (long long)(g->kh > g->kw ? g->kh : g->kw));
    g->OH = thnn_window_output_size(g->H, g->kh, g->sh, g->ph, g->dh, ceil_mode);
    if (g->OH < 0) return thnn_last_status();
    g->OW = thnn_window_output_size(g->W, g->kw, g->sw, g->pw, g->dw, ceil_mode);
    if (g->OW < 0) return thnn_last_status();
    return TH_OK;
}

static void out_shape(const th_tensor *input, const pool_geom *g, int64_t *s) {
    for (int i = 0; i < input->ndim - 2; i++) s[i] = input->sizes[i];
    s[input->ndim - 2] = g->OH;
    s[input->ndim - 1] = g->OW;
}

/* the window taps t in [*t0, *t1) of a window starting at `start` (taps
   `dil` apart, k of them) that fall inside [0, size) */
static inline void window_range(int64_t start, int64_t dil, int64_t k,
                                int64_t size, int64_t *t0, int64_t *t1) {
    /* ceil(-start / dil) without -start + dil - 1 (dil may be huge) */
    int64_t lo = start < 0 ? (-start - 1) / dil + 1 : 0;
    int64_t hi = start + (k - 1) * dil >= size ? (size - 1 - start) / dil + 1 : k;
    if (start > size - 1) hi = 0;
    *t0 = lo;
    *t1 = hi > lo ? hi : lo;
}

/* Max pooling picks each window's maximum with selects, not branches: the
 * comparisons are unpredictable on real data, and a branch per tap
 * mispredicted about half the time (2x2 pooling of LeNet's first layer,
 * 64x6x28x28: 1.07 ms; with selects 0.08 ms).  take_mask is all ones when
 * v replaces best (v greater, or the first NaN, or the window's first
 * tap), else zero; the select moves the value's bits and the index. */
static inline uint64_t take_mask(int take) { return -(uint64_t)(take != 0); }
static inline float select_float(uint64_t m, float v, float best) {
    uint32_t a, b;
    memcpy(&a, &v, sizeof a);
    memcpy(&b, &best, sizeof b);
    a = (a & (uint32_t)m) | (b & ~(uint32_t)m);
    memcpy(&v, &a, sizeof v);
    return v;
}
static inline double select_double(uint64_t m, double v, double best) {
    uint64_t a, b;
    memcpy(&a, &v, sizeof a);
    memcpy(&b, &best, sizeof b);
    a = (a & m) | (b & ~m);
    memcpy(&v, &a, sizeof v);
    return v;
}
static inline int64_t select_index(uint64_t m, int64_t k, int64_t bi) {
    return (int64_t)(((uint64_t)k & m) | ((uint64_t)bi & ~m));
}

#define POOL_CHUNK 128   /* outputs of a row pooled together (vector loop) */

/* tap `tap` (i * kw + j) of a chunk of windows src[t * SW] (maxpool_##T's
 * interior): the winners' values in best, their tap numbers (int32, the
 * width of a float's mask: the loop vectorises on SSE2) in win */
#define POOL_TAPS(T, SW)                                                       \
    {                                                                          \
        _Pragma("omp simd")                                                    \
        for (int64_t t = 0; t < n; t++) {                                      \
            const T v = src[t * (SW)];                                         \
            const int take = (v > best[t]) | ((v != v) & (best[t] == best[t])); \
            best[t] = take ? v : best[t];                                      \
            win[t] = take ? tap : win[t];                                      \
        }                                                                      \
    }

/* one call's data and geometry, for the per-plane range functions */
typedef struct pool_ctx {
    void *out;    /* output, or grad_output in the backwards */
    int64_t *ind; /* max indices */
    void *x;      /* input, or grad_input (written) in the backwards */
    pool_geom g;
    int cip, bwd; /* count_include_pad; the backward of avg pooling */
} pool_ctx;

/* unpacks a pool_ctx into the loops' names */
#define POOL_LOCALS(T)                                                         \
    const pool_ctx *c = ctx;                                                   \
    const pool_geom *g = &c->g;                                                \
    T *out = c->out, *x = c->x;                                                \
    int64_t *ind = c->ind;                                                     \
    (void)ind

#define DEFINE_POOL(T)                                                         \
    /* the common 2x2, stride 2 window over whole windows: the four taps    \
       compared in window order without bounds tests (first maximum kept,  \
       a NaN wins as in the general loop) */                                \
    static void maxpool2x2_##T(int64_t p0, int64_t p1, void *ctx) {            \
        POOL_LOCALS(T);                                                        \
        const int64_t H = g->H, W = g->W, OH = g->OH, OW = g->OW;             \
        int32_t tap[256]; /* a band of outputs' winning taps, 0..3 */          \
        for (int64_t p = p0; p < p1; p++) {                                    \
            const T *xp = x + p * H * W;                                       \
            for (int64_t oh = 0; oh < OH; oh++) {                              \
                const int64_t r0 = 2 * oh * W;                                 \
                const T *restrict ra = xp + r0, *restrict rb = ra + W;         \
                T *restrict op = out + (p * OH + oh) * OW;                     \
                int64_t *restrict ip = ind + (p * OH + oh) * OW;               \
                for (int64_t b0 = 0; b0 < OW; b0 += 256) {                     \
                    const int64_t b1 = b0 + 256 < OW ? b0 + 256 : OW;          \
                    for (int64_t ow = b0; ow < b1; ow++) {                     \
                        const T v[4] = {ra[2 * ow], ra[2 * ow + 1], rb[2 * ow], \
                                        rb[2 * ow + 1]};                       \
                        T best = v[0];                                         \
                        int64_t t = 0;                                         \
                        for (int k = 1; k < 4; k++) {                          \
                            const uint64_t m = take_mask(                      \
                                (v[k] > best) | ((v[k] != v[k]) & (best == best))); \
                            best = select_##T(m, v[k], best);                  \
                            t = select_index(m, k, t);                         \
                        }                                                      \
                        op[ow] = best;                                         \
                        tap[ow - b0] = (int32_t)t;                             \
                    }                                                          \
                    for (int64_t ow = b0; ow < b1; ow++)                       \
                        ip[ow] = r0 + 2 * ow + (tap[ow - b0] & 1) +            \
                                 (tap[ow - b0] >> 1) * W;                      \
                }                                                              \
            }                                                                  \
        }                                                                      \
    }                                                                          \
    /* one output's window, taps in window order, bounds tested */         \
    static void maxpool_one_##T(const pool_geom *g, const T *xp, int64_t h0,  \
                                int64_t i0, int64_t i1, int64_t ow, T *o,     \
                                int64_t *oi) {                                \
        const int64_t w0 = ow * g->sw - g->pw;                                 \
        int64_t j0, j1;                                                        \
        window_range(w0, g->dw, g->kw, g->W, &j0, &j1);                        \
        T best = -INFINITY;                                                    \
        int64_t bi = -1;                                                       \
        for (int64_t i = i0; i < i1; i++) {                                    \
            const int64_t row = (h0 + i * g->dh) * g->W;                       \
            for (int64_t j = j0; j < j1; j++) {                                \
                const int64_t k = row + w0 + j * g->dw;                        \
                const T v = xp[k];                                             \
                /* the first NaN wins: later taps do not replace it */         \
                const uint64_t m = take_mask((v > best) | (bi < 0) |           \
                                             ((v != v) & (best == best)));     \
                best = select_##T(m, v, best);                                 \
                bi = select_index(m, k, bi);                                   \
            }                                                                  \
        }                                                                      \
        *o = best;                                                             \
        *oi = bi;                                                              \
    }                                                                          \
    /* Outputs whose window columns all lie inside the row (ow in [lo, hi))  \
       go POOL_CHUNK at a time, one tap after another over the chunk: a    \
       vector loop whose selects are blends.  The rest, one by one. */      \
    static void maxpool_##T(int64_t p0, int64_t p1, void *ctx) {               \
        POOL_LOCALS(T);                                                        \
        const int64_t OW = g->OW, sw = g->sw, reach = (g->kw - 1) * g->dw;     \
        int64_t lo = (g->pw + sw - 1) / sw, hi = 0;                            \
        if (g->W - 1 - reach + g->pw >= 0)                                     \
            hi = (g->W - 1 - reach + g->pw) / sw + 1;                          \
        if (hi > OW) hi = OW;                                                  \
        if (lo > hi || thnn__work(g->kh, g->kw) > INT32_MAX) /* taps: int32 */ \
            lo = hi;                                                           \
        T best[POOL_CHUNK];                                                    \
        int32_t win[POOL_CHUNK];                                               \
        for (int64_t p = p0; p < p1; p++) {                                    \
            const T *xp = x + p * g->H * g->W;                                 \
            for (int64_t oh = 0; oh < g->OH; oh++) {                           \
                /* window rows i in [i0, i1) fall inside the input */          \
                const int64_t h0 = oh * g->sh - g->ph;                         \
                int64_t i0, i1;                                                \
                window_range(h0, g->dh, g->kh, g->H, &i0, &i1);                \
                T *op = out + (p * g->OH + oh) * OW;                           \
                int64_t *ip = ind + (p * g->OH + oh) * OW;                     \
                for (int64_t ow = 0; ow < lo; ow++)                            \
                    maxpool_one_##T(g, xp, h0, i0, i1, ow, op + ow, ip + ow);  \
                for (int64_t ow = hi; ow < OW; ow++)                           \
                    maxpool_one_##T(g, xp, h0, i0, i1, ow, op + ow, ip + ow);  \
                for (int64_t c0 = lo; c0 < hi && i0 < i1; c0 += POOL_CHUNK) {  \
                    const int64_t n = hi - c0 < POOL_CHUNK ? hi - c0 : POOL_CHUNK; \
                    const T *first = xp + (h0 + i0 * g->dh) * g->W + c0 * sw - g->pw; \
                    for (int64_t t = 0; t < n; t++) { /* the first tap */      \
                        best[t] = first[t * sw];                               \
                        win[t] = (int32_t)(i0 * g->kw);                        \
                    }                                                          \
                    for (int64_t i = i0; i < i1; i++)                          \
                        for (int64_t j = i == i0; j < g->kw; j++) {            \
                            const T *restrict src = xp + (h0 + i * g->dh) * g->W + \
                                                    c0 * sw - g->pw + j * g->dw; \
                            const int32_t tap = (int32_t)(i * g->kw + j);      \
                            /* the stride a constant where it is 1 or 2, so \
                               that the loop vectorises */                  \
                            if (sw == 2)                                       \
                                POOL_TAPS(T, 2)                                \
                            else if (sw == 1)                                  \
                                POOL_TAPS(T, 1)                                \
                            else                                               \
                                POOL_TAPS(T, sw)                               \
                        }                                                      \
                    for (int64_t t = 0; t < n; t++) {                          \
                        const int64_t i = win[t] / g->kw, j = win[t] % g->kw;  \
                        op[c0 + t] = best[t];                                  \
                        ip[c0 + t] = (h0 + i * g->dh) * g->W + (c0 + t) * sw - \
                                     g->pw + j * g->dw;                        \
                    }                                                          \
                }                                                              \
                if (i0 >= i1) /* no window row inside: eager's -inf, -1 */    \
                    for (int64_t ow = lo; ow < hi; ow++)                       \
                        maxpool_one_##T(g, xp, h0, i0, i1, ow, op + ow, ip + ow); \
            }                                                                  \
        }                                                                      \
    }                                                                          \
    static void maxpool_bwd_##T(int64_t p0, int64_t p1, void *ctx) {           \
        POOL_LOCALS(T);                                                        \
        const int64_t in_plane = g->H * g->W, out_plane = g->OH * g->OW;       \
        for (int64_t p = p0; p < p1; p++)                                      \
            for (int64_t i = 0; i < out_plane; i++) {                          \
                const int64_t k = ind[p * out_plane + i];                      \
                if (k >= 0 && k < in_plane)                                    \
                    x[p * in_plane + k] += out[p * out_plane + i];             \
            }                                                                  \
    }                                                                          \
    /* forward (bwd = 0): out = avg(x); backward (bwd = 1): x += gout / n */  \
    static void avgpool_##T(int64_t p0, int64_t p1, void *ctx) {               \
        POOL_LOCALS(T);                                                        \
        const int cip = c->cip, bwd = c->bwd;                                  \
        for (int64_t p = p0; p < p1; p++) {                                    \
            T *xp = x + p * g->H * g->W;                                       \
            for (int64_t oh = 0; oh < g->OH; oh++)                             \
                for (int64_t ow = 0; ow < g->OW; ow++) {                       \
                    int64_t h0 = oh * g->sh - g->ph, w0 = ow * g->sw - g->pw;  \
                    int64_t h1 = h0 + g->kh, w1 = w0 + g->kw;                  \
                    if (h1 > g->H + g->ph) h1 = g->H + g->ph;                  \
                    if (w1 > g->W + g->pw) w1 = g->W + g->pw;                  \
                    /* double: a huge kernel's padded area overflows int64 */ \
                    const double padded = (double)(h1 - h0) * (double)(w1 - w0); \
                    if (h0 < 0) h0 = 0;                                        \
                    if (w0 < 0) w0 = 0;                                        \
                    if (h1 > g->H) h1 = g->H;                                  \
                    if (w1 > g->W) w1 = g->W;                                  \
                    const double n = cip ? padded : (double)((h1 - h0) * (w1 - w0)); \
                    T *o = out + (p * g->OH + oh) * g->OW + ow;                \
                    if (h0 >= h1 || w0 >= w1 || n <= 0) {                      \
                        if (!bwd) *o = 0;                                      \
                        continue;                                              \
                    }                                                          \
                    if (bwd) {                                                 \
                        const T v = *o / (T)n;                                 \
                        for (int64_t ih = h0; ih < h1; ih++)                   \
                            for (int64_t iw = w0; iw < w1; iw++)               \
                                xp[ih * g->W + iw] += v;                       \
                    } else {                                                   \
                        T s = 0;                                               \
                        for (int64_t ih = h0; ih < h1; ih++)                   \
                            for (int64_t iw = w0; iw < w1; iw++)               \
                                s += xp[ih * g->W + iw];                       \
                        *o = s / (T)n;                                         \
                    }                                                          \
                }                                                              \
        }                                                                      \
    }
DEFINE_POOL(float)
DEFINE_POOL(double)

/* runs a pooling loop over the planes, each of `cost` work */
static void pool_run(pool_ctx *c, int dtype, th_range_fn f32, th_range_fn f64,
                     int64_t cost) {
    th_parallel_for(c->g.planes, thnn__grain(cost), dtype == TH_FLOAT32 ? f32 : f64, c);
}

THNN_API int thnn_max_pool2d_forward(th_tensor *output, th_tensor *indices,
                                     const th_tensor *input,
                                     const int64_t *kernel,
                                     const int64_t *stride,
                                     const int64_t *padding,
                                     const int64_t *dilation, int ceil_mode) {
    static const char fn[] = "max_pool2d";
    pool_geom g;
    int64_t os[4];
    int rc = pool_geometry(fn, input, kernel, stride, padding, dilation, ceil_mode, &g);
    if (rc) return rc;
    out_shape(input, &g, os);
    if ((rc = thnn__check_out(fn, "output", output, input->ndim, os, input->dtype))) return rc;
    if ((rc = thnn__check_out(fn, "indices", indices, input->ndim, os, TH_INT64))) return rc;
    th_tensor *x = thnn__contig(input);
    if (!x) return thnn_last_status();
    pool_ctx c = {.out = thnn__data(output), .ind = thnn__data(indices), .x = thnn__data(x),
                  .g = g};
    if (g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 &&
        g.dh == 1 && g.dw == 1 && 2 * g.OH <= g.H && 2 * g.OW <= g.W)
        pool_run(&c, x->dtype, maxpool2x2_float, maxpool2x2_double, g.OH * g.OW * 4);
    else
        pool_run(&c, x->dtype, maxpool_float, maxpool_double, thnn__work(g.OH * g.OW, thnn__work(g.kh, g.kw)));
    th_tensor_release(x);
    return TH_OK;
}

THNN_API int thnn_max_pool2d_backward_input(th_tensor *grad_input,
                                            const th_tensor *grad_output,
                                            const th_tensor *indices) {
    static const char fn[] = "max_pool2d_backward_input";
    int rc;
    char a[256], b[256];
    if ((rc = thnn__check_float(fn, "grad_input", grad_input))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, grad_input))) return rc;
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    if ((rc = thnn__check_dtype(fn, "indices", indices, TH_INT64))) return rc;
    int d = grad_input->ndim;
    int ok = (d == 3 || d == 4) && grad_output->ndim == d && indices->ndim == d &&
             grad_output->dtype == grad_input->dtype;
    for (int i = 0; ok && i < d; i++)
        ok = grad_output->sizes[i] == indices->sizes[i] &&
             (i >= d - 2 || grad_output->sizes[i] == grad_input->sizes[i]);
    if (!ok)
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output %s and indices %s do "
                           "not match grad_input %s", fn, thnn__shape(grad_output, a),
                           thnn__shape(indices, b), thnn__shape(grad_input, a));
    if (th_zero(grad_input)) return thnn__from_th(fn);
    const int64_t planes = d == 4 ? grad_input->sizes[0] * grad_input->sizes[1]
                                  : grad_input->sizes[0];
    th_tensor *go = thnn__contig(grad_output), *ind = thnn__contig(indices);
    if (!go || !ind) { thnn__release(go); thnn__release(ind); return thnn_last_status(); }
    pool_ctx c = {.out = thnn__data(go), .ind = thnn__data(ind), .x = thnn__data(grad_input),
                  .g = {.planes = planes, .H = grad_input->sizes[d - 2],
                        .W = grad_input->sizes[d - 1], .OH = grad_output->sizes[d - 2],
                        .OW = grad_output->sizes[d - 1]}};
    pool_run(&c, go->dtype, maxpool_bwd_float, maxpool_bwd_double, c.g.OH * c.g.OW);
    th_tensor_release(go); th_tensor_release(ind);
    return TH_OK;
}

THNN_API int thnn_avg_pool2d_forward(th_tensor *output, const th_tensor *input,
                                     const int64_t *kernel,
                                     const int64_t *stride,
                                     const int64_t *padding, int ceil_mode,
                                     int count_include_pad) {
    static const char fn[] = "avg_pool2d";
    pool_geom g;
    int64_t os[4];
    int rc = pool_geometry(fn, input, kernel, stride, padding, NULL, ceil_mode, &g);
    if (rc) return rc;
    out_shape(input, &g, os);
    if ((rc = thnn__check_out(fn, "output", output, input->ndim, os, input->dtype))) return rc;
    th_tensor *x = thnn__contig(input);
    if (!x) return thnn_last_status();
    pool_ctx c = {.out = thnn__data(output), .x = thnn__data(x), .g = g,
                  .cip = count_include_pad};
    pool_run(&c, x->dtype, avgpool_float, avgpool_double, thnn__work(g.OH * g.OW, thnn__work(g.kh, g.kw)));
    th_tensor_release(x);
    return TH_OK;
}

THNN_API int thnn_avg_pool2d_backward_input(th_tensor *grad_input,
                                            const th_tensor *grad_output,
                                            const int64_t *kernel,
                                            const int64_t *stride,
                                            const int64_t *padding,
                                            int ceil_mode,
                                            int count_include_pad) {
    static const char fn[] = "avg_pool2d_backward_input";
    pool_geom g;
    int64_t os[4];
    int rc;
    if ((rc = thnn__check_float(fn, "grad_input", grad_input))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, grad_input))) return rc;
    if ((rc = pool_geometry(fn, grad_input, kernel, stride, padding, NULL, ceil_mode, &g)))
        return rc;
    out_shape(grad_input, &g, os);
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    int ok = grad_output->ndim == grad_input->ndim && grad_output->dtype == grad_input->dtype;
    for (int i = 0; ok && i < grad_input->ndim; i++) ok = grad_output->sizes[i] == os[i];
    if (!ok) {
        char a[256];
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output %s does not match the "
                           "pooling output shape", fn, thnn__shape(grad_output, a));
    }
    if (th_zero(grad_input)) return thnn__from_th(fn);
    th_tensor *go = th_clone(grad_output);  /* contiguous, and writable below */
    if (!go) return thnn__from_th(fn);
    pool_ctx c = {.out = thnn__data(go), .x = thnn__data(grad_input), .g = g,
                  .cip = count_include_pad, .bwd = 1};
    pool_run(&c, go->dtype, avgpool_float, avgpool_double, thnn__work(g.OH * g.OW, thnn__work(g.kh, g.kw)));
    th_tensor_release(go);
    return TH_OK;
}
