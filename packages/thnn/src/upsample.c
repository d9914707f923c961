/* upsample_nearest2d and upsample_bilinear2d over (N, C, H, W) or
 * (C, H, W); the output size is the output tensor's.  Source coordinates
 * follow PyTorch: a scale given by the user (output / input, > 0) maps
 * output to input positions as 1 / scale, otherwise input / output;
 * align_corners maps corner pixels onto corner pixels; a dimension whose
 * size does not change is copied.  Planes are independent: they run on
 * libTH's thread pool in both directions. */
#include <math.h>
#include <stdlib.h>

#include "thnn_internal.h"

typedef struct up_geom {
    int64_t planes, H, W, OH, OW;
} up_geom;

/* in: the (…, H, W) tensor, out: the (…, OH, OW) one; both checked */
static int geometry(const char *fn, const char *in_name, const th_tensor *in,
                    const char *out_name, const th_tensor *out, up_geom *g) {
    char a[256], b[256];
    int rc;
    if ((rc = thnn__check_float(fn, in_name, in))) return rc;
    if (in->ndim != 3 && in->ndim != 4)
        return thnn__error(TH_ERR_RUNTIME, "%s: Expected 3D or 4D (batch mode) "
                           "tensor for %s, but got: %s", fn, in_name, thnn__shape(in, a));
    if ((rc = thnn__check_float(fn, out_name, out))) return rc;
    int ok = out->ndim == in->ndim && out->dtype == in->dtype;
    for (int i = 0; ok && i < in->ndim - 2; i++) ok = out->sizes[i] == in->sizes[i];
    if (!ok)
        return thnn__error(TH_ERR_RUNTIME, "%s: %s %s (%s) must have the batch and "
                           "channel sizes and dtype of %s %s (%s)", fn, out_name,
                           thnn__shape(out, a), thnn__dtype_name(out->dtype), in_name,
                           thnn__shape(in, b), thnn__dtype_name(in->dtype));
    const int d = in->ndim;
    g->planes = d == 4 ? in->sizes[0] * in->sizes[1] : in->sizes[0];
    g->H = in->sizes[d - 2]; g->W = in->sizes[d - 1];
    g->OH = out->sizes[d - 2]; g->OW = out->sizes[d - 1];
    if (g->H < 1 || g->W < 1 || g->OH < 1 || g->OW < 1)
        return thnn__error(TH_ERR_RUNTIME, "%s: Input and output sizes should be "
                           "greater than 0, but got input (H: %lld, W: %lld) output "
                           "(H: %lld, W: %lld)", fn, (long long)g->H, (long long)g->W,
                           (long long)g->OH, (long long)g->OW);
    return TH_OK;
}

/* nearest: in single precision, as PyTorch computes it, so that the chosen
 * source pixel is the same */
static inline int64_t nearest_src(int64_t dst, int64_t in, int64_t out, double scale) {
    if (out == in) return dst;
    if (out == 2 * in) return dst >> 1;
    const float s = scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out;
    int64_t src = (int64_t)floorf((float)dst * s);
    return src < in - 1 ? src : in - 1;
}

/* bilinear: source index i0, its neighbour i1 and the weight l1 of i1 */
static inline void linear_src(int64_t dst, int64_t in, int64_t out, int align_corners,
                              double scale, int64_t *i0, int64_t *i1, double *l1) {
    double src;
    if (out == in) {
        /* a dimension that keeps its size is copied whatever the scale, as
         * PyTorch does */
        *i0 = *i1 = dst;
        *l1 = 0;
        return;
    }
    if (align_corners) {
        src = out > 1 ? (double)(in - 1) / (double)(out - 1) * (double)dst : 0.0;
    } else {
        const double ratio = scale > 0 ? 1.0 / scale : (double)in / (double)out;
        src = ratio * ((double)dst + 0.5) - 0.5;
        if (src < 0) src = 0;
    }
    int64_t i = (int64_t)src;
    if (i > in - 1) i = in - 1;
    *i0 = i;
    *i1 = i + (i < in - 1);
    *l1 = src - (double)i;
    if (*l1 > 1) *l1 = 1;
}

/* per output row and column: the source rows/columns and weights, computed
 * once per call */
typedef struct up_tables {
    int64_t *h0, *h1, *w0, *w1;
    double *lh, *lw;
    void *mem;
} up_tables;

static int make_tables(const char *fn, int bilinear, const up_geom *g, int align_corners,
                       double sh, double sw, up_tables *t) {
    const int64_t n = g->OH + g->OW;
    t->mem = malloc((size_t)n * (2 * sizeof(int64_t) + sizeof(double)));
    if (!t->mem) return thnn__error(TH_ERR_MEMORY, "%s: out of memory", fn);
    t->h0 = t->mem; t->h1 = t->h0 + g->OH; t->w0 = t->h1 + g->OH; t->w1 = t->w0 + g->OW;
    t->lh = (double *)(t->w1 + g->OW); t->lw = t->lh + g->OH;
    for (int64_t o = 0; o < g->OH; o++) {
        if (bilinear) linear_src(o, g->H, g->OH, align_corners, sh, &t->h0[o], &t->h1[o], &t->lh[o]);
        else t->h0[o] = nearest_src(o, g->H, g->OH, sh);
    }
    for (int64_t o = 0; o < g->OW; o++) {
        if (bilinear) linear_src(o, g->W, g->OW, align_corners, sw, &t->w0[o], &t->w1[o], &t->lw[o]);
        else t->w0[o] = nearest_src(o, g->W, g->OW, sw);
    }
    return TH_OK;
}

/* one call's data, geometry and tables */
typedef struct up_ctx {
    void *out;      /* output, or grad_input */
    const void *in; /* input, or grad_output */
    const up_geom *g;
    const up_tables *t;
} up_ctx;

/* unpacks an up_ctx: y/gx the written tensor, x/gy the read one */
#define UP_LOCALS(T, out_name, in_name)                                        \
    const up_ctx *c = ctx;                                                     \
    T *out_name = c->out;                                                      \
    const T *in_name = c->in;                                                  \
    const up_geom *g = c->g;                                                   \
    const up_tables *t = c->t

#define DEFINE_UPSAMPLE(T)                                                     \
    static void nearest_fwd_##T(int64_t p0, int64_t p1, void *ctx) {           \
        UP_LOCALS(T, y, x);                                                    \
        for (int64_t p = p0; p < p1; p++)                                      \
            for (int64_t oh = 0; oh < g->OH; oh++) {                           \
                const T *row = x + (p * g->H + t->h0[oh]) * g->W;              \
                T *yr = y + (p * g->OH + oh) * g->OW;                          \
                for (int64_t ow = 0; ow < g->OW; ow++) yr[ow] = row[t->w0[ow]]; \
            }                                                                  \
    }                                                                          \
    static void nearest_bwd_##T(int64_t p0, int64_t p1, void *ctx) {           \
        UP_LOCALS(T, gx, gy);                                                  \
        for (int64_t p = p0; p < p1; p++) {                                    \
            T *gp = gx + p * g->H * g->W;                                      \
            for (int64_t i = 0; i < g->H * g->W; i++) gp[i] = 0;               \
            for (int64_t oh = 0; oh < g->OH; oh++) {                           \
                T *row = gp + t->h0[oh] * g->W;                                \
                const T *gr = gy + (p * g->OH + oh) * g->OW;                   \
                for (int64_t ow = 0; ow < g->OW; ow++) row[t->w0[ow]] += gr[ow]; \
            }                                                                  \
        }                                                                      \
    }                                                                          \
    static void bilinear_fwd_##T(int64_t p0, int64_t p1, void *ctx) {          \
        UP_LOCALS(T, y, x);                                                    \
        for (int64_t p = p0; p < p1; p++)                                      \
            for (int64_t oh = 0; oh < g->OH; oh++) {                           \
                const T *r0 = x + (p * g->H + t->h0[oh]) * g->W;               \
                const T *r1 = x + (p * g->H + t->h1[oh]) * g->W;               \
                const T a1 = (T)t->lh[oh], a0 = (T)(1.0 - t->lh[oh]);          \
                T *yr = y + (p * g->OH + oh) * g->OW;                          \
                for (int64_t ow = 0; ow < g->OW; ow++) {                       \
                    const int64_t w0 = t->w0[ow], w1 = t->w1[ow];              \
                    const T b1 = (T)t->lw[ow], b0 = (T)(1.0 - t->lw[ow]);      \
                    yr[ow] = a0 * (b0 * r0[w0] + b1 * r0[w1]) +                \
                             a1 * (b0 * r1[w0] + b1 * r1[w1]);                 \
                }                                                              \
            }                                                                  \
    }                                                                          \
    static void bilinear_bwd_##T(int64_t p0, int64_t p1, void *ctx) {          \
        UP_LOCALS(T, gx, gy);                                                  \
        for (int64_t p = p0; p < p1; p++) {                                    \
            T *gp = gx + p * g->H * g->W;                                      \
            for (int64_t i = 0; i < g->H * g->W; i++) gp[i] = 0;               \
            for (int64_t oh = 0; oh < g->OH; oh++) {                           \
                T *r0 = gp + t->h0[oh] * g->W, *r1 = gp + t->h1[oh] * g->W;    \
                const T a1 = (T)t->lh[oh], a0 = (T)(1.0 - t->lh[oh]);          \
                const T *gr = gy + (p * g->OH + oh) * g->OW;                   \
                for (int64_t ow = 0; ow < g->OW; ow++) {                       \
                    const int64_t w0 = t->w0[ow], w1 = t->w1[ow];              \
                    const T b1 = (T)t->lw[ow], b0 = (T)(1.0 - t->lw[ow]);      \
                    const T v = gr[ow];                                        \
                    r0[w0] += a0 * b0 * v;                                     \
                    r0[w1] += a0 * b1 * v;                                     \
                    r1[w0] += a1 * b0 * v;                                     \
                    r1[w1] += a1 * b1 * v;                                     \
                }                                                              \
            }                                                                  \
        }                                                                      \
    }
DEFINE_UPSAMPLE(float)
DEFINE_UPSAMPLE(double)

/* runs a loop over the planes, each of OH * OW outputs */
static void up_run(up_ctx *c, int dtype, th_range_fn f32, th_range_fn f64) {
    th_parallel_for(c->g->planes, thnn__grain(c->g->OH * c->g->OW),
                    dtype == TH_FLOAT32 ? f32 : f64, c);
}

static int forward(const char *fn, int bilinear, th_tensor *output, const th_tensor *input,
                   int align_corners, double sh, double sw) {
    up_geom g;
    up_tables t;
    int rc;
    if ((rc = geometry(fn, "input", input, "output", output, &g))) return rc;
    if (!th_is_contiguous(output))
        return thnn__error(TH_ERR_RUNTIME, "%s: output must be contiguous", fn);
    th_tensor *x = thnn__contig(input);
    if (!x) return thnn_last_status();
    if ((rc = make_tables(fn, bilinear, &g, align_corners, sh, sw, &t))) {
        th_tensor_release(x);
        return rc;
    }
    up_ctx c = {thnn__data(output), thnn__data(x), &g, &t};
    if (bilinear) up_run(&c, x->dtype, bilinear_fwd_float, bilinear_fwd_double);
    else up_run(&c, x->dtype, nearest_fwd_float, nearest_fwd_double);
    free(t.mem);
    th_tensor_release(x);
    return TH_OK;
}

static int backward(const char *fn, int bilinear, th_tensor *grad_input,
                    const th_tensor *grad_output, int align_corners, double sh, double sw) {
    up_geom g;
    up_tables t;
    int rc;
    if ((rc = geometry(fn, "grad_input", grad_input, "grad_output", grad_output, &g)))
        return rc;
    if (!th_is_contiguous(grad_input))
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_input must be contiguous", fn);
    th_tensor *gy = thnn__contig(grad_output);
    if (!gy) return thnn_last_status();
    if ((rc = make_tables(fn, bilinear, &g, align_corners, sh, sw, &t))) {
        th_tensor_release(gy);
        return rc;
    }
    up_ctx c = {thnn__data(grad_input), thnn__data(gy), &g, &t};
    if (bilinear) up_run(&c, gy->dtype, bilinear_bwd_float, bilinear_bwd_double);
    else up_run(&c, gy->dtype, nearest_bwd_float, nearest_bwd_double);
    free(t.mem);
    th_tensor_release(gy);
    return TH_OK;
}

THNN_API int thnn_upsample_nearest2d_forward(th_tensor *output, const th_tensor *input,
                                             double scale_h, double scale_w) {
    return forward("upsample_nearest2d", 0, output, input, 0, scale_h, scale_w);
}

THNN_API int thnn_upsample_nearest2d_backward_input(th_tensor *grad_input,
                                                    const th_tensor *grad_output,
                                                    double scale_h, double scale_w) {
    return backward("upsample_nearest2d_backward_input", 0, grad_input, grad_output, 0,
                    scale_h, scale_w);
}

THNN_API int thnn_upsample_bilinear2d_forward(th_tensor *output, const th_tensor *input,
                                              int align_corners, double scale_h,
                                              double scale_w) {
    return forward("upsample_bilinear2d", 1, output, input, align_corners != 0, scale_h,
                   scale_w);
}

THNN_API int thnn_upsample_bilinear2d_backward_input(th_tensor *grad_input,
                                                     const th_tensor *grad_output,
                                                     int align_corners, double scale_h,
                                                     double scale_w) {
    return backward("upsample_bilinear2d_backward_input", 1, grad_input, grad_output,
                    align_corners != 0, scale_h, scale_w);
}
