// thcunn_window_output_size, adaptive_avg_pool2d, adaptive_max_pool2d (with
// indices), max_pool3d (indices, dilation, ceil_mode) and avg_pool3d
// (ceil_mode, count_include_pad, divisor_override).  Rules, checks and
// messages are libTHNN's (pooling.c, adaptive_max_pool.c, pooling3d.c,
// max_pool_grad.c).
//
// Forwards: a thread per output element.  The average backwards gather (a
// thread per input element sums the windows that cover it, in the order
// libTHNN adds them: no atomics, same rounding); the max backwards scatter
// along the saved indices with atomic adds (windows may share a maximum).
#include "thcunn_internal.h"

using namespace thcunn;

namespace {

// ---- checks with libTHNN's wording (plus "on a device") ----------------

int check_dtype(const char *fn, const char *name, const thc_tensor *t, int dtype) {
    if (thcunn__check_device(fn, name, t)) return thcunn_last_status();
    if (t->dtype != dtype)
        return thcunn__error(THC_ERR_TYPE, "%s: expected scalar type %s but found %s for %s", fn,
                             thcunn__type_name(dtype), thcunn__type_name(t->dtype), name);
    return THC_OK;
}

// ---- adaptive cells -------------------------------------------------------
// Output cell o of `out` over `in` covers [o*in/out, ceil((o+1)*in/out)).
// The same two formulas with in and out swapped give the cells covering
// input element i, which the gathering backward walks.
THCUNN_HD inline int64_t cell_start(int64_t o, int64_t in, int64_t out) { return o * in / out; }
THCUNN_HD inline int64_t cell_end(int64_t o, int64_t in, int64_t out) {
    return ((o + 1) * in + out - 1) / out;
}

template <typename T> struct AdaptiveAvgFn {
    T *out;
    const T *x;
    int64_t H, W, OH, OW;
    THCUNN_HD void operator()(int64_t o) const {
        int64_t ow = o % OW, oh = (o / OW) % OH, p = o / (OW * OH);
        const T *xp = x + p * H * W;
        int64_t h0 = cell_start(oh, H, OH), h1 = cell_end(oh, H, OH);
        int64_t w0 = cell_start(ow, W, OW), w1 = cell_end(ow, W, OW);
        T s = 0;
        for (int64_t h = h0; h < h1; h++)
            for (int64_t w = w0; w < w1; w++) s += xp[h * W + w];
        out[o] = s / (T)((h1 - h0) * (w1 - w0));
    }
};

template <typename T> struct AdaptiveAvgBackFn {
    T *gin;
    const T *gout;
    int64_t H, W, OH, OW;
    THCUNN_HD void operator()(int64_t i) const {
        int64_t w = i % W, h = (i / W) % H, p = i / (W * H);
        const T *gp = gout + p * OH * OW;
        int64_t oh1 = cell_end(h, OH, H), ow0 = cell_start(w, OW, W), ow1 = cell_end(w, OW, W);
        T s = 0;
        for (int64_t oh = cell_start(h, OH, H); oh < oh1; oh++) {
            int64_t rows = cell_end(oh, H, OH) - cell_start(oh, H, OH);
            for (int64_t ow = ow0; ow < ow1; ow++) {
                int64_t n = rows * (cell_end(ow, W, OW) - cell_start(ow, W, OW));
                s += gp[oh * OW + ow] / (T)n;
            }
        }
        gin[i] = s;
    }
};

// first maximal element of the cell (row-major); a NaN wins and ends it
template <typename T> struct AdaptiveMaxFn {
    T *out;
    int64_t *ind;
    const T *x;
    int64_t H, W, OH, OW;
    THCUNN_HD void operator()(int64_t o) const {
        int64_t ow = o % OW, oh = (o / OW) % OH, p = o / (OW * OH);
        const T *xp = x + p * H * W;
        int64_t h0 = cell_start(oh, H, OH), h1 = cell_end(oh, H, OH);
        int64_t w0 = cell_start(ow, W, OW), w1 = cell_end(ow, W, OW);
        T best = xp[h0 * W + w0];
        int64_t bi = h0 * W + w0;
        for (int64_t h = h0; h < h1 && best == best; h++)
            for (int64_t w = w0; w < w1; w++) {
                T v = xp[h * W + w];
                if (v > best || v != v) {
                    best = v;
                    bi = h * W + w;
                    if (v != v) break;
                }
            }
        out[o] = best;
        ind[o] = bi;
    }
};

// ---- the max backwards: scatter along the indices -------------------------
#ifdef __CUDACC__
__device__ inline void atomic_min_i64(int64_t *p, int64_t v) {
    atomicMin((long long *)p, (long long)v);
}
#else
inline void atomic_min_i64(int64_t *p, int64_t v) {
    if (v < *p) *p = v;
}
#endif

// *first = the smallest position whose index is neither -1 nor in the
// plane (a template only so that nvcc compiles its host side lazily)
template <typename I> struct BadIndexFn {
    const I *ind;
    int64_t in_plane;
    I *first;
    THCUNN_HD void operator()(int64_t i) const {
        I k = ind[i];
        if (k < -1 || k >= in_plane) atomic_min_i64(first, i);
    }
};

template <typename T> struct ScatterFn {
    T *gin;
    const T *gout;
    const int64_t *ind;
    int64_t in_plane, out_plane;
    THCUNN_HD void operator()(int64_t i) const {
        int64_t k = ind[i];
        if (k >= 0 && k < in_plane) atomic_add(gin + (i / out_plane) * in_plane + k, gout[i]);
    }
};

// libTHNN's thnn__max_pool_backward: grad_input (lead..., spatial dims)
// with lead 1 or 2; every index is checked (on the device) before anything
// is written; -1 (a window of padding only) passes no gradient.
int max_pool_backward(const char *fn, thc_tensor *grad_input, const thc_tensor *grad_output,
                      const thc_tensor *indices, int spatial) {
    char a[256], b[256], c[256];
    if (thcunn__check_runtime(fn) || thcunn__check_float(fn, "grad_input", grad_input) ||
        thcunn__check_like(fn, "grad_input", grad_input, grad_input) ||
        thcunn__check_float(fn, "grad_output", grad_output) ||
        check_dtype(fn, "indices", indices, THC_INT64))
        return thcunn_last_status();
    if (grad_output->dtype != grad_input->dtype)
        return thcunn__error(THC_ERR_TYPE, "%s: grad_output type (%s) and grad_input type (%s) "
                             "should be the same", fn, thcunn__type_name(grad_output->dtype),
                             thcunn__type_name(grad_input->dtype));
    const int d = grad_input->ndim, lead = d - spatial;
    int ok = (lead == 1 || lead == 2) && grad_output->ndim == d && indices->ndim == d;
    for (int i = 0; ok && i < d; i++)
        ok = grad_output->sizes[i] == indices->sizes[i] &&
             (i >= lead || grad_output->sizes[i] == grad_input->sizes[i]);
    if (!ok)
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output %s and indices %s do not match "
                             "grad_input %s (%dD or %dD, same leading dims)", fn,
                             thcunn__shape_of(grad_output, a), thcunn__shape_of(indices, b),
                             thcunn__shape_of(grad_input, c),
                             spatial + 1, spatial + 2);
    int64_t planes = 1, in_plane = 1, out_plane = 1;
    for (int i = 0; i < d; i++) {
        if (i < lead) {
            planes *= grad_input->sizes[i];
        } else {
            in_plane *= grad_input->sizes[i];
            out_plane *= grad_output->sizes[i];
        }
    }
    const int64_t n = planes * out_plane, one = 1;
    thc_tensor *go = thcunn__contig(grad_output), *ind = go ? thcunn__contig(indices) : NULL;
    thc_tensor *first = ind && n > 0 ? thc_empty(1, &one, THC_INT64) : NULL;
    int rc = !ind ? thcunn_last_status() : n > 0 && !first ? thcunn__from_thc() : THC_OK;
    if (!rc && n > 0) {
        // the first bad position, found on the device and read back (the one
        // host synchronisation: nothing may be written when an index is bad)
        int64_t pos = n, bad = 0;
        if (thc_copy_from_host(first, &pos)) rc = thcunn__from_thc();
        if (!rc)
            rc = for_each(fn, n, BadIndexFn<int64_t>{data<int64_t>(ind), in_plane,
                                                     data<int64_t>(first)});
        if (!rc && thc_copy_to_host(&pos, first)) rc = thcunn__from_thc();
        if (!rc && pos < n) {
            rc = thc_get_int64(ind, pos, &bad)
                     ? thcunn__from_thc()
                     : thcunn__error(THC_ERR_INDEX, "%s: index %lld out of range for an input "
                                     "plane of %lld elements", fn, (long long)bad,
                                     (long long)in_plane);
        }
    }
    if (!rc && thc_zero(grad_input)) rc = thcunn__from_thc();
    if (!rc && n > 0)
        THCUNN_FLOATING(go->dtype, rc = for_each(fn, n,
                                                 ScatterFn<scalar_t>{data<scalar_t>(grad_input),
                                                                     data<scalar_t>(go),
                                                                     data<int64_t>(ind),
                                                                     in_plane, out_plane}))
    thc_tensor_release(go);
    thc_tensor_release(ind);
    thc_tensor_release(first);
    return rc;
}

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

// ---- adaptive checks ----------------------------------------------------------
int adaptive_check(const char *fn, const thc_tensor *input, int64_t *planes) {
    char a[256];
    if (thcunn__check_float(fn, "input", input)) return thcunn_last_status();
    if (input->ndim != 3 && input->ndim != 4)
        return thcunn__error(THC_ERR_RUNTIME, "%s: Expected 3D or 4D tensor, but got %s", fn,
                             thcunn__shape_of(input, a));
    for (int i = 1; i < input->ndim; i++)
        if (input->sizes[i] == 0)
            return thcunn__error(THC_ERR_RUNTIME, "%s: Expected input to have non-zero size for "
                                 "non-batch dimensions, but input has sizes %s with dimension "
                                 "%d being empty", fn, thcunn__shape_of(input, a), i);
    if (thcunn__planes(fn, input, 0, input->ndim - 2, planes)) return thcunn_last_status();
    return THC_OK;
}

}  // namespace

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
    int64_t out = (ceil_mode && span > 0 ? (span - 1) / stride + 1 : span / stride) + 1;
    // the last window must start inside the input or its left padding (a
    // start beyond int64 is past it)
    int64_t start;
    if (ceil_mode && (thcunn__mul_ovf(out - 1, stride, &start) || start >= in + padding)) out--;
    return out;
}

// ---- adaptive_avg_pool2d ----------------------------------------------------------
extern "C" THCUNN_API int thcunn_adaptive_avg_pool2d_forward(thc_tensor *output,
                                                             const thc_tensor *input) {
    static const char fn[] = "adaptive_avg_pool2d";
    int64_t planes;
    if (thcunn__check_runtime(fn) || adaptive_check(fn, input, &planes) ||
        thcunn__check_float(fn, "output", output))
        return thcunn_last_status();
    const int d = input->ndim;
    int ok = output->ndim == d && output->sizes[d - 2] > 0 && output->sizes[d - 1] > 0;
    for (int i = 0; ok && i < d - 2; i++) ok = output->sizes[i] == input->sizes[i];
    if (!ok) {
        char a[256], b[256];
        return thcunn__error(THC_ERR_RUNTIME, "%s: output %s does not fit input %s (same "
                             "leading dims, positive output size)", fn,
                             thcunn__shape_of(output, a), thcunn__shape_of(input, b));
    }
    if (thcunn__check_like(fn, "output", output, output)) return thcunn_last_status();
    if (output->dtype != input->dtype)
        return thcunn__error(THC_ERR_TYPE, "%s: output dtype differs from input", fn);
    thc_tensor *x = thcunn__contig(input);
    if (!x) return thcunn_last_status();
    const int64_t H = x->sizes[d - 2], W = x->sizes[d - 1];
    const int64_t OH = output->sizes[d - 2], OW = output->sizes[d - 1];
    int rc;
    THCUNN_FLOATING(x->dtype, rc = for_each(fn, planes * OH * OW,
                                            AdaptiveAvgFn<scalar_t>{data<scalar_t>(output),
                                                                    data<scalar_t>(x), H, W, OH,
                                                                    OW}))
    thc_tensor_release(x);
    return rc;
}

extern "C" THCUNN_API int thcunn_adaptive_avg_pool2d_backward_input(
    thc_tensor *grad_input, const thc_tensor *grad_output) {
    static const char fn[] = "adaptive_avg_pool2d_backward_input";
    int64_t planes;
    if (thcunn__check_runtime(fn) || adaptive_check(fn, grad_input, &planes) ||
        thcunn__check_like(fn, "grad_input", grad_input, grad_input) ||
        thcunn__check_float(fn, "grad_output", grad_output))
        return thcunn_last_status();
    const int d = grad_input->ndim;
    int ok = grad_output->ndim == d && grad_output->dtype == grad_input->dtype;
    for (int i = 0; ok && i < d - 2; i++) ok = grad_output->sizes[i] == grad_input->sizes[i];
    if (!ok) {
        char a[256], b[256];
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output %s does not fit grad_input %s",
                             fn, thcunn__shape_of(grad_output, a),
                             thcunn__shape_of(grad_input, b));
    }
    const int64_t H = grad_input->sizes[d - 2], W = grad_input->sizes[d - 1];
    const int64_t OH = grad_output->sizes[d - 2], OW = grad_output->sizes[d - 1];
    if (OH == 0 || OW == 0) {   // no cells: no gradient (and no division by 0 below)
        return thc_zero(grad_input) ? thcunn__from_thc() : THC_OK;
    }
    thc_tensor *go = thcunn__contig(grad_output);
    if (!go) return thcunn_last_status();
    int rc;
    THCUNN_FLOATING(go->dtype, rc = for_each(fn, planes * H * W,
                                             AdaptiveAvgBackFn<scalar_t>{
                                                 data<scalar_t>(grad_input), data<scalar_t>(go),
                                                 H, W, OH, OW}))
    thc_tensor_release(go);
    return rc;
}

// ---- adaptive_max_pool2d ----------------------------------------------------------
extern "C" THCUNN_API int thcunn_adaptive_max_pool2d_forward(thc_tensor *output,
                                                             thc_tensor *indices,
                                                             const thc_tensor *input) {
    static const char fn[] = "adaptive_max_pool2d";
    char a[256], b[256];
    if (thcunn__check_runtime(fn) || thcunn__check_float(fn, "input", input))
        return thcunn_last_status();
    const int d = input->ndim;
    if (d != 3 && d != 4)
        return thcunn__error(THC_ERR_RUNTIME, "%s: Expected 3D or 4D tensor, but got %s", fn,
                             thcunn__shape_of(input, a));
    for (int i = d - 3; i < d; i++)
        if (input->sizes[i] == 0)
            return thcunn__error(THC_ERR_RUNTIME, "%s: Expected input to have non-zero size for "
                                 "non-batch dimensions, but input has sizes %s with dimension "
                                 "%d being empty", fn, thcunn__shape_of(input, a), i);
    if (thcunn__check_float(fn, "output", output)) return thcunn_last_status();
    int ok = output->ndim == d && output->sizes[d - 2] > 0 && output->sizes[d - 1] > 0;
    for (int i = 0; ok && i < d - 2; i++) ok = output->sizes[i] == input->sizes[i];
    if (!ok)
        return thcunn__error(THC_ERR_RUNTIME, "%s: output %s does not fit input %s (same "
                             "leading dims, positive output size)", fn,
                             thcunn__shape_of(output, a), thcunn__shape_of(input, b));
    if (thcunn__check_out(fn, "output", output, d, output->sizes, input->dtype) ||
        thcunn__check_out(fn, "indices", indices, d, output->sizes, THC_INT64))
        return thcunn_last_status();
    const int64_t planes = d == 4 ? input->sizes[0] * input->sizes[1] : input->sizes[0];
    const int64_t H = input->sizes[d - 2], W = input->sizes[d - 1];
    const int64_t OH = output->sizes[d - 2], OW = output->sizes[d - 1];
    thc_tensor *x = thcunn__contig(input);
    if (!x) return thcunn_last_status();
    int rc;
    THCUNN_FLOATING(x->dtype, rc = for_each(fn, planes * OH * OW,
                                            AdaptiveMaxFn<scalar_t>{data<scalar_t>(output),
                                                                    data<int64_t>(indices),
                                                                    data<scalar_t>(x), H, W, OH,
                                                                    OW}))
    thc_tensor_release(x);
    return rc;
}

extern "C" THCUNN_API int thcunn_adaptive_max_pool2d_backward_input(
    thc_tensor *grad_input, const thc_tensor *grad_output, const thc_tensor *indices) {
    return max_pool_backward("adaptive_max_pool2d_backward_input", grad_input, grad_output,
                             indices, 2);
}

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
