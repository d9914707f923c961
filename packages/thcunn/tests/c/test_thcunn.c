/* libTHCUNN's kernels on a device (a GPU, or libTHC's emulated device in a
 * host-only build: make check sets EMBER_THC_EMULATE=1), against loops
 * computed here on the host.  Prints "skipped" without a device. */
#include <math.h>
#include <stdlib.h>
#include "check.h"

static double rnd(void) { return (double)rand() / RAND_MAX * 2.0 - 1.0; }

static thc_tensor *upload(int ndim, const int64_t *sizes, const double *h) {
    thc_tensor *t = thc_empty(ndim, sizes, THC_FLOAT64);
    CHECK(t && thc_copy_from_host(t, h) == THC_OK);
    return t;
}

static int close_to(const double *a, const double *b, int64_t n, double tol) {
    int bad = 0;
    for (int64_t i = 0; i < n; i++) bad += !(fabs(a[i] - b[i]) <= tol * (1 + fabs(b[i])));
    return bad == 0;
}

/* conv2d with strides (2, 1), padding 1, dilation (1, 2), 2 groups against a
 * direct loop, which also gives the gradients (its adjoint) */
static void test_conv2d(void) {
    enum { N = 2, C = 4, H = 7, W = 6, O = 6, KH = 3, KW = 3, G = 2 };
    const int64_t st[2] = {2, 1}, pad[2] = {1, 1}, dil[2] = {1, 2};
    int64_t OH = (H + 2 * pad[0] - dil[0] * (KH - 1) - 1) / st[0] + 1;
    int64_t OW = (W + 2 * pad[1] - dil[1] * (KW - 1) - 1) / st[1] + 1;
    static double x[N * C * H * W], w[O * (C / G) * KH * KW], b[O], out[N * O * 16 * 16],
        ref[N * O * 16 * 16], go[N * O * 16 * 16], gx[N * C * H * W], gxr[N * C * H * W],
        gw[O * (C / G) * KH * KW], gwr[O * (C / G) * KH * KW], gb[O], gbr[O];
    for (int i = 0; i < N * C * H * W; i++) x[i] = rnd();
    for (int i = 0; i < O * (C / G) * KH * KW; i++) w[i] = rnd();
    for (int i = 0; i < O; i++) b[i] = rnd();
    int64_t nout = N * O * OH * OW;
    for (int64_t i = 0; i < nout; i++) go[i] = rnd();
    memset(gbr, 0, sizeof gbr);
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    int64_t oi = ((n * O + o) * OH + oh) * OW + ow;
                    double s = b[o];
                    int grp = o / (O / G);
                    gbr[o] += go[oi];
                    for (int c = 0; c < C / G; c++)
                        for (int i = 0; i < KH; i++)
                            for (int j = 0; j < KW; j++) {
                                int64_t h = oh * st[0] - pad[0] + i * dil[0];
                                int64_t ww = ow * st[1] - pad[1] + j * dil[1];
                                if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
                                int64_t xi = ((n * C + grp * (C / G) + c) * H + h) * W + ww;
                                int64_t wi = ((o * (C / G) + c) * KH + i) * KW + j;
                                s += x[xi] * w[wi];
                                gxr[xi] += go[oi] * w[wi];
                                gwr[wi] += go[oi] * x[xi];
                            }
                    ref[oi] = s;
                }
    thc_tensor *tx = upload(4, (int64_t[]){N, C, H, W}, x);
    thc_tensor *tw = upload(4, (int64_t[]){O, C / G, KH, KW}, w);
    thc_tensor *tb = upload(1, (int64_t[]){O}, b);
    thc_tensor *tout = thc_empty(4, (int64_t[]){N, O, OH, OW}, THC_FLOAT64);
    CHECK(thcunn_conv2d_forward(tout, tx, tw, tb, st, pad, dil, G) == THC_OK);
    CHECK(thc_copy_to_host(out, tout) == THC_OK && close_to(out, ref, nout, 1e-12));
    thc_tensor *tgo = upload(4, (int64_t[]){N, O, OH, OW}, go);
    thc_tensor *tgx = thc_empty(4, (int64_t[]){N, C, H, W}, THC_FLOAT64);
    CHECK(thcunn_conv2d_backward_input(tgx, tgo, tw, st, pad, dil, G) == THC_OK);
    CHECK(thc_copy_to_host(gx, tgx) == THC_OK && close_to(gx, gxr, N * C * H * W, 1e-12));
    thc_tensor *tgw = thc_empty(4, (int64_t[]){O, C / G, KH, KW}, THC_FLOAT64);
    thc_tensor *tgb = thc_empty(1, (int64_t[]){O}, THC_FLOAT64);
    CHECK(thcunn_conv2d_backward_params(tgw, tgb, tgo, tx, st, pad, dil, G) == THC_OK);
    CHECK(thc_copy_to_host(gw, tgw) == THC_OK && close_to(gw, gwr, O * (C / G) * KH * KW, 1e-12));
    CHECK(thc_copy_to_host(gb, tgb) == THC_OK && close_to(gb, gbr, O, 1e-12));
    /* bad channels: the message names the sizes */
    thc_tensor *bad = thc_empty(4, (int64_t[]){N, C + 1, H, W}, THC_FLOAT64);
    ERR(thcunn_conv2d_forward(tout, bad, tw, tb, st, pad, dil, G), THC_ERR_RUNTIME,
        "expected input[2, 5, 7, 6] to have 4 channels, but got 5 channels instead");
    thc_tensor *all[] = {tx, tw, tb, tout, tgo, tgx, tgw, tgb, bad};
    for (int i = 0; i < 9; i++) thc_tensor_release(all[i]);
}

static void test_max_pool_and_softmax(void) {
    enum { P = 3, H = 5, W = 5 };
    static double x[P * H * W], out[P * 4], gin[P * H * W];
    for (int i = 0; i < P * H * W; i++) x[i] = rnd();
    thc_tensor *tx = upload(3, (int64_t[]){P, H, W}, x);
    /* 3x3 windows, stride 2, no padding: 2x2 outputs */
    const int64_t k[2] = {3, 3}, s[2] = {2, 2}, p[2] = {0, 0}, d[2] = {1, 1};
    thc_tensor *to = thc_empty(3, (int64_t[]){P, 2, 2}, THC_FLOAT64);
    thc_tensor *ti = thc_empty(3, (int64_t[]){P, 2, 2}, THC_INT64);
    CHECK(thcunn_max_pool2d_forward(to, ti, tx, k, s, p, d, 0) == THC_OK);
    CHECK(thc_copy_to_host(out, to) == THC_OK);
    int bad = 0;
    for (int pl = 0; pl < P; pl++)
        for (int oh = 0; oh < 2; oh++)
            for (int ow = 0; ow < 2; ow++) {
                double m = -INFINITY;
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) {
                        double v = x[(pl * H + oh * 2 + i) * W + ow * 2 + j];
                        m = v > m ? v : m;
                    }
                bad += out[(pl * 2 + oh) * 2 + ow] != m;
            }
    CHECK(bad == 0);
    thc_tensor *tg = thc_empty(3, (int64_t[]){P, H, W}, THC_FLOAT64);
    CHECK(thc_fill_double(to, 1.0) == THC_OK);
    CHECK(thcunn_max_pool2d_backward_input(tg, to, ti) == THC_OK);
    CHECK(thc_copy_to_host(gin, tg) == THC_OK);
    double total = 0;
    for (int i = 0; i < P * H * W; i++) total += gin[i];
    CHECK(total == P * 4);
    /* log_softmax over the last dim: exp sums to 1 */
    thc_tensor *ls = thc_empty(3, (int64_t[]){P, H, W}, THC_FLOAT64);
    CHECK(thcunn_log_softmax_forward(ls, tx, -1) == THC_OK);
    CHECK(thc_copy_to_host(gin, ls) == THC_OK);
    bad = 0;
    for (int r = 0; r < P * H; r++) {
        double e = 0;
        for (int j = 0; j < W; j++) e += exp(gin[r * W + j]);
        bad += fabs(e - 1) > 1e-12;
    }
    CHECK(bad == 0);
    ERR(thcunn_log_softmax_forward(ls, tx, 3), THC_ERR_INDEX, "Dimension out of range");
    thc_tensor *all[] = {tx, to, ti, tg, ls};
    for (int i = 0; i < 5; i++) thc_tensor_release(all[i]);
}

static void test_nll_and_batch_norm(void) {
    enum { N = 4, C = 3 };
    double x[N * C], out, tw;
    int64_t tgt[N] = {0, 2, 1, 2};
    for (int i = 0; i < N * C; i++) x[i] = rnd();
    thc_tensor *tx = upload(2, (int64_t[]){N, C}, x);
    thc_tensor *tt = thc_empty(1, (int64_t[]){N}, THC_INT64);
    CHECK(thc_copy_from_host(tt, tgt) == THC_OK);
    thc_tensor *to = thc_empty(0, NULL, THC_FLOAT64), *ttw = thc_empty(0, NULL, THC_FLOAT64);
    CHECK(thcunn_nll_loss_forward(to, ttw, tx, tt, NULL, THCUNN_REDUCTION_MEAN, 1) == THC_OK);
    CHECK(thc_copy_to_host(&out, to) == THC_OK && thc_copy_to_host(&tw, ttw) == THC_OK);
    double e = -(x[0 * C + 0] + x[1 * C + 2] + x[3 * C + 2]) / 3;   /* target 1 ignored */
    CHECK(fabs(out - e) < 1e-12 && tw == 3);
    tgt[2] = 7;
    CHECK(thc_copy_from_host(tt, tgt) == THC_OK);
    ERR(thcunn_nll_loss_forward(to, ttw, tx, tt, NULL, THCUNN_REDUCTION_MEAN, -100),
        THC_ERR_INDEX, "Target 7 is out of bounds.");
    /* batch norm in training: each channel normalised to mean 0, var 1 */
    enum { B = 5, CH = 2, S = 3 };
    static double bx[B * CH * S], by[B * CH * S];
    for (int i = 0; i < B * CH * S; i++) bx[i] = rnd() * 3 + 1;
    thc_tensor *tbx = upload(3, (int64_t[]){B, CH, S}, bx);
    thc_tensor *tby = thc_empty(3, (int64_t[]){B, CH, S}, THC_FLOAT64);
    thc_tensor *sm = thc_empty(1, (int64_t[]){CH}, THC_FLOAT64);
    thc_tensor *si = thc_empty(1, (int64_t[]){CH}, THC_FLOAT64);
    thc_tensor *rm = thc_empty(1, (int64_t[]){CH}, THC_FLOAT64);
    thc_tensor *rv = thc_empty(1, (int64_t[]){CH}, THC_FLOAT64);
    CHECK(thc_zero(rm) == THC_OK && thc_fill_double(rv, 1.0) == THC_OK);
    CHECK(thcunn_batch_norm_forward(tby, sm, si, rm, rv, tbx, NULL, NULL, 1, 0.1, 0.0) == THC_OK);
    CHECK(thc_copy_to_host(by, tby) == THC_OK);
    int bad = 0;
    for (int c = 0; c < CH; c++) {
        double m = 0, v = 0;
        for (int n = 0; n < B; n++)
            for (int s = 0; s < S; s++) m += by[(n * CH + c) * S + s];
        m /= B * S;
        for (int n = 0; n < B; n++)
            for (int s = 0; s < S; s++) v += pow(by[(n * CH + c) * S + s] - m, 2);
        bad += fabs(m) > 1e-12 || fabs(v / (B * S) - 1) > 1e-9;
    }
    CHECK(bad == 0);
    /* running mean moved a tenth of the way to the batch mean */
    double hrm[CH], hsm[CH];
    CHECK(thc_copy_to_host(hrm, rm) == THC_OK && thc_copy_to_host(hsm, sm) == THC_OK);
    CHECK(fabs(hrm[0] - 0.1 * hsm[0]) < 1e-12 && fabs(hrm[1] - 0.1 * hsm[1]) < 1e-12);
    thc_tensor *all[] = {tx, tt, to, ttw, tbx, tby, sm, si, rm, rv};
    for (int i = 0; i < 10; i++) thc_tensor_release(all[i]);
}

static void test_activations(void) {
    enum { N = 50 };
    double x[N], y[N], g[N];
    for (int i = 0; i < N; i++) x[i] = rnd() * 4;
    thc_tensor *tx = upload(1, (int64_t[]){N}, x), *ty = thc_empty(1, (int64_t[]){N}, THC_FLOAT64);
    CHECK(thcunn_activation_forward(ty, tx, THCUNN_SILU, 0, 0) == THC_OK);
    CHECK(thc_copy_to_host(y, ty) == THC_OK);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += fabs(y[i] - x[i] / (1 + exp(-x[i]))) > 1e-12;
    CHECK(bad == 0);
    /* the derivative against central differences */
    thc_tensor *ones = thc_empty(1, (int64_t[]){N}, THC_FLOAT64);
    CHECK(thc_fill_double(ones, 1.0) == THC_OK);
    CHECK(thcunn_activation_backward_input(ty, ones, tx, THCUNN_GELU, 1, 0) == THC_OK);
    CHECK(thc_copy_to_host(g, ty) == THC_OK);
    bad = 0;
    for (int i = 0; i < N; i++) {
        double h = 1e-6, f[2];
        for (int k = 0; k < 2; k++) {
            double v = x[i] + (k ? h : -h);
            f[k] = 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        }
        bad += fabs(g[i] - (f[1] - f[0]) / (2 * h)) > 1e-6;
    }
    CHECK(bad == 0);
    ERR(thcunn_activation_forward(ty, tx, 99, 0, 0), THC_ERR_VALUE, "unknown activation");
    thc_tensor_release(tx);
    thc_tensor_release(ty);
    thc_tensor_release(ones);
}

/* Output sizes are overflow-checked (no device needed): a huge padding or
 * kernel is an error, a huge stride in ceil mode no wrapped product. */
static void test_window_limits(void) {
    const int64_t huge = INT64_C(1) << 62;
    thcunn_clear_error();
    CHECK(thcunn_window_output_size(4, 3, 1, huge, 1, 0) == -1 &&
          thcunn_last_status() == THC_ERR_RUNTIME &&
          strstr(thcunn_last_error(), "window output size: input size 4 with padding "
                 "4611686018427387904, kernel 3 and dilation 1 overflows int64"));
    thcunn_clear_error();
    CHECK(thcunn_window_output_size(4, huge, 1, 0, 4, 0) == -1 &&
          strstr(thcunn_last_error(), "overflows int64"));
    CHECK(thcunn_window_output_size(INT64_MAX, 2, huge, 0, 1, 1) == 2);
    CHECK(thcunn_window_output_size(5, 2, 2, 0, 1, 1) == 3);
}

int main(void) {
    test_window_limits();
    int n = 0;
    thc_device_count(&n);
    if (n == 0) {
        printf("test_thcunn: skipped (no CUDA device: %s)\n", thc_cuda_error_text());
        return check_report("test_thcunn");
    }
    srand(11);
    test_conv2d();
    test_max_pool_and_softmax();
    test_nll_and_batch_norm();
    test_activations();
    return check_report("test_thcunn");
}
