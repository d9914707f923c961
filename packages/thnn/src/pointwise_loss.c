/* The losses computed element by element (row by row for cosine), then
 * reduced (none / mean / sum): the pointwise losses (mse, l1, smooth_l1,
 * huber, bce, bce_with_logits; times weight[i] if given), kl_div ('batchmean'
 * is sum divided by the batch size, done by the caller),
 * margin_ranking_loss and cosine_embedding_loss.  Inputs of one shape and
 * dtype (the caller broadcasts); typed loops computing in double, sums in
 * double; elements (rows for cosine) on libTH's thread pool, sums in blocks
 * that do not depend on the thread count. */
#include <math.h>

#include "thnn_internal.h"

#define COSINE_EPS 1e-12

static int check_reduction(const char *fn, int reduction) {
    if (reduction < THNN_REDUCTION_NONE || reduction > THNN_REDUCTION_SUM)
        return thnn__error(TH_ERR_VALUE, "%s: %d is not a valid value for "
                           "reduction (0 none, 1 mean, 2 sum)", fn, reduction);
    return TH_OK;
}

/* ---- pointwise losses ----------------------------------------------------
 * per element l(x, y), times weight[i] if given; reduced by mean or sum. */
static inline double ld(const th_tensor *t, int64_t k) {
    return t->dtype == TH_FLOAT32 ? (double)((const float *)thnn__data(t))[k]
                                  : ((const double *)thnn__data(t))[k];
}
static inline void st(th_tensor *t, int64_t k, double v) {
    if (t->dtype == TH_FLOAT32) ((float *)thnn__data(t))[k] = (float)v;
    else ((double *)thnn__data(t))[k] = v;
}

static inline double log_sigmoid(double x) {
    return x < 0 ? x - log1p(exp(x)) : -log1p(exp(-x));
}

/* loss value and its derivative in x */
static inline void pw(int loss, double x, double y, double a, double pwt,
                      double *l, double *d) {
    double r = x - y, ar = fabs(r);
    switch (loss) {
    case THNN_MSE_LOSS: *l = r * r; *d = 2 * r; break;
    case THNN_L1_LOSS: *l = ar; *d = (r > 0) - (r < 0); break;
    case THNN_SMOOTH_L1_LOSS:
        if (a == 0 || ar >= a) { *l = ar - (a == 0 ? 0 : 0.5 * a); *d = (r > 0) - (r < 0); }
        else { *l = 0.5 * r * r / a; *d = r / a; }
        break;
    case THNN_HUBER_LOSS:
        if (ar <= a) { *l = 0.5 * r * r; *d = r; }
        else { *l = a * (ar - 0.5 * a); *d = a * ((r > 0) - (r < 0)); }
        break;
    case THNN_BCE_LOSS: {
        /* PyTorch clamps the logs at -100 */
        double lx = x > 0 ? log(x) : -100, l1x = x < 1 ? log1p(-x) : -100;
        if (lx < -100) lx = -100;
        if (l1x < -100) l1x = -100;
        *l = -(y * lx + (1 - y) * l1x);
        const double e = 1e-12;
        *d = (x - y) / ((1 - x) * x > e ? (1 - x) * x : e);
        break;
    }
    default: { /* THNN_BCE_WITH_LOGITS_LOSS, pwt = pos_weight */
        *l = -(pwt * y * log_sigmoid(x) + (1 - y) * log_sigmoid(-x));
        double s = 1.0 / (1.0 + exp(-x));
        *d = (pwt * y + 1 - y) * s - pwt * y;
        break;
    }
    }
}

/* one call's tensors and settings, for the range functions */
typedef struct pw_ctx {
    th_tensor *out; /* per-element losses (reduction none) or grad_input */
    const th_tensor *x, *y, *w, *pwt, *gy;
    int loss, reduction;
    double a, scale; /* scale: the reduction's factor on grad_output */
    int64_t last;    /* pos_weight runs along the last dim */
} pw_ctx;

/* writes the losses of [i0, i1) (reduction none) or returns their sum */
static double pw_fwd_range(int64_t i0, int64_t i1, void *ctx) {
    const pw_ctx *c = ctx;
    double sum = 0;
    for (int64_t i = i0; i < i1; i++) {
        double l, d;
        pw(c->loss, ld(c->x, i), ld(c->y, i), c->a, c->pwt ? ld(c->pwt, i % c->last) : 1.0,
           &l, &d);
        if (c->w) l *= ld(c->w, i);
        if (c->reduction == THNN_REDUCTION_NONE) st(c->out, i, l);
        else sum += l;
    }
    return sum;
}

static void pw_bwd_range(int64_t i0, int64_t i1, void *ctx) {
    const pw_ctx *c = ctx;
    for (int64_t i = i0; i < i1; i++) {
        double l, d;
        pw(c->loss, ld(c->x, i), ld(c->y, i), c->a, c->pwt ? ld(c->pwt, i % c->last) : 1.0,
           &l, &d);
        if (c->w) d *= ld(c->w, i);
        const double g = c->reduction == THNN_REDUCTION_NONE ? ld(c->gy, i)
                                                             : ld(c->gy, 0) * c->scale;
        st(c->out, i, d * g);
    }
}

static int pw_check(const char *fn, const th_tensor *input, const th_tensor *target,
                    const th_tensor *weight, const th_tensor *pos_weight, int loss,
                    int reduction, double a) {
    char s1[256], s2[256];
    int rc;
    if ((rc = check_reduction(fn, reduction))) return rc;
    if (loss < THNN_MSE_LOSS || loss > THNN_BCE_WITH_LOGITS_LOSS)
        return thnn__error(TH_ERR_VALUE, "%s: unknown loss %d", fn, loss);
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = thnn__check_float(fn, "target", target))) return rc;
    int ok = input->ndim == target->ndim;
    for (int i = 0; ok && i < input->ndim; i++) ok = input->sizes[i] == target->sizes[i];
    if (!ok)
        return thnn__error(TH_ERR_VALUE, "Using a target size (%s) that is different "
                           "to the input size (%s) is not supported",
                           thnn__shape(target, s1), thnn__shape(input, s2));
    if (target->dtype != input->dtype)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected target of scalar type %s but "
                           "found %s", fn, thnn__dtype_name(input->dtype),
                           thnn__dtype_name(target->dtype));
    if (weight && (th_numel(weight) != th_numel(input) || weight->dtype != input->dtype))
        return thnn__error(TH_ERR_RUNTIME, "%s: weight %s must have the input's shape "
                           "%s and dtype", fn, thnn__shape(weight, s1), thnn__shape(input, s2));
    int64_t last = input->ndim ? input->sizes[input->ndim - 1] : 1;
    if (pos_weight && (th_numel(pos_weight) != last || pos_weight->dtype != input->dtype))
        return thnn__error(TH_ERR_RUNTIME, "%s: pos_weight must have %lld elements "
                           "(the input's last dim) but has %lld", fn, (long long)last,
                           (long long)th_numel(pos_weight));
    if ((loss == THNN_SMOOTH_L1_LOSS || loss == THNN_HUBER_LOSS) && a < 0)
        return thnn__error(TH_ERR_RUNTIME, "%s: beta / delta must be non-negative, got %g",
                           fn, a);
    if (loss == THNN_HUBER_LOSS && a == 0)
        return thnn__error(TH_ERR_RUNTIME, "huber_loss does not support non-positive "
                           "values for delta.");
    return TH_OK;
}

THNN_API int thnn_pointwise_loss_forward(th_tensor *output, const th_tensor *input,
                                         const th_tensor *target,
                                         const th_tensor *weight,
                                         const th_tensor *pos_weight, int loss,
                                         int reduction, double a) {
    static const char fn[] = "pointwise_loss";
    int rc;
    if ((rc = pw_check(fn, input, target, weight, pos_weight, loss, reduction, a))) return rc;
    if (reduction == THNN_REDUCTION_NONE)
        rc = thnn__check_like(fn, "output", output, input);
    else
        rc = thnn__check_out(fn, "output", output, 0, NULL, input->dtype);
    if (rc) return rc;
    th_tensor *x = thnn__contig(input), *y = thnn__contig(target);
    th_tensor *w = weight ? thnn__contig(weight) : NULL;
    th_tensor *pwt = pos_weight ? thnn__contig(pos_weight) : NULL;
    if (!x || !y || (weight && !w) || (pos_weight && !pwt)) { rc = thnn_last_status(); goto done; }
    if (loss == THNN_BCE_LOSS) {
        const int64_t n = th_numel(x);
        for (int64_t i = 0; i < n; i++) {
            double v = ld(x, i);
            if (!(v >= 0 && v <= 1)) {
                rc = thnn__error(TH_ERR_RUNTIME, "all elements of input should be "
                                 "between 0 and 1");
                goto done;
            }
        }
    }
    {
        const int64_t n = th_numel(x), last = x->ndim ? x->sizes[x->ndim - 1] : 1;
        pw_ctx c = {.out = output, .x = x, .y = y, .w = w, .pwt = pwt, .loss = loss,
                    .reduction = reduction, .a = a, .last = last};
        const double sum = thnn__parallel_sum(n, 1, pw_fwd_range, &c);
        if (reduction == THNN_REDUCTION_MEAN) st(output, 0, sum / (double)n);
        else if (reduction == THNN_REDUCTION_SUM) st(output, 0, sum);
    }
done:
    thnn__release(x); thnn__release(y); thnn__release(w); thnn__release(pwt);
    return rc;
}

THNN_API int thnn_pointwise_loss_backward_input(th_tensor *grad_input,
                                                const th_tensor *grad_output,
                                                const th_tensor *input,
                                                const th_tensor *target,
                                                const th_tensor *weight,
                                                const th_tensor *pos_weight,
                                                int loss, int reduction, double a) {
    static const char fn[] = "pointwise_loss_backward_input";
    int rc;
    if ((rc = pw_check(fn, input, target, weight, pos_weight, loss, reduction, a))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, input))) return rc;
    if ((rc = thnn__check_float(fn, "grad_output", grad_output))) return rc;
    const int64_t n = th_numel(input);
    int64_t want = reduction == THNN_REDUCTION_NONE ? n : 1;
    if (th_numel(grad_output) != want || grad_output->dtype != input->dtype)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected grad_output of %lld elements "
                           "of type %s", fn, (long long)want, thnn__dtype_name(input->dtype));
    th_tensor *x = thnn__contig(input), *y = thnn__contig(target), *gy = thnn__contig(grad_output);
    th_tensor *w = weight ? thnn__contig(weight) : NULL;
    th_tensor *pwt = pos_weight ? thnn__contig(pos_weight) : NULL;
    if (!x || !y || !gy || (weight && !w) || (pos_weight && !pwt)) {
        rc = thnn_last_status();
        goto done;
    }
    {
        const int64_t last = x->ndim ? x->sizes[x->ndim - 1] : 1;
        pw_ctx c = {.out = grad_input, .x = x, .y = y, .w = w, .pwt = pwt, .gy = gy,
                    .loss = loss, .reduction = reduction, .a = a, .last = last,
                    .scale = reduction == THNN_REDUCTION_MEAN ? 1.0 / (double)n : 1.0};
        th_parallel_for(n, thnn__grain(1), pw_bwd_range, &c);
    }
done:
    thnn__release(x); thnn__release(y); thnn__release(gy);
    thnn__release(w); thnn__release(pwt);
    return rc;
}

/* ---- kl_div, margin_ranking_loss, cosine_embedding_loss ---------------- */
/* b must be a's shape and dtype */
static int check_same(const char *fn, const char *an, const th_tensor *a,
                      const char *bn, const th_tensor *b) {
    char s1[256], s2[256];
    int rc;
    if ((rc = thnn__check_float(fn, bn, b))) return rc;
    int ok = a->ndim == b->ndim;
    for (int i = 0; ok && i < a->ndim; i++) ok = a->sizes[i] == b->sizes[i];
    if (!ok)
        return thnn__error(TH_ERR_RUNTIME, "%s: %s %s and %s %s must have the same "
                           "shape", fn, bn, thnn__shape(b, s1), an, thnn__shape(a, s2));
    if (a->dtype != b->dtype)
        return thnn__error(TH_ERR_TYPE, "%s: expected %s of scalar type %s but found %s",
                           fn, bn, thnn__dtype_name(a->dtype), thnn__dtype_name(b->dtype));
    return TH_OK;
}

/* output: 0-d for mean/sum, else `n`-element tensor shaped like `like` */
static int check_output(const char *fn, const th_tensor *out, const th_tensor *like,
                        int reduction) {
    if (reduction == THNN_REDUCTION_NONE) return thnn__check_like(fn, "output", out, like);
    return thnn__check_out(fn, "output", out, 0, NULL, like->dtype);
}

/* grad_output: `n` elements for none, one for mean/sum */
static int check_grad_output(const char *fn, const th_tensor *gy, int64_t n, int dtype,
                             int reduction) {
    char a[256];
    int rc;
    if ((rc = thnn__check_float(fn, "grad_output", gy))) return rc;
    const int64_t want = reduction == THNN_REDUCTION_NONE ? n : 1;
    if (th_numel(gy) != want || gy->dtype != dtype)
        return thnn__error(TH_ERR_RUNTIME, "%s: expected grad_output of %lld elements of "
                           "scalar type %s but got %s (%s)", fn, (long long)want,
                           thnn__dtype_name(dtype), thnn__shape(gy, a),
                           thnn__dtype_name(gy->dtype));
    return TH_OK;
}

static int check_pair(const char *fn, const th_tensor *x1, const th_tensor *x2,
                      const th_tensor *y, int reduction) {
    int rc;
    if ((rc = check_reduction(fn, reduction))) return rc;
    if ((rc = thnn__check_float(fn, "input1", x1))) return rc;
    if ((rc = check_same(fn, "input1", x1, "input2", x2))) return rc;
    if (!y) return thnn__error(TH_ERR_VALUE, "%s: target must not be NULL", fn);
    return TH_OK;
}

static int cosine_geometry(const char *fn, const th_tensor *x1, const th_tensor *x2,
                           const th_tensor *y, int reduction, int64_t *N, int64_t *D) {
    char a[256], b[256];
    int rc;
    if ((rc = check_pair(fn, x1, x2, y, reduction))) return rc;
    if (x1->ndim != 1 && x1->ndim != 2)
        return thnn__error(TH_ERR_RUNTIME, "%s: 1D target tensor expects 2D input "
                           "tensors, or 0D target expects 1D inputs, but got input1 %s",
                           fn, thnn__shape(x1, a));
    *N = x1->ndim == 2 ? x1->sizes[0] : 1;
    *D = x1->sizes[x1->ndim - 1];
    if ((rc = thnn__check_float(fn, "target", y))) return rc;
    if (y->ndim != x1->ndim - 1 || (y->ndim == 1 && y->sizes[0] != *N)) {
        if (x1->ndim == 2)
            return thnn__error(TH_ERR_RUNTIME, "%s: expected target of shape [%lld] for "
                               "inputs %s, but got target %s", fn, (long long)*N,
                               thnn__shape(x1, a), thnn__shape(y, b));
        return thnn__error(TH_ERR_RUNTIME, "%s: expected a 0-d target for inputs %s, "
                           "but got target %s", fn, thnn__shape(x1, a), thnn__shape(y, b));
    }
    if (y->dtype != x1->dtype)
        return thnn__error(TH_ERR_TYPE, "%s: expected target of scalar type %s but found "
                           "%s", fn, thnn__dtype_name(x1->dtype), thnn__dtype_name(y->dtype));
    return TH_OK;
}

/* kl_div: target * (log(target) - input), or with log_target
 * exp(target) * (target - input); a target of 0 contributes 0, a negative
 * one NaN (its log).  margin_ranking: max(0, -target * (input1 - input2) +
 * margin).  cosine_embedding, per row: cos = <x1, x2> / sqrt((|x1|^2 + eps)
 * (|x2|^2 + eps)), eps = 1e-12; target 1: 1 - cos, target -1: max(0, cos -
 * margin), other targets 0.
 *
 * Each forward writes per-element losses (none) or returns their sum;
 * each backward gets the grad_output pointer and the factor that the
 * reduction puts on it (1/n for mean); gy_step 0 broadcasts gy[0]. */
static inline double kl(double x, double t, int log_target) {
    if (log_target) return exp(t) * (t - x);
    return t > 0 ? t * (log(t) - x) : t == 0 ? 0.0 : NAN;
}

/* one call's data and settings, for the range functions on libTH's pool
 * (kl_div: a is the input, b the target) */
typedef struct lm_ctx {
    void *out, *out2; /* per-element losses (reduction none), or the gradients */
    const void *a, *b, *y, *gy;
    int64_t gy_step, D;
    double scale, margin;
    int log_target;
} lm_ctx;

/* unpacks an lm_ctx into the loops' names */
#define LM_LOCALS(T)                                                           \
    const lm_ctx *c = ctx;                                                     \
    const T *a = c->a, *b = c->b, *y = c->y, *gy = c->gy;                      \
    const int64_t gy_step = c->gy_step;                                        \
    const double scale = c->scale, margin = c->margin;                         \
    (void)a; (void)b; (void)y; (void)gy; (void)gy_step; (void)scale; (void)margin

/* the forwards write the losses of [i0, i1) when out is set, else return
 * their sum (thnn__parallel_sum adds the blocks) */
#define DEFINE_LOSSES(T)                                                       \
    static double kl_fwd_##T(int64_t i0, int64_t i1, void *ctx) {              \
        LM_LOCALS(T);                                                          \
        T *out = c->out;                                                       \
        double sum = 0;                                                        \
        for (int64_t i = i0; i < i1; i++) {                                    \
            const double l = kl(a[i], b[i], c->log_target);                    \
            if (out) out[i] = (T)l;                                            \
            else sum += l;                                                     \
        }                                                                      \
        return sum;                                                            \
    }                                                                          \
    static void kl_bwd_##T(int64_t i0, int64_t i1, void *ctx) {                \
        LM_LOCALS(T);                                                          \
        T *gi = c->out, *gt = c->out2;                                         \
        for (int64_t i = i0; i < i1; i++) {                                    \
            const double g = (double)gy[i * gy_step] * scale, tv = b[i];       \
            if (c->log_target) {                                               \
                const double e = exp(tv);                                      \
                if (gi) gi[i] = (T)(-g * e);                                   \
                if (gt) gt[i] = (T)(g * e * (tv - (double)a[i] + 1));          \
            } else {                                                           \
                if (gi) gi[i] = (T)(-g * tv);                                  \
                if (gt) gt[i] = (T)(tv > 0 ? g * (log(tv) - (double)a[i] + 1) : 0.0); \
            }                                                                  \
        }                                                                      \
    }                                                                          \
    static double mr_fwd_##T(int64_t i0, int64_t i1, void *ctx) {              \
        LM_LOCALS(T);                                                          \
        T *out = c->out;                                                       \
        double sum = 0;                                                        \
        if (out) {                                                             \
            _Pragma("omp simd")                                                \
            for (int64_t i = i0; i < i1; i++) {                                \
                const double l = -(double)y[i] * ((double)a[i] - (double)b[i]) + margin; \
                out[i] = (T)(l > 0 ? l : 0);                                   \
            }                                                                  \
            return 0;                                                          \
        }                                                                      \
        _Pragma("omp simd reduction(+:sum)")                                   \
        for (int64_t i = i0; i < i1; i++) {                                    \
            const double l = -(double)y[i] * ((double)a[i] - (double)b[i]) + margin; \
            sum += l > 0 ? l : 0;                                              \
        }                                                                      \
        return sum;                                                            \
    }                                                                          \
    static void mr_bwd_##T(int64_t i0, int64_t i1, void *ctx) {                \
        LM_LOCALS(T);                                                          \
        T *g1 = c->out, *g2 = c->out2;                                         \
        _Pragma("omp simd")                                                    \
        for (int64_t i = i0; i < i1; i++) {                                    \
            const double yv = y[i];                                            \
            const int active = -yv * ((double)a[i] - (double)b[i]) + margin > 0; \
            const double g = active ? (double)gy[i * gy_step] * scale * yv : 0.0; \
            if (g1) g1[i] = (T)(-g);                                           \
            if (g2) g2[i] = (T)g;                                              \
        }                                                                      \
    }                                                                          \
    /* dot, |x1|^2 + eps, |x2|^2 + eps of one row */                           \
    static inline void cos_row_##T(const T *a, const T *b, int64_t D,          \
                                   double *dot, double *m1, double *m2) {      \
        double s = 0, s1 = 0, s2 = 0;                                          \
        _Pragma("omp simd reduction(+:s, s1, s2)")                             \
        for (int64_t d = 0; d < D; d++) {                                      \
            const double u = a[d], v = b[d];                                   \
            s += u * v; s1 += u * u; s2 += v * v;                              \
        }                                                                      \
        *dot = s; *m1 = s1 + COSINE_EPS; *m2 = s2 + COSINE_EPS;                \
    }                                                                          \
    /* over rows [r0, r1) */                                                   \
    static double cos_fwd_##T(int64_t r0, int64_t r1, void *ctx) {             \
        LM_LOCALS(T);                                                          \
        T *out = c->out;                                                       \
        const int64_t D = c->D;                                                \
        double sum = 0;                                                        \
        for (int64_t r = r0; r < r1; r++) {                                    \
            double dot, m1, m2;                                                \
            cos_row_##T(a + r * D, b + r * D, D, &dot, &m1, &m2);              \
            const double cs = dot / sqrt(m1 * m2), yv = y[r];                  \
            const double l = yv == 1 ? 1 - cs                                  \
                             : yv == -1 ? (cs - margin > 0 ? cs - margin : 0) : 0; \
            if (out) out[r] = (T)l;                                            \
            else sum += l;                                                     \
        }                                                                      \
        return sum;                                                            \
    }                                                                          \
    static void cos_bwd_##T(int64_t r0, int64_t r1, void *ctx) {               \
        LM_LOCALS(T);                                                          \
        T *g1 = c->out, *g2 = c->out2;                                         \
        const int64_t D = c->D;                                                \
        for (int64_t r = r0; r < r1; r++) {                                    \
            const T *ar = a + r * D, *br = b + r * D;                          \
            double dot, m1, m2;                                                \
            cos_row_##T(ar, br, D, &dot, &m1, &m2);                            \
            const double denom = sqrt(m1 * m2), cs = dot / denom, yv = y[r];   \
            /* d loss / d cos, times the incoming gradient */                  \
            double dc = yv == 1 ? -1.0 : (yv == -1 && cs - margin > 0) ? 1.0 : 0.0; \
            dc *= (double)gy[r * gy_step] * scale;                             \
            /* d cos / d x1 = x2 / denom - cos x1 / m1 (x2 alike) */           \
            const double p = dc / denom, q1 = dc * cs / m1, q2 = dc * cs / m2; \
            for (int64_t d = 0; d < D; d++) {                                  \
                if (g1) g1[r * D + d] = (T)(p * (double)br[d] - q1 * (double)ar[d]); \
                if (g2) g2[r * D + d] = (T)(p * (double)ar[d] - q2 * (double)br[d]); \
            }                                                                  \
        }                                                                      \
    }
DEFINE_LOSSES(float)
DEFINE_LOSSES(double)

#define DATA_OR_NULL(t) ((t) ? thnn__data(t) : NULL)

/* stores a reduced loss into the 0-d output */
static int store_reduced(const char *fn, th_tensor *out, double sum, int64_t n,
                         int reduction) {
    if (reduction == THNN_REDUCTION_NONE) return TH_OK;
    const double v = reduction == THNN_REDUCTION_MEAN ? (n ? sum / (double)n : NAN) : sum;
    return th_fill_double(out, v) ? thnn__from_th(fn) : TH_OK;
}

/* grad_output's step (0: one value for all) and the reduction's factor */
static void grad_scaling(int reduction, int64_t n, int64_t *step, double *scale) {
    *step = reduction == THNN_REDUCTION_NONE ? 1 : 0;
    *scale = reduction == THNN_REDUCTION_MEAN ? 1.0 / (double)(n ? n : 1) : 1.0;
}

THNN_API int thnn_kl_div_forward(th_tensor *output, const th_tensor *input,
                                 const th_tensor *target, int reduction, int log_target) {
    static const char fn[] = "kl_div";
    int rc;
    if ((rc = check_reduction(fn, reduction))) return rc;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = check_same(fn, "input", input, "target", target))) return rc;
    if ((rc = check_output(fn, output, input, reduction))) return rc;
    th_tensor *x = thnn__contig(input), *t = thnn__contig(target);
    if (!x || !t) { rc = thnn_last_status(); goto done; }
    const int64_t n = th_numel(x);
    void *out = reduction == THNN_REDUCTION_NONE ? thnn__data(output) : NULL;
    lm_ctx c = {.out = out, .a = thnn__data(x), .b = thnn__data(t), .log_target = log_target};
    const double sum =
        thnn__parallel_sum(n, 1, x->dtype == TH_FLOAT32 ? kl_fwd_float : kl_fwd_double, &c);
    rc = store_reduced(fn, output, sum, n, reduction);
done:
    thnn__release(x); thnn__release(t);
    return rc;
}

THNN_API int thnn_kl_div_backward_input(th_tensor *grad_input, th_tensor *grad_target,
                                        const th_tensor *grad_output,
                                        const th_tensor *input, const th_tensor *target,
                                        int reduction, int log_target) {
    static const char fn[] = "kl_div_backward_input";
    int rc;
    if ((rc = check_reduction(fn, reduction))) return rc;
    if ((rc = thnn__check_float(fn, "input", input))) return rc;
    if ((rc = check_same(fn, "input", input, "target", target))) return rc;
    if (grad_input && (rc = thnn__check_like(fn, "grad_input", grad_input, input))) return rc;
    if (grad_target && (rc = thnn__check_like(fn, "grad_target", grad_target, input))) return rc;
    const int64_t n = th_numel(input);
    if ((rc = check_grad_output(fn, grad_output, n, input->dtype, reduction))) return rc;
    th_tensor *x = thnn__contig(input), *t = thnn__contig(target), *gy = thnn__contig(grad_output);
    if (!x || !t || !gy) { rc = thnn_last_status(); goto done; }
    int64_t step;
    double scale;
    grad_scaling(reduction, n, &step, &scale);
    lm_ctx c = {.out = DATA_OR_NULL(grad_input), .out2 = DATA_OR_NULL(grad_target),
                .a = thnn__data(x), .b = thnn__data(t), .gy = thnn__data(gy), .gy_step = step,
                .scale = scale, .log_target = log_target};
    th_parallel_for(n, thnn__grain(1), x->dtype == TH_FLOAT32 ? kl_bwd_float : kl_bwd_double,
                    &c);
done:
    thnn__release(x); thnn__release(t); thnn__release(gy);
    return rc;
}

THNN_API int thnn_margin_ranking_loss_forward(th_tensor *output, const th_tensor *input1,
                                              const th_tensor *input2,
                                              const th_tensor *target, double margin,
                                              int reduction) {
    static const char fn[] = "margin_ranking_loss";
    int rc;
    if ((rc = check_pair(fn, input1, input2, target, reduction))) return rc;
    if ((rc = check_same(fn, "input1", input1, "target", target))) return rc;
    if ((rc = check_output(fn, output, input1, reduction))) return rc;
    th_tensor *a = thnn__contig(input1), *b = thnn__contig(input2), *y = thnn__contig(target);
    if (!a || !b || !y) { rc = thnn_last_status(); goto done; }
    const int64_t n = th_numel(a);
    void *out = reduction == THNN_REDUCTION_NONE ? thnn__data(output) : NULL;
    lm_ctx c = {.out = out, .a = thnn__data(a), .b = thnn__data(b), .y = thnn__data(y),
                .margin = margin};
    const double sum =
        thnn__parallel_sum(n, 1, a->dtype == TH_FLOAT32 ? mr_fwd_float : mr_fwd_double, &c);
    rc = store_reduced(fn, output, sum, n, reduction);
done:
    thnn__release(a); thnn__release(b); thnn__release(y);
    return rc;
}

THNN_API int thnn_margin_ranking_loss_backward_input(th_tensor *grad_input1,
                                                     th_tensor *grad_input2,
                                                     const th_tensor *grad_output,
                                                     const th_tensor *input1,
                                                     const th_tensor *input2,
                                                     const th_tensor *target,
                                                     double margin, int reduction) {
    static const char fn[] = "margin_ranking_loss_backward_input";
    int rc;
    if ((rc = check_pair(fn, input1, input2, target, reduction))) return rc;
    if ((rc = check_same(fn, "input1", input1, "target", target))) return rc;
    if (grad_input1 && (rc = thnn__check_like(fn, "grad_input1", grad_input1, input1))) return rc;
    if (grad_input2 && (rc = thnn__check_like(fn, "grad_input2", grad_input2, input1))) return rc;
    const int64_t n = th_numel(input1);
    if ((rc = check_grad_output(fn, grad_output, n, input1->dtype, reduction))) return rc;
    th_tensor *a = thnn__contig(input1), *b = thnn__contig(input2), *y = thnn__contig(target);
    th_tensor *gy = thnn__contig(grad_output);
    if (!a || !b || !y || !gy) { rc = thnn_last_status(); goto done; }
    int64_t step;
    double scale;
    grad_scaling(reduction, n, &step, &scale);
    lm_ctx c = {.out = DATA_OR_NULL(grad_input1), .out2 = DATA_OR_NULL(grad_input2),
                .a = thnn__data(a), .b = thnn__data(b), .y = thnn__data(y),
                .gy = thnn__data(gy), .gy_step = step, .scale = scale, .margin = margin};
    th_parallel_for(n, thnn__grain(1), a->dtype == TH_FLOAT32 ? mr_bwd_float : mr_bwd_double,
                    &c);
done:
    thnn__release(a); thnn__release(b); thnn__release(y); thnn__release(gy);
    return rc;
}

THNN_API int thnn_cosine_embedding_loss_forward(th_tensor *output, const th_tensor *input1,
                                                const th_tensor *input2,
                                                const th_tensor *target, double margin,
                                                int reduction) {
    static const char fn[] = "cosine_embedding_loss";
    int64_t N, D;
    int rc;
    if ((rc = cosine_geometry(fn, input1, input2, target, reduction, &N, &D))) return rc;
    if ((rc = check_output(fn, output, target, reduction))) return rc;
    th_tensor *a = thnn__contig(input1), *b = thnn__contig(input2), *y = thnn__contig(target);
    if (!a || !b || !y) { rc = thnn_last_status(); goto done; }
    void *out = reduction == THNN_REDUCTION_NONE ? thnn__data(output) : NULL;
    lm_ctx c = {.out = out, .a = thnn__data(a), .b = thnn__data(b), .y = thnn__data(y),
                .D = D, .margin = margin};
    const double sum =
        thnn__parallel_sum(N, D, a->dtype == TH_FLOAT32 ? cos_fwd_float : cos_fwd_double, &c);
    rc = store_reduced(fn, output, sum, N, reduction);
done:
    thnn__release(a); thnn__release(b); thnn__release(y);
    return rc;
}

THNN_API int thnn_cosine_embedding_loss_backward_input(th_tensor *grad_input1,
                                                       th_tensor *grad_input2,
                                                       const th_tensor *grad_output,
                                                       const th_tensor *input1,
                                                       const th_tensor *input2,
                                                       const th_tensor *target,
                                                       double margin, int reduction) {
    static const char fn[] = "cosine_embedding_loss_backward_input";
    int64_t N, D;
    int rc;
    if ((rc = cosine_geometry(fn, input1, input2, target, reduction, &N, &D))) return rc;
    if (grad_input1 && (rc = thnn__check_like(fn, "grad_input1", grad_input1, input1))) return rc;
    if (grad_input2 && (rc = thnn__check_like(fn, "grad_input2", grad_input2, input1))) return rc;
    if ((rc = check_grad_output(fn, grad_output, N, input1->dtype, reduction))) return rc;
    th_tensor *a = thnn__contig(input1), *b = thnn__contig(input2), *y = thnn__contig(target);
    th_tensor *gy = thnn__contig(grad_output);
    if (!a || !b || !y || !gy) { rc = thnn_last_status(); goto done; }
    int64_t step;
    double scale;
    grad_scaling(reduction, N, &step, &scale);
    lm_ctx c = {.out = DATA_OR_NULL(grad_input1), .out2 = DATA_OR_NULL(grad_input2),
                .a = thnn__data(a), .b = thnn__data(b), .y = thnn__data(y),
                .gy = thnn__data(gy), .gy_step = step, .D = D, .scale = scale, .margin = margin};
    th_parallel_for(N, thnn__grain(D), a->dtype == TH_FLOAT32 ? cos_bwd_float : cos_bwd_double,
                    &c);
done:
    thnn__release(a); thnn__release(b); thnn__release(y); thnn__release(gy);
    return rc;
}
