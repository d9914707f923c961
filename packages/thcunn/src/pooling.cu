// max_pool2d (with indices) and avg_pool2d (ceil_mode, count_include_pad),
// and thcunn_window_output_size (the window arithmetic of every pooling):
// a thread per output element; the backwards scatter into grad_input with
// atomic adds (windows may overlap).  Window rules are libTHNN's.
#include "thcunn_internal.h"

using namespace thcunn;

namespace {

struct Geom {
    int64_t planes, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw;
};

int geometry(const char *what, const thc_tensor *input, const int64_t *kernel,
             const int64_t *stride, const int64_t *padding, const int64_t *dilation,
             int ceil_mode, Geom *g) {
    if (thcunn__check_tensor(what, "input", input, 1)) return thcunn_last_status();
    if (!kernel || !stride || !padding)
        return thcunn__error(THC_ERR_VALUE, "%s: kernel, stride and padding must not be NULL",
                             what);
    char a[256];
    if (input->ndim != 3 && input->ndim != 4)
        return thcunn__error(THC_ERR_RUNTIME, "%s: Expected 3D or 4D (batch mode) tensor for "
                             "input, but got: %s", what,
                             thcunn__shape_str(input->ndim, input->sizes, a));
    int d = input->ndim;
    if (thcunn__planes(what, input, 0, d - 2, &g->planes)) return thcunn_last_status();
    g->H = input->sizes[d - 2];
    g->W = input->sizes[d - 1];
    g->kh = kernel[0];
    g->kw = kernel[1];
    g->sh = stride[0];
    g->sw = stride[1];
    g->ph = padding[0];
    g->pw = padding[1];
    g->dh = dilation ? dilation[0] : 1;
    g->dw = dilation ? dilation[1] : 1;
    // pad > kernel / 2 is pad * 2 > kernel without the product (a huge
    // pad would overflow it); a kernel < 1 is window_output_size's error
    if ((g->kh >= 1 && g->ph > g->kh / 2) || (g->kw >= 1 && g->pw > g->kw / 2))
        return thcunn__error(THC_ERR_RUNTIME, "%s: pad should be at most half of effective "
                             "kernel size, but got pad=%lld, kernel_size=%lld", what,
                             (long long)(g->ph > g->pw ? g->ph : g->pw),
                             (long long)(g->kh > g->kw ? g->kh : g->kw));
    if ((g->OH = thcunn_window_output_size(g->H, g->kh, g->sh, g->ph, g->dh, ceil_mode)) < 0 ||
        (g->OW = thcunn_window_output_size(g->W, g->kw, g->sw, g->pw, g->dw, ceil_mode)) < 0)
        return thcunn_last_status();
    return THC_OK;
}

void out_shape(const thc_tensor *input, const Geom &g, int64_t *s) {
    for (int i = 0; i < input->ndim - 2; i++) s[i] = input->sizes[i];
    s[input->ndim - 2] = g.OH;
    s[input->ndim - 1] = g.OW;
}

template <typename T> struct MaxFn {
    T *out;
    int64_t *ind;
    const T *x;
    Geom g;
    THCUNN_HD void operator()(int64_t o) const {
        int64_t ow = o % g.OW, oh = (o / g.OW) % g.OH, p = o / (g.OW * g.OH);
        const T *xp = x + p * g.H * g.W;
        int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw, bi = -1;
        T best = (T)-INFINITY;
        for (int64_t i = 0; i < g.kh; i++) {
            int64_t h = h0 + i * g.dh;
            if (h < 0 || h >= g.H) continue;
            for (int64_t j = 0; j < g.kw; j++) {
                int64_t w = w0 + j * g.dw;
                if (w < 0 || w >= g.W) continue;
                T v = xp[h * g.W + w];
                if (v > best || v != v || bi < 0) {
                    best = v;
                    bi = h * g.W + w;
                    if (v != v) {   // NaN wins and ends the search
                        i = g.kh;
                        break;
                    }
                }
            }
        }
        out[o] = best;
        ind[o] = bi;
    }
};

template <typename T> struct MaxBackFn {
    T *gin;
    const T *gout;
    const int64_t *ind;
    int64_t in_plane, out_plane;
    THCUNN_HD void operator()(int64_t o) const {
        int64_t k = ind[o], p = o / out_plane;
        if (k >= 0 && k < in_plane) atomic_add(gin + p * in_plane + k, gout[o]);
    }
};

// forward (bwd = 0): out = mean of the window; backward: x += gout / n
template <typename T> struct AvgFn {
    T *out;
    T *x;
    Geom g;
    int cip, bwd;
    THCUNN_HD void operator()(int64_t o) const {
        int64_t ow = o % g.OW, oh = (o / g.OW) % g.OH, p = o / (g.OW * g.OH);
        T *xp = x + p * g.H * g.W;
        int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
        int64_t h1 = h0 + g.kh, w1 = w0 + g.kw;
        if (h1 > g.H + g.ph) h1 = g.H + g.ph;
        if (w1 > g.W + g.pw) w1 = g.W + g.pw;
        int64_t padded = (h1 - h0) * (w1 - w0);
        if (h0 < 0) h0 = 0;
        if (w0 < 0) w0 = 0;
        if (h1 > g.H) h1 = g.H;
        if (w1 > g.W) w1 = g.W;
        int64_t n = cip ? padded : (h1 - h0) * (w1 - w0);
        if (h0 >= h1 || w0 >= w1 || n <= 0) {
            if (!bwd) out[o] = 0;
            return;
        }
        if (bwd) {
            T v = out[o] / (T)n;
            for (int64_t h = h0; h < h1; h++)
                for (int64_t w = w0; w < w1; w++) atomic_add(xp + h * g.W + w, v);
        } else {
            T s = 0;
            for (int64_t h = h0; h < h1; h++)
                for (int64_t w = w0; w < w1; w++) s += xp[h * g.W + w];
            out[o] = s / (T)n;
        }
    }
};

}  // namespace

extern "C" THCUNN_API int thcunn_max_pool2d_forward(thc_tensor *output, thc_tensor *indices,
                                                    const thc_tensor *input,
                                                    const int64_t *kernel, const int64_t *stride,
                                                    const int64_t *padding,
                                                    const int64_t *dilation, int ceil_mode) {
    const char *what = "max_pool2d_forward";
    Geom g;
    int64_t s[4];
    if (thcunn__check_runtime(what) ||
        geometry(what, input, kernel, stride, padding, dilation, ceil_mode, &g))
        return thcunn_last_status();
    out_shape(input, g, s);
    if (thcunn__check_output(what, "output", output, input->ndim, s, input->dtype) ||
        thcunn__check_output(what, "indices", indices, input->ndim, s, THC_INT64))
        return thcunn_last_status();
    thc_tensor *x = thc_contiguous(input);
    if (!x) return thcunn__from_thc();
    int rc;
    THCUNN_FLOATING(x->dtype, rc = for_each(what, g.planes * g.OH * g.OW,
                                            MaxFn<scalar_t>{data<scalar_t>(output),
                                                            data<int64_t>(indices),
                                                            data<scalar_t>(x), g}))
    thc_tensor_release(x);
    return rc;
}

extern "C" THCUNN_API int thcunn_max_pool2d_backward_input(thc_tensor *grad_input,
                                                           const thc_tensor *grad_output,
                                                           const thc_tensor *indices) {
    const char *what = "max_pool2d_backward_input";
    if (thcunn__check_runtime(what) || thcunn__check_tensor(what, "grad_input", grad_input, 1) ||
        thcunn__check_tensor(what, "grad_output", grad_output, 1) ||
        thcunn__check_output(what, "indices", indices, grad_output->ndim, grad_output->sizes,
                             THC_INT64))
        return thcunn_last_status();
    int nd = grad_input->ndim;
    if (nd < 3 || grad_output->ndim != nd || !thc_is_contiguous(grad_input))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_input must be a contiguous 3-d or 4-d "
                             "tensor like the input", what);
    // the planes must match: the kernel writes grad_output's planes into
    // grad_input's (more of them would write past its end)
    bool ok = grad_output->dtype == grad_input->dtype;
    for (int d = 0; ok && d < nd - 2; d++) ok = grad_output->sizes[d] == grad_input->sizes[d];
    if (!ok) {
        char a[256], b[256], c[256];
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output %s (%s) and indices %s do not "
                             "match grad_input %s (%s)", what, thcunn__shape_of(grad_output, a),
                             thcunn__type_name(grad_output->dtype), thcunn__shape_of(indices, b),
                             thcunn__shape_of(grad_input, c),
                             thcunn__type_name(grad_input->dtype));
    }
    thc_tensor *g = thc_contiguous(grad_output);
    int rc = g && !thc_zero(grad_input) ? THC_OK : thcunn__from_thc();
    int64_t in_plane = grad_input->sizes[nd - 2] * grad_input->sizes[nd - 1];
    int64_t out_plane = grad_output->sizes[nd - 2] * grad_output->sizes[nd - 1];
    if (!rc && out_plane > 0)
        THCUNN_FLOATING(g->dtype, rc = for_each(what, thcunn__numel(g),
                                                MaxBackFn<scalar_t>{data<scalar_t>(grad_input),
                                                                    data<scalar_t>(g),
                                                                    data<int64_t>(indices),
                                                                    in_plane, out_plane}))
    thc_tensor_release(g);
    return rc;
}

extern "C" THCUNN_API int thcunn_avg_pool2d_forward(thc_tensor *output, const thc_tensor *input,
                                                    const int64_t *kernel, const int64_t *stride,
                                                    const int64_t *padding, int ceil_mode,
                                                    int count_include_pad) {
    const char *what = "avg_pool2d_forward";
    Geom g;
    int64_t s[4];
    if (thcunn__check_runtime(what) ||
        geometry(what, input, kernel, stride, padding, NULL, ceil_mode, &g))
        return thcunn_last_status();
    out_shape(input, g, s);
    if (thcunn__check_output(what, "output", output, input->ndim, s, input->dtype))
        return thcunn_last_status();
    thc_tensor *x = thc_contiguous(input);
    if (!x) return thcunn__from_thc();
    int rc;
    THCUNN_FLOATING(x->dtype, rc = for_each(what, g.planes * g.OH * g.OW,
                                            AvgFn<scalar_t>{data<scalar_t>(output),
                                                            data<scalar_t>(x), g,
                                                            count_include_pad, 0}))
    thc_tensor_release(x);
    return rc;
}

extern "C" THCUNN_API int thcunn_avg_pool2d_backward_input(thc_tensor *grad_input,
                                                           const thc_tensor *grad_output,
                                                           const int64_t *kernel,
                                                           const int64_t *stride,
                                                           const int64_t *padding, int ceil_mode,
                                                           int count_include_pad) {
    const char *what = "avg_pool2d_backward_input";
    Geom g;
    int64_t s[4];
    if (thcunn__check_runtime(what) ||
        geometry(what, grad_input, kernel, stride, padding, NULL, ceil_mode, &g))
        return thcunn_last_status();
    out_shape(grad_input, g, s);
    if (!thc_is_contiguous(grad_input))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_input must be contiguous", what);
    if (thcunn__check_tensor(what, "grad_output", grad_output, 1) ||
        grad_output->ndim != grad_input->ndim || thcunn__numel(grad_output) !=
                                                     g.planes * g.OH * g.OW)
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output does not match the pooling's "
                             "output", what);
    thc_tensor *go = thc_contiguous(grad_output);
    int rc = go && !thc_zero(grad_input) ? THC_OK : thcunn__from_thc();
    if (!rc)
        THCUNN_FLOATING(go->dtype, rc = for_each(what, g.planes * g.OH * g.OW,
                                                 AvgFn<scalar_t>{data<scalar_t>(go),
                                                                 data<scalar_t>(grad_input), g,
                                                                 count_include_pad, 1}))
    thc_tensor_release(go);
    return rc;
}

// ---- window_output_size ------------------------------------------------------
extern "C" THCUNN_API int64_t thcunn_window_output_size(int64_t in, int64_t kernel,
                                                        int64_t stride, int64_t padding,
                                                        int64_t dilation, int ceil_mode) {
    if (kernel < 1 || stride < 1 || dilation < 1 || padding < 0) {
        thcunn__error(THC_ERR_VALUE, "kernel size, stride and dilation must be positive and "
                      "padding non-negative, but got kernel=%lld stride=%lld padding=%lld "
                      "dilation=%lld", (long long)kernel, (long long)stride, (long long)padding,
                      (long long)dilation);
        return -1;
    }
    if (in < 0) {
        thcunn__error(THC_ERR_VALUE, "input size must be non-negative, got %lld", (long long)in);
        return -1;
    }
    if (thcunn__window_fits("window output size", in, kernel, padding, dilation)) return -1;
    // both terms fit and are >= 0: the difference cannot overflow
    int64_t span = in + 2 * padding - (dilation * (kernel - 1) + 1);
    // ceil mode keeps a window that overhangs the end: with span in
    // (-stride, 0) that is one window
    if (span < 0 && !(ceil_mode && span > -stride)) {
        thcunn__error(THC_ERR_RUNTIME, "Calculated output size is too small: input size %lld "
                      "(padded %lld) is smaller than the kernel extent %lld", (long long)in,
                      (long long)(in + 2 * padding), (long long)(dilation * (kernel - 1) + 1));
        return -1;
    }
    int64_t out = thcunn__window_count(in, kernel, stride, padding, dilation, ceil_mode);
    // the last window must start inside the input or its left padding (a
    // start beyond int64 is past it)
    int64_t start;
    if (ceil_mode && (thcunn__mul_ovf(out - 1, stride, &start) || start >= in + padding)) out--;
    return out;
}
