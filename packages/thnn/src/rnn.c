/* Recurrent cells' pointwise parts: what follows the two matrix products
 * of an LSTM / GRU / Elman RNN step (gate nonlinearities, cell update) and
 * its backward, one pass over (B, H) each.  The caller does the products
 * (one per step for the hidden state) and keeps the saved tensors; rows
 * run on libTH's thread pool when large enough. */
#include <math.h>
#include <string.h>

#include "thnn_internal.h"
#include "vexp.h"

/* elements per chunk of the pool: these loops do a few exp/tanh each */
#define RNN_GRAIN 4096

typedef struct {
    void *a[8];        /* data pointers, per kernel */
    int64_t H;         /* hidden size */
    int nonlinearity;  /* rnn cells */
} rnn_ctx;

static inline float sigm_f(float x) { return 1.0f / (1.0f + thnn__exp_f(-x)); }
static inline float tanh_f(float x) { return 2.0f / (1.0f + thnn__exp_f(-2.0f * x)) - 1.0f; }
static inline double sigm_d(double x) { return 1.0 / (1.0 + exp(-x)); }
static inline double tanh_d(double x) { return tanh(x); }

/* ---- row loops, one instance per dtype; the pool splits the rows ---------- */
#define CH 256
#define RNN_LOOPS(T, SFX, CLONES)                                               \
/* LSTM rows in chunks of CH through local arrays: every loop reads at most  \
 * one or two caller arrays and writes one, so each vectorizes without      \
 * run-time alias checks (c may be c_prev, grad_c_prev may be grad_c). */   \
CLONES static void lstm_fwd_##SFX(int64_t b0, int64_t b1, void *p) {          \
    const rnn_ctx *cx = p;                                                      \
    const int64_t H = cx->H;                                                    \
    T I[CH], F[CH], G[CH], O[CH], C[CH];                                        \
    for (int64_t b = b0; b < b1; b++)                                           \
        for (int64_t j0 = 0; j0 < H; j0 += CH) {                                \
            const int64_t n = H - j0 < CH ? H - j0 : CH;                        \
            T *gi = (T *)cx->a[2] + b * 4 * H + j0, *gf = gi + H, *gg = gf + H, *go = gg + H; \
            const T *cp = (const T *)cx->a[3] + b * H + j0;                     \
            T *h = (T *)cx->a[0] + b * H + j0, *c = (T *)cx->a[1] + b * H + j0; \
            for (int64_t k = 0; k < n; k++) I[k] = sigm_##SFX(gi[k]);           \
            for (int64_t k = 0; k < n; k++) F[k] = sigm_##SFX(gf[k]);           \
            for (int64_t k = 0; k < n; k++) G[k] = tanh_##SFX(gg[k]);           \
            for (int64_t k = 0; k < n; k++) O[k] = sigm_##SFX(go[k]);           \
            for (int64_t k = 0; k < n; k++) C[k] = F[k] * cp[k] + I[k] * G[k];  \
            for (int64_t k = 0; k < n; k++) gi[k] = I[k];                       \
            for (int64_t k = 0; k < n; k++) gf[k] = F[k];                       \
            for (int64_t k = 0; k < n; k++) gg[k] = G[k];                       \
            for (int64_t k = 0; k < n; k++) go[k] = O[k];                       \
            for (int64_t k = 0; k < n; k++) c[k] = C[k];                        \
            for (int64_t k = 0; k < n; k++) h[k] = O[k] * tanh_##SFX(C[k]);     \
        }                                                                       \
}                                                                               \
                                                                                \
CLONES static void lstm_bwd_##SFX(int64_t b0, int64_t b1, void *p) {          \
    const rnn_ctx *cx = p;                                                      \
    const int64_t H = cx->H;                                                    \
    T DH[CH], DC[CH], TC[CH];                                                   \
    for (int64_t b = b0; b < b1; b++)                                           \
        for (int64_t j0 = 0; j0 < H; j0 += CH) {                                \
            const int64_t n = H - j0 < CH ? H - j0 : CH;                        \
            T *di = (T *)cx->a[0] + b * 4 * H + j0, *df = di + H, *dg = df + H, *dO = dg + H; \
            T *gcp = (T *)cx->a[1] + b * H + j0;                                \
            const T *gh = cx->a[2] ? (const T *)cx->a[2] + b * H + j0 : NULL;   \
            const T *gc = cx->a[3] ? (const T *)cx->a[3] + b * H + j0 : NULL;   \
            const T *ai = (const T *)cx->a[4] + b * 4 * H + j0, *af = ai + H,   \
                    *ag = af + H, *ao = ag + H;                                 \
            const T *cp = (const T *)cx->a[5] + b * H + j0;                     \
            const T *c = (const T *)cx->a[6] + b * H + j0;                      \
            for (int64_t k = 0; k < n; k++) TC[k] = tanh_##SFX(c[k]);           \
            if (gh) for (int64_t k = 0; k < n; k++) DH[k] = gh[k];              \
            else for (int64_t k = 0; k < n; k++) DH[k] = 0;                     \
            if (gc) for (int64_t k = 0; k < n; k++) DC[k] = gc[k];              \
            else for (int64_t k = 0; k < n; k++) DC[k] = 0;                     \
            for (int64_t k = 0; k < n; k++)                                     \
                DC[k] += DH[k] * ao[k] * ((T)1 - TC[k] * TC[k]);                \
            for (int64_t k = 0; k < n; k++)                                     \
                di[k] = DC[k] * ag[k] * ai[k] * ((T)1 - ai[k]);                 \
            for (int64_t k = 0; k < n; k++)                                     \
                df[k] = DC[k] * cp[k] * af[k] * ((T)1 - af[k]);                 \
            for (int64_t k = 0; k < n; k++)                                     \
                dg[k] = DC[k] * ai[k] * ((T)1 - ag[k] * ag[k]);                 \
            for (int64_t k = 0; k < n; k++)                                     \
                dO[k] = DH[k] * TC[k] * ao[k] * ((T)1 - ao[k]);                 \
            for (int64_t k = 0; k < n; k++) gcp[k] = DC[k] * af[k];             \
        }                                                                       \
}                                                                               \
                                                                                \
CLONES static void gru_fwd_##SFX(int64_t b0, int64_t b1, void *p) {           \
    const rnn_ctx *cx = p;                                                      \
    const int64_t H = cx->H;                                                    \
    T R[CH], Z[CH], N[CH];                                                      \
    for (int64_t b = b0; b < b1; b++)                                           \
        for (int64_t j0 = 0; j0 < H; j0 += CH) {                                \
            const int64_t n = H - j0 < CH ? H - j0 : CH;                        \
            T *h = (T *)cx->a[0] + b * H + j0;                                  \
            T *sr = (T *)cx->a[1] + b * 4 * H + j0, *sz = sr + H, *sn = sz + H, *shn = sn + H; \
            const T *xr = (const T *)cx->a[2] + b * 3 * H + j0, *xz = xr + H, *xn = xz + H; \
            const T *yr = (const T *)cx->a[3] + b * 3 * H + j0, *yz = yr + H, *yn = yz + H; \
            const T *hp = (const T *)cx->a[4] + b * H + j0;                     \
            for (int64_t k = 0; k < n; k++) R[k] = sigm_##SFX(xr[k] + yr[k]);   \
            for (int64_t k = 0; k < n; k++) Z[k] = sigm_##SFX(xz[k] + yz[k]);   \
            for (int64_t k = 0; k < n; k++) N[k] = tanh_##SFX(xn[k] + R[k] * yn[k]); \
            for (int64_t k = 0; k < n; k++) shn[k] = yn[k];                     \
            for (int64_t k = 0; k < n; k++) sr[k] = R[k];                       \
            for (int64_t k = 0; k < n; k++) sz[k] = Z[k];                       \
            for (int64_t k = 0; k < n; k++) sn[k] = N[k];                       \
            for (int64_t k = 0; k < n; k++) h[k] = N[k] + Z[k] * (hp[k] - N[k]); \
        }                                                                       \
}                                                                               \
                                                                                \
CLONES static void gru_bwd_##SFX(int64_t b0, int64_t b1, void *p) {           \
    const rnn_ctx *cx = p;                                                      \
    const int64_t H = cx->H;                                                    \
    T D[CH], DN[CH], DZ[CH], DR[CH];                                            \
    for (int64_t b = b0; b < b1; b++)                                           \
        for (int64_t j0 = 0; j0 < H; j0 += CH) {                                \
            const int64_t n = H - j0 < CH ? H - j0 : CH;                        \
            T *xr = (T *)cx->a[0] + b * 3 * H + j0, *xz = xr + H, *xn = xz + H; \
            T *yr = (T *)cx->a[1] + b * 3 * H + j0, *yz = yr + H, *yn = yz + H; \
            T *ghp = (T *)cx->a[2] + b * H + j0;                                \
            const T *gh = (const T *)cx->a[3] + b * H + j0;                     \
            const T *sr = (const T *)cx->a[4] + b * 4 * H + j0, *sz = sr + H,   \
                    *sn = sz + H, *shn = sn + H;                                \
            const T *hp = (const T *)cx->a[5] + b * H + j0;                     \
            for (int64_t k = 0; k < n; k++) D[k] = gh[k];                       \
            for (int64_t k = 0; k < n; k++)                                     \
                DN[k] = D[k] * ((T)1 - sz[k]) * ((T)1 - sn[k] * sn[k]);         \
            for (int64_t k = 0; k < n; k++)                                     \
                DZ[k] = D[k] * (hp[k] - sn[k]) * sz[k] * ((T)1 - sz[k]);        \
            for (int64_t k = 0; k < n; k++)                                     \
                DR[k] = DN[k] * shn[k] * sr[k] * ((T)1 - sr[k]);                \
            for (int64_t k = 0; k < n; k++) xr[k] = DR[k];                      \
            for (int64_t k = 0; k < n; k++) xz[k] = DZ[k];                      \
            for (int64_t k = 0; k < n; k++) xn[k] = DN[k];                      \
            for (int64_t k = 0; k < n; k++) yr[k] = DR[k];                      \
            for (int64_t k = 0; k < n; k++) yz[k] = DZ[k];                      \
            for (int64_t k = 0; k < n; k++) yn[k] = DN[k] * sr[k];              \
            for (int64_t k = 0; k < n; k++) ghp[k] = D[k] * sz[k];              \
        }                                                                       \
}                                                                               \
                                                                                \
CLONES static void rnn_fwd_##SFX(int64_t b0, int64_t b1, void *p) {           \
    const rnn_ctx *cx = p;                                                      \
    const int64_t H = cx->H;                                                    \
    T *h = (T *)cx->a[0] + b0 * H;                                              \
    const T *g = (const T *)cx->a[1] + b0 * H;                                  \
    const int64_t n = (b1 - b0) * H;                                            \
    if (cx->nonlinearity == THNN_RNN_TANH)                                      \
        for (int64_t e = 0; e < n; e++) h[e] = tanh_##SFX(g[e]);                \
    else                                                                        \
        for (int64_t e = 0; e < n; e++) h[e] = g[e] > 0 ? g[e] : (T)0;          \
}                                                                               \
                                                                                \
CLONES static void rnn_bwd_##SFX(int64_t b0, int64_t b1, void *p) {           \
    const rnn_ctx *cx = p;                                                      \
    const int64_t H = cx->H;                                                    \
    T *gg = (T *)cx->a[0] + b0 * H;                                             \
    const T *gh = (const T *)cx->a[1] + b0 * H, *h = (const T *)cx->a[2] + b0 * H; \
    const int64_t n = (b1 - b0) * H;                                            \
    if (cx->nonlinearity == THNN_RNN_TANH)                                      \
        for (int64_t e = 0; e < n; e++) gg[e] = gh[e] * ((T)1 - h[e] * h[e]);   \
    else                                                                        \
        for (int64_t e = 0; e < n; e++) gg[e] = h[e] > 0 ? gh[e] : (T)0;        \
}

RNN_LOOPS(float, f, THNN_VEC_CLONES)
RNN_LOOPS(double, d, )

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

/* over the B rows, chunks of about RNN_GRAIN elements */
static void run(int64_t B, th_range_fn fn, rnn_ctx *cx) {
    int64_t grain = cx->H > 0 ? (RNN_GRAIN + cx->H - 1) / cx->H : 1;
    if (B > 0 && cx->H > 0) th_parallel_for(B, grain, fn, cx);
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
    run(B, PICK(dt, lstm_fwd), &cx);
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
    run(B, PICK(dt, lstm_bwd), &cx);
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
    run(B, PICK(dt, gru_fwd), &cx);
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
    run(B, PICK(dt, gru_bwd), &cx);
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
    run(B, PICK(gates->dtype, rnn_fwd), &cx);
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
    run(B, PICK(h->dtype, rnn_bwd), &cx);
done:
    thnn__release(gh); thnn__release(hh);
    return rc;
}
