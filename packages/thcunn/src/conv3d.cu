// conv3d, with libTHNN's checks and messages: vol2col / col2vol (a gather:
// no atomics) and the chunked batched products of conv_internal.h, the
// 3-d twin of conv2d.
#include <stdio.h>

#include "conv_internal.h"

using namespace thcunn;
using namespace thcunn::conv;

namespace {

// ---- conv3d ----------------------------------------------------------------
// input (N, C, D, H, W), weight (O, C/G, kd, kh, kw), output (N, O, OD, OH, OW)
struct Vol {
    int64_t N, C, D, H, W, O, kd, kh, kw, OD, OH, OW;
    int64_t sd, sh, sw, pd, ph, pw, dd, dh, dw, G;
    THCUNN_HD int64_t K() const { return C * kd * kh * kw; }
    THCUNN_HD int64_t L() const { return OD * OH * OW; }
    int unfold(const char *what, thc_tensor *cols, const thc_tensor *x) const;
    int fold(const char *what, thc_tensor *x, const thc_tensor *cols) const;
};

// cols[n, (c, a, i, j), (od, oh, ow)] = x[n, c, od*sd - pd + a*dd, oh*sh - ph + i*dh,
// ow*sw - pw + j*dw] or 0 outside
template <typename T> struct Vol2colFn {
    T *cols;
    const T *x;
    Vol g;
    THCUNN_HD void operator()(int64_t idx) const {
        const int64_t L = g.L(), K = g.K();
        const int64_t l = idx % L, k = (idx / L) % K, n = idx / (L * K);
        const int64_t j = k % g.kw, i = (k / g.kw) % g.kh, a = (k / (g.kw * g.kh)) % g.kd;
        const int64_t c = k / (g.kw * g.kh * g.kd);
        const int64_t ow = l % g.OW, oh = (l / g.OW) % g.OH, od = l / (g.OW * g.OH);
        const int64_t z = od * g.sd - g.pd + a * g.dd, y = oh * g.sh - g.ph + i * g.dh,
                      w = ow * g.sw - g.pw + j * g.dw;
        cols[idx] = (z >= 0 && z < g.D && y >= 0 && y < g.H && w >= 0 && w < g.W)
                        ? x[(((n * g.C + c) * g.D + z) * g.H + y) * g.W + w]
                        : T(0);
    }
};

// gx[n, c, z, y, w] = sum of the column entries that read x[n, c, z, y, w]
// (one thread per input element: a gather, no atomics)
template <typename T> struct Col2volFn {
    T *gx;
    const T *cols;
    Vol g;
    THCUNN_HD void operator()(int64_t idx) const {
        const int64_t w = idx % g.W, y = (idx / g.W) % g.H, z = (idx / (g.W * g.H)) % g.D;
        const int64_t nc = idx / (g.W * g.H * g.D), c = nc % g.C, n = nc / g.C;
        const int64_t L = g.L(), K = g.K();
        T acc = 0;
        for (int64_t a = 0; a < g.kd; a++) {
            const int64_t t = z + g.pd - a * g.dd;
            if (t < 0 || t % g.sd) continue;
            const int64_t od = t / g.sd;
            if (od >= g.OD) continue;
            for (int64_t i = 0; i < g.kh; i++) {
                const int64_t u = y + g.ph - i * g.dh;
                if (u < 0 || u % g.sh) continue;
                const int64_t oh = u / g.sh;
                if (oh >= g.OH) continue;
                for (int64_t j = 0; j < g.kw; j++) {
                    const int64_t v = w + g.pw - j * g.dw;
                    if (v < 0 || v % g.sw) continue;
                    const int64_t ow = v / g.sw;
                    if (ow >= g.OW) continue;
                    const int64_t k = ((c * g.kd + a) * g.kh + i) * g.kw + j;
                    acc += cols[(n * K + k) * L + (od * g.OH + oh) * g.OW + ow];
                }
            }
        }
        gx[idx] = acc;
    }
};

int Vol::unfold(const char *what, thc_tensor *cols, const thc_tensor *x) const {
    int rc = THC_OK;
    THCUNN_FLOATING(x->dtype, rc = for_each(what, thcunn__numel(cols),
                                            Vol2colFn<scalar_t>{data<scalar_t>(cols),
                                                                data<scalar_t>(x), *this}))
    return rc;
}

int Vol::fold(const char *what, thc_tensor *x, const thc_tensor *cols) const {
    int rc = THC_OK;
    THCUNN_FLOATING(x->dtype, rc = for_each(what, thcunn__numel(x),
                                            Col2volFn<scalar_t>{data<scalar_t>(x),
                                                                data<scalar_t>(cols), *this}))
    return rc;
}

int conv3d_params(const char *fn, const int64_t *stride, const int64_t *padding,
                  const int64_t *dilation, int64_t groups, Vol *g) {
    if (!stride || !padding || !dilation)
        return thcunn__error(THC_ERR_VALUE, "%s: stride, padding and dilation must not be NULL",
                             fn);
    for (int i = 0; i < 3; i++) {
        if (stride[i] < 1)
            return thcunn__error(THC_ERR_RUNTIME, "%s: non-positive stride is not supported", fn);
        if (padding[i] < 0)
            return thcunn__error(THC_ERR_RUNTIME, "%s: negative padding is not supported", fn);
        if (dilation[i] < 1)
            return thcunn__error(THC_ERR_RUNTIME, "%s: dilation should be greater than zero", fn);
    }
    if (groups < 1)
        return thcunn__error(THC_ERR_RUNTIME, "%s: non-positive groups is not supported", fn);
    g->sd = stride[0]; g->sh = stride[1]; g->sw = stride[2];
    g->pd = padding[0]; g->ph = padding[1]; g->pw = padding[2];
    g->dd = dilation[0]; g->dh = dilation[1]; g->dw = dilation[2];
    g->G = groups;
    return THC_OK;
}

// fills g from the input and weight shapes; checks them as libTHNN does
int conv3d_geometry(const char *fn, const thc_tensor *input, const thc_tensor *weight, Vol *g) {
    char a[256], b[256];
    if (check_pair(fn, input, weight, 5)) return thcunn_last_status();
    g->N = input->sizes[0]; g->C = input->sizes[1]; g->O = weight->sizes[0];
    g->D = input->sizes[2]; g->H = input->sizes[3]; g->W = input->sizes[4];
    g->kd = weight->sizes[2]; g->kh = weight->sizes[3]; g->kw = weight->sizes[4];
    if (g->O % g->G)
        return thcunn__error(THC_ERR_RUNTIME, "%s: out_channels (%lld) must be divisible by "
                             "groups (%lld)", fn, (long long)g->O, (long long)g->G);
    int64_t want_c;
    if (thcunn__mul_ovf(weight->sizes[1], g->G, &want_c))
        return thcunn__size_overflow(fn, "weight size 1 times groups");
    if (want_c != g->C)
        return thcunn__error(THC_ERR_RUNTIME, "Given groups=%lld, weight of size %s, expected "
                             "input%s to have %lld channels, but got %lld channels instead",
                             (long long)g->G, thcunn__shape_of(weight, a),
                             thcunn__shape_of(input, b),
                             (long long)want_c, (long long)g->C);
    if (g->kd < 1 || g->kh < 1 || g->kw < 1)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected a non-empty kernel, but got weight "
                             "of size %s", fn, thcunn__shape_of(weight, a));
    const int64_t in[3] = {g->D, g->H, g->W}, k[3] = {g->kd, g->kh, g->kw};
    const int64_t p[3] = {g->pd, g->ph, g->pw}, d[3] = {g->dd, g->dh, g->dw};
    const int64_t s[3] = {g->sd, g->sh, g->sw};
    int64_t out[3];
    for (int i = 0; i < 3; i++)
        if (thcunn__window_fits(fn, in[i], k[i], p[i], d[i])) return thcunn_last_status();
    for (int i = 0; i < 3; i++) {
        if (in[i] + 2 * p[i] < d[i] * (k[i] - 1) + 1)
            return thcunn__error(THC_ERR_RUNTIME, "Calculated padded input size per channel: "
                                 "(%lld x %lld x %lld). Kernel size: (%lld x %lld x %lld). "
                                 "Kernel size can't be greater than actual input size",
                                 (long long)(in[0] + 2 * p[0]), (long long)(in[1] + 2 * p[1]),
                                 (long long)(in[2] + 2 * p[2]), (long long)(d[0] * (k[0] - 1) + 1),
                                 (long long)(d[1] * (k[1] - 1) + 1),
                                 (long long)(d[2] * (k[2] - 1) + 1));
        out[i] = thcunn__window_count(in[i], k[i], s[i], p[i], d[i], 0);
    }
    g->OD = out[0]; g->OH = out[1]; g->OW = out[2];
    return THC_OK;
}

}  // namespace

extern "C" THCUNN_API int thcunn_conv3d_forward(thc_tensor *output, const thc_tensor *input,
                                                const thc_tensor *weight, const thc_tensor *bias,
                                                const int64_t *stride, const int64_t *padding,
                                                const int64_t *dilation, int64_t groups) {
    const char *fn = "conv3d_forward";
    Vol g;
    if (thcunn__check_runtime(fn) || conv3d_params(fn, stride, padding, dilation, groups, &g) ||
        conv3d_geometry(fn, input, weight, &g) ||
        thcunn__check_vec(fn, "bias", bias, g.O, input->dtype))
        return thcunn_last_status();
    const int64_t os[5] = {g.N, g.O, g.OD, g.OH, g.OW};
    if (check_out(fn, "output", output, 5, os, input->dtype)) return thcunn_last_status();
    if (thcunn__numel(output) == 0) return THC_OK;
    int rc;
    if (g.K() == 0) {   // no input channels: the output is the bias alone
        rc = zero_out(output);
    } else {
        thc_tensor *x, *w;
        rc = contig2(input, weight, &x, &w);
        if (!rc) rc = conv::forward_cols(fn, output, x, w, g);
        thc_tensor_release(x);
        thc_tensor_release(w);
    }
    return !rc && bias ? conv::add_bias(output, bias) : rc;
}

extern "C" THCUNN_API int thcunn_conv3d_backward_input(thc_tensor *grad_input,
                                                       const thc_tensor *grad_output,
                                                       const thc_tensor *weight,
                                                       const int64_t *stride,
                                                       const int64_t *padding,
                                                       const int64_t *dilation, int64_t groups) {
    const char *fn = "conv3d_backward_input";
    Vol g;
    if (thcunn__check_runtime(fn) || conv3d_params(fn, stride, padding, dilation, groups, &g) ||
        thcunn__check_tensor(fn, "grad_input", grad_input, 1) ||
        conv3d_geometry(fn, grad_input, weight, &g))
        return thcunn_last_status();
    const int64_t os[5] = {g.N, g.O, g.OD, g.OH, g.OW};
    if (check_grad_output(fn, grad_output, 5, os, weight->dtype) ||
        thcunn__check_like(fn, "grad_input", grad_input, grad_input))
        return thcunn_last_status();
    if (thcunn__numel(grad_input) == 0) return THC_OK;
    if (thcunn__numel(grad_output) == 0) return zero_out(grad_input);
    thc_tensor *go, *w;
    int rc = contig2(grad_output, weight, &go, &w);
    if (!rc) rc = conv::input_cols(fn, grad_input, go, w, g);
    thc_tensor_release(go);
    thc_tensor_release(w);
    return rc;
}

extern "C" THCUNN_API int thcunn_conv3d_backward_params(thc_tensor *grad_weight,
                                                        thc_tensor *grad_bias,
                                                        const thc_tensor *grad_output,
                                                        const thc_tensor *input,
                                                        const int64_t *stride,
                                                        const int64_t *padding,
                                                        const int64_t *dilation, int64_t groups) {
    const char *fn = "conv3d_backward_params";
    Vol g;
    if (thcunn__check_runtime(fn) || conv3d_params(fn, stride, padding, dilation, groups, &g))
        return thcunn_last_status();
    if (!grad_weight && !grad_bias) return THC_OK;
    if (check_params_inputs(fn, grad_output, input, 5)) return thcunn_last_status();
    if (grad_weight) {
        if (thcunn__check_tensor(fn, "grad_weight", grad_weight, 1) ||
            conv3d_geometry(fn, input, grad_weight, &g))
            return thcunn_last_status();
        const int64_t os[5] = {g.N, g.O, g.OD, g.OH, g.OW};
        if (check_grad_output(fn, grad_output, 5, os, input->dtype) ||
            thcunn__check_like(fn, "grad_weight", grad_weight, grad_weight))
            return thcunn_last_status();
    }
    const int64_t O = grad_output->sizes[1];
    if (grad_bias && check_out(fn, "grad_bias", grad_bias, 1, &O, input->dtype))
        return thcunn_last_status();
    if (grad_bias && conv::bias_grad(grad_bias, grad_output)) return thcunn_last_status();
    if (!grad_weight) return THC_OK;
    if (thcunn__numel(grad_output) == 0 || thcunn__numel(grad_weight) == 0)
        return zero_out(grad_weight);
    thc_tensor *x, *go;
    int rc = contig2(input, grad_output, &x, &go);
    if (!rc) rc = conv::weight_cols(fn, grad_weight, go, x, g);
    thc_tensor_release(x);
    thc_tensor_release(go);
    return rc;
}
