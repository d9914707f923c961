// upsample_nearest2d and upsample_bilinear2d over (N, C, H, W) or (C, H, W);
// the output size is the output tensor's.  Source coordinates are
// libTHNN's (hence PyTorch's): a scale the user gave (output / input, > 0)
// maps output to input positions as 1 / scale, otherwise input / output;
// align_corners maps corner pixels onto corner pixels; a dimension whose
// size does not change is copied.  Forwards: a thread per output element,
// computing its source positions on the fly.  Backwards: a thread per
// grad_output element adding into its 1 (nearest) or 4 (bilinear) sources
// with atomic adds (neighbouring outputs share sources).
#include "thcunn_internal.h"

using namespace thcunn;

namespace {

struct UpGeom {
    int64_t planes, H, W, OH, OW;
    double sh, sw;   // the user's scales, <= 0 when not given
    int align_corners;
};

// in: the (..., H, W) tensor, out: the (..., OH, OW) one
int geometry(const char *fn, const char *in_name, const thc_tensor *in, const char *out_name,
             const thc_tensor *out, UpGeom *g) {
    char a[256], b[256];
    if (thcunn__check_tensor(fn, in_name, in, 1)) return thcunn_last_status();
    if (in->ndim != 3 && in->ndim != 4)
        return thcunn__error(THC_ERR_RUNTIME, "%s: Expected 3D or 4D (batch mode) tensor for "
                             "%s, but got: %s", fn, in_name,
                             thcunn__shape_str(in->ndim, in->sizes, a));
    if (thcunn__check_tensor(fn, out_name, out, 1)) return thcunn_last_status();
    int ok = out->ndim == in->ndim && out->dtype == in->dtype;
    for (int i = 0; ok && i < in->ndim - 2; i++) ok = out->sizes[i] == in->sizes[i];
    if (!ok)
        return thcunn__error(THC_ERR_RUNTIME, "%s: %s %s (%s) must have the batch and channel "
                             "sizes and dtype of %s %s (%s)", fn, out_name,
                             thcunn__shape_str(out->ndim, out->sizes, a),
                             thc_dtype_name(out->dtype), in_name,
                             thcunn__shape_str(in->ndim, in->sizes, b),
                             thc_dtype_name(in->dtype));
    const int d = in->ndim;
    if (thcunn__planes(fn, in, 0, d - 2, &g->planes)) return thcunn_last_status();
    g->H = in->sizes[d - 2];
    g->W = in->sizes[d - 1];
    g->OH = out->sizes[d - 2];
    g->OW = out->sizes[d - 1];
    if (g->H < 1 || g->W < 1 || g->OH < 1 || g->OW < 1)
        return thcunn__error(THC_ERR_RUNTIME, "%s: Input and output sizes should be greater "
                             "than 0, but got input (H: %lld, W: %lld) output (H: %lld, W: "
                             "%lld)", fn, (long long)g->H, (long long)g->W, (long long)g->OH,
                             (long long)g->OW);
    return THC_OK;
}

// a * b + c rounded twice, as on the host: nvcc would fuse it into an FMA
// and move a source coordinate that lies on a pixel boundary
THCUNN_HD inline double mul_add(double a, double b, double c) {
#ifdef __CUDA_ARCH__
    return __dadd_rn(__dmul_rn(a, b), c);
#else
    return a * b + c;
#endif
}

// nearest: in single precision, as libTHNN (and PyTorch) computes it, so
// that the chosen source pixel is the same
THCUNN_HD inline int64_t nearest_src(int64_t dst, int64_t in, int64_t out, double scale) {
    if (out == in) return dst;
    if (out == 2 * in) return dst >> 1;
    const float s = scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out;
    int64_t src = (int64_t)floorf((float)dst * s);
    return src < in - 1 ? src : in - 1;
}

// bilinear: source index i0, its neighbour i1 and the weight l1 of i1
THCUNN_HD inline void linear_src(int64_t dst, int64_t in, int64_t out, int align_corners,
                                 double scale, int64_t *i0, int64_t *i1, double *l1) {
    if (out == in) {   // copied whatever the scale
        *i0 = *i1 = dst;
        *l1 = 0;
        return;
    }
    double src;
    if (align_corners) {
        src = out > 1 ? (double)(in - 1) / (double)(out - 1) * (double)dst : 0.0;
    } else {
        const double ratio = scale > 0 ? 1.0 / scale : (double)in / (double)out;
        src = mul_add(ratio, (double)dst + 0.5, -0.5);
        if (src < 0) src = 0;
    }
    int64_t i = (int64_t)src;
    if (i > in - 1) i = in - 1;
    *i0 = i;
    *i1 = i + (i < in - 1);
    *l1 = src - (double)i;
    if (*l1 > 1) *l1 = 1;
}

// forward (bwd = 0): a = input, b = output; backward: a = grad_input,
// b = grad_output.  o runs over the (…, OH, OW) elements.
template <typename T> struct NearestFn {
    T *a;
    T *b;
    UpGeom g;
    int bwd;
    THCUNN_HD void operator()(int64_t o) const {
        int64_t ow = o % g.OW, oh = (o / g.OW) % g.OH, p = o / (g.OW * g.OH);
        int64_t h = nearest_src(oh, g.H, g.OH, g.sh), w = nearest_src(ow, g.W, g.OW, g.sw);
        T *src = a + (p * g.H + h) * g.W + w;
        if (bwd)
            atomic_add(src, b[o]);
        else
            b[o] = *src;
    }
};

template <typename T> struct BilinearFn {
    T *a;
    T *b;
    UpGeom g;
    int bwd;
    THCUNN_HD void operator()(int64_t o) const {
        int64_t ow = o % g.OW, oh = (o / g.OW) % g.OH, p = o / (g.OW * g.OH);
        int64_t h0, h1, w0, w1;
        double lh, lw;
        linear_src(oh, g.H, g.OH, g.align_corners, g.sh, &h0, &h1, &lh);
        linear_src(ow, g.W, g.OW, g.align_corners, g.sw, &w0, &w1, &lw);
        // weights in T, as libTHNN rounds them
        const T a1 = (T)lh, a0 = (T)(1.0 - lh), b1 = (T)lw, b0 = (T)(1.0 - lw);
        T *r0 = a + (p * g.H + h0) * g.W, *r1 = a + (p * g.H + h1) * g.W;
        if (bwd) {
            const T v = b[o];
            atomic_add(r0 + w0, a0 * b0 * v);
            atomic_add(r0 + w1, a0 * b1 * v);
            atomic_add(r1 + w0, a1 * b0 * v);
            atomic_add(r1 + w1, a1 * b1 * v);
        } else {
            b[o] = a0 * (b0 * r0[w0] + b1 * r0[w1]) + a1 * (b0 * r1[w0] + b1 * r1[w1]);
        }
    }
};

template <typename T> int launch(const char *fn, int bilinear, T *a, T *b, const UpGeom &g,
                                 int bwd) {
    int64_t n = g.planes * g.OH * g.OW;
    return bilinear ? for_each(fn, n, BilinearFn<T>{a, b, g, bwd})
                    : for_each(fn, n, NearestFn<T>{a, b, g, bwd});
}

int forward(const char *fn, int bilinear, thc_tensor *output, const thc_tensor *input,
            int align_corners, double sh, double sw) {
    UpGeom g;
    if (thcunn__check_runtime(fn) || geometry(fn, "input", input, "output", output, &g))
        return thcunn_last_status();
    if (!thc_is_contiguous(output))
        return thcunn__error(THC_ERR_RUNTIME, "%s: output must be contiguous", fn);
    g.sh = sh;
    g.sw = sw;
    g.align_corners = align_corners;
    thc_tensor *x = thc_contiguous(input);
    if (!x) return thcunn__from_thc();
    int rc;
    THCUNN_FLOATING(x->dtype, rc = launch(fn, bilinear, data<scalar_t>(x),
                                          data<scalar_t>(output), g, 0))
    thc_tensor_release(x);
    return rc;
}

int backward(const char *fn, int bilinear, thc_tensor *grad_input,
             const thc_tensor *grad_output, int align_corners, double sh, double sw) {
    UpGeom g;
    if (thcunn__check_runtime(fn) ||
        geometry(fn, "grad_input", grad_input, "grad_output", grad_output, &g))
        return thcunn_last_status();
    if (!thc_is_contiguous(grad_input))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_input must be contiguous", fn);
    g.sh = sh;
    g.sw = sw;
    g.align_corners = align_corners;
    thc_tensor *gy = thc_contiguous(grad_output);
    int rc = gy && !thc_zero(grad_input) ? THC_OK : thcunn__from_thc();
    if (!rc)
        THCUNN_FLOATING(gy->dtype, rc = launch(fn, bilinear, data<scalar_t>(grad_input),
                                               data<scalar_t>(gy), g, 1))
    if (gy) thc_tensor_release(gy);
    return rc;
}

}  // namespace

extern "C" THCUNN_API int thcunn_upsample_nearest2d_forward(thc_tensor *output,
                                                            const thc_tensor *input,
                                                            double scale_h, double scale_w) {
    return forward("upsample_nearest2d", 0, output, input, 0, scale_h, scale_w);
}

extern "C" THCUNN_API int thcunn_upsample_nearest2d_backward_input(
    thc_tensor *grad_input, const thc_tensor *grad_output, double scale_h, double scale_w) {
    return backward("upsample_nearest2d_backward_input", 0, grad_input, grad_output, 0,
                    scale_h, scale_w);
}

extern "C" THCUNN_API int thcunn_upsample_bilinear2d_forward(thc_tensor *output,
                                                             const thc_tensor *input,
                                                             int align_corners, double scale_h,
                                                             double scale_w) {
    return forward("upsample_bilinear2d", 1, output, input, align_corners != 0, scale_h,
                   scale_w);
}

extern "C" THCUNN_API int thcunn_upsample_bilinear2d_backward_input(
    thc_tensor *grad_input, const thc_tensor *grad_output, int align_corners, double scale_h,
    double scale_w) {
    return backward("upsample_bilinear2d_backward_input", 1, grad_input, grad_output,
                    align_corners != 0, scale_h, scale_w);
}
