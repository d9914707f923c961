// conv2d and conv1d (conv2d on (N, C, 1, L) views, thc_unsqueeze, as
// libTHNN does).  conv2d: the input unfolded into columns (im2col) and multiplied with
// the weight through libTHC's batched products (cuBLAS on a GPU), in
// batch chunks whose columns stay under 256 MiB; the input gradient folds
// columns back (col2im, a gather: no atomics).  The chunked products
// (conv_internal.h) are shared with conv3d and conv_transpose2d.
#include "conv_internal.h"

using namespace thcunn;
using thcunn::conv::Conv;

namespace {

// cols[n, (c, i, j), (oh, ow)] = x[n, c, oh*sh - ph + i*dh, ow*sw - pw + j*dw] or 0
template <typename T> struct Im2colFn {
    T *cols;
    const T *x;
    Conv g;
    THCUNN_HD void operator()(int64_t idx) const {
        int64_t L = g.OH * g.OW, K = g.C * g.kh * g.kw;
        int64_t l = idx % L, k = (idx / L) % K, n = idx / (L * K);
        int64_t j = k % g.kw, i = (k / g.kw) % g.kh, c = k / (g.kw * g.kh);
        int64_t h = (l / g.OW) * g.sh - g.ph + i * g.dh, w = (l % g.OW) * g.sw - g.pw + j * g.dw;
        cols[idx] = (h >= 0 && h < g.H && w >= 0 && w < g.W)
                        ? x[((n * g.C + c) * g.H + h) * g.W + w]
                        : T(0);
    }
};

// gx[n, c, h, w] = sum of the columns entries that read x[n, c, h, w]
template <typename T> struct Col2imFn {
    T *gx;
    const T *cols;
    Conv g;
    THCUNN_HD void operator()(int64_t idx) const {
        int64_t w = idx % g.W, h = (idx / g.W) % g.H, c = (idx / (g.W * g.H)) % g.C,
                n = idx / (g.W * g.H * g.C);
        int64_t L = g.OH * g.OW, K = g.C * g.kh * g.kw;
        T acc = 0;
        for (int64_t i = 0; i < g.kh; i++) {
            int64_t t = h + g.ph - i * g.dh;
            if (t < 0 || t % g.sh) continue;
            int64_t oh = t / g.sh;
            if (oh >= g.OH) continue;
            for (int64_t j = 0; j < g.kw; j++) {
                int64_t u = w + g.pw - j * g.dw;
                if (u < 0 || u % g.sw) continue;
                int64_t ow = u / g.sw;
                if (ow >= g.OW) continue;
                acc += cols[(n * K + (c * g.kh + i) * g.kw + j) * L + oh * g.OW + ow];
            }
        }
        gx[idx] = acc;
    }
};

int geometry(const char *what, const thc_tensor *input_or_null, const int64_t *in_shape,
             const int64_t *w_shape, const int64_t *stride, const int64_t *padding,
             const int64_t *dilation, int64_t groups, Conv *g) {
    (void)input_or_null;
    if (!stride || !padding || !dilation)
        return thcunn__error(THC_ERR_VALUE, "%s: stride, padding and dilation must not be NULL",
                             what);
    if (groups < 1) return thcunn__error(THC_ERR_RUNTIME, "%s: non-positive groups is not "
                                         "supported", what);
    for (int i = 0; i < 2; i++)
        if (stride[i] < 1 || padding[i] < 0 || dilation[i] < 1)
            return thcunn__error(THC_ERR_RUNTIME, "%s: stride and dilation must be positive and "
                                 "padding non-negative", what);
    g->N = in_shape[0];
    g->C = in_shape[1];
    g->H = in_shape[2];
    g->W = in_shape[3];
    g->O = w_shape[0];
    g->kh = w_shape[2];
    g->kw = w_shape[3];
    g->sh = stride[0];
    g->sw = stride[1];
    g->ph = padding[0];
    g->pw = padding[1];
    g->dh = dilation[0];
    g->dw = dilation[1];
    g->G = groups;
    char a[256], b[256];
    int64_t want_c;
    if (thcunn__mul_ovf(w_shape[1], groups, &want_c))
        return thcunn__size_overflow(what, "weight size 1 times groups");
    if (thcunn__window_fits(what, g->H, g->kh, g->ph, g->dh) ||
        thcunn__window_fits(what, g->W, g->kw, g->pw, g->dw))
        return thcunn_last_status();
    if (g->C != want_c || g->O % groups)
        return thcunn__error(THC_ERR_RUNTIME, "Given groups=%lld, weight of size %s, expected "
                             "input%s to have %lld channels, but got %lld channels instead",
                             (long long)groups, thcunn__shape_str(4, w_shape, a),
                             thcunn__shape_str(4, in_shape, b), (long long)want_c,
                             (long long)g->C);
    g->OH = thcunn__window_count(g->H, g->kh, g->sh, g->ph, g->dh, 0);
    g->OW = thcunn__window_count(g->W, g->kw, g->sw, g->pw, g->dw, 0);
    if (g->OH < 1 || g->OW < 1 || g->H + 2 * g->ph < g->dh * (g->kh - 1) + 1 ||
        g->W + 2 * g->pw < g->dw * (g->kw - 1) + 1)
        return thcunn__error(THC_ERR_RUNTIME, "%s: Calculated output size is too small for "
                             "input %s and kernel %lldx%lld", what,
                             thcunn__shape_str(4, in_shape, a), (long long)g->kh,
                             (long long)g->kw);
    return THC_OK;
}

int check_common(const char *what, const thc_tensor *a, const char *an, const thc_tensor *w) {
    if (thcunn__check_tensor(what, an, a, 1) || thcunn__check_tensor(what, "weight", w, 1))
        return thcunn_last_status();
    char s[256];
    if (w->ndim != 4)
        return thcunn__error(THC_ERR_RUNTIME, "%s: weight should be 4-dimensional, got %s", what,
                             thcunn__shape_str(w->ndim, w->sizes, s));
    if (a->ndim != 4)
        return thcunn__error(THC_ERR_RUNTIME, "Expected 4-dimensional input for 4-dimensional "
                             "weight %s, but got %d-dimensional input of size %s",
                             thcunn__shape_str(4, w->sizes, s), a->ndim,
                             thcunn__shape_str(a->ndim, a->sizes, s));
    if (a->dtype != w->dtype)
        return thcunn__error(THC_ERR_RUNTIME, "%s: input and weight must have the same dtype",
                             what);
    return THC_OK;
}

}  // namespace

namespace thcunn {
namespace conv {

int Conv::unfold(const char *what, thc_tensor *cols, const thc_tensor *x) const {
    int rc = THC_OK;
    THCUNN_FLOATING(x->dtype, rc = for_each(what, thcunn__numel(cols),
                                            Im2colFn<scalar_t>{data<scalar_t>(cols),
                                                               data<scalar_t>(x), *this}))
    return rc;
}

int Conv::fold(const char *what, thc_tensor *x, const thc_tensor *cols) const {
    int rc = THC_OK;
    THCUNN_FLOATING(x->dtype, rc = for_each(what, thcunn__numel(x),
                                            Col2imFn<scalar_t>{data<scalar_t>(x),
                                                               data<scalar_t>(cols), *this}))
    return rc;
}

int64_t chunk_of(int64_t N, int64_t K, int64_t L, int dtype) {
    int64_t per = K * L * (dtype == THC_FLOAT64 ? 8 : 4);
    int64_t n = per > 0 ? ((int64_t)256 << 20) / per : N;
    return n < 1 ? 1 : n > N ? N : n;
}

thc_tensor *slice3(const thc_tensor *t, int dim, int64_t start, int64_t len, int64_t d0,
                   int64_t d1, int64_t d2) {
    thc_tensor *n = thc_narrow(t, dim, start, len);
    if (!n) return NULL;
    int64_t shape[3] = {d0, d1, d2};
    thc_tensor *r = thc_reshape(n, 3, shape);
    thc_tensor_release(n);
    return r;
}

thc_tensor *weight_group(const thc_tensor *w, int64_t O, int64_t K, int64_t G, int64_t grp,
                         int64_t nb, int transpose) {
    int64_t og = O / G, kg = K / G;
    int64_t shape2[2] = {O, kg};
    thc_tensor *w2 = thc_view(w, 2, shape2);
    thc_tensor *wg = w2 ? thc_narrow(w2, 0, grp * og, og) : NULL;
    thc_tensor *wt = wg && transpose ? thc_transpose(wg, 0, 1) : NULL;
    thc_tensor *src = transpose ? wt : wg;
    thc_tensor *u = src ? thc_unsqueeze(src, 0) : NULL;
    int64_t shape3[3] = {nb, transpose ? kg : og, transpose ? og : kg};
    thc_tensor *e = u ? thc_expand(u, 3, shape3) : NULL;
    thc_tensor *all[] = {w2, wg, wt, u};
    for (thc_tensor *p : all) thc_tensor_release(p);
    return e;
}

int copy_release(thc_tensor *dst, thc_tensor *src) {
    int rc = dst && src && !thc_copy(dst, src) ? THC_OK : thcunn__from_thc();
    thc_tensor_release(dst);
    thc_tensor_release(src);
    return rc;
}

int add_bias(thc_tensor *output, const thc_tensor *bias) {
    int64_t shape[THC_MAX_DIMS];
    for (int i = 0; i < output->ndim; i++) shape[i] = i == 1 ? output->sizes[1] : 1;
    thc_tensor *bv = thc_view(bias, output->ndim, shape);
    int rc = bv && !thc_binary_out(THC_ADD, output, output, bv) ? THC_OK : thcunn__from_thc();
    thc_tensor_release(bv);
    return rc;
}

int bias_grad(thc_tensor *grad_bias, const thc_tensor *grad_output) {
    int dims[THC_MAX_DIMS], nd = 0;
    for (int i = 0; i < grad_output->ndim; i++)
        if (i != 1) dims[nd++] = i;
    thc_tensor *s = thc_reduce(THC_RED_SUM, grad_output, nd, dims, 0, -1);
    int rc = s && !thc_copy(grad_bias, s) ? THC_OK : thcunn__from_thc();
    thc_tensor_release(s);
    return rc;
}

}  // namespace conv
}  // namespace thcunn

extern "C" THCUNN_API int thcunn_conv2d_forward(thc_tensor *output, const thc_tensor *input,
                                                const thc_tensor *weight, const thc_tensor *bias,
                                                const int64_t *stride, const int64_t *padding,
                                                const int64_t *dilation, int64_t groups) {
    const char *what = "conv2d_forward";
    Conv g;
    if (thcunn__check_runtime(what) || check_common(what, input, "input", weight) ||
        geometry(what, input, input->sizes, weight->sizes, stride, padding, dilation, groups, &g))
        return thcunn_last_status();
    int64_t os[4] = {g.N, g.O, g.OH, g.OW};
    if (thcunn__check_output(what, "output", output, 4, os, input->dtype) ||
        (bias && (thcunn__check_tensor(what, "bias", bias, 1) || bias->ndim != 1 ||
                  bias->sizes[0] != g.O || bias->dtype != input->dtype)))
        return thcunn_last_status() ? thcunn_last_status()
                                    : thcunn__error(THC_ERR_RUNTIME, "%s: bias should be a vector "
                                                    "of %lld", what, (long long)g.O);
    if (g.N == 0) return THC_OK;
    thc_tensor *x = thc_contiguous(input), *w = x ? thc_contiguous(weight) : NULL;
    int rc = w ? conv::forward_cols(what, output, x, w, g) : thcunn__from_thc();
    if (!rc && bias) rc = conv::add_bias(output, bias);
    thc_tensor_release(x);
    thc_tensor_release(w);
    return rc;
}

extern "C" THCUNN_API int thcunn_conv2d_backward_input(thc_tensor *grad_input,
                                                       const thc_tensor *grad_output,
                                                       const thc_tensor *weight,
                                                       const int64_t *stride,
                                                       const int64_t *padding,
                                                       const int64_t *dilation, int64_t groups) {
    const char *what = "conv2d_backward_input";
    Conv g;
    if (thcunn__check_runtime(what) || check_common(what, grad_input, "grad_input", weight) ||
        geometry(what, grad_input, grad_input->sizes, weight->sizes, stride, padding, dilation,
                 groups, &g))
        return thcunn_last_status();
    int64_t os[4] = {g.N, g.O, g.OH, g.OW};
    if (!thc_is_contiguous(grad_input))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_input must be contiguous", what);
    if (thcunn__check_tensor(what, "grad_output", grad_output, 1) || grad_output->ndim != 4 ||
        grad_output->sizes[0] != os[0] || grad_output->sizes[1] != os[1] ||
        grad_output->sizes[2] != os[2] || grad_output->sizes[3] != os[3])
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output does not match the convolution's "
                             "output", what);
    if (g.N == 0) return THC_OK;
    thc_tensor *go = thc_contiguous(grad_output), *w = go ? thc_contiguous(weight) : NULL;
    int rc = w ? conv::input_cols(what, grad_input, go, w, g) : thcunn__from_thc();
    thc_tensor_release(go);
    thc_tensor_release(w);
    return rc;
}

extern "C" THCUNN_API int thcunn_conv2d_backward_params(thc_tensor *grad_weight,
                                                        thc_tensor *grad_bias,
                                                        const thc_tensor *grad_output,
                                                        const thc_tensor *input,
                                                        const int64_t *stride,
                                                        const int64_t *padding,
                                                        const int64_t *dilation, int64_t groups) {
    const char *what = "conv2d_backward_params";
    if (thcunn__check_runtime(what) || thcunn__check_tensor(what, "input", input, 1) ||
        thcunn__check_tensor(what, "grad_output", grad_output, 1))
        return thcunn_last_status();
    if (input->ndim != 4 || grad_output->ndim != 4)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected 4-d input and grad_output", what);
    if (!grad_weight && !grad_bias) return THC_OK;
    int64_t O = grad_output->sizes[1];
    if (groups < 1 || input->sizes[1] % groups)
        return thcunn__error(THC_ERR_RUNTIME, "%s: groups must divide the input channels", what);
    if (grad_bias && thcunn__check_output(what, "grad_bias", grad_bias, 1, &O, input->dtype))
        return thcunn_last_status();
    if (grad_weight && (thcunn__check_tensor(what, "grad_weight", grad_weight, 1) ||
                        grad_weight->ndim != 4 || grad_weight->sizes[0] != O ||
                        !thc_is_contiguous(grad_weight)))
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_weight must be a contiguous (O, C/groups, "
                             "kH, kW) tensor", what);
    if (grad_bias) {
        int rc = conv::bias_grad(grad_bias, grad_output);
        if (rc || !grad_weight) return rc;
    }
    Conv g;
    if (geometry(what, input, input->sizes, grad_weight->sizes, stride, padding, dilation, groups,
                 &g))
        return thcunn_last_status();
    if (grad_output->sizes[0] != g.N || grad_output->sizes[2] != g.OH ||
        grad_output->sizes[3] != g.OW)
        return thcunn__error(THC_ERR_RUNTIME, "%s: grad_output does not match the convolution's "
                             "output", what);
    thc_tensor *x = thc_contiguous(input), *go = x ? thc_contiguous(grad_output) : NULL;
    int rc = go ? conv::weight_cols(what, grad_weight, go, x, g) : thcunn__from_thc();
    thc_tensor_release(x);
    thc_tensor_release(go);
    return rc;
}

// ---- the argument checks of conv_internal.h ---------------------------------
namespace thcunn {
namespace conv {

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

}  // namespace conv
}  // namespace thcunn

namespace {

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
