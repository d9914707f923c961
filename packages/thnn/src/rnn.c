/* Recurrent cells' pointwise parts: what follows the two matrix products
 * of an LSTM / GRU / Elman RNN step (gate nonlinearities, cell update) and
 * its backward, one pass over (B, H) each.  The caller does the products
 * (one per step for the hidden state) and keeps the saved tensors; rows
 * run on libTH's thread pool when large enough. */
#include <math.h>

#include "thnn_internal.h"

/* elements per chunk of the pool: these loops do a few exp/tanh each */
#define RNN_GRAIN 4096

typedef struct {
    void *a[8];        /* data pointers, per kernel */
    int64_t H;         /* hidden size */
    int nonlinearity;  /* rnn cells */
} rnn_ctx;

/* ---- element loops, one instance per dtype ------------------------------- */
#define RNN_LOOPS(T, SFX, EXP, TANH)                                            \
static inline T sigm_##SFX(T x) { return (T)1 / ((T)1 + EXP(-x)); }             \
                                                                                \
static void lstm_fwd_##SFX(int64_t e0, int64_t e1, void *p) {                  \
    const rnn_ctx *cx = p;                                                      \
    T *h = cx->a[0], *c = cx->a[1], *g = cx->a[2];                              \
    const T *cp = cx->a[3];                                                     \
    const int64_t H = cx->H;                                                    \
    for (int64_t e = e0; e < e1; e++) {                                         \
        int64_t b = e / H, j = e - b * H;                                       \
        T *row = g + b * 4 * H;                                                 \
        T i = sigm_##SFX(row[j]), f = sigm_##SFX(row[H + j]);                   \
        T gg = TANH(row[2 * H + j]), o = sigm_##SFX(row[3 * H + j]);            \
        row[j] = i; row[H + j] = f; row[2 * H + j] = gg; row[3 * H + j] = o;    \
        T cn = f * cp[e] + i * gg;                                              \
        c[e] = cn;                                                              \
        h[e] = o * TANH(cn);                                                    \
    }                                                                           \
}                                                                               \
                                                                                \
static void lstm_bwd_##SFX(int64_t e0, int64_t e1, void *p) {                  \
    const rnn_ctx *cx = p;                                                      \
    T *gg_out = cx->a[0], *gcp = cx->a[1];                                      \
    const T *gh = cx->a[2], *gc = cx->a[3], *act = cx->a[4];                    \
    const T *cp = cx->a[5], *c = cx->a[6];                                      \
    const int64_t H = cx->H;                                                    \
    for (int64_t e = e0; e < e1; e++) {                                         \
        int64_t b = e / H, j = e - b * H;                                       \
        const T *row = act + b * 4 * H;                                         \
        T *grow = gg_out + b * 4 * H;                                           \
        T i = row[j], f = row[H + j], g = row[2 * H + j], o = row[3 * H + j];   \
        T dh = gh ? gh[e] : 0, tc = TANH(c[e]);                                 \
        T dc = (gc ? gc[e] : 0) + dh * o * ((T)1 - tc * tc);                    \
        grow[j] = dc * g * i * ((T)1 - i);                                      \
        grow[H + j] = dc * cp[e] * f * ((T)1 - f);                              \
        grow[2 * H + j] = dc * i * ((T)1 - g * g);                              \
        grow[3 * H + j] = dh * tc * o * ((T)1 - o);                             \
        gcp[e] = dc * f;                                                        \
    }                                                                           \
}                                                                               \
                                                                                \
static void gru_fwd_##SFX(int64_t e0, int64_t e1, void *p) {                   \
    const rnn_ctx *cx = p;                                                      \
    T *h = cx->a[0], *sv = cx->a[1];                                            \
    const T *xg = cx->a[2], *hg = cx->a[3], *hp = cx->a[4];                     \
    const int64_t H = cx->H;                                                    \
    for (int64_t e = e0; e < e1; e++) {                                         \
        int64_t b = e / H, j = e - b * H;                                       \
        const T *x = xg + b * 3 * H, *y = hg + b * 3 * H;                       \
        T r = sigm_##SFX(x[j] + y[j]);                                          \
        T z = sigm_##SFX(x[H + j] + y[H + j]);                                  \
        T hn = y[2 * H + j];                                                    \
        T n = TANH(x[2 * H + j] + r * hn);                                      \
        T *s = sv + b * 4 * H;                                                  \
        s[j] = r; s[H + j] = z; s[2 * H + j] = n; s[3 * H + j] = hn;            \
        h[e] = n + z * (hp[e] - n);                                             \
    }                                                                           \
}                                                                               \
                                                                                \
static void gru_bwd_##SFX(int64_t e0, int64_t e1, void *p) {                   \
    const rnn_ctx *cx = p;                                                      \
    T *gx = cx->a[0], *gy = cx->a[1], *ghp = cx->a[2];                          \
    const T *gh = cx->a[3], *sv = cx->a[4], *hp = cx->a[5];                     \
    const int64_t H = cx->H;                                                    \
    for (int64_t e = e0; e < e1; e++) {                                         \
        int64_t b = e / H, j = e - b * H;                                       \
        const T *s = sv + b * 4 * H;                                            \
        T r = s[j], z = s[H + j], n = s[2 * H + j], hn = s[3 * H + j];          \
        T d = gh[e];                                                            \
        T dn = d * ((T)1 - z) * ((T)1 - n * n);                                 \
        T dz = d * (hp[e] - n) * z * ((T)1 - z);                                \
        T dr = dn * hn * r * ((T)1 - r);                                        \
        T *x = gx + b * 3 * H, *y = gy + b * 3 * H;                             \
        x[j] = dr; x[H + j] = dz; x[2 * H + j] = dn;                            \
        y[j] = dr; y[H + j] = dz; y[2 * H + j] = dn * r;                        \
        ghp[e] = d * z;                                                         \
    }                                                                           \
}                                                                               \
                                                                                \
static void rnn_fwd_##SFX(int64_t e0, int64_t e1, void *p) {                   \
    const rnn_ctx *cx = p;                                                      \
    T *h = cx->a[0];                                                            \
    const T *g = cx->a[1];                                                      \
    if (cx->nonlinearity == THNN_RNN_TANH)                                      \
        for (int64_t e = e0; e < e1; e++) h[e] = TANH(g[e]);                    \
    else                                                                        \
        for (int64_t e = e0; e < e1; e++) h[e] = g[e] > 0 ? g[e] : (T)0;        \
}                                                                               \
                                                                                \
static void rnn_bwd_##SFX(int64_t e0, int64_t e1, void *p) {                   \
    const rnn_ctx *cx = p;                                                      \
    T *gg = cx->a[0];                                                           \
    const T *gh = cx->a[1], *h = cx->a[2];                                      \
    if (cx->nonlinearity == THNN_RNN_TANH)                                      \
        for (int64_t e = e0; e < e1; e++) gg[e] = gh[e] * ((T)1 - h[e] * h[e]); \
    else                                                                        \
        for (int64_t e = e0; e < e1; e++) gg[e] = h[e] > 0 ? gh[e] : (T)0;      \
}

RNN_LOOPS(float, f, expf, tanhf)
RNN_LOOPS(double, d, exp, tanh)

/* ---- checks ---------------------------------------------------------------- */
/* t: 2-D (B, k*H) of dtype, contiguous when it is written (`out`) */
static int check_2d(const char *fn, const char *name, const th_tensor *t, int64_t B,
                    int64_t width, int dtype, int out) {
    char a[256];
    int64_t sizes[2] = {B, width};
    if (!t)
        return thnn__error(TH_ERR_VALUE, "%s: %s is needed", fn, name);
    if (out) return thnn__check_out(fn, name, t, 2, sizes, dtype);
    if (t->dtype != dtype)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected %s to have dtype %s, but got %s",
                           fn, name, thnn__dtype_name(dtype), thnn__dtype_name(t->dtype));
    if (t->ndim != 2 || t->sizes[0] != B || t->sizes[1] != width)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected %s of size [%lld, %lld], but got %s",
                           fn, name, (long long)B, (long long)width, thnn__shape(t, a));
    return TH_OK;
}

/* the (B, k*H) geometry of the gates tensor */
static int gates_geometry(const char *fn, const char *name, const th_tensor *g, int k,
                          int64_t *B, int64_t *H) {
    char a[256];
    int rc = thnn__check_float(fn, name, g);
    if (rc) return rc;
    if (g->ndim != 2 || g->sizes[1] % k)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected %s to be 2-D (batch, %d * hidden_size), "
                           "but got %s", fn, name, k, thnn__shape(g, a));
    *B = g->sizes[0];
    *H = g->sizes[1] / k;
    return TH_OK;
}

static void run(int64_t n, th_range_fn fn, rnn_ctx *cx) {
    if (n > 0) th_parallel_for(n, RNN_GRAIN, fn, cx);
}

#define PICK(dtype, name) ((dtype) == TH_FLOAT32 ? name##_f : name##_d)

/* ---- LSTM ------------------------------------------------------------------ */
THNN_API int thnn_lstm_cell_forward(th_tensor *h, th_tensor *c, th_tensor *gates,
                                    const th_tensor *c_prev) {
    static const char fn[] = "lstm_cell";
    int64_t B = 0, H = 0;
    int rc;
    if ((rc = gates_geometry(fn, "gates", gates, 4, &B, &H))) return rc;
    const int dt = gates->dtype;
    if ((rc = check_2d(fn, "gates", gates, B, 4 * H, dt, 1))) return rc;
    if ((rc = check_2d(fn, "c_prev", c_prev, B, H, dt, 0))) return rc;
    if ((rc = check_2d(fn, "h", h, B, H, dt, 1))) return rc;
    if ((rc = check_2d(fn, "c", c, B, H, dt, 1))) return rc;
    th_tensor *cp = thnn__contig(c_prev);
    if (!cp) return thnn_last_status();
    rnn_ctx cx = {{thnn__data(h), thnn__data(c), thnn__data(gates), thnn__data(cp)}, H, 0};
    run(B * H, PICK(dt, lstm_fwd), &cx);
    thnn__release(cp);
    return TH_OK;
}

THNN_API int thnn_lstm_cell_backward(th_tensor *grad_gates, th_tensor *grad_c_prev,
                                     const th_tensor *grad_h, const th_tensor *grad_c,
                                     const th_tensor *gates, const th_tensor *c_prev,
                                     const th_tensor *c) {
    static const char fn[] = "lstm_cell_backward";
    int64_t B = 0, H = 0;
    int rc;
    if ((rc = gates_geometry(fn, "gates", gates, 4, &B, &H))) return rc;
    const int dt = gates->dtype;
    if ((rc = check_2d(fn, "c_prev", c_prev, B, H, dt, 0))) return rc;
    if ((rc = check_2d(fn, "c", c, B, H, dt, 0))) return rc;
    if (grad_h && (rc = check_2d(fn, "grad_h", grad_h, B, H, dt, 0))) return rc;
    if (grad_c && (rc = check_2d(fn, "grad_c", grad_c, B, H, dt, 0))) return rc;
    if ((rc = check_2d(fn, "grad_gates", grad_gates, B, 4 * H, dt, 1))) return rc;
    if ((rc = check_2d(fn, "grad_c_prev", grad_c_prev, B, H, dt, 1))) return rc;
    th_tensor *gh = grad_h ? thnn__contig(grad_h) : NULL, *gc = grad_c ? thnn__contig(grad_c) : NULL;
    th_tensor *a = thnn__contig(gates), *cp = thnn__contig(c_prev), *cc = thnn__contig(c);
    if ((grad_h && !gh) || (grad_c && !gc) || !a || !cp || !cc) { rc = thnn_last_status(); goto done; }
    rnn_ctx cx = {{thnn__data(grad_gates), thnn__data(grad_c_prev), gh ? thnn__data(gh) : NULL,
                   gc ? thnn__data(gc) : NULL, thnn__data(a), thnn__data(cp), thnn__data(cc)},
                  H, 0};
    run(B * H, PICK(dt, lstm_bwd), &cx);
done:
    thnn__release(gh); thnn__release(gc); thnn__release(a);
    thnn__release(cp); thnn__release(cc);
    return rc;
}

/* ---- GRU ------------------------------------------------------------------- */
THNN_API int thnn_gru_cell_forward(th_tensor *h, th_tensor *save,
                                   const th_tensor *input_gates,
                                   const th_tensor *hidden_gates,
                                   const th_tensor *h_prev) {
    static const char fn[] = "gru_cell";
    int64_t B = 0, H = 0;
    int rc;
    if ((rc = gates_geometry(fn, "input_gates", input_gates, 3, &B, &H))) return rc;
    const int dt = input_gates->dtype;
    if ((rc = check_2d(fn, "hidden_gates", hidden_gates, B, 3 * H, dt, 0))) return rc;
    if ((rc = check_2d(fn, "h_prev", h_prev, B, H, dt, 0))) return rc;
    if ((rc = check_2d(fn, "h", h, B, H, dt, 1))) return rc;
    if ((rc = check_2d(fn, "save", save, B, 4 * H, dt, 1))) return rc;
    th_tensor *x = thnn__contig(input_gates), *y = thnn__contig(hidden_gates);
    th_tensor *hp = thnn__contig(h_prev);
    if (!x || !y || !hp) { rc = thnn_last_status(); goto done; }
    rnn_ctx cx = {{thnn__data(h), thnn__data(save), thnn__data(x), thnn__data(y),
                   thnn__data(hp)}, H, 0};
    run(B * H, PICK(dt, gru_fwd), &cx);
done:
    thnn__release(x); thnn__release(y); thnn__release(hp);
    return rc;
}

THNN_API int thnn_gru_cell_backward(th_tensor *grad_input_gates,
                                    th_tensor *grad_hidden_gates,
                                    th_tensor *grad_h_prev, const th_tensor *grad_h,
                                    const th_tensor *save, const th_tensor *h_prev) {
    static const char fn[] = "gru_cell_backward";
    int64_t B = 0, H = 0;
    int rc;
    if ((rc = gates_geometry(fn, "save", save, 4, &B, &H))) return rc;
    const int dt = save->dtype;
    if ((rc = check_2d(fn, "grad_h", grad_h, B, H, dt, 0))) return rc;
    if ((rc = check_2d(fn, "h_prev", h_prev, B, H, dt, 0))) return rc;
    if ((rc = check_2d(fn, "grad_input_gates", grad_input_gates, B, 3 * H, dt, 1))) return rc;
    if ((rc = check_2d(fn, "grad_hidden_gates", grad_hidden_gates, B, 3 * H, dt, 1))) return rc;
    if ((rc = check_2d(fn, "grad_h_prev", grad_h_prev, B, H, dt, 1))) return rc;
    th_tensor *gh = thnn__contig(grad_h), *s = thnn__contig(save), *hp = thnn__contig(h_prev);
    if (!gh || !s || !hp) { rc = thnn_last_status(); goto done; }
    rnn_ctx cx = {{thnn__data(grad_input_gates), thnn__data(grad_hidden_gates),
                   thnn__data(grad_h_prev), thnn__data(gh), thnn__data(s), thnn__data(hp)},
                  H, 0};
    run(B * H, PICK(dt, gru_bwd), &cx);
done:
    thnn__release(gh); thnn__release(s); thnn__release(hp);
    return rc;
}

/* ---- Elman RNN ------------------------------------------------------------- */
static int check_nonlinearity(const char *fn, int nonlinearity) {
    if (nonlinearity != THNN_RNN_TANH && nonlinearity != THNN_RNN_RELU)
        return thnn__error(TH_ERR_VALUE, "%s: unknown nonlinearity %d", fn, nonlinearity);
    return TH_OK;
}

THNN_API int thnn_rnn_cell_forward(th_tensor *h, const th_tensor *gates, int nonlinearity) {
    static const char fn[] = "rnn_cell";
    int64_t B = 0, H = 0;
    int rc;
    if ((rc = check_nonlinearity(fn, nonlinearity))) return rc;
    if ((rc = gates_geometry(fn, "gates", gates, 1, &B, &H))) return rc;
    if ((rc = check_2d(fn, "h", h, B, H, gates->dtype, 1))) return rc;
    th_tensor *g = thnn__contig(gates);
    if (!g) return thnn_last_status();
    rnn_ctx cx = {{thnn__data(h), thnn__data(g)}, H, nonlinearity};
    run(B * H, PICK(gates->dtype, rnn_fwd), &cx);
    thnn__release(g);
    return TH_OK;
}

THNN_API int thnn_rnn_cell_backward(th_tensor *grad_gates, const th_tensor *grad_h,
                                    const th_tensor *h, int nonlinearity) {
    static const char fn[] = "rnn_cell_backward";
    int64_t B = 0, H = 0;
    int rc;
    if ((rc = check_nonlinearity(fn, nonlinearity))) return rc;
    if ((rc = gates_geometry(fn, "h", h, 1, &B, &H))) return rc;
    if ((rc = check_2d(fn, "grad_h", grad_h, B, H, h->dtype, 0))) return rc;
    if ((rc = check_2d(fn, "grad_gates", grad_gates, B, H, h->dtype, 1))) return rc;
    th_tensor *gh = thnn__contig(grad_h), *hh = thnn__contig(h);
    if (!gh || !hh) { rc = thnn_last_status(); goto done; }
    rnn_ctx cx = {{thnn__data(grad_gates), thnn__data(gh), thnn__data(hh)}, H, nonlinearity};
    run(B * H, PICK(h->dtype, rnn_bwd), &cx);
done:
    thnn__release(gh); thnn__release(hh);
    return rc;
}
