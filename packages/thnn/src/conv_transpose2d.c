/* conv_transpose2d: the adjoint of conv2d, by GEMM + col2im.
 *
 * With x (N, C, H, W), W (C, O/g, kH, kW) and y (N, O, OH, OW), a
 * transposed convolution is conv2d's backward_input with y in the role
 * of conv2d's input: y's windows sit at the H x W input positions.  Per
 * sample and group (K = O/g*kH*kW, L = H*W, Cg = C/g):
 *   forward:         col_g (K, L) = W_g^T (K, Cg) @ x_g (Cg, L), col2im -> y
 *   backward_input:  im2col(gy) -> col, gx_g (Cg, L) = W_g (Cg, K) @ col_g
 *   backward_params: gW_g (Cg, K) += x_g @ col_g^T,  gb = sum of gy
 * The columns go a band of input rows at a time (conv_unfold.h).
 * output_padding only adds rows / columns at the bottom / right of y. */
#include "conv_unfold.h"

typedef struct convt_geom {
    int64_t N, C, O, G, H, W, kh, kw, OH, OW;
    int64_t sh, sw, ph, pw, oph, opw, dh, dw;
} convt_geom;

static int convt_params(const char *fn, const int64_t *stride,
                        const int64_t *padding, const int64_t *output_padding,
                        const int64_t *dilation, int64_t groups, convt_geom *g) {
    if (!stride || !padding || !output_padding || !dilation)
        return thnn__error(TH_ERR_VALUE, "%s: stride, padding, output_padding "
                           "and dilation must not be NULL", fn);
    for (int i = 0; i < 2; i++) {
        if (stride[i] < 1)
            return thnn__error(TH_ERR_RUNTIME, "%s: non-positive stride is not "
                               "supported", fn);
        if (padding[i] < 0 || output_padding[i] < 0)
            return thnn__error(TH_ERR_RUNTIME, "%s: negative padding is not "
                               "supported", fn);
        if (dilation[i] < 1)
            return thnn__error(TH_ERR_RUNTIME, "%s: dilation should be greater "
                               "than zero", fn);
    }
    if ((output_padding[0] >= stride[0] && output_padding[0] >= dilation[0]) ||
        (output_padding[1] >= stride[1] && output_padding[1] >= dilation[1]))
        return thnn__error(TH_ERR_RUNTIME, "%s: output padding must be smaller than "
                           "either stride or dilation, but got output_padding_height: "
                           "%lld output_padding_width: %lld stride_height: %lld "
                           "stride_width: %lld dilation_height: %lld dilation_width: "
                           "%lld", fn, (long long)output_padding[0],
                           (long long)output_padding[1], (long long)stride[0],
                           (long long)stride[1], (long long)dilation[0],
                           (long long)dilation[1]);
    if (groups < 1)
        return thnn__error(TH_ERR_RUNTIME, "%s: non-positive groups is not "
                           "supported", fn);
    g->sh = stride[0]; g->sw = stride[1];
    g->ph = padding[0]; g->pw = padding[1];
    g->oph = output_padding[0]; g->opw = output_padding[1];
    g->dh = dilation[0]; g->dw = dilation[1];
    g->G = groups;
    return TH_OK;
}

/* 1 if the transposed convolution's output size does not fit in int64 */
static int transposed_size(int64_t in, int64_t s, int64_t p, int64_t d, int64_t k,
                           int64_t op, int64_t *out) {
    int64_t a, b, r;
    return in < 1 || thnn__mul_ovf(in - 1, s, &a) || thnn__mul_ovf(p, 2, &b) ||
           thnn__mul_ovf(d, k - 1, &r) || thnn__add_ovf(a - b, r, &r) ||
           thnn__add_ovf(r, op, &r) || thnn__add_ovf(r, 1, out);
}

/* fills g from the input and weight shapes; checks them as PyTorch does */
static int convt_geometry(const char *fn, const th_tensor *input,
                          const th_tensor *weight, convt_geom *g) {
    char a[256], b[256];
    int rc;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = thnn__check_float(fn, "weight", weight))) return rc;
    if (weight->ndim != 4)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected weight to be 4-D, but "
                           "got weight of size %s", fn, thnn__shape(weight, a));
    if (input->ndim != 4)
        return thnn__error(TH_ERR_RUNTIME, "Expected 4-dimensional input for "
                           "4-dimensional weight %s, but got %d-dimensional "
                           "input of size %s instead", thnn__shape(weight, a),
                           input->ndim, thnn__shape(input, b));
    if (input->dtype != weight->dtype)
        return thnn__error(TH_ERR_RUNTIME, "Input type (%s) and weight type (%s) "
                           "should be the same", thnn__dtype_name(input->dtype),
                           thnn__dtype_name(weight->dtype));
    g->N = input->sizes[0]; g->C = input->sizes[1];
    g->H = input->sizes[2]; g->W = input->sizes[3];
    g->kh = weight->sizes[2]; g->kw = weight->sizes[3];
    if (weight->sizes[0] != g->C)
        return thnn__error(TH_ERR_RUNTIME, "Given transposed=1, weight of size %s, "
                           "expected input%s to have %lld channels, but got %lld "
                           "channels instead", thnn__shape(weight, a),
                           thnn__shape(input, b), (long long)weight->sizes[0],
                           (long long)g->C);
    if (g->C % g->G)
        return thnn__error(TH_ERR_RUNTIME, "%s: in_channels (%lld) must be "
                           "divisible by groups (%lld)", fn, (long long)g->C,
                           (long long)g->G);
    if (thnn__mul_ovf(weight->sizes[1], g->G, &g->O))
        return thnn__size_overflow(fn, "out_channels (weight size 1 times groups)");
    if (g->H < 1 || g->W < 1)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected input to have non-zero "
                           "size for the spatial dimensions, but got input of size %s",
                           fn, thnn__shape(input, a));
    if (g->kh < 1 || g->kw < 1)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected a non-empty kernel, but "
                           "got weight of size %s", fn, thnn__shape(weight, a));
    /* (in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1 */
    if (transposed_size(g->H, g->sh, g->ph, g->dh, g->kh, g->oph, &g->OH) ||
        transposed_size(g->W, g->sw, g->pw, g->dw, g->kw, g->opw, &g->OW))
        return thnn__size_overflow(fn, "the output size");
    if (g->OH < 1 || g->OW < 1)
        return thnn__error(TH_ERR_RUNTIME, "Given input size per channel: (%lld x "
                           "%lld). Calculated output size per channel: (%lld x %lld). "
                           "Output size is too small", (long long)g->H, (long long)g->W,
                           (long long)g->OH, (long long)g->OW);
    return TH_OK;
}

/* the output (O, OH, OW) of one sample as an image whose windows are the
 * H x W input positions */
static thnn_unfold unfold_of(const convt_geom *g) {
    thnn_unfold u = {.C = g->O, .D = 1, .H = g->OH, .W = g->OW,
                     .kd = 1, .kh = g->kh, .kw = g->kw,
                     .OD = 1, .OH = g->H, .OW = g->W,
                     .sd = 1, .sh = g->sh, .sw = g->sw,
                     .pd = 0, .ph = g->ph, .pw = g->pw,
                     .dd = 1, .dh = g->dh, .dw = g->dw};
    return u;
}

/* grad_output must be (N, O, OH, OW) of the input's dtype */
static int check_grad_output(const char *fn, const th_tensor *gout,
                             const convt_geom *g, int dtype) {
    const int64_t os[4] = {g->N, g->O, g->OH, g->OW};
    char a[256];
    int rc = thnn__check_float(fn, "grad_output", gout);
    if (rc) return rc;
    int ok = gout->ndim == 4;
    for (int i = 0; ok && i < 4; i++) ok = gout->sizes[i] == os[i];
    if (!ok)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected grad_output of shape "
                           "[%lld, %lld, %lld, %lld] but got %s", fn,
                           (long long)os[0], (long long)os[1], (long long)os[2],
                           (long long)os[3], thnn__shape(gout, a));
    if (gout->dtype != dtype)
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output type (%s) and input "
                           "type (%s) should be the same", fn,
                           thnn__dtype_name(gout->dtype), thnn__dtype_name(dtype));
    return TH_OK;
}

THNN_API int thnn_conv_transpose2d_forward(th_tensor *output,
                                           const th_tensor *input,
                                           const th_tensor *weight,
                                           const th_tensor *bias,
                                           const int64_t *stride,
                                           const int64_t *padding,
                                           const int64_t *output_padding,
                                           const int64_t *dilation,
                                           int64_t groups) {
    static const char fn[] = "conv_transpose2d_forward";
    convt_geom g;
    int rc;
    if ((rc = convt_params(fn, stride, padding, output_padding, dilation, groups, &g)))
        return rc;
    if ((rc = convt_geometry(fn, input, weight, &g))) return rc;
    if ((rc = thnn__check_vec(fn, "bias", bias, g.O, input->dtype))) return rc;
    const int64_t osz[4] = {g.N, g.O, g.OH, g.OW};
    if ((rc = thnn__check_out(fn, "output", output, 4, osz, input->dtype))) return rc;
    if (th_numel(output) == 0) return TH_OK;

    const int dt = input->dtype;
    const thnn_unfold u = unfold_of(&g);
    const int64_t L = g.H * g.W, Cg = g.C / g.G, Og = g.O / g.G;
    const int64_t K = Og * g.kh * g.kw, OL = g.OH * g.OW;
    th_tensor *x = thnn__contig(input), *w = thnn__contig(weight);
    th_tensor *bc = bias ? thnn__contig(bias) : NULL, *col = NULL;
    if (!x || !w || (bias && !bc)) { rc = thnn_last_status(); goto done; }
    /* col2im accumulates: start from the bias (or zero) */
    if (bc) thnn__fill_bias(dt, thnn__data(output), thnn__data(bc), g.N * g.O, g.O, OL);
    else if (th_zero(output)) { rc = thnn__from_th(fn); goto done; }
    if (Cg == 0) goto done;  /* no input channels: the bias alone */
    const int64_t band = thnn__band_rows(&u, dt);
    if (!(col = thnn__col_buffer(g.O * g.kh * g.kw, band * g.W, dt))) {
        rc = thnn_last_status();
        goto done;
    }
    const size_t isz = th_dtype_itemsize(dt);
    for (int64_t n = 0; n < g.N && !rc; n++) {
        char *yn = (char *)thnn__data(output) + n * g.O * OL * isz;
        for (int64_t r0 = 0; r0 < g.H && !rc; r0 += band) {
            const int64_t r1 = r0 + band < g.H ? r0 + band : g.H, Lt = (r1 - r0) * g.W;
            for (int64_t gi = 0; gi < g.G && !rc; gi++)
                /* W_g^T: (K, Cg) view of the (Cg, K) block */
                rc = thnn__gemm_views(fn, thnn__mat(col, gi * K * Lt, K, Lt, Lt, 1),
                                      thnn__mat(w, gi * Cg * K, K, Cg, 1, K),
                                      thnn__mat(x, (n * g.C + gi * Cg) * L + r0 * g.W,
                                                Cg, Lt, L, 1), 0.0);
            if (!rc) thnn__col2vol(dt, yn, thnn__data(col), &u, r0, r1);
        }
    }
done:
    thnn__release(x); thnn__release(w); thnn__release(bc); thnn__release(col);
    return rc;
}

THNN_API int thnn_conv_transpose2d_backward_input(th_tensor *grad_input,
                                                  const th_tensor *grad_output,
                                                  const th_tensor *weight,
                                                  const int64_t *stride,
                                                  const int64_t *padding,
                                                  const int64_t *output_padding,
                                                  const int64_t *dilation,
                                                  int64_t groups) {
    static const char fn[] = "conv_transpose2d_backward_input";
    convt_geom g;
    int rc;
    if ((rc = convt_params(fn, stride, padding, output_padding, dilation, groups, &g)))
        return rc;
    if ((rc = thnn__check_float(fn, "grad_input", grad_input))) return rc;
    if ((rc = convt_geometry(fn, grad_input, weight, &g))) return rc;
    if ((rc = check_grad_output(fn, grad_output, &g, weight->dtype))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, grad_input))) return rc;
    if (th_numel(grad_input) == 0) return TH_OK;
    if (g.O == 0) return th_zero(grad_input) ? thnn__from_th(fn) : TH_OK;

    const int dt = weight->dtype;
    const thnn_unfold u = unfold_of(&g);
    const int64_t L = g.H * g.W, Cg = g.C / g.G, Og = g.O / g.G;
    const int64_t K = Og * g.kh * g.kw, OL = g.OH * g.OW;
    th_tensor *go = thnn__contig(grad_output), *w = thnn__contig(weight), *col = NULL;
    const int64_t band = thnn__band_rows(&u, dt);
    if (!go || !w || !(col = thnn__col_buffer(g.O * g.kh * g.kw, band * g.W, dt))) {
        rc = thnn_last_status();
        goto done;
    }
    const size_t isz = th_dtype_itemsize(dt);
    for (int64_t n = 0; n < g.N && !rc; n++) {
        const char *gyn = (const char *)thnn__data(go) + n * g.O * OL * isz;
        for (int64_t r0 = 0; r0 < g.H && !rc; r0 += band) {
            const int64_t r1 = r0 + band < g.H ? r0 + band : g.H, Lt = (r1 - r0) * g.W;
            thnn__vol2col(dt, gyn, thnn__data(col), &u, r0, r1);
            for (int64_t gi = 0; gi < g.G && !rc; gi++)
                rc = thnn__gemm_views(fn, thnn__mat(grad_input, (n * g.C + gi * Cg) * L + r0 * g.W,
                                                    Cg, Lt, L, 1),
                                      thnn__mat(w, gi * Cg * K, Cg, K, K, 1),
                                      thnn__mat(col, gi * K * Lt, K, Lt, Lt, 1), 0.0);
        }
    }
done:
    thnn__release(go); thnn__release(w); thnn__release(col);
    return rc;
}

THNN_API int thnn_conv_transpose2d_backward_params(th_tensor *grad_weight,
                                                   th_tensor *grad_bias,
                                                   const th_tensor *grad_output,
                                                   const th_tensor *input,
                                                   const int64_t *stride,
                                                   const int64_t *padding,
                                                   const int64_t *output_padding,
                                                   const int64_t *dilation,
                                                   int64_t groups) {
    static const char fn[] = "conv_transpose2d_backward_params";
    convt_geom g;
    char a[256], b[256];
    int rc;
    if ((rc = convt_params(fn, stride, padding, output_padding, dilation, groups, &g)))
        return rc;
    if (!grad_weight && !grad_bias) return TH_OK;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    if (grad_output->ndim != 4 || input->ndim != 4)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected 4-D input and "
                           "grad_output, but got input of size %s and grad_output "
                           "of size %s", fn, thnn__shape(input, a),
                           thnn__shape(grad_output, b));
    if (grad_output->dtype != input->dtype || grad_output->sizes[0] != input->sizes[0])
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output %s (%s) and input %s "
                           "(%s) must have one dtype and batch size", fn,
                           thnn__shape(grad_output, a), thnn__dtype_name(grad_output->dtype),
                           thnn__shape(input, b), thnn__dtype_name(input->dtype));
    if (grad_weight) {
        if ((rc = convt_geometry(fn, input, grad_weight, &g))) return rc;
        if ((rc = check_grad_output(fn, grad_output, &g, input->dtype))) return rc;
        if ((rc = thnn__check_like(fn, "grad_weight", grad_weight, grad_weight))) return rc;
    }
    const int64_t O = grad_output->sizes[1];
    if (grad_bias && (rc = thnn__check_out(fn, "grad_bias", grad_bias, 1, &O, input->dtype)))
        return rc;
    const int dt = input->dtype;
    th_tensor *go = thnn__contig(grad_output), *x = NULL, *col = NULL;
    if (!go) return thnn_last_status();
    if (grad_bias)
        thnn__bias_grad(dt, thnn__data(grad_bias), thnn__data(go), go->sizes[0], O,
                        go->sizes[2] * go->sizes[3]);
    if (!grad_weight) goto done;
    if (th_numel(go) == 0 || th_numel(grad_weight) == 0) {
        if (th_zero(grad_weight)) rc = thnn__from_th(fn);
        goto done;
    }
    const thnn_unfold u = unfold_of(&g);
    const int64_t L = g.H * g.W, Cg = g.C / g.G, Og = g.O / g.G;
    const int64_t K = Og * g.kh * g.kw, OL = g.OH * g.OW;
    const int64_t band = thnn__band_rows(&u, dt);
    if (!(x = thnn__contig(input)) ||
        !(col = thnn__col_buffer(g.O * g.kh * g.kw, band * g.W, dt))) {
        rc = thnn_last_status();
        goto done;
    }
    const size_t isz = th_dtype_itemsize(dt);
    for (int64_t n = 0; n < g.N && !rc; n++) {
        const char *gyn = (const char *)thnn__data(go) + n * g.O * OL * isz;
        for (int64_t r0 = 0; r0 < g.H && !rc; r0 += band) {
            const int64_t r1 = r0 + band < g.H ? r0 + band : g.H, Lt = (r1 - r0) * g.W;
            thnn__vol2col(dt, gyn, thnn__data(col), &u, r0, r1);
            for (int64_t gi = 0; gi < g.G && !rc; gi++)
                /* col_g^T: (Lt, K) view of the (K, Lt) block */
                rc = thnn__gemm_views(fn, thnn__mat(grad_weight, gi * Cg * K, Cg, K, K, 1),
                                      thnn__mat(x, (n * g.C + gi * Cg) * L + r0 * g.W,
                                                Cg, Lt, L, 1),
                                      thnn__mat(col, gi * K * Lt, Lt, K, 1, Lt),
                                      n == 0 && r0 == 0 ? 0.0 : 1.0);
        }
    }
done:
    thnn__release(go); thnn__release(x); thnn__release(col);
    return rc;
}
