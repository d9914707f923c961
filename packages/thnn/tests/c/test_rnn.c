/* libTHNN's recurrent cell kernels from C alone: forward against the
 * equations, backward against central differences (float64), float32
 * against float64, a size large enough for the thread pool, and the error
 * contract (status + message, outputs untouched). */
#include <string.h>

#include "check.h"

static th_tensor *make(int64_t r, int64_t c, int dtype, unsigned seed) {
    int64_t s[2] = {r, c};
    th_tensor *t = th_empty(2, s, dtype);
    if (!t) return NULL;
    for (int64_t i = 0; i < r * c; i++) {
        seed = seed * 1103515245u + 12345u;
        double v = ((seed >> 8) & 0xffff) / 16384.0 - 2.0;
        if (dtype == TH_FLOAT32) ((float *)th_data_ptr(t))[i] = (float)v;
        else ((double *)th_data_ptr(t))[i] = v;
    }
    return t;
}
static th_tensor *zeros(int64_t r, int64_t c, int dtype) {
    int64_t s[2] = {r, c};
    th_tensor *t = th_empty(2, s, dtype);
    if (t) memset(th_data_ptr(t), 0, (size_t)(r * c * th_dtype_itemsize(dtype)));
    return t;
}
static th_tensor *copy(const th_tensor *a) {
    th_tensor *t = th_clone(a);
    return t;
}
static double at(const th_tensor *t, int64_t i) {
    double v = 0;
    th_get_double(t, i, &v);
    return v;
}
static double *D(th_tensor *t) { return (double *)th_data_ptr(t); }
static double sg(double x) { return 1 / (1 + exp(-x)); }

/* sum(wh * h) + sum(wc * c) after an LSTM step from pre-activations g */
static double lstm_loss(th_tensor *g, th_tensor *cp, th_tensor *wh, th_tensor *wc,
                        int64_t B, int64_t H) {
    th_tensor *gg = copy(g), *h = zeros(B, H, TH_FLOAT64), *c = zeros(B, H, TH_FLOAT64);
    double s = 0;
    if (thnn_lstm_cell_forward(h, c, gg, cp) == TH_OK)
        for (int64_t e = 0; e < B * H; e++) s += D(wh)[e] * D(h)[e] + D(wc)[e] * D(c)[e];
    th_tensor_release(gg); th_tensor_release(h); th_tensor_release(c);
    return s;
}

static void test_lstm(void) {
    const int64_t B = 3, H = 4;
    th_tensor *g = make(B, 4 * H, TH_FLOAT64, 1), *cp = make(B, H, TH_FLOAT64, 2);
    th_tensor *wh = make(B, H, TH_FLOAT64, 3), *wc = make(B, H, TH_FLOAT64, 4);
    th_tensor *act = copy(g), *h = zeros(B, H, TH_FLOAT64), *c = zeros(B, H, TH_FLOAT64);
    CHECK(thnn_lstm_cell_forward(h, c, act, cp) == TH_OK);
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < H; j++) {
            const double *r = D(g) + b * 4 * H;
            double i = sg(r[j]), f = sg(r[H + j]), gg = tanh(r[2 * H + j]), o = sg(r[3 * H + j]);
            double cn = f * D(cp)[b * H + j] + i * gg;
            CHECK_CLOSE(D(c)[b * H + j], cn, 1e-14);
            CHECK_CLOSE(D(h)[b * H + j], o * tanh(cn), 1e-14);
            CHECK_CLOSE(D(act)[b * 4 * H + H + j], f, 1e-14);
        }
    th_tensor *gg = zeros(B, 4 * H, TH_FLOAT64), *gcp = zeros(B, H, TH_FLOAT64);
    CHECK(thnn_lstm_cell_backward(gg, gcp, wh, wc, act, cp, c) == TH_OK);
    const double eps = 1e-6;
    for (int64_t k = 0; k < B * 4 * H; k++) {
        double v = D(g)[k];
        D(g)[k] = v + eps; double lp = lstm_loss(g, cp, wh, wc, B, H);
        D(g)[k] = v - eps; double lm = lstm_loss(g, cp, wh, wc, B, H);
        D(g)[k] = v;
        CHECK_CLOSE(D(gg)[k], (lp - lm) / (2 * eps), 1e-7);
    }
    for (int64_t k = 0; k < B * H; k++) {
        double v = D(cp)[k];
        D(cp)[k] = v + eps; double lp = lstm_loss(g, cp, wh, wc, B, H);
        D(cp)[k] = v - eps; double lm = lstm_loss(g, cp, wh, wc, B, H);
        D(cp)[k] = v;
        CHECK_CLOSE(D(gcp)[k], (lp - lm) / (2 * eps), 1e-7);
    }
    /* NULL gradients are zeros; grad_c_prev may be grad_c itself */
    th_tensor *gg2 = zeros(B, 4 * H, TH_FLOAT64), *dc = copy(wc);
    CHECK(thnn_lstm_cell_backward(gg2, dc, NULL, dc, act, cp, c) == TH_OK);
    th_tensor *gg3 = zeros(B, 4 * H, TH_FLOAT64), *gcp3 = zeros(B, H, TH_FLOAT64);
    CHECK(thnn_lstm_cell_backward(gg3, gcp3, NULL, wc, act, cp, c) == TH_OK);
    for (int64_t k = 0; k < B * H; k++) CHECK_CLOSE(D(dc)[k], D(gcp3)[k], 0);
    for (int64_t k = 0; k < B * 4 * H; k++) CHECK_CLOSE(D(gg2)[k], D(gg3)[k], 0);
    th_tensor *list[] = {g, cp, wh, wc, act, h, c, gg, gcp, gg2, dc, gg3, gcp3};
    for (size_t i = 0; i < sizeof list / sizeof *list; i++) th_tensor_release(list[i]);
}

static double gru_loss(th_tensor *x, th_tensor *y, th_tensor *hp, th_tensor *wh,
                       int64_t B, int64_t H) {
    th_tensor *h = zeros(B, H, TH_FLOAT64), *sv = zeros(B, 4 * H, TH_FLOAT64);
    double s = 0;
    if (thnn_gru_cell_forward(h, sv, x, y, hp) == TH_OK)
        for (int64_t e = 0; e < B * H; e++) s += D(wh)[e] * D(h)[e];
    th_tensor_release(h); th_tensor_release(sv);
    return s;
}

static void test_gru(void) {
    const int64_t B = 2, H = 3;
    th_tensor *x = make(B, 3 * H, TH_FLOAT64, 5), *y = make(B, 3 * H, TH_FLOAT64, 6);
    th_tensor *hp = make(B, H, TH_FLOAT64, 7), *wh = make(B, H, TH_FLOAT64, 8);
    th_tensor *h = zeros(B, H, TH_FLOAT64), *sv = zeros(B, 4 * H, TH_FLOAT64);
    CHECK(thnn_gru_cell_forward(h, sv, x, y, hp) == TH_OK);
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < H; j++) {
            const double *a = D(x) + b * 3 * H, *c = D(y) + b * 3 * H;
            double r = sg(a[j] + c[j]), z = sg(a[H + j] + c[H + j]);
            double n = tanh(a[2 * H + j] + r * c[2 * H + j]);
            CHECK_CLOSE(D(h)[b * H + j], (1 - z) * n + z * D(hp)[b * H + j], 1e-14);
        }
    th_tensor *gx = zeros(B, 3 * H, TH_FLOAT64), *gy = zeros(B, 3 * H, TH_FLOAT64);
    th_tensor *ghp = zeros(B, H, TH_FLOAT64);
    CHECK(thnn_gru_cell_backward(gx, gy, ghp, wh, sv, hp) == TH_OK);
    const double eps = 1e-6;
    th_tensor *ins[3] = {x, y, hp}, *grads[3] = {gx, gy, ghp};
    for (int w = 0; w < 3; w++)
        for (int64_t k = 0; k < th_numel(ins[w]); k++) {
            double v = D(ins[w])[k];
            D(ins[w])[k] = v + eps; double lp = gru_loss(x, y, hp, wh, B, H);
            D(ins[w])[k] = v - eps; double lm = gru_loss(x, y, hp, wh, B, H);
            D(ins[w])[k] = v;
            CHECK_CLOSE(D(grads[w])[k], (lp - lm) / (2 * eps), 1e-7);
        }
    th_tensor *list[] = {x, y, hp, wh, h, sv, gx, gy, ghp};
    for (size_t i = 0; i < sizeof list / sizeof *list; i++) th_tensor_release(list[i]);
}

static void test_rnn(int nonlinearity) {
    const int64_t B = 3, H = 5;
    th_tensor *g = make(B, H, TH_FLOAT64, 9), *gh = make(B, H, TH_FLOAT64, 10);
    th_tensor *h = zeros(B, H, TH_FLOAT64), *gg = zeros(B, H, TH_FLOAT64);
    CHECK(thnn_rnn_cell_forward(h, g, nonlinearity) == TH_OK);
    CHECK(thnn_rnn_cell_backward(gg, gh, h, nonlinearity) == TH_OK);
    for (int64_t e = 0; e < B * H; e++) {
        double a = D(g)[e];
        double want = nonlinearity == THNN_RNN_TANH ? tanh(a) : (a > 0 ? a : 0);
        double d = nonlinearity == THNN_RNN_TANH ? 1 - want * want : (a > 0);
        CHECK_CLOSE(D(h)[e], want, 1e-15);
        CHECK_CLOSE(D(gg)[e], D(gh)[e] * d, 1e-15);
    }
    /* in place: h may be gates itself */
    CHECK(thnn_rnn_cell_forward(g, g, nonlinearity) == TH_OK);
    for (int64_t e = 0; e < B * H; e++) CHECK_CLOSE(D(g)[e], D(h)[e], 0);
    th_tensor *list[] = {g, gh, h, gg};
    for (size_t i = 0; i < 4; i++) th_tensor_release(list[i]);
}

/* float32 against float64 on a size the thread pool splits */
static void test_float32_large(void) {
    const int64_t B = 64, H = 300;
    th_tensor *g64 = make(B, 4 * H, TH_FLOAT64, 11), *c64 = make(B, H, TH_FLOAT64, 12);
    th_tensor *g32 = th_to_dtype(g64, TH_FLOAT32), *c32 = th_to_dtype(c64, TH_FLOAT32);
    th_tensor *h64 = zeros(B, H, TH_FLOAT64), *n64 = zeros(B, H, TH_FLOAT64);
    th_tensor *h32 = zeros(B, H, TH_FLOAT32), *n32 = zeros(B, H, TH_FLOAT32);
    CHECK(thnn_lstm_cell_forward(h64, n64, g64, c64) == TH_OK);
    CHECK(thnn_lstm_cell_forward(h32, n32, g32, c32) == TH_OK);
    double worst = 0;
    for (int64_t e = 0; e < B * H; e++) {
        double d = fabs(at(h32, e) - at(h64, e)) + fabs(at(n32, e) - at(n64, e));
        if (d > worst) worst = d;
    }
    CHECK(worst < 1e-5);
    /* GRU: gates (B, 3H) from the same numbers */
    th_tensor *x64 = make(B, 3 * H, TH_FLOAT64, 13), *y64 = make(B, 3 * H, TH_FLOAT64, 14);
    th_tensor *x32 = th_to_dtype(x64, TH_FLOAT32), *y32 = th_to_dtype(y64, TH_FLOAT32);
    th_tensor *s64 = zeros(B, 4 * H, TH_FLOAT64), *s32 = zeros(B, 4 * H, TH_FLOAT32);
    CHECK(thnn_gru_cell_forward(h64, s64, x64, y64, c64) == TH_OK);
    CHECK(thnn_gru_cell_forward(h32, s32, x32, y32, c32) == TH_OK);
    worst = 0;
    for (int64_t e = 0; e < B * H; e++) {
        double d = fabs(at(h32, e) - at(h64, e));
        if (d > worst) worst = d;
    }
    CHECK(worst < 1e-5);
    th_tensor *list[] = {g64, c64, g32, c32, h64, n64, h32, n32, x64, y64, x32, y32, s64, s32};
    for (size_t i = 0; i < sizeof list / sizeof *list; i++) th_tensor_release(list[i]);
}

static void test_errors(void) {
    th_tensor *g = make(2, 7, TH_FLOAT64, 1), *cp = make(2, 2, TH_FLOAT64, 2);
    th_tensor *h = zeros(2, 2, TH_FLOAT64), *c = zeros(2, 2, TH_FLOAT64);
    /* 7 is not 4 * hidden_size */
    CHECK(thnn_lstm_cell_forward(h, c, g, cp) == TH_ERR_RUNTIME);
    CHECK(strstr(thnn_last_error(), "4 * hidden_size") != NULL);
    th_tensor *g8 = make(2, 8, TH_FLOAT64, 3), *g8keep = copy(g8);
    th_tensor *cp3 = make(3, 2, TH_FLOAT64, 4), *c32 = zeros(2, 2, TH_FLOAT32);
    CHECK(thnn_lstm_cell_forward(h, c, g8, cp3) == TH_ERR_RUNTIME);   /* c_prev rows */
    CHECK(strstr(thnn_last_error(), "c_prev") != NULL);
    CHECK(thnn_lstm_cell_forward(h, c32, g8, cp) != TH_OK);  /* output dtype */
    CHECK(strstr(thnn_last_error(), "expected c of scalar type Double") != NULL);
    for (int64_t k = 0; k < 16; k++) CHECK_CLOSE(at(g8, k), at(g8keep, k), 0); /* untouched */
    for (int64_t k = 0; k < 4; k++) CHECK_CLOSE(at(h, k), 0, 0);
    CHECK(thnn_lstm_cell_forward(h, c, g8, NULL) == TH_ERR_VALUE);
    int64_t s3[3] = {2, 3, 3};
    th_tensor *x3 = th_empty(3, s3, TH_FLOAT64), *hh = zeros(2, 3, TH_FLOAT64);
    th_tensor *sv = zeros(2, 12, TH_FLOAT64), *y = make(2, 9, TH_FLOAT64, 5);
    CHECK(thnn_gru_cell_forward(hh, sv, x3, y, hh) == TH_ERR_RUNTIME); /* 3-d gates */
    th_tensor *ints = th_empty(2, (int64_t[2]){2, 9}, TH_INT64);
    CHECK(thnn_gru_cell_forward(hh, sv, ints, y, hh) != TH_OK);
    CHECK(thnn_rnn_cell_forward(h, cp, 7) == TH_ERR_VALUE);
    CHECK(strstr(thnn_last_error(), "nonlinearity") != NULL);
    th_tensor *list[] = {g, cp, h, c, g8, g8keep, cp3, c32, x3, hh, sv, y, ints};
    for (size_t i = 0; i < sizeof list / sizeof *list; i++) th_tensor_release(list[i]);
}

int main(void) {
    test_lstm();
    test_gru();
    test_rnn(THNN_RNN_TANH);
    test_rnn(THNN_RNN_RELU);
    test_float32_large();
    test_errors();
    return check_report("test_rnn");
}
