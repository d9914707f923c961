/* libTHNN from C alone: group_norm, upsampling, reflection/replication
 * padding, embedding_bag and the kl_div / margin losses against direct
 * loops, and their error contract (status + message, outputs untouched). */
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

static th_tensor *longs(int64_t n, const int64_t *v) {
    th_tensor *t = th_empty(1, &n, TH_INT64);
    if (t) memcpy(th_data_ptr(t), v, (size_t)n * sizeof *v);
    return t;
}

static double at(const th_tensor *t, int64_t i) {
    double v = 0;
    th_get_double(t, i, &v);
    return v;
}

static void test_group_norm(int dtype) {
    /* N=2, C=6, L=5, G=3: each (n, g) block of 2 channels has mean 0, var 1
     * before the affine */
    int64_t xs[3] = {2, 6, 5}, cs[1] = {6}, ss[2] = {2, 3};
    th_tensor *x = make(3, xs, dtype, 7), *w = make(1, cs, dtype, 8), *b = make(1, cs, dtype, 9);
    th_tensor *y = th_empty(3, xs, dtype), *m = th_empty(2, ss, dtype), *r = th_empty(2, ss, dtype);
    CHECK(thnn_group_norm_forward(y, m, r, x, w, b, 3, 1e-5) == TH_OK);
    const double tol = dtype == TH_FLOAT32 ? 1e-5 : 1e-12;
    for (int64_t n = 0; n < 2; n++)
        for (int64_t g = 0; g < 3; g++) {
            double s = 0, ss2 = 0;
            for (int64_t k = 0; k < 10; k++) s += at(x, (n * 6 + g * 2) * 5 + k);
            const double mean = s / 10;
            for (int64_t k = 0; k < 10; k++) {
                double d = at(x, (n * 6 + g * 2) * 5 + k) - mean;
                ss2 += d * d;
            }
            const double rstd = 1 / sqrt(ss2 / 10 + 1e-5);
            CHECK_CLOSE(at(m, n * 3 + g), mean, tol);
            CHECK_CLOSE(at(r, n * 3 + g), rstd, tol * rstd);
            for (int64_t k = 0; k < 10; k++) {
                int64_t i = (n * 6 + g * 2) * 5 + k, c = g * 2 + k / 5;
                CHECK_CLOSE(at(y, i), (at(x, i) - mean) * rstd * at(w, c) + at(b, c), 10 * tol);
            }
        }
    /* grad_bias = sum of grad_output over (N, L) */
    th_tensor *gx = th_empty(3, xs, dtype), *gw = th_empty(1, cs, dtype), *gb = th_empty(1, cs, dtype);
    CHECK(thnn_group_norm_backward_input(gx, x, x, w, m, r, 3) == TH_OK);
    CHECK(thnn_group_norm_backward_params(gw, gb, x, x, m, r, 3) == TH_OK);
    double s0 = 0;
    for (int64_t n = 0; n < 2; n++)
        for (int64_t k = 0; k < 5; k++) s0 += at(x, n * 30 + k);
    CHECK_CLOSE(at(gb, 0), s0, 10 * tol);
    /* 6 channels do not split into 4 groups; nothing is written */
    CHECK(th_fill_double(y, 3.0) == TH_OK);
    CHECK(thnn_group_norm_forward(y, m, r, x, w, b, 4, 1e-5) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "divisible by num_groups") != NULL);
    CHECK(at(y, 0) == 3.0);
    CHECK(thnn_group_norm_forward(y, m, r, x, NULL, NULL, 0, 1e-5) == TH_ERR_VALUE);
    th_tensor *all[] = {x, w, b, y, m, r, gx, gw, gb};
    for (int i = 0; i < 9; i++) th_tensor_release(all[i]);
}

static void test_upsample(void) {
    /* 1x1x2x2 [[0, 1], [2, 3]] to 4x4 */
    int64_t xs[4] = {1, 1, 2, 2}, ys[4] = {1, 1, 4, 4};
    th_tensor *a = th_arange(0, 4, 1, TH_FLOAT64), *x = th_view(a, 4, xs);
    th_tensor *y = th_empty(4, ys, TH_FLOAT64), *gx = th_empty(4, xs, TH_FLOAT64);
    CHECK(thnn_upsample_nearest2d_forward(y, x, 0, 0) == TH_OK);
    CHECK(at(y, 0) == 0 && at(y, 1) == 0 && at(y, 2) == 1 && at(y, 15) == 3 && at(y, 8) == 2);
    CHECK(thnn_upsample_nearest2d_backward_input(gx, y, 0, 0) == TH_OK);
    CHECK(at(gx, 0) == 0 && at(gx, 1) == 4 && at(gx, 3) == 12);
    /* align_corners: corners kept, the middle interpolated linearly */
    CHECK(thnn_upsample_bilinear2d_forward(y, x, 1, 0, 0) == TH_OK);
    CHECK_CLOSE(at(y, 0), 0, 1e-15);
    CHECK_CLOSE(at(y, 1), 1.0 / 3, 1e-15);
    CHECK_CLOSE(at(y, 15), 3, 1e-15);
    /* half-pixel centres: output 1 samples input 0.25 of the way */
    CHECK(thnn_upsample_bilinear2d_forward(y, x, 0, 0, 0) == TH_OK);
    CHECK_CLOSE(at(y, 0), 0, 1e-15);
    CHECK_CLOSE(at(y, 1), 0.25, 1e-15);
    CHECK(thnn_upsample_bilinear2d_backward_input(gx, y, 0, 0, 0) == TH_OK);
    /* each output's weights sum to 1, so the gradient keeps the total */
    double gsum = 0, ysum = 0;
    for (int i = 0; i < 4; i++) gsum += at(gx, i);
    for (int i = 0; i < 16; i++) ysum += at(y, i);
    CHECK_CLOSE(gsum, ysum, 1e-12);
    int64_t bad[3] = {1, 2, 2};
    th_tensor *x3 = th_empty(3, bad, TH_INT64);
    CHECK(thnn_upsample_nearest2d_forward(y, x3, 0, 0) == TH_ERR_TYPE);
    int64_t es[4] = {1, 1, 0, 4};
    th_tensor *e = th_empty(4, es, TH_FLOAT64);
    CHECK(thnn_upsample_nearest2d_forward(e, x, 0, 0) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "greater than 0") != NULL);
    th_tensor *all[] = {a, x, y, gx, x3, e};
    for (int i = 0; i < 6; i++) th_tensor_release(all[i]);
}

static void test_padding(void) {
    /* [0 1 2 3] reflect (2, 1) -> [2 1 0 1 2 3 2]; replicate -> [0 0 0 1 2 3 3] */
    int64_t xs[2] = {1, 4}, ys[2] = {1, 7}, pad[2] = {2, 1};
    th_tensor *a = th_arange(0, 4, 1, TH_FLOAT32), *x = th_view(a, 2, xs);
    th_tensor *y = th_empty(2, ys, TH_FLOAT32), *gx = th_empty(2, xs, TH_FLOAT32);
    const double refl[7] = {2, 1, 0, 1, 2, 3, 2}, repl[7] = {0, 0, 0, 1, 2, 3, 3};
    CHECK(thnn_reflection_pad1d_forward(y, x, pad) == TH_OK);
    for (int i = 0; i < 7; i++) CHECK(at(y, i) == refl[i]);
    CHECK(th_fill_double(y, 1.0) == TH_OK);
    CHECK(thnn_reflection_pad1d_backward_input(gx, y, pad) == TH_OK);
    CHECK(at(gx, 0) == 1 && at(gx, 1) == 2 && at(gx, 2) == 3 && at(gx, 3) == 1);
    CHECK(thnn_replication_pad1d_forward(y, x, pad) == TH_OK);
    for (int i = 0; i < 7; i++) CHECK(at(y, i) == repl[i]);
    /* reflection padding must stay below the input size */
    int64_t big[2] = {4, 0}, ybs[2] = {1, 8};
    th_tensor *yb = th_empty(2, ybs, TH_FLOAT32);
    CHECK(thnn_reflection_pad1d_forward(yb, x, big) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "Padding size should be less than the corresponding "
                 "input dimension, but got: padding (4, 0) at dimension 1 of input [1, 4]") != NULL);
    CHECK(thnn_replication_pad1d_forward(yb, x, big) == TH_OK);
    CHECK(at(yb, 0) == 0 && at(yb, 7) == 3);
    /* 3d replication: every output reads its clamped position */
    int64_t x3s[4] = {1, 2, 2, 2}, y3s[4] = {1, 3, 4, 3}, pad3[6] = {1, 0, 1, 1, 0, 1};
    th_tensor *a3 = th_arange(0, 8, 1, TH_FLOAT64), *x3 = th_view(a3, 4, x3s);
    th_tensor *y3 = th_empty(4, y3s, TH_FLOAT64);
    CHECK(thnn_replication_pad3d_forward(y3, x3, pad3) == TH_OK);
    int ok = 1;
    for (int d = 0; d < 3; d++)
        for (int h = 0; h < 4; h++)
            for (int w = 0; w < 3; w++) {
                int sd = d > 1 ? 1 : d, sh = h - 1 < 0 ? 0 : h - 1 > 1 ? 1 : h - 1;
                int sw = w - 1 < 0 ? 0 : w - 1;
                ok &= at(y3, (d * 4 + h) * 3 + w) == sd * 4 + sh * 2 + sw;
            }
    CHECK(ok);
    CHECK(thnn_replication_pad3d_forward(y3, x3, NULL) == TH_ERR_VALUE);
    th_tensor *all[] = {a, x, y, gx, yb, a3, x3, y3};
    for (int i = 0; i < 8; i++) th_tensor_release(all[i]);
}

static void test_embedding_bag(void) {
    /* table 5x3, indices [1 2 4 4 3 0], bags [0, 2), [2, 2), [2, 6) */
    int64_t ws[2] = {5, 3}, os[2] = {3, 3};
    const int64_t iv[6] = {1, 2, 4, 4, 3, 0}, ov[3] = {0, 2, 2};
    th_tensor *w = make(2, ws, TH_FLOAT64, 11), *ind = longs(6, iv), *ofs = longs(3, ov);
    th_tensor *y = th_empty(2, os, TH_FLOAT64), *mi = th_empty(2, os, TH_INT64);
    int64_t n6 = 6, n3 = 3;
    th_tensor *o2b = th_empty(1, &n6, TH_INT64), *bs = th_empty(1, &n3, TH_INT64);
    CHECK(thnn_embedding_bag_forward(y, o2b, bs, NULL, w, ind, ofs, NULL,
                                     THNN_EMBEDDING_BAG_MEAN, 0, 4) == TH_OK);
    CHECK(at(bs, 0) == 2 && at(bs, 1) == 0 && at(bs, 2) == 2);   /* row 4 is padding */
    CHECK(at(o2b, 0) == 0 && at(o2b, 3) == 2 && at(o2b, 5) == 2);
    for (int d = 0; d < 3; d++) {
        CHECK_CLOSE(at(y, d), (at(w, 3 + d) + at(w, 6 + d)) / 2, 1e-15);
        CHECK(at(y, 3 + d) == 0);
        CHECK_CLOSE(at(y, 6 + d), (at(w, 9 + d) + at(w, d)) / 2, 1e-15);
    }
    CHECK(thnn_embedding_bag_forward(y, o2b, bs, mi, w, ind, ofs, NULL,
                                     THNN_EMBEDDING_BAG_MAX, 0, -1) == TH_OK);
    for (int d = 0; d < 3; d++) {
        double best = at(w, 12 + d);
        int64_t row = 4;
        for (int k = 3; k < 6; k++)
            if (at(w, iv[k] * 3 + d) > best) { best = at(w, iv[k] * 3 + d); row = iv[k]; }
        CHECK(at(y, 6 + d) == best && at(mi, 6 + d) == row);
        CHECK(at(mi, 3 + d) == -1);
    }
    /* grad of max: each (bag, column) goes to its winning row */
    th_tensor *gw = th_empty(2, ws, TH_FLOAT64);
    CHECK(thnn_embedding_bag_backward_params(gw, y, ind, o2b, bs, mi, NULL,
                                             THNN_EMBEDDING_BAG_MAX, -1) == TH_OK);
    double total = 0;
    for (int k = 0; k < 15; k++) total += at(gw, k);
    double ysum = 0;
    for (int k = 0; k < 9; k++) ysum += at(y, k);
    CHECK_CLOSE(total, ysum, 1e-12);
    /* per-sample weight grads (sum): <grad_output[bag], weight[row]>, 0 for padding */
    CHECK(thnn_embedding_bag_forward(y, o2b, bs, NULL, w, ind, ofs, NULL,
                                     THNN_EMBEDDING_BAG_SUM, 0, 4) == TH_OK);
    th_tensor *gp = th_empty(1, &n6, TH_FLOAT64);
    CHECK(thnn_embedding_bag_backward_per_sample_weights(gp, y, w, ind, o2b,
                                                         THNN_EMBEDDING_BAG_SUM, 4) == TH_OK);
    double dot = 0;
    for (int d = 0; d < 3; d++) dot += at(y, 6 + d) * at(w, 9 + d);
    CHECK_CLOSE(at(gp, 4), dot, 1e-12);
    CHECK(at(gp, 2) == 0 && at(gp, 3) == 0);
    CHECK(thnn_embedding_bag_backward_per_sample_weights(gp, y, w, ind, o2b,
                                                         THNN_EMBEDDING_BAG_MAX, 4) == TH_ERR_VALUE);
    th_tensor_release(gp);
    /* an index past the table: IndexError naming the index and table size */
    const int64_t badv[6] = {1, 2, 7, 4, 3, 0};
    th_tensor *bad = longs(6, badv);
    CHECK(th_fill_double(y, 5.0) == TH_OK);
    CHECK(thnn_embedding_bag_forward(y, o2b, bs, NULL, w, bad, ofs, NULL,
                                     THNN_EMBEDDING_BAG_SUM, 0, -1) == TH_ERR_INDEX);
    CHECK(strstr(thnn_last_error(), "index 7") && strstr(thnn_last_error(), "5 rows"));
    CHECK(at(y, 0) == 5.0);
    const int64_t ov2[3] = {1, 2, 2};
    th_tensor *ofs2 = longs(3, ov2);
    CHECK(thnn_embedding_bag_forward(y, o2b, bs, NULL, w, ind, ofs2, NULL,
                                     THNN_EMBEDDING_BAG_SUM, 0, -1) == TH_ERR_VALUE);
    CHECK(strstr(thnn_last_error(), "offsets[0] has to be 0") != NULL);
    CHECK(thnn_embedding_bag_forward(y, o2b, bs, NULL, w, ind, ofs, ind,
                                     THNN_EMBEDDING_BAG_MEAN, 0, -1) == TH_ERR_VALUE);
    th_tensor *all[] = {w, ind, ofs, y, mi, o2b, bs, gw, bad, ofs2};
    for (int i = 0; i < 10; i++) th_tensor_release(all[i]);
}

static void test_losses(void) {
    int64_t s[2] = {3, 4}, n3 = 3;
    th_tensor *x = make(2, s, TH_FLOAT64, 21), *t = make(2, s, TH_FLOAT64, 22);
    th_tensor *out = th_empty(0, NULL, TH_FLOAT64), *gx = th_empty(2, s, TH_FLOAT64);
    th_tensor *g1 = th_scalar_double(1.0, TH_FLOAT64);
    /* log_target kl_div, sum */
    CHECK(thnn_kl_div_forward(out, x, t, THNN_REDUCTION_SUM, 1) == TH_OK);
    double ref = 0;
    for (int i = 0; i < 12; i++) ref += exp(at(t, i)) * (at(t, i) - at(x, i));
    CHECK_CLOSE(at(out, 0), ref, 1e-12);
    CHECK(thnn_kl_div_backward_input(gx, NULL, g1, x, t, THNN_REDUCTION_SUM, 1) == TH_OK);
    CHECK_CLOSE(at(gx, 5), -exp(at(t, 5)), 1e-15);
    /* margin ranking, mean */
    CHECK(thnn_margin_ranking_loss_forward(out, x, t, x, 0.1, THNN_REDUCTION_MEAN) == TH_OK);
    ref = 0;
    for (int i = 0; i < 12; i++) {
        double l = -at(x, i) * (at(x, i) - at(t, i)) + 0.1;
        ref += l > 0 ? l : 0;
    }
    CHECK_CLOSE(at(out, 0), ref / 12, 1e-12);
    /* cosine embedding: a row against itself has cos 1 */
    const double yv[3] = {1, -1, 1};
    th_tensor *y = th_empty(1, &n3, TH_FLOAT64), *per = th_empty(1, &n3, TH_FLOAT64);
    for (int i = 0; i < 3; i++) ((double *)th_data_ptr(y))[i] = yv[i];
    CHECK(thnn_cosine_embedding_loss_forward(per, x, x, y, 0.5, THNN_REDUCTION_NONE) == TH_OK);
    CHECK_CLOSE(at(per, 0), 0, 1e-12);
    CHECK_CLOSE(at(per, 1), 0.5, 1e-12);
    /* errors */
    int64_t s2[2] = {4, 3};
    th_tensor *xt = make(2, s2, TH_FLOAT64, 23);
    CHECK(thnn_kl_div_forward(out, x, xt, THNN_REDUCTION_SUM, 0) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "target [4, 3] and input [3, 4]") != NULL);
    CHECK(thnn_kl_div_forward(out, x, t, 7, 0) == TH_ERR_VALUE);
    CHECK(thnn_cosine_embedding_loss_forward(per, x, x, x, 0.0, THNN_REDUCTION_NONE) == TH_ERR_RUNTIME);
    th_tensor *all[] = {x, t, out, gx, g1, y, per, xt};
    for (int i = 0; i < 8; i++) th_tensor_release(all[i]);
}

int main(void) {
    test_group_norm(TH_FLOAT32);
    test_group_norm(TH_FLOAT64);
    test_upsample();
    test_padding();
    test_embedding_bag();
    test_losses();
    return check_report("test_norm_resample_embedding_loss");
}
