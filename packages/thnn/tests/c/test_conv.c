/* libTHNN from C alone: conv3d and conv_transpose2d against direct loops, and their error
 * statuses. */
#include "thnn_testing.h"

static void test_conv3d(int dtype) {
    /* N=2, C=4, 4x5x3, O=4, groups 2, kernel 2x3x2, stride (1,2,1),
     * padding (1,1,0), dilation (2,1,1) */
    int64_t xs[5] = {2, 4, 4, 5, 3}, ws[5] = {4, 2, 2, 3, 2}, bs[1] = {4};
    int64_t st[3] = {1, 2, 1}, pd[3] = {1, 1, 0}, dl[3] = {2, 1, 1}, G = 2;
    th_tensor *x = make(5, xs, dtype, 11), *w = make(5, ws, dtype, 12), *b = make(1, bs, dtype, 13);
    const int64_t OD = 4, OH = 3, OW = 2; /* (4+2-2-1)/1+1, (5+2-3)/2+1, (3-2)/1+1 */
    int64_t ys[5] = {2, 4, OD, OH, OW};
    th_tensor *y = th_empty(5, ys, dtype);
    CHECK(thnn_conv3d_forward(y, x, w, b, st, pd, dl, G) == TH_OK);
    double maxerr = 0;
    for (int64_t n = 0; n < 2; n++)
        for (int64_t o = 0; o < 4; o++)
            for (int64_t q = 0; q < OD * OH * OW; q++) {
                const int64_t od = q / (OH * OW), oh = q / OW % OH, ow = q % OW;
                double s = at(b, o);
                for (int64_t c = 0; c < 2; c++)
                    for (int64_t i = 0; i < 2; i++)
                        for (int64_t j = 0; j < 3; j++)
                            for (int64_t l = 0; l < 2; l++) {
                                int64_t id = od - 1 + 2 * i, ih = oh * 2 - 1 + j, iw = ow + l;
                                if (id < 0 || id >= 4 || ih < 0 || ih >= 5 || iw >= 3) continue;
                                s += at(x, (((n * 4 + o / 2 * 2 + c) * 4 + id) * 5 + ih) * 3 + iw) *
                                     at(w, (((o * 2 + c) * 2 + i) * 3 + j) * 2 + l);
                            }
                double e = fabs(s - at(y, (n * 4 + o) * OD * OH * OW + q));
                if (e > maxerr) maxerr = e;
            }
    CHECK(maxerr < (dtype == TH_FLOAT32 ? 1e-4 : 1e-12));

    /* adjoint: <conv(x), gy> = <x, backward_input(gy)> = <w, gw> - ... */
    th_tensor *gy = make(5, ys, dtype, 14), *gx = th_empty(5, xs, dtype);
    th_tensor *gw = th_empty(5, ws, dtype), *gb = th_empty(1, bs, dtype);
    CHECK(thnn_conv3d_forward(y, x, w, NULL, st, pd, dl, G) == TH_OK);
    CHECK(thnn_conv3d_backward_input(gx, gy, w, st, pd, dl, G) == TH_OK);
    CHECK(thnn_conv3d_backward_params(gw, gb, gy, x, st, pd, dl, G) == TH_OK);
    const double tol = dtype == TH_FLOAT32 ? 1e-3 : 1e-10;
    CHECK_CLOSE(dot(y, gy), dot(x, gx), tol);
    CHECK_CLOSE(dot(y, gy), dot(w, gw), tol);
    double s0 = 0;
    for (int64_t i = 0; i < 2 * OD * OH * OW; i++)
        s0 += at(gy, (i / (OD * OH * OW)) * 4 * OD * OH * OW + i % (OD * OH * OW));
    CHECK_CLOSE(at(gb, 0), s0, tol);

    /* errors: channels, rank, kernel larger than the padded input */
    int64_t bad_ws[5] = {4, 3, 2, 3, 2}, small[5] = {1, 4, 1, 1, 1};
    th_tensor *wb = make(5, bad_ws, dtype, 15), *xsml = make(5, small, dtype, 16);
    CHECK(thnn_conv3d_forward(y, x, wb, b, st, pd, dl, G) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "expected input[2, 4, 4, 5, 3] to have 6 channels") != NULL);
    CHECK(thnn_conv3d_forward(y, y, w, b, st, pd, dl, G) == TH_ERR_RUNTIME);
    CHECK(thnn_conv3d_forward(y, xsml, w, b, st, pd, dl, G) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "Kernel size can't be greater than actual input size") != NULL);
    CHECK(thnn_conv3d_forward(y, x, w, b, st, NULL, dl, G) == TH_ERR_VALUE);
    th_tensor *all[] = {x, w, b, y, gy, gx, gw, gb, wb, xsml};
    for (int i = 0; i < 10; i++) th_tensor_release(all[i]);
}

static void test_conv_transpose2d(int dtype) {
    /* N=2, C=4, 3x4, O=6, groups 2, kernel 3x2, stride (2,3), padding
     * (1,0), output_padding (1,2), dilation (1,2) */
    int64_t xs[4] = {2, 4, 3, 4}, ws[4] = {4, 3, 3, 2}, bs[1] = {6};
    int64_t st[2] = {2, 3}, pd[2] = {1, 0}, op[2] = {1, 2}, dl[2] = {1, 2}, G = 2;
    const int64_t OH = (3 - 1) * 2 - 2 + 1 * 2 + 1 + 1, OW = (4 - 1) * 3 + 2 * 1 + 2 + 1;
    th_tensor *x = make(4, xs, dtype, 21), *w = make(4, ws, dtype, 22), *b = make(1, bs, dtype, 23);
    int64_t ys[4] = {2, 6, OH, OW};
    th_tensor *y = th_empty(4, ys, dtype);
    CHECK(thnn_conv_transpose2d_forward(y, x, w, b, st, pd, op, dl, G) == TH_OK);
    /* direct scatter: x[n, c, h, w] * W[c, o, i, j] lands at
     * (h*2 - 1 + i, w*3 + 2*j) */
    double *ref = calloc((size_t)(2 * 6 * OH * OW), sizeof *ref);
    for (int64_t n = 0; n < 2; n++)
        for (int64_t o = 0; o < 6; o++)
            for (int64_t q = 0; q < OH * OW; q++) ref[(n * 6 + o) * OH * OW + q] = at(b, o);
    for (int64_t n = 0; n < 2; n++)
        for (int64_t c = 0; c < 4; c++)
            for (int64_t h = 0; h < 3; h++)
                for (int64_t v = 0; v < 4; v++)
                    for (int64_t oo = 0; oo < 3; oo++)
                        for (int64_t i = 0; i < 3; i++)
                            for (int64_t j = 0; j < 2; j++) {
                                int64_t oh = h * 2 - 1 + i, ow = v * 3 + 2 * j, o = c / 2 * 3 + oo;
                                if (oh < 0 || oh >= OH || ow >= OW) continue;
                                ref[((n * 6 + o) * OH + oh) * OW + ow] +=
                                    at(x, ((n * 4 + c) * 3 + h) * 4 + v) *
                                    at(w, ((c * 3 + oo) * 3 + i) * 2 + j);
                            }
    double maxerr = 0;
    for (int64_t i = 0; i < 2 * 6 * OH * OW; i++) {
        double e = fabs(ref[i] - at(y, i));
        if (e > maxerr) maxerr = e;
    }
    free(ref);
    CHECK(maxerr < (dtype == TH_FLOAT32 ? 1e-4 : 1e-12));

    th_tensor *gy = make(4, ys, dtype, 24), *gx = th_empty(4, xs, dtype);
    th_tensor *gw = th_empty(4, ws, dtype), *gb = th_empty(1, bs, dtype);
    CHECK(thnn_conv_transpose2d_forward(y, x, w, NULL, st, pd, op, dl, G) == TH_OK);
    CHECK(thnn_conv_transpose2d_backward_input(gx, gy, w, st, pd, op, dl, G) == TH_OK);
    CHECK(thnn_conv_transpose2d_backward_params(gw, gb, gy, x, st, pd, op, dl, G) == TH_OK);
    const double tol = dtype == TH_FLOAT32 ? 1e-3 : 1e-10;
    CHECK_CLOSE(dot(y, gy), dot(x, gx), tol);
    CHECK_CLOSE(dot(y, gy), dot(w, gw), tol);

    /* errors: output_padding >= stride and dilation, channels */
    int64_t bad_op[2] = {2, 0};
    CHECK(thnn_conv_transpose2d_forward(y, x, w, b, st, pd, bad_op, dl, G) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "output padding must be smaller than either stride or dilation") != NULL);
    int64_t bad_ws[4] = {3, 3, 3, 2};
    th_tensor *wb = make(4, bad_ws, dtype, 25);
    CHECK(thnn_conv_transpose2d_forward(y, x, wb, NULL, st, pd, op, dl, 1) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "to have 3 channels, but got 4 channels") != NULL);
    th_tensor *all[] = {x, w, b, y, gy, gx, gw, gb, wb};
    for (int i = 0; i < 9; i++) th_tensor_release(all[i]);
}

int main(void) {
    test_conv3d(TH_FLOAT32);
    test_conv3d(TH_FLOAT64);
    test_conv_transpose2d(TH_FLOAT32);
    test_conv_transpose2d(TH_FLOAT64);
    return check_report("test_conv");
}
