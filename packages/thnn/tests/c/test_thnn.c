/* libTHNN from C alone: conv2d against a direct loop, pooling, softmax,
 * nll_loss, activations, and the error contract (status + message). */
#include <string.h>

#include "check.h"

static th_tensor *make(int ndim, const int64_t *sizes, int dtype, unsigned seed) {
    th_tensor *t = th_empty(ndim, sizes, dtype);
    if (!t) return NULL;
    int64_t n = th_numel(t);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        double v = ((seed >> 8) & 0xffff) / 32768.0 - 1.0;
        if (dtype == TH_FLOAT32) ((float *)th_data_ptr(t))[i] = (float)v;
        else ((double *)th_data_ptr(t))[i] = v;
    }
    return t;
}

static double at(const th_tensor *t, int64_t i) {
    double v = 0;
    th_get_double(t, i, &v);
    return v;
}

static void test_conv2d(int dtype) {
    /* N=2, C=4, 6x5, O=6, groups 2, 3x2 kernel, stride (2,1), pad (1,1),
     * dilation (1,2) */
    int64_t xs[4] = {2, 4, 6, 5}, ws[4] = {6, 2, 3, 2}, bs[1] = {6};
    int64_t stride[2] = {2, 1}, pad[2] = {1, 1}, dil[2] = {1, 2}, G = 2;
    th_tensor *x = make(4, xs, dtype, 1), *w = make(4, ws, dtype, 2), *b = make(1, bs, dtype, 3);
    int64_t OH = thnn_window_output_size(6, 3, 2, 1, 1, 0);
    int64_t OW = thnn_window_output_size(5, 2, 1, 1, 2, 0);
    CHECK(OH == 3 && OW == 5);
    int64_t ys[4] = {2, 6, OH, OW};
    th_tensor *y = th_empty(4, ys, dtype);
    CHECK(thnn_conv2d_forward(y, x, w, b, stride, pad, dil, G) == TH_OK);
    double maxerr = 0;
    for (int64_t n = 0; n < 2; n++)
        for (int64_t o = 0; o < 6; o++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double s = at(b, o);
                    int64_t g = o / 3;
                    for (int64_t c = 0; c < 2; c++)
                        for (int64_t i = 0; i < 3; i++)
                            for (int64_t j = 0; j < 2; j++) {
                                int64_t ih = oh * 2 - 1 + i, iw = ow - 1 + 2 * j;
                                if (ih < 0 || ih >= 6 || iw < 0 || iw >= 5) continue;
                                s += at(x, ((n * 4 + g * 2 + c) * 6 + ih) * 5 + iw) *
                                     at(w, ((o * 2 + c) * 3 + i) * 2 + j);
                            }
                    double e = fabs(s - at(y, ((n * 6 + o) * OH + oh) * OW + ow));
                    if (e > maxerr) maxerr = e;
                }
    CHECK(maxerr < (dtype == TH_FLOAT32 ? 1e-4 : 1e-12));

    /* backward runs and keeps shapes; grad_bias = sum of grad_output */
    th_tensor *gx = th_empty(4, xs, dtype), *gw = th_empty(4, ws, dtype), *gb = th_empty(1, bs, dtype);
    CHECK(thnn_conv2d_backward_input(gx, y, w, stride, pad, dil, G) == TH_OK);
    CHECK(thnn_conv2d_backward_params(gw, gb, y, x, stride, pad, dil, G) == TH_OK);
    double s0 = 0;
    for (int64_t i = 0; i < 2 * OH * OW; i++)
        s0 += at(y, (i / (OH * OW)) * 6 * OH * OW + i % (OH * OW));
    CHECK_CLOSE(at(gb, 0), s0, 1e-4);

    /* errors: wrong channels, wrong output shape, no abort */
    int64_t bad_ws[4] = {6, 3, 3, 2};
    th_tensor *wb = make(4, bad_ws, dtype, 4);
    CHECK(thnn_conv2d_forward(y, x, wb, b, stride, pad, dil, G) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "expected input[2, 4, 6, 5] to have 6 channels") != NULL);
    CHECK(thnn_conv2d_forward(gx, x, w, b, stride, pad, dil, G) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "expected output of shape") != NULL);
    CHECK(thnn_conv2d_forward(y, x, w, b, NULL, pad, dil, G) == TH_ERR_VALUE);
    th_tensor *ts[] = {x, w, b, y, gx, gw, gb, wb};
    for (int i = 0; i < 8; i++) th_tensor_release(ts[i]);
}

static void test_pool_softmax_nll(void) {
    int64_t xs[4] = {1, 1, 4, 4}, ys[4] = {1, 1, 2, 2};
    th_tensor *x = th_arange(0, 16, 1, TH_FLOAT64), *x4 = th_view(x, 4, xs);
    th_tensor *y = th_empty(4, ys, TH_FLOAT64), *ind = th_empty(4, ys, TH_INT64);
    int64_t k[2] = {2, 2}, s[2] = {2, 2}, p[2] = {0, 0}, d[2] = {1, 1};
    CHECK(thnn_max_pool2d_forward(y, ind, x4, k, s, p, d, 0) == TH_OK);
    CHECK(at(y, 0) == 5 && at(y, 3) == 15 && at(ind, 1) == 7);
    CHECK(thnn_avg_pool2d_forward(y, x4, k, s, p, 0, 1) == TH_OK);
    CHECK_CLOSE(at(y, 0), 2.5, 1e-12);

    int64_t ls[2] = {2, 3}, ts[1] = {2};
    th_tensor *logits = make(2, ls, TH_FLOAT64, 5), *lp = th_empty(2, ls, TH_FLOAT64);
    CHECK(thnn_log_softmax_forward(lp, logits, 1) == TH_OK);
    double z = exp(at(lp, 0)) + exp(at(lp, 1)) + exp(at(lp, 2));
    CHECK_CLOSE(z, 1.0, 1e-12);
    th_tensor *target = th_empty(1, ts, TH_INT64);
    ((int64_t *)th_data_ptr(target))[0] = 2;
    ((int64_t *)th_data_ptr(target))[1] = 0;
    th_tensor *loss = th_empty(0, NULL, TH_FLOAT64), *tw = th_empty(0, NULL, TH_FLOAT64);
    CHECK(thnn_nll_loss_forward(loss, tw, lp, target, NULL, THNN_REDUCTION_MEAN, -100) == TH_OK);
    CHECK_CLOSE(at(loss, 0), -(at(lp, 2) + at(lp, 3)) / 2, 1e-12);
    ((int64_t *)th_data_ptr(target))[1] = 3;
    CHECK(thnn_nll_loss_forward(loss, tw, lp, target, NULL, THNN_REDUCTION_MEAN, -100) == TH_ERR_INDEX);
    CHECK(strcmp(thnn_last_error(), "Target 3 is out of bounds.") == 0);

    CHECK(thnn_activation_forward(lp, logits, THNN_RELU, 0, 0) == TH_OK);
    CHECK(at(lp, 0) == (at(logits, 0) > 0 ? at(logits, 0) : 0));
    CHECK(thnn_activation_forward(lp, logits, 99, 0, 0) == TH_ERR_VALUE);
    th_tensor *all[] = {x, x4, y, ind, logits, lp, target, loss, tw};
    for (int i = 0; i < 9; i++) th_tensor_release(all[i]);
}

int main(void) {
    CHECK(thnn_abi_version_major() == THNN_ABI_VERSION_MAJOR);
    CHECK(thnn_abi_version_minor() == THNN_ABI_VERSION_MINOR);
    test_conv2d(TH_FLOAT32);
    test_conv2d(TH_FLOAT64);
    test_pool_softmax_nll();
    return check_report("test_thnn");
}
