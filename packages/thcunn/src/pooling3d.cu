// max_pool3d (indices, dilation, ceil_mode) and avg_pool3d (ceil_mode,
// count_include_pad, divisor_override).  Rules, checks and messages are
// libTHNN's (src/pooling3d.c).
//
// Forwards: a thread per output element.  The average backward gathers (a
// thread per input element sums the windows that cover it, in the order
// libTHNN adds them: no atomics, same rounding); the max backward scatters
// along the saved indices (max_pool_grad.cu).
#include "max_pool_grad.h"

using namespace thcunn;

namespace {

// ---- 3-d pooling geometry ----------------------------------------------------
struct Geom3 {
    int64_t planes;
    int64_t D, H, W, OD, OH, OW;
    int64_t kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw;
};

int pool3d_geometry(const char *fn, const thc_tensor *input, const int64_t *kernel,
                    const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                    int ceil_mode, Geom3 *g) {
    char a[256];
    if (thcunn__check_float(fn, "input", input)) return thcunn_last_status();
    if (!kernel || !stride || !padding)
        return thcunn__error(THC_ERR_VALUE, "%s: kernel, stride and padding must not be NULL",
                             fn);
    const int d = input->ndim;
    if (d != 4 && d != 5)
        return thcunn__error(THC_ERR_RUNTIME, "%s: Expected 4D or 5D (batch mode) tensor for "
                             "input, but got: %s", fn, thcunn__shape_of(input, a));
    for (int i = d - 4; i < d; i++)
        if (input->sizes[i] < 1)
            return thcunn__error(THC_ERR_RUNTIME, "%s: Expected input's non-batch dimensions to "
                                 "have positive length, but input has a shape of %s and "
                                 "non-batch dimension %d has length zero!", fn,
                                 thcunn__shape_of(input, a),
                                 i);
    if (thcunn__planes(fn, input, 0, d - 3, &g->planes)) return thcunn_last_status();
    g->D = input->sizes[d - 3];
    g->H = input->sizes[d - 2];
    g->W = input->sizes[d - 1];
    g->kd = kernel[0];
    g->kh = kernel[1];
    g->kw = kernel[2];
    g->sd = stride[0];
    g->sh = stride[1];
    g->sw = stride[2];
    g->pd = padding[0];
    g->ph = padding[1];
    g->pw = padding[2];
    g->dd = dilation ? dilation[0] : 1;
    g->dh = dilation ? dilation[1] : 1;
    g->dw = dilation ? dilation[2] : 1;
    for (int i = 0; i < 3; i++)
        if (kernel[i] >= 1 && padding[i] > kernel[i] / 2)  // no product to overflow
            return thcunn__error(THC_ERR_RUNTIME, "%s: pad should be at most half of kernel "
                                 "size, but got padding [%lld, %lld, %lld] and kernel_size "
                                 "[%lld, %lld, %lld]", fn, (long long)padding[0],
                                 (long long)padding[1], (long long)padding[2],
                                 (long long)kernel[0], (long long)kernel[1],
                                 (long long)kernel[2]);
    if ((g->OD = thcunn_window_output_size(g->D, g->kd, g->sd, g->pd, g->dd, ceil_mode)) < 0 ||
        (g->OH = thcunn_window_output_size(g->H, g->kh, g->sh, g->ph, g->dh, ceil_mode)) < 0 ||
        (g->OW = thcunn_window_output_size(g->W, g->kw, g->sw, g->pw, g->dw, ceil_mode)) < 0)
        return thcunn_last_status();
    return THC_OK;
}

void out_shape3d(const thc_tensor *input, const Geom3 &g, int64_t *s) {
    const int d = input->ndim;
    for (int i = 0; i < d - 3; i++) s[i] = input->sizes[i];
    s[d - 3] = g.OD;
    s[d - 2] = g.OH;
    s[d - 1] = g.OW;
}

template <typename T> struct MaxPool3dFn {
    T *out;
    int64_t *ind;
    const T *x;
    Geom3 g;
    THCUNN_HD void operator()(int64_t o) const {
        int64_t ow = o % g.OW, t = o / g.OW, oh = t % g.OH;
        t /= g.OH;
        int64_t od = t % g.OD, p = t / g.OD;
        const T *xp = x + p * g.D * g.H * g.W;
        int64_t d0 = od * g.sd - g.pd, h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw, bi = -1;
        T best = (T)-INFINITY;
        bool nan = false;
        for (int64_t i = 0; i < g.kd && !nan; i++) {
            int64_t id = d0 + i * g.dd;
            if (id < 0 || id >= g.D) continue;
            for (int64_t j = 0; j < g.kh && !nan; j++) {
                int64_t ih = h0 + j * g.dh;
                if (ih < 0 || ih >= g.H) continue;
                for (int64_t l = 0; l < g.kw; l++) {
                    int64_t iw = w0 + l * g.dw;
                    if (iw < 0 || iw >= g.W) continue;
                    int64_t at = (id * g.H + ih) * g.W + iw;
                    T v = xp[at];
                    if (bi < 0 || v > best || v != v) {
                        best = v;
                        bi = at;
                        if (v != v) {   // NaN wins and ends the search
                            nan = true;
                            break;
                        }
                    }
                }
            }
        }
        out[o] = best;
        ind[o] = bi;
    }
};

// one axis of an average window, clipped to the input as [*lo, *hi);
// *padded: its length clipped to the padded input only
THCUNN_HD inline bool avg_axis(int64_t o, int64_t k, int64_t s, int64_t p, int64_t in,
                               int64_t *lo, int64_t *hi, int64_t *padded) {
    int64_t start = o * s - p, end = start + k;
    if (end > in + p) end = in + p;
    *padded = end - start;
    *lo = start < 0 ? 0 : start;
    *hi = end > in ? in : end;
    return *hi > *lo;
}

struct Win {
    int64_t d0, d1, h0, h1, w0, w1;
};

// the window of output (od, oh, ow) and its divisor (0: the window is empty)
THCUNN_HD inline int64_t avg_window(const Geom3 &g, int64_t od, int64_t oh, int64_t ow, int cip,
                                    int64_t divisor_override, Win *w) {
    int64_t pd, ph, pw;
    if (!avg_axis(od, g.kd, g.sd, g.pd, g.D, &w->d0, &w->d1, &pd) ||
        !avg_axis(oh, g.kh, g.sh, g.ph, g.H, &w->h0, &w->h1, &ph) ||
        !avg_axis(ow, g.kw, g.sw, g.pw, g.W, &w->w0, &w->w1, &pw))
        return 0;
    if (divisor_override) return divisor_override;
    return cip ? pd * ph * pw : (w->d1 - w->d0) * (w->h1 - w->h0) * (w->w1 - w->w0);
}

template <typename T> struct AvgPool3dFn {
    T *out;
    const T *x;
    Geom3 g;
    int cip;
    int64_t divisor_override;
    THCUNN_HD void operator()(int64_t o) const {
        int64_t ow = o % g.OW, t = o / g.OW, oh = t % g.OH;
        t /= g.OH;
        int64_t od = t % g.OD, p = t / g.OD;
        const T *xp = x + p * g.D * g.H * g.W;
        Win w;
        int64_t n = avg_window(g, od, oh, ow, cip, divisor_override, &w);
        T s = 0;
        if (n)
            for (int64_t id = w.d0; id < w.d1; id++)
                for (int64_t ih = w.h0; ih < w.h1; ih++)
                    for (int64_t iw = w.w0; iw < w.w1; iw++) s += xp[(id * g.H + ih) * g.W + iw];
        out[o] = n ? s / (T)n : (T)0;
    }
};

// floor(a / b) for b > 0
THCUNN_HD inline int64_t floor_div(int64_t a, int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// the outputs [*o0, *o1) whose window (start o*s-p, k long) holds input i
THCUNN_HD inline void covering(int64_t i, int64_t k, int64_t s, int64_t p, int64_t out,
                               int64_t *o0, int64_t *o1) {
    int64_t lo = floor_div(i + p - k, s) + 1, hi = (i + p) / s + 1;
    *o0 = lo < 0 ? 0 : lo;
    *o1 = hi > out ? out : hi;
}

// gin[i] = the sum over the windows holding input i of gout / divisor
template <typename T> struct AvgPool3dBackFn {
    T *gin;
    const T *gout;
    Geom3 g;
    int cip;
    int64_t divisor_override;
    THCUNN_HD void operator()(int64_t i) const {
        int64_t iw = i % g.W, t = i / g.W, ih = t % g.H;
        t /= g.H;
        int64_t id = t % g.D, p = t / g.D;
        const T *gp = gout + p * g.OD * g.OH * g.OW;
        int64_t od0, od1, oh0, oh1, ow0, ow1;
        covering(id, g.kd, g.sd, g.pd, g.OD, &od0, &od1);
        covering(ih, g.kh, g.sh, g.ph, g.OH, &oh0, &oh1);
        covering(iw, g.kw, g.sw, g.pw, g.OW, &ow0, &ow1);
        T s = 0;
        for (int64_t od = od0; od < od1; od++)
            for (int64_t oh = oh0; oh < oh1; oh++)
                for (int64_t ow = ow0; ow < ow1; ow++) {
                    Win w;
                    int64_t n = avg_window(g, od, oh, ow, cip, divisor_override, &w);
                    if (n) s += gp[(od * g.OH + oh) * g.OW + ow] / (T)n;
                }
        gin[i] = s;
    }
};

}  // namespace

// ---- max_pool3d ----------------------------------------------------------------------
extern "C" THCUNN_API int thcunn_max_pool3d_forward(thc_tensor *output, thc_tensor *indices,
                                                    const thc_tensor *input,
                                                    const int64_t *kernel, const int64_t *stride,
                                                    const int64_t *padding,
                                                    const int64_t *dilation, int ceil_mode) {
    static const char fn[] = "max_pool3d";
    Geom3 g;
    int64_t os[5];
    if (thcunn__check_runtime(fn)) return thcunn_last_status();
    if (!dilation) return thcunn__error(THC_ERR_VALUE, "%s: dilation must not be NULL", fn);
    if (pool3d_geometry(fn, input, kernel, stride, padding, dilation, ceil_mode, &g))
        return thcunn_last_status();
    out_shape3d(input, g, os);
    if (thcunn__check_out(fn, "output", output, input->ndim, os, input->dtype) ||
        thcunn__check_out(fn, "indices", indices, input->ndim, os, THC_INT64))
        return thcunn_last_status();
    thc_tensor *x = thcunn__contig(input);
    if (!x) return thcunn_last_status();
    int rc;
    THCUNN_FLOATING(x->dtype, rc = for_each(fn, g.planes * g.OD * g.OH * g.OW,
                                            MaxPool3dFn<scalar_t>{data<scalar_t>(output),
                                                                  data<int64_t>(indices),
                                                                  data<scalar_t>(x), g}))
    thc_tensor_release(x);
    return rc;
}

extern "C" THCUNN_API int thcunn_max_pool3d_backward_input(thc_tensor *grad_input,
                                                           const thc_tensor *grad_output,
                                                           const thc_tensor *indices) {
    return max_pool_backward("max_pool3d_backward_input", grad_input, grad_output, indices, 3);
}

// ---- avg_pool3d ----------------------------------------------------------------------
extern "C" THCUNN_API int thcunn_avg_pool3d_forward(thc_tensor *output, const thc_tensor *input,
                                                    const int64_t *kernel, const int64_t *stride,
                                                    const int64_t *padding, int ceil_mode,
                                                    int count_include_pad,
                                                    int64_t divisor_override) {
    static const char fn[] = "avg_pool3d";
    Geom3 g;
    int64_t os[5];
    if (thcunn__check_runtime(fn) ||
        pool3d_geometry(fn, input, kernel, stride, padding, NULL, ceil_mode, &g))
        return thcunn_last_status();
    out_shape3d(input, g, os);
    if (thcunn__check_out(fn, "output", output, input->ndim, os, input->dtype))
        return thcunn_last_status();
    thc_tensor *x = thcunn__contig(input);
    if (!x) return thcunn_last_status();
    int rc;
    THCUNN_FLOATING(x->dtype, rc = for_each(fn, g.planes * g.OD * g.OH * g.OW,
                                            AvgPool3dFn<scalar_t>{data<scalar_t>(output),
                                                                  data<scalar_t>(x), g,
                                                                  count_include_pad,
                                                                  divisor_override}))
    thc_tensor_release(x);
    return rc;
}

extern "C" THCUNN_API int thcunn_avg_pool3d_backward_input(thc_tensor *grad_input,
                                                           const thc_tensor *grad_output,
                                                           const int64_t *kernel,
                                                           const int64_t *stride,
                                                           const int64_t *padding, int ceil_mode,
                                                           int count_include_pad,
                                                           int64_t divisor_override) {
    static const char fn[] = "avg_pool3d_backward_input";
    Geom3 g;
    int64_t os[5];
    if (thcunn__check_runtime(fn) || thcunn__check_float(fn, "grad_input", grad_input) ||
        thcunn__check_like(fn, "grad_input", grad_input, grad_input) ||
        pool3d_geometry(fn, grad_input, kernel, stride, padding, NULL, ceil_mode, &g))
        return thcunn_last_status();
    out_shape3d(grad_input, g, os);
    if (thcunn__check_float(fn, "grad_output", grad_output)) return thcunn_last_status();
    int ok = grad_output->ndim == grad_input->ndim;
    for (int i = 0; ok && i < grad_input->ndim; i++) ok = grad_output->sizes[i] == os[i];
    if (!ok) {
        char a[256], b[256];
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected grad_output of shape %s but got %s",
                             fn, thcunn__shape_str(grad_input->ndim, os, b),
                             thcunn__shape_of(grad_output, a));
    }
    if (grad_output->dtype != grad_input->dtype)
        return thcunn__error(THC_ERR_TYPE, "%s: grad_output type (%s) and grad_input type (%s) "
                             "should be the same", fn, thcunn__type_name(grad_output->dtype),
                             thcunn__type_name(grad_input->dtype));
    thc_tensor *go = thcunn__contig(grad_output);
    if (!go) return thcunn_last_status();
    int rc;
    // a thread per input element writes it: no zeroing, no atomics
    THCUNN_FLOATING(go->dtype, rc = for_each(fn, g.planes * g.D * g.H * g.W,
                                             AvgPool3dBackFn<scalar_t>{
                                                 data<scalar_t>(grad_input), data<scalar_t>(go),
                                                 g, count_include_pad, divisor_override}))
    thc_tensor_release(go);
    return rc;
}
