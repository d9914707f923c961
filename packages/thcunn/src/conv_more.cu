// conv1d, conv3d and conv_transpose2d, with libTHNN's checks and messages.
//  - conv1d: conv2d on (N, C, 1, L) views (thc_unsqueeze), as libTHNN does.
//  - conv3d: vol2col / col2vol (a gather: no atomics) and the chunked
//    batched products of conv_internal.h, the 3-d twin of conv2d.
//  - conv_transpose2d: conv2d with the roles of input and output swapped
//    (conv2d's geometry on y (N, O, OH, OW) with x's H x W as its output
//    positions): the forward is conv2d's input-gradient path (products,
//    then col2im into y), the input gradient conv2d's forward (im2col of
//    grad_output), the weight gradient conv2d's with x as "grad_output".
#include <stdio.h>

#include "conv_internal.h"

using namespace thcunn;
using thcunn::conv::Conv;

namespace {

// an output (thcunn__check_out), NULL worded as thcunn__check_tensor words it
int check_out(const char *fn, const char *name, const thc_tensor *t, int ndim,
              const int64_t *sizes, int dtype) {
    return t ? thcunn__check_out(fn, name, t, ndim, sizes, dtype)
             : thcunn__check_tensor(fn, name, t, 0);
}

// grad_output must be `os` (ndim dims) of the input's dtype
int check_grad_output(const char *fn, const thc_tensor *gout, int ndim, const int64_t *os,
                      int dtype) {
    char a[256], b[256];
    if (thcunn__check_tensor(fn, "grad_output", gout, 1)) return thcunn_last_status();
    int ok = gout->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++) ok = gout->sizes[i] == os[i];
    if (!ok)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected grad_output of shape %s but got %s",
                             fn, thcunn__shape_str(ndim, os, a), thcunn__shape_of(gout, b));
    if (gout->dtype != dtype)
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output type (%s) and input type (%s) "
                             "should be the same", fn, thcunn__type_name(gout->dtype),
                             thcunn__type_name(dtype));
    return THC_OK;
}

// the input and weight of a convolution: floating, on the device, nd-D, one dtype
int check_pair(const char *fn, const thc_tensor *input, const thc_tensor *weight, int nd) {
    char a[256], b[256];
    if (thcunn__check_tensor(fn, "input", input, 1) ||
        thcunn__check_tensor(fn, "weight", weight, 1))
        return thcunn_last_status();
    if (weight->ndim != nd)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected weight to be %d-D, but got weight "
                             "of size %s", fn, nd, thcunn__shape_of(weight, a));
    if (input->ndim != nd)
        return thcunn__error(THC_ERR_RUNTIME, "Expected %d-dimensional input for %d-dimensional "
                             "weight %s, but got %d-dimensional input of size %s instead", nd, nd,
                             thcunn__shape_of(weight, a), input->ndim, thcunn__shape_of(input, b));
    if (input->dtype != weight->dtype)
        return thcunn__error(THC_ERR_RUNTIME, "Input type (%s) and weight type (%s) should be "
                             "the same", thcunn__type_name(input->dtype),
                             thcunn__type_name(weight->dtype));
    return THC_OK;
}

// the backward_params preamble: input and grad_output nd-D, one dtype and batch
int check_params_inputs(const char *fn, const thc_tensor *grad_output, const thc_tensor *input,
                        int nd) {
    char a[256], b[256];
    if (thcunn__check_tensor(fn, "input", input, 1) ||
        thcunn__check_tensor(fn, "grad_output", grad_output, 1))
        return thcunn_last_status();
    if (grad_output->ndim != nd || input->ndim != nd)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected %d-D input and grad_output, but got "
                             "input of size %s and grad_output of size %s", fn, nd,
                             thcunn__shape_of(input, a), thcunn__shape_of(grad_output, b));
    if (grad_output->dtype != input->dtype || grad_output->sizes[0] != input->sizes[0])
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output %s (%s) and input %s (%s) must "
                             "have one dtype and batch size", fn, thcunn__shape_of(grad_output, a),
                             thcunn__type_name(grad_output->dtype), thcunn__shape_of(input, b),
                             thcunn__type_name(input->dtype));
    return THC_OK;
}

// contiguous copies (or new references) of two inputs; NULL and the error set on failure
int contig2(const thc_tensor *a, const thc_tensor *b, thc_tensor **ca, thc_tensor **cb) {
    *ca = thc_contiguous(a);
    *cb = *ca ? thc_contiguous(b) : NULL;
    return *cb ? THC_OK : thcunn__from_thc();
}

int zero_out(thc_tensor *t) {
    return thc_zero(t) ? thcunn__from_thc() : THC_OK;
}

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
        out[i] = (in[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
    }
    g->OD = out[0]; g->OH = out[1]; g->OW = out[2];
    return THC_OK;
}

// ---- conv_transpose2d --------------------------------------------------------
// input x (N, C, H, W), weight (C, O/G, kh, kw), output y (N, O, OH, OW)
struct Convt {
    int64_t N, C, O, G, H, W, kh, kw, OH, OW;
    int64_t sh, sw, ph, pw, oph, opw, dh, dw;
    // conv2d's geometry with y as its input and x as its output
    Conv as_conv() const {
        Conv c;
        c.N = N; c.C = O; c.H = OH; c.W = OW; c.O = C; c.kh = kh; c.kw = kw;
        c.OH = H; c.OW = W; c.sh = sh; c.sw = sw; c.ph = ph; c.pw = pw;
        c.dh = dh; c.dw = dw; c.G = G;
        return c;
    }
};

int convt_params(const char *fn, const int64_t *stride, const int64_t *padding,
                 const int64_t *output_padding, const int64_t *dilation, int64_t groups,
                 Convt *g) {
    if (!stride || !padding || !output_padding || !dilation)
        return thcunn__error(THC_ERR_VALUE, "%s: stride, padding, output_padding and dilation "
                             "must not be NULL", fn);
    for (int i = 0; i < 2; i++) {
        if (stride[i] < 1)
            return thcunn__error(THC_ERR_RUNTIME, "%s: non-positive stride is not supported", fn);
        if (padding[i] < 0 || output_padding[i] < 0)
            return thcunn__error(THC_ERR_RUNTIME, "%s: negative padding is not supported", fn);
        if (dilation[i] < 1)
            return thcunn__error(THC_ERR_RUNTIME, "%s: dilation should be greater than zero", fn);
    }
    if ((output_padding[0] >= stride[0] && output_padding[0] >= dilation[0]) ||
        (output_padding[1] >= stride[1] && output_padding[1] >= dilation[1]))
        return thcunn__error(THC_ERR_RUNTIME, "%s: output padding must be smaller than either "
                             "stride or dilation, but got output_padding_height: %lld "
                             "output_padding_width: %lld stride_height: %lld stride_width: "
                             "%lld dilation_height: %lld dilation_width: %lld", fn,
                             (long long)output_padding[0], (long long)output_padding[1],
                             (long long)stride[0], (long long)stride[1], (long long)dilation[0],
                             (long long)dilation[1]);
    if (groups < 1)
        return thcunn__error(THC_ERR_RUNTIME, "%s: non-positive groups is not supported", fn);
    g->sh = stride[0]; g->sw = stride[1];
    g->ph = padding[0]; g->pw = padding[1];
    g->oph = output_padding[0]; g->opw = output_padding[1];
    g->dh = dilation[0]; g->dw = dilation[1];
    g->G = groups;
    return THC_OK;
}

// (in - 1) * s - 2 * p + d * (k - 1) + op + 1, checked (in, k >= 1)
int convt_out(int64_t in, int64_t s, int64_t p, int64_t d, int64_t k, int64_t op, int64_t *out) {
    int64_t a, b, r;
    return thcunn__mul_ovf(in - 1, s, &a) || thcunn__mul_ovf(p, 2, &b) ||
           thcunn__mul_ovf(d, k - 1, &r) || thcunn__add_ovf(a - b, r, &r) ||
           thcunn__add_ovf(r, op, &r) || thcunn__add_ovf(r, 1, out);
}

// fills g from the input and weight shapes; checks them as libTHNN does
int convt_geometry(const char *fn, const thc_tensor *input, const thc_tensor *weight, Convt *g) {
    char a[256], b[256];
    if (check_pair(fn, input, weight, 4)) return thcunn_last_status();
    g->N = input->sizes[0]; g->C = input->sizes[1];
    g->H = input->sizes[2]; g->W = input->sizes[3];
    g->kh = weight->sizes[2]; g->kw = weight->sizes[3];
    if (weight->sizes[0] != g->C)
        return thcunn__error(THC_ERR_RUNTIME, "Given transposed=1, weight of size %s, expected "
                             "input%s to have %lld channels, but got %lld channels instead",
                             thcunn__shape_of(weight, a), thcunn__shape_of(input, b),
                             (long long)weight->sizes[0], (long long)g->C);
    if (g->C % g->G)
        return thcunn__error(THC_ERR_RUNTIME, "%s: in_channels (%lld) must be divisible by "
                             "groups (%lld)", fn, (long long)g->C, (long long)g->G);
    if (thcunn__mul_ovf(weight->sizes[1], g->G, &g->O))
        return thcunn__size_overflow(fn, "out_channels (weight size 1 times groups)");
    if (g->H < 1 || g->W < 1)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected input to have non-zero size for the "
                             "spatial dimensions, but got input of size %s", fn,
                             thcunn__shape_of(input, a));
    if (g->kh < 1 || g->kw < 1)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected a non-empty kernel, but got weight "
                             "of size %s", fn, thcunn__shape_of(weight, a));
    if (convt_out(g->H, g->sh, g->ph, g->dh, g->kh, g->oph, &g->OH) ||
        convt_out(g->W, g->sw, g->pw, g->dw, g->kw, g->opw, &g->OW))
        return thcunn__size_overflow(fn, "the output size");
    if (g->OH < 1 || g->OW < 1)
        return thcunn__error(THC_ERR_RUNTIME, "Given input size per channel: (%lld x %lld). "
                             "Calculated output size per channel: (%lld x %lld). Output size "
                             "is too small", (long long)g->H, (long long)g->W,
                             (long long)g->OH, (long long)g->OW);
    return THC_OK;
}

// ---- conv1d --------------------------------------------------------------------
// t (N, C, L) as (N, C, 1, L); NULL with libTHNN's message when t is not 3-D
thc_tensor *as_2d(const thc_tensor *t) {
    if (!t) return NULL;
    if (t->ndim != 3) {
        char a[256];
        thcunn__error(THC_ERR_RUNTIME, "conv1d: expected a 3-D tensor but got %s",
                      thcunn__shape_of(t, a));
        return NULL;
    }
    thc_tensor *v = thc_unsqueeze(t, 2);
    if (!v) thcunn__from_thc();
    return v;
}

// which: 0 forward (o1 output, a input, b weight), 1 backward_input (o1
// grad_input, a grad_output, b weight), 2 backward_params (o1 grad_weight,
// o2 grad_bias, a grad_output, b input)
int conv1d_call(int which, thc_tensor *o1, thc_tensor *o2, const thc_tensor *a,
                const thc_tensor *b, const thc_tensor *bias, int64_t stride, int64_t padding,
                int64_t dilation, int64_t groups) {
    const int64_t s[2] = {1, stride}, p[2] = {0, padding}, d[2] = {1, dilation};
    thc_tensor *v1 = NULL, *va = NULL, *vb = NULL;
    int rc;
    if ((o1 && !(v1 = as_2d(o1))) || !(va = as_2d(a)) || !(vb = as_2d(b)))
        rc = thcunn_last_status();
    else if (which == 0)
        rc = thcunn_conv2d_forward(v1, va, vb, bias, s, p, d, groups);
    else if (which == 1)
        rc = thcunn_conv2d_backward_input(v1, va, vb, s, p, d, groups);
    else
        rc = thcunn_conv2d_backward_params(v1, o2, va, vb, s, p, d, groups);
    thc_tensor *all[] = {v1, va, vb};
    for (thc_tensor *t : all) thc_tensor_release(t);
    return rc;
}

}  // namespace

extern "C" THCUNN_API int thcunn_conv1d_forward(thc_tensor *output, const thc_tensor *input,
                                                const thc_tensor *weight, const thc_tensor *bias,
                                                int64_t stride, int64_t padding,
                                                int64_t dilation, int64_t groups) {
    if (thcunn__check_runtime("conv1d_forward")) return thcunn_last_status();
    if (!output || !input || !weight)
        return thcunn__error(THC_ERR_VALUE, "conv1d_forward: output, input and weight must not "
                             "be NULL");
    return conv1d_call(0, output, NULL, input, weight, bias, stride, padding, dilation, groups);
}

extern "C" THCUNN_API int thcunn_conv1d_backward_input(thc_tensor *grad_input,
                                                       const thc_tensor *grad_output,
                                                       const thc_tensor *weight, int64_t stride,
                                                       int64_t padding, int64_t dilation,
                                                       int64_t groups) {
    if (thcunn__check_runtime("conv1d_backward_input")) return thcunn_last_status();
    if (!grad_input || !grad_output || !weight)
        return thcunn__error(THC_ERR_VALUE, "conv1d_backward_input: tensors must not be NULL");
    return conv1d_call(1, grad_input, NULL, grad_output, weight, NULL, stride, padding, dilation,
                       groups);
}

extern "C" THCUNN_API int thcunn_conv1d_backward_params(thc_tensor *grad_weight,
                                                        thc_tensor *grad_bias,
                                                        const thc_tensor *grad_output,
                                                        const thc_tensor *input, int64_t stride,
                                                        int64_t padding, int64_t dilation,
                                                        int64_t groups) {
    if (thcunn__check_runtime("conv1d_backward_params")) return thcunn_last_status();
    if (!grad_output || !input)
        return thcunn__error(THC_ERR_VALUE, "conv1d_backward_params: grad_output and input must "
                             "not be NULL");
    // bias only (grad_weight NULL): conv2d needs no kernel size for it
    return conv1d_call(2, grad_weight, grad_bias, grad_output, input, NULL, stride, padding,
                       dilation, groups);
}

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

extern "C" THCUNN_API int thcunn_conv_transpose2d_forward(
    thc_tensor *output, const thc_tensor *input, const thc_tensor *weight,
    const thc_tensor *bias, const int64_t *stride, const int64_t *padding,
    const int64_t *output_padding, const int64_t *dilation, int64_t groups) {
    const char *fn = "conv_transpose2d_forward";
    Convt g;
    if (thcunn__check_runtime(fn) ||
        convt_params(fn, stride, padding, output_padding, dilation, groups, &g) ||
        convt_geometry(fn, input, weight, &g) ||
        thcunn__check_vec(fn, "bias", bias, g.O, input->dtype))
        return thcunn_last_status();
    const int64_t os[4] = {g.N, g.O, g.OH, g.OW};
    if (check_out(fn, "output", output, 4, os, input->dtype)) return thcunn_last_status();
    if (thcunn__numel(output) == 0) return THC_OK;
    int rc;
    if (g.C == 0) {   // no input channels: the bias alone
        rc = zero_out(output);
    } else {   // y = col2im(W^T @ x): conv2d's input gradient with x as grad_output
        thc_tensor *x, *w;
        rc = contig2(input, weight, &x, &w);
        if (!rc) rc = conv::input_cols(fn, output, x, w, g.as_conv());
        thc_tensor_release(x);
        thc_tensor_release(w);
    }
    return !rc && bias ? conv::add_bias(output, bias) : rc;
}

extern "C" THCUNN_API int thcunn_conv_transpose2d_backward_input(
    thc_tensor *grad_input, const thc_tensor *grad_output, const thc_tensor *weight,
    const int64_t *stride, const int64_t *padding, const int64_t *output_padding,
    const int64_t *dilation, int64_t groups) {
    const char *fn = "conv_transpose2d_backward_input";
    Convt g;
    if (thcunn__check_runtime(fn) ||
        convt_params(fn, stride, padding, output_padding, dilation, groups, &g) ||
        thcunn__check_tensor(fn, "grad_input", grad_input, 1) ||
        convt_geometry(fn, grad_input, weight, &g))
        return thcunn_last_status();
    const int64_t os[4] = {g.N, g.O, g.OH, g.OW};
    if (check_grad_output(fn, grad_output, 4, os, weight->dtype) ||
        thcunn__check_like(fn, "grad_input", grad_input, grad_input))
        return thcunn_last_status();
    if (thcunn__numel(grad_input) == 0) return THC_OK;
    if (g.O == 0) return zero_out(grad_input);
    // gx = W @ im2col(gy): conv2d's forward on grad_output
    thc_tensor *go, *w;
    int rc = contig2(grad_output, weight, &go, &w);
    if (!rc) rc = conv::forward_cols(fn, grad_input, go, w, g.as_conv());
    thc_tensor_release(go);
    thc_tensor_release(w);
    return rc;
}

extern "C" THCUNN_API int thcunn_conv_transpose2d_backward_params(
    thc_tensor *grad_weight, thc_tensor *grad_bias, const thc_tensor *grad_output,
    const thc_tensor *input, const int64_t *stride, const int64_t *padding,
    const int64_t *output_padding, const int64_t *dilation, int64_t groups) {
    const char *fn = "conv_transpose2d_backward_params";
    Convt g;
    if (thcunn__check_runtime(fn) ||
        convt_params(fn, stride, padding, output_padding, dilation, groups, &g))
        return thcunn_last_status();
    if (!grad_weight && !grad_bias) return THC_OK;
    if (check_params_inputs(fn, grad_output, input, 4)) return thcunn_last_status();
    if (grad_weight) {
        if (thcunn__check_tensor(fn, "grad_weight", grad_weight, 1) ||
            convt_geometry(fn, input, grad_weight, &g))
            return thcunn_last_status();
        const int64_t os[4] = {g.N, g.O, g.OH, g.OW};
        if (check_grad_output(fn, grad_output, 4, os, input->dtype) ||
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
    // gW = sum_n x_n @ im2col(gy_n)^T: conv2d's weight gradient with x as grad_output
    thc_tensor *x, *go;
    int rc = contig2(input, grad_output, &x, &go);
    if (!rc) rc = conv::weight_cols(fn, grad_weight, x, go, g.as_conv());
    thc_tensor_release(x);
    thc_tensor_release(go);
    return rc;
}
