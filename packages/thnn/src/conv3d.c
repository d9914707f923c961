/* conv3d: vol2col + GEMM, the 3-d twin of conv2d (conv.c).
 *
 * One band of window rows of one sample at a time is unfolded into col
 * (C*kD*kH*kW, Lt), small enough to stay in cache (conv_unfold.h); each
 * group then does one GEMM straight into / out of the NCDHW tensors
 * (shown for a whole sample, L = OD*OH*OW):
 *   forward:         out_n (O/g, L)  = W_g (O/g, K) @ col_g (K, L) + bias
 *   backward_input:  gcol_g (K, L)   = W_g^T @ gout_n (O/g, L), col2vol
 *   backward_params: gW_g (O/g, K)  += gout_n @ col_g^T
 * with K = C/g*kD*kH*kW.  Threads: OpenBLAS's, inside the GEMMs (the
 * unfold loops are serial for the reason given in conv.c). */
#include "conv_unfold.h"

typedef struct conv3d_geom {
    int64_t N, C, O, G;
    thnn_unfold u; /* one sample's input (C, D, H, W) and its windows */
} conv3d_geom;

static int conv3d_params(const char *fn, const int64_t *stride,
                         const int64_t *padding, const int64_t *dilation,
                         int64_t groups, conv3d_geom *g) {
    if (!stride || !padding || !dilation)
        return thnn__error(TH_ERR_VALUE, "%s: stride, padding and dilation "
                           "must not be NULL", fn);
    for (int i = 0; i < 3; i++) {
        if (stride[i] < 1)
            return thnn__error(TH_ERR_RUNTIME, "%s: non-positive stride is not "
                               "supported", fn);
        if (padding[i] < 0)
            return thnn__error(TH_ERR_RUNTIME, "%s: negative padding is not "
                               "supported", fn);
        if (dilation[i] < 1)
            return thnn__error(TH_ERR_RUNTIME, "%s: dilation should be greater "
                               "than zero", fn);
    }
    if (groups < 1)
        return thnn__error(TH_ERR_RUNTIME, "%s: non-positive groups is not "
                           "supported", fn);
    thnn_unfold *u = &g->u;
    u->sd = stride[0]; u->sh = stride[1]; u->sw = stride[2];
    u->pd = padding[0]; u->ph = padding[1]; u->pw = padding[2];
    u->dd = dilation[0]; u->dh = dilation[1]; u->dw = dilation[2];
    g->G = groups;
    return TH_OK;
}

/* fills g from the input and weight shapes; checks them as PyTorch does */
static int conv3d_geometry(const char *fn, const th_tensor *input,
                           const th_tensor *weight, conv3d_geom *g) {
    char a[256], b[256];
    int rc;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = thnn__check_float(fn, "weight", weight))) return rc;
    if (weight->ndim != 5)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected weight to be 5-D, but "
                           "got weight of size %s", fn, thnn__shape(weight, a));
    if (input->ndim != 5)
        return thnn__error(TH_ERR_RUNTIME, "Expected 5-dimensional input for "
                           "5-dimensional weight %s, but got %d-dimensional "
                           "input of size %s instead", thnn__shape(weight, a),
                           input->ndim, thnn__shape(input, b));
    if (input->dtype != weight->dtype)
        return thnn__error(TH_ERR_RUNTIME, "Input type (%s) and weight type (%s) "
                           "should be the same", thnn__dtype_name(input->dtype),
                           thnn__dtype_name(weight->dtype));
    thnn_unfold *u = &g->u;
    g->N = input->sizes[0]; g->C = input->sizes[1]; g->O = weight->sizes[0];
    u->C = g->C;
    u->D = input->sizes[2]; u->H = input->sizes[3]; u->W = input->sizes[4];
    u->kd = weight->sizes[2]; u->kh = weight->sizes[3]; u->kw = weight->sizes[4];
    if (g->O % g->G)
        return thnn__error(TH_ERR_RUNTIME, "%s: out_channels (%lld) must be "
                           "divisible by groups (%lld)", fn, (long long)g->O,
                           (long long)g->G);
    int64_t want_c;
    if (thnn__mul_ovf(weight->sizes[1], g->G, &want_c))
        return thnn__size_overflow(fn, "weight size 1 times groups");
    if (want_c != g->C)
        return thnn__error(TH_ERR_RUNTIME, "Given groups=%lld, weight of size "
                           "%s, expected input%s to have %lld channels, but got "
                           "%lld channels instead", (long long)g->G,
                           thnn__shape(weight, a), thnn__shape(input, b),
                           (long long)want_c, (long long)g->C);
    if (u->kd < 1 || u->kh < 1 || u->kw < 1)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected a non-empty kernel, but got "
                           "weight of size %s", fn, thnn__shape(weight, a));
    const int64_t in[3] = {u->D, u->H, u->W}, k[3] = {u->kd, u->kh, u->kw};
    const int64_t p[3] = {u->pd, u->ph, u->pw}, d[3] = {u->dd, u->dh, u->dw};
    int64_t padded[3], extent[3];
    for (int i = 0; i < 3; i++)
        if (thnn__mul_ovf(p[i], 2, &padded[i]) || thnn__add_ovf(in[i], padded[i], &padded[i]) ||
            thnn__mul_ovf(d[i], k[i] - 1, &extent[i]) || thnn__add_ovf(extent[i], 1, &extent[i]))
            return thnn__size_overflow(fn, "the padded input or kernel extent");
    for (int i = 0; i < 3; i++)
        if (padded[i] < extent[i])
            return thnn__error(TH_ERR_RUNTIME, "Calculated padded input size per "
                               "channel: (%lld x %lld x %lld). Kernel size: (%lld x "
                               "%lld x %lld). Kernel size can't be greater than "
                               "actual input size",
                               (long long)padded[0], (long long)padded[1],
                               (long long)padded[2], (long long)extent[0],
                               (long long)extent[1], (long long)extent[2]);
    u->OD = thnn_window_output_size(u->D, u->kd, u->sd, u->pd, u->dd, 0);
    u->OH = thnn_window_output_size(u->H, u->kh, u->sh, u->ph, u->dh, 0);
    u->OW = thnn_window_output_size(u->W, u->kw, u->sw, u->pw, u->dw, 0);
    if (u->OD < 0 || u->OH < 0 || u->OW < 0) return thnn_last_status();
    return TH_OK;
}

/* grad_output must be (N, O, OD, OH, OW) of the input's dtype */
static int check_grad_output(const char *fn, const th_tensor *gout,
                             const conv3d_geom *g, int dtype) {
    const int64_t os[5] = {g->N, g->O, g->u.OD, g->u.OH, g->u.OW};
    char a[256];
    int rc = thnn__check_float(fn, "grad_output", gout);
    if (rc) return rc;
    int ok = gout->ndim == 5;
    for (int i = 0; ok && i < 5; i++) ok = gout->sizes[i] == os[i];
    if (!ok)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected grad_output of shape "
                           "[%lld, %lld, %lld, %lld, %lld] but got %s", fn,
                           (long long)os[0], (long long)os[1], (long long)os[2],
                           (long long)os[3], (long long)os[4], thnn__shape(gout, a));
    if (gout->dtype != dtype)
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output type (%s) and input "
                           "type (%s) should be the same", fn,
                           thnn__dtype_name(gout->dtype), thnn__dtype_name(dtype));
    return TH_OK;
}

static int64_t volume(const thnn_unfold *u) { return u->D * u->H * u->W; }
static int64_t positions(const thnn_unfold *u) { return u->OD * u->OH * u->OW; }

THNN_API int thnn_conv3d_forward(th_tensor *output, const th_tensor *input,
                                 const th_tensor *weight, const th_tensor *bias,
                                 const int64_t *stride, const int64_t *padding,
                                 const int64_t *dilation, int64_t groups) {
    static const char fn[] = "conv3d_forward";
    conv3d_geom g;
    int rc;
    if ((rc = conv3d_params(fn, stride, padding, dilation, groups, &g))) return rc;
    if ((rc = conv3d_geometry(fn, input, weight, &g))) return rc;
    if ((rc = thnn__check_vec(fn, "bias", bias, g.O, input->dtype))) return rc;
    const int64_t osz[5] = {g.N, g.O, g.u.OD, g.u.OH, g.u.OW};
    if ((rc = thnn__check_out(fn, "output", output, 5, osz, input->dtype))) return rc;
    if (th_numel(output) == 0) return TH_OK;

    const int dt = input->dtype;
    const int64_t L = positions(&g.u), Og = g.O / g.G;
    const int64_t K = g.C / g.G * g.u.kd * g.u.kh * g.u.kw;
    th_tensor *x = thnn__contig(input), *w = thnn__contig(weight);
    th_tensor *bc = bias ? thnn__contig(bias) : NULL, *col = NULL;
    if (!x || !w || (bias && !bc)) { rc = thnn_last_status(); goto done; }
    if (bc) thnn__fill_bias(dt, thnn__data(output), thnn__data(bc), g.N * g.O, g.O, L);
    if (K == 0) {  /* no input channels: the output is the bias alone */
        if (!bc && th_zero(output)) rc = thnn__from_th(fn);
        goto done;
    }
    const int64_t rows = g.u.OD * g.u.OH, band = thnn__band_rows(&g.u, dt), OW = g.u.OW;
    if (!(col = thnn__col_buffer(g.C * g.u.kd * g.u.kh * g.u.kw, band * OW, dt))) {
        rc = thnn_last_status();
        goto done;
    }
    const size_t isz = th_dtype_itemsize(dt);
    for (int64_t n = 0; n < g.N && !rc; n++) {
        const char *xn = (const char *)thnn__data(x) + n * g.C * volume(&g.u) * isz;
        for (int64_t r0 = 0; r0 < rows && !rc; r0 += band) {
            const int64_t r1 = r0 + band < rows ? r0 + band : rows, Lt = (r1 - r0) * OW;
            thnn__vol2col(dt, xn, thnn__data(col), &g.u, r0, r1);
            for (int64_t gi = 0; gi < g.G && !rc; gi++)
                rc = thnn__gemm_views(fn, thnn__mat(output, (n * g.O + gi * Og) * L + r0 * OW,
                                                    Og, Lt, L, 1),
                                      thnn__mat(w, gi * Og * K, Og, K, K, 1),
                                      thnn__mat(col, gi * K * Lt, K, Lt, Lt, 1), bc ? 1.0 : 0.0);
        }
    }
done:
    thnn__release(x); thnn__release(w); thnn__release(bc); thnn__release(col);
    return rc;
}

THNN_API int thnn_conv3d_backward_input(th_tensor *grad_input,
                                        const th_tensor *grad_output,
                                        const th_tensor *weight,
                                        const int64_t *stride,
                                        const int64_t *padding,
                                        const int64_t *dilation, int64_t groups) {
    static const char fn[] = "conv3d_backward_input";
    conv3d_geom g;
    int rc;
    if ((rc = conv3d_params(fn, stride, padding, dilation, groups, &g))) return rc;
    if ((rc = thnn__check_float(fn, "grad_input", grad_input))) return rc;
    if ((rc = conv3d_geometry(fn, grad_input, weight, &g))) return rc;
    if ((rc = check_grad_output(fn, grad_output, &g, weight->dtype))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, grad_input))) return rc;
    if (th_zero(grad_input)) return thnn__from_th(fn);
    if (th_numel(grad_input) == 0 || th_numel(grad_output) == 0) return TH_OK;

    const int dt = weight->dtype;
    const int64_t L = positions(&g.u), Og = g.O / g.G;
    const int64_t K = g.C / g.G * g.u.kd * g.u.kh * g.u.kw;
    th_tensor *go = thnn__contig(grad_output), *w = thnn__contig(weight), *col = NULL;
    const int64_t rows = g.u.OD * g.u.OH, band = thnn__band_rows(&g.u, dt), OW = g.u.OW;
    if (!go || !w ||
        !(col = thnn__col_buffer(g.C * g.u.kd * g.u.kh * g.u.kw, band * OW, dt))) {
        rc = thnn_last_status();
        goto done;
    }
    const size_t isz = th_dtype_itemsize(dt);
    for (int64_t n = 0; n < g.N && !rc; n++) {
        char *gxn = (char *)thnn__data(grad_input) + n * g.C * volume(&g.u) * isz;
        for (int64_t r0 = 0; r0 < rows && !rc; r0 += band) {
            const int64_t r1 = r0 + band < rows ? r0 + band : rows, Lt = (r1 - r0) * OW;
            for (int64_t gi = 0; gi < g.G && !rc; gi++)
                /* W_g^T: (K, Og) view of the (Og, K) block */
                rc = thnn__gemm_views(fn, thnn__mat(col, gi * K * Lt, K, Lt, Lt, 1),
                                      thnn__mat(w, gi * Og * K, K, Og, 1, K),
                                      thnn__mat(go, (n * g.O + gi * Og) * L + r0 * OW,
                                                Og, Lt, L, 1), 0.0);
            if (!rc) thnn__col2vol(dt, gxn, thnn__data(col), &g.u, r0, r1);
        }
    }
done:
    thnn__release(go); thnn__release(w); thnn__release(col);
    return rc;
}

THNN_API int thnn_conv3d_backward_params(th_tensor *grad_weight,
                                         th_tensor *grad_bias,
                                         const th_tensor *grad_output,
                                         const th_tensor *input,
                                         const int64_t *stride,
                                         const int64_t *padding,
                                         const int64_t *dilation,
                                         int64_t groups) {
    static const char fn[] = "conv3d_backward_params";
    conv3d_geom g;
    char a[256], b[256];
    int rc;
    if ((rc = conv3d_params(fn, stride, padding, dilation, groups, &g))) return rc;
    if (!grad_weight && !grad_bias) return TH_OK;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    if (grad_output->ndim != 5 || input->ndim != 5)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected 5-D input and "
                           "grad_output, but got input of size %s and grad_output "
                           "of size %s", fn, thnn__shape(input, a),
                           thnn__shape(grad_output, b));
    if (grad_output->dtype != input->dtype || grad_output->sizes[0] != input->sizes[0])
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output %s (%s) and input %s "
                           "(%s) must have one dtype and batch size", fn,
                           thnn__shape(grad_output, a), thnn__dtype_name(grad_output->dtype),
                           thnn__shape(input, b), thnn__dtype_name(input->dtype));
    if (grad_weight) {
        if ((rc = conv3d_geometry(fn, input, grad_weight, &g))) return rc;
        if ((rc = check_grad_output(fn, grad_output, &g, input->dtype))) return rc;
        if ((rc = thnn__check_like(fn, "grad_weight", grad_weight, grad_weight))) return rc;
    }
    const int64_t O = grad_output->sizes[1];
    if (grad_bias && (rc = thnn__check_out(fn, "grad_bias", grad_bias, 1, &O, input->dtype)))
        return rc;
    const int dt = input->dtype;
    th_tensor *go = thnn__contig(grad_output), *x = NULL, *col = NULL;
    if (!go) return thnn_last_status();
    if (grad_bias) {
        const int64_t L = go->sizes[2] * go->sizes[3] * go->sizes[4];
        thnn__bias_grad(dt, thnn__data(grad_bias), thnn__data(go), go->sizes[0], O, L);
    }
    if (!grad_weight) goto done;
    if (th_numel(go) == 0 || th_numel(grad_weight) == 0) {
        if (th_zero(grad_weight)) rc = thnn__from_th(fn);
        goto done;
    }
    const int64_t L = positions(&g.u), Og = g.O / g.G;
    const int64_t K = g.C / g.G * g.u.kd * g.u.kh * g.u.kw;
    const int64_t rows = g.u.OD * g.u.OH, band = thnn__band_rows(&g.u, dt), OW = g.u.OW;
    if (!(x = thnn__contig(input)) ||
        !(col = thnn__col_buffer(g.C * g.u.kd * g.u.kh * g.u.kw, band * OW, dt))) {
        rc = thnn_last_status();
        goto done;
    }
    const size_t isz = th_dtype_itemsize(dt);
    for (int64_t n = 0; n < g.N && !rc; n++) {
        const char *xn = (const char *)thnn__data(x) + n * g.C * volume(&g.u) * isz;
        for (int64_t r0 = 0; r0 < rows && !rc; r0 += band) {
            const int64_t r1 = r0 + band < rows ? r0 + band : rows, Lt = (r1 - r0) * OW;
            thnn__vol2col(dt, xn, thnn__data(col), &g.u, r0, r1);
            for (int64_t gi = 0; gi < g.G && !rc; gi++)
                /* col_g^T: (Lt, K) view of the (K, Lt) block */
                rc = thnn__gemm_views(fn, thnn__mat(grad_weight, gi * Og * K, Og, K, K, 1),
                                      thnn__mat(go, (n * g.O + gi * Og) * L + r0 * OW,
                                                Og, Lt, L, 1),
                                      thnn__mat(col, gi * K * Lt, Lt, K, 1, Lt),
                                      n == 0 && r0 == 0 ? 0.0 : 1.0);
        }
    }
done:
    thnn__release(go); thnn__release(x); thnn__release(col);
    return rc;
}
