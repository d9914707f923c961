// The pointwise losses (mse, l1, smooth_l1, huber, bce, bce_with_logits),
// kl_div, margin_ranking_loss and cosine_embedding_loss: libTHNN's formulas,
// checks and messages (packages/thnn/src/pointwise_loss.c).
//
// A thread per element (per row for cosine's loss) computes in double.
// For mean/sum the per-element losses go to a float64 scratch tensor that
// libTHC's reduction (double accumulation) folds into the 0-d output, so
// the result stays on the device; backwards read grad_output[0] in the
// kernel.  The one read-back is bce's input-range flag (libTHNN raises for
// an input outside [0, 1]), as nll_loss's target check.
#include "thcunn_internal.h"

using namespace thcunn;

namespace {

const double kCosineEps = 1e-12;

// ---- checks with libTHNN's wording --------------------------------------------------

int check_reduction(const char *fn, int reduction) {
    if (reduction < THCUNN_REDUCTION_NONE || reduction > THCUNN_REDUCTION_SUM)
        return thcunn__error(THC_ERR_VALUE, "%s: %d is not a valid value for reduction "
                             "(0 none, 1 mean, 2 sum)", fn, reduction);
    return THC_OK;
}

// output: `like`'s shape for none, else 0-d
int check_loss_output(const char *fn, const thc_tensor *out, const thc_tensor *like,
                      int reduction) {
    if (reduction == THCUNN_REDUCTION_NONE) return thcunn__check_like(fn, "output", out, like);
    return thcunn__check_out(fn, "output", out, 0, NULL, like->dtype);
}

// b must have a's shape and dtype
int check_same(const char *fn, const char *an, const thc_tensor *a, const char *bn,
               const thc_tensor *b) {
    char s1[256], s2[256];
    if (thcunn__check_float(fn, bn, b)) return thcunn_last_status();
    bool ok = a->ndim == b->ndim;
    for (int i = 0; ok && i < a->ndim; i++) ok = a->sizes[i] == b->sizes[i];
    if (!ok)
        return thcunn__error(THC_ERR_RUNTIME, "%s: %s %s and %s %s must have the same shape",
                             fn, bn, thcunn__shape_of(b, s1), an,
                             thcunn__shape_of(a, s2));
    if (a->dtype != b->dtype)
        return thcunn__error(THC_ERR_TYPE, "%s: expected %s of scalar type %s but found %s",
                             fn, bn, thcunn__type_name(a->dtype), thcunn__type_name(b->dtype));
    return THC_OK;
}

// grad_output: n elements for none, one for mean/sum (pointwise_loss.c's wording)
int check_grad_output(const char *fn, const thc_tensor *gy, int64_t n, int dtype,
                      int reduction) {
    char a[256];
    if (thcunn__check_float(fn, "grad_output", gy)) return thcunn_last_status();
    const int64_t want = reduction == THCUNN_REDUCTION_NONE ? n : 1;
    if (thcunn__numel(gy) != want || gy->dtype != dtype)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected grad_output of %lld elements of "
                             "scalar type %s but got %s (%s)", fn, (long long)want,
                             thcunn__type_name(dtype), thcunn__shape_of(gy, a),
                             thcunn__type_name(gy->dtype));
    return THC_OK;
}

// ---- tensors held by one call ---------------------------------------------------------

// Releases what it holds when the call returns; hold() of NULL records a
// failed libTHC call.  A call here holds at most 6 tensors.
struct Held {
    thc_tensor *p[8] = {};
    int n = 0;
    bool failed = false;
    thc_tensor *hold(thc_tensor *t) {
        if (!t) failed = true;
        else p[n++] = t;
        return t;
    }
    // a contiguous reference to t (NULL stays NULL)
    thc_tensor *contig(const thc_tensor *t) { return t ? hold(thc_contiguous(t)) : NULL; }
    thc_tensor *scratch(int ndim, const int64_t *sizes) {
        return hold(thc_empty(ndim, sizes, THC_FLOAT64));
    }
    Held() = default;
    Held(const Held &) = delete;
    Held &operator=(const Held &) = delete;
    ~Held() {
        for (int i = 0; i < n; i++) thc_tensor_release(p[i]);
    }
};

// output (0-d) = sum or mean of the float64 scratch's values
int reduce_into(thc_tensor *output, const thc_tensor *scratch, int reduction) {
    thc_tensor *r = thc_reduce(reduction == THCUNN_REDUCTION_MEAN ? THC_RED_MEAN : THC_RED_SUM,
                               scratch, 0, NULL, 0, -1);
    int rc = r && !thc_copy(output, r) ? THC_OK : thcunn__from_thc();
    thc_tensor_release(r);
    return rc;
}

// ---- pointwise losses -------------------------------------------------------------

THCUNN_HD inline double log_sigmoid(double x) {
    return x < 0 ? x - log1p(exp(x)) : -log1p(exp(-x));
}

THCUNN_HD inline double sgn(double r) { return (double)((r > 0) - (r < 0)); }

// loss l and its derivative d in x (pwt: pos_weight of bce_with_logits)
THCUNN_HD inline void pointwise(int loss, double x, double y, double a, double pwt, double *l,
                                double *d) {
    const double r = x - y, ar = fabs(r);
    switch (loss) {
    case THCUNN_MSE_LOSS:
        *l = r * r;
        *d = 2 * r;
        break;
    case THCUNN_L1_LOSS:
        *l = ar;
        *d = sgn(r);
        break;
    case THCUNN_SMOOTH_L1_LOSS:
        if (a == 0 || ar >= a) {
            *l = ar - (a == 0 ? 0 : 0.5 * a);
            *d = sgn(r);
        } else {
            *l = 0.5 * r * r / a;
            *d = r / a;
        }
        break;
    case THCUNN_HUBER_LOSS:
        if (ar <= a) {
            *l = 0.5 * r * r;
            *d = r;
        } else {
            *l = a * (ar - 0.5 * a);
            *d = a * sgn(r);
        }
        break;
    case THCUNN_BCE_LOSS: {
        // PyTorch clamps the logs at -100
        double lx = x > 0 ? log(x) : -100, l1x = x < 1 ? log1p(-x) : -100;
        lx = lx < -100 ? -100 : lx;
        l1x = l1x < -100 ? -100 : l1x;
        *l = -(y * lx + (1 - y) * l1x);
        const double e = 1e-12, v = (1 - x) * x;
        *d = (x - y) / (v > e ? v : e);
        break;
    }
    default: {   // bce_with_logits
        *l = -(pwt * y * log_sigmoid(x) + (1 - y) * log_sigmoid(-x));
        const double s = 1.0 / (1.0 + exp(-x));
        *d = (pwt * y + 1 - y) * s - pwt * y;
        break;
    }
    }
}

// O: T for reduction none (into the output), double for a scratch
template <typename T, typename O> struct PointwiseForwardFn {
    O *out;
    const T *x, *y, *w, *pw;
    int64_t last;
    int loss;
    double a;
    int64_t *bad;   // bce: set to 1 when an input is outside [0, 1]
    THCUNN_HD void operator()(int64_t i) const {
        const double xv = (double)x[i];
        // every writer stores the same 1: no atomic needed
        if (bad && !(xv >= 0 && xv <= 1)) bad[0] = 1;
        double l, d;
        pointwise(loss, xv, (double)y[i], a, pw ? (double)pw[i % last] : 1.0, &l, &d);
        if (w) l *= (double)w[i];
        out[i] = (O)l;
    }
};

template <typename T> struct PointwiseBackwardFn {
    T *gin;
    const T *gy, *x, *y, *w, *pw;
    int64_t last, gy_step;   // gy_step 0: one grad_output for all
    double scale;            // 1/n for mean
    int loss;
    double a;
    THCUNN_HD void operator()(int64_t i) const {
        double l, d;
        pointwise(loss, (double)x[i], (double)y[i], a, pw ? (double)pw[i % last] : 1.0, &l, &d);
        if (w) d *= (double)w[i];
        gin[i] = (T)(d * ((double)gy[i * gy_step] * scale));
    }
};

int pointwise_check(const char *fn, const thc_tensor *input, const thc_tensor *target,
                    const thc_tensor *weight, const thc_tensor *pos_weight, int loss,
                    int reduction, double a) {
    char s1[256], s2[256];
    if (check_reduction(fn, reduction)) return thcunn_last_status();
    if (loss < THCUNN_MSE_LOSS || loss > THCUNN_BCE_WITH_LOGITS_LOSS)
        return thcunn__error(THC_ERR_VALUE, "%s: unknown loss %d", fn, loss);
    if (thcunn__check_float(fn, "input", input) || thcunn__check_float(fn, "target", target))
        return thcunn_last_status();
    bool ok = input->ndim == target->ndim;
    for (int i = 0; ok && i < input->ndim; i++) ok = input->sizes[i] == target->sizes[i];
    if (!ok)
        return thcunn__error(THC_ERR_VALUE, "Using a target size (%s) that is different to the "
                             "input size (%s) is not supported",
                             thcunn__shape_of(target, s1),
                             thcunn__shape_of(input, s2));
    if (target->dtype != input->dtype)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected target of scalar type %s but "
                             "found %s", fn, thcunn__type_name(input->dtype),
                             thcunn__type_name(target->dtype));
    if (weight && thcunn__check_tensor(fn, "weight", weight, 0)) return thcunn_last_status();
    if (weight && (thcunn__numel(weight) != thcunn__numel(input) ||
                   weight->dtype != input->dtype))
        return thcunn__error(THC_ERR_RUNTIME, "%s: weight %s must have the input's shape %s "
                             "and dtype", fn, thcunn__shape_of(weight, s1),
                             thcunn__shape_of(input, s2));
    const int64_t last = input->ndim ? input->sizes[input->ndim - 1] : 1;
    if (pos_weight && thcunn__check_tensor(fn, "pos_weight", pos_weight, 0))
        return thcunn_last_status();
    if (pos_weight && (thcunn__numel(pos_weight) != last || pos_weight->dtype != input->dtype))
        return thcunn__error(THC_ERR_RUNTIME, "%s: pos_weight must have %lld elements (the "
                             "input's last dim) but has %lld", fn, (long long)last,
                             (long long)thcunn__numel(pos_weight));
    if ((loss == THCUNN_SMOOTH_L1_LOSS || loss == THCUNN_HUBER_LOSS) && a < 0)
        return thcunn__error(THC_ERR_RUNTIME, "%s: beta / delta must be non-negative, got %g",
                             fn, a);
    if (loss == THCUNN_HUBER_LOSS && a == 0)
        return thcunn__error(THC_ERR_RUNTIME, "huber_loss does not support non-positive values "
                             "for delta.");
    return THC_OK;
}

int64_t last_dim(const thc_tensor *t) { return t->ndim ? t->sizes[t->ndim - 1] : 1; }

}  // namespace

extern "C" THCUNN_API int thcunn_pointwise_loss_forward(thc_tensor *output,
                                                        const thc_tensor *input,
                                                        const thc_tensor *target,
                                                        const thc_tensor *weight,
                                                        const thc_tensor *pos_weight, int loss,
                                                        int reduction, double a) {
    const char *fn = "pointwise_loss";
    if (thcunn__check_runtime(fn) ||
        pointwise_check(fn, input, target, weight, pos_weight, loss, reduction, a) ||
        check_loss_output(fn, output, input, reduction))
        return thcunn_last_status();
    Held h;
    const int64_t n = thcunn__numel(input), one = 1;
    thc_tensor *x = h.contig(input), *y = h.contig(target), *w = h.contig(weight);
    thc_tensor *pw = h.contig(pos_weight);
    const bool reduced = reduction != THCUNN_REDUCTION_NONE;
    thc_tensor *scratch = reduced ? h.scratch(1, &n) : NULL;
    thc_tensor *bad = loss == THCUNN_BCE_LOSS ? h.hold(thc_empty(1, &one, THC_INT64)) : NULL;
    if (h.failed || (bad && thc_zero(bad))) return thcunn__from_thc();
    const int64_t last = last_dim(x);
    int rc;
    THCUNN_FLOATING(x->dtype, {
        const scalar_t *xs = data<scalar_t>(x), *ys = data<scalar_t>(y);
        const scalar_t *ws = cdata<scalar_t>(w), *ps = cdata<scalar_t>(pw);
        int64_t *bs = mdata<int64_t>(bad);
        rc = reduced ? for_each(fn, n, PointwiseForwardFn<scalar_t, double>{
                                           data<double>(scratch), xs, ys, ws, ps, last, loss,
                                           a, bs})
                     : for_each(fn, n, PointwiseForwardFn<scalar_t, scalar_t>{
                                           data<scalar_t>(output), xs, ys, ws, ps, last, loss,
                                           a, bs});
    })
    if (!rc && bad) {
        int64_t flag = 0;
        if (thc_copy_to_host(&flag, bad)) return thcunn__from_thc();
        if (flag)
            return thcunn__error(THC_ERR_RUNTIME, "all elements of input should be between 0 "
                                 "and 1");
    }
    if (!rc && reduced) rc = reduce_into(output, scratch, reduction);
    return rc;
}

extern "C" THCUNN_API int thcunn_pointwise_loss_backward_input(
    thc_tensor *grad_input, const thc_tensor *grad_output, const thc_tensor *input,
    const thc_tensor *target, const thc_tensor *weight, const thc_tensor *pos_weight, int loss,
    int reduction, double a) {
    const char *fn = "pointwise_loss_backward_input";
    if (thcunn__check_runtime(fn) ||
        pointwise_check(fn, input, target, weight, pos_weight, loss, reduction, a) ||
        thcunn__check_like(fn, "grad_input", grad_input, input) ||
        thcunn__check_float(fn, "grad_output", grad_output))
        return thcunn_last_status();
    const int64_t n = thcunn__numel(input);
    const int64_t want = reduction == THCUNN_REDUCTION_NONE ? n : 1;
    if (thcunn__numel(grad_output) != want || grad_output->dtype != input->dtype)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected grad_output of %lld elements of "
                             "type %s", fn, (long long)want, thcunn__type_name(input->dtype));
    Held h;
    thc_tensor *x = h.contig(input), *y = h.contig(target), *gy = h.contig(grad_output);
    thc_tensor *w = h.contig(weight), *pw = h.contig(pos_weight);
    if (h.failed) return thcunn__from_thc();
    const int64_t step = reduction == THCUNN_REDUCTION_NONE ? 1 : 0;
    const double scale = reduction == THCUNN_REDUCTION_MEAN ? 1.0 / (double)n : 1.0;
    int rc;
    THCUNN_FLOATING(x->dtype, rc = for_each(fn, n, PointwiseBackwardFn<scalar_t>{
                                                       data<scalar_t>(grad_input),
                                                       data<scalar_t>(gy), data<scalar_t>(x),
                                                       data<scalar_t>(y), cdata<scalar_t>(w),
                                                       cdata<scalar_t>(pw), last_dim(x), step,
                                                       scale, loss, a}))
    return rc;
}

// ---- kl_div ---------------------------------------------------------------------

namespace {

THCUNN_HD inline double kl(double x, double t, int log_target) {
    if (log_target) return exp(t) * (t - x);
    return t > 0 ? t * (log(t) - x) : t == 0 ? 0.0 : NAN;
}

template <typename T, typename O> struct KlForwardFn {
    O *out;
    const T *x, *t;
    int log_target;
    THCUNN_HD void operator()(int64_t i) const {
        out[i] = (O)kl((double)x[i], (double)t[i], log_target);
    }
};

template <typename T> struct KlBackwardFn {
    T *gi, *gt;   // either may be NULL
    const T *gy, *x, *t;
    int64_t gy_step;
    double scale;
    int log_target;
    THCUNN_HD void operator()(int64_t i) const {
        const double g = (double)gy[i * gy_step] * scale, tv = (double)t[i];
        if (log_target) {
            const double e = exp(tv);
            if (gi) gi[i] = (T)(-g * e);
            if (gt) gt[i] = (T)(g * e * (tv - (double)x[i] + 1));
        } else {
            if (gi) gi[i] = (T)(-g * tv);
            if (gt) gt[i] = (T)(tv > 0 ? g * (log(tv) - (double)x[i] + 1) : 0.0);
        }
    }
};

// grad_output's step (0: one value for all) and the reduction's factor
void grad_scaling(int reduction, int64_t n, int64_t *step, double *scale) {
    *step = reduction == THCUNN_REDUCTION_NONE ? 1 : 0;
    *scale = reduction == THCUNN_REDUCTION_MEAN ? 1.0 / (double)(n ? n : 1) : 1.0;
}

}  // namespace

extern "C" THCUNN_API int thcunn_kl_div_forward(thc_tensor *output, const thc_tensor *input,
                                                const thc_tensor *target, int reduction,
                                                int log_target) {
    const char *fn = "kl_div";
    if (thcunn__check_runtime(fn) || check_reduction(fn, reduction) ||
        thcunn__check_float(fn, "input", input) ||
        check_same(fn, "input", input, "target", target) ||
        check_loss_output(fn, output, input, reduction))
        return thcunn_last_status();
    Held h;
    const int64_t n = thcunn__numel(input);
    const bool reduced = reduction != THCUNN_REDUCTION_NONE;
    thc_tensor *x = h.contig(input), *t = h.contig(target);
    thc_tensor *scratch = reduced ? h.scratch(1, &n) : NULL;
    if (h.failed) return thcunn__from_thc();
    int rc;
    THCUNN_FLOATING(x->dtype, {
        const scalar_t *xs = data<scalar_t>(x), *ts = data<scalar_t>(t);
        rc = reduced ? for_each(fn, n, KlForwardFn<scalar_t, double>{data<double>(scratch), xs,
                                                                      ts, log_target})
                     : for_each(fn, n, KlForwardFn<scalar_t, scalar_t>{data<scalar_t>(output),
                                                                        xs, ts, log_target});
    })
    if (!rc && reduced) rc = reduce_into(output, scratch, reduction);
    return rc;
}

extern "C" THCUNN_API int thcunn_kl_div_backward_input(thc_tensor *grad_input,
                                                       thc_tensor *grad_target,
                                                       const thc_tensor *grad_output,
                                                       const thc_tensor *input,
                                                       const thc_tensor *target, int reduction,
                                                       int log_target) {
    const char *fn = "kl_div_backward_input";
    if (thcunn__check_runtime(fn) || check_reduction(fn, reduction) ||
        thcunn__check_float(fn, "input", input) ||
        check_same(fn, "input", input, "target", target) ||
        (grad_input && thcunn__check_like(fn, "grad_input", grad_input, input)) ||
        (grad_target && thcunn__check_like(fn, "grad_target", grad_target, input)))
        return thcunn_last_status();
    const int64_t n = thcunn__numel(input);
    if (check_grad_output(fn, grad_output, n, input->dtype, reduction))
        return thcunn_last_status();
    if (!grad_input && !grad_target) return THC_OK;
    Held h;
    thc_tensor *x = h.contig(input), *t = h.contig(target), *gy = h.contig(grad_output);
    if (h.failed) return thcunn__from_thc();
    int64_t step;
    double scale;
    grad_scaling(reduction, n, &step, &scale);
    int rc;
    THCUNN_FLOATING(x->dtype, rc = for_each(fn, n, KlBackwardFn<scalar_t>{
                                                       mdata<scalar_t>(grad_input),
                                                       mdata<scalar_t>(grad_target),
                                                       data<scalar_t>(gy), data<scalar_t>(x),
                                                       data<scalar_t>(t), step, scale,
                                                       log_target}))
    return rc;
}

// ---- margin_ranking_loss ------------------------------------------------------------

namespace {

template <typename T, typename O> struct MarginForwardFn {
    O *out;
    const T *a, *b, *y;
    double margin;
    THCUNN_HD void operator()(int64_t i) const {
        const double l = -(double)y[i] * ((double)a[i] - (double)b[i]) + margin;
        out[i] = (O)(l > 0 ? l : 0);
    }
};

template <typename T> struct MarginBackwardFn {
    T *g1, *g2;   // either may be NULL
    const T *gy, *a, *b, *y;
    int64_t gy_step;
    double scale, margin;
    THCUNN_HD void operator()(int64_t i) const {
        const double yv = (double)y[i];
        const bool active = -yv * ((double)a[i] - (double)b[i]) + margin > 0;
        const double g = active ? (double)gy[i * gy_step] * scale * yv : 0.0;
        if (g1) g1[i] = (T)(-g);
        if (g2) g2[i] = (T)g;
    }
};

// input1, input2 (and a target) of one shape; libTHNN's order of checks
int check_pair(const char *fn, const thc_tensor *x1, const thc_tensor *x2, const thc_tensor *y,
               int reduction) {
    if (check_reduction(fn, reduction) || thcunn__check_float(fn, "input1", x1) ||
        check_same(fn, "input1", x1, "input2", x2))
        return thcunn_last_status();
    if (!y) return thcunn__error(THC_ERR_VALUE, "%s: target must not be NULL", fn);
    return THC_OK;
}

}  // namespace

extern "C" THCUNN_API int thcunn_margin_ranking_loss_forward(thc_tensor *output,
                                                             const thc_tensor *input1,
                                                             const thc_tensor *input2,
                                                             const thc_tensor *target,
                                                             double margin, int reduction) {
    const char *fn = "margin_ranking_loss";
    if (thcunn__check_runtime(fn) || check_pair(fn, input1, input2, target, reduction) ||
        check_same(fn, "input1", input1, "target", target) ||
        check_loss_output(fn, output, input1, reduction))
        return thcunn_last_status();
    Held h;
    const int64_t n = thcunn__numel(input1);
    const bool reduced = reduction != THCUNN_REDUCTION_NONE;
    thc_tensor *a = h.contig(input1), *b = h.contig(input2), *y = h.contig(target);
    thc_tensor *scratch = reduced ? h.scratch(1, &n) : NULL;
    if (h.failed) return thcunn__from_thc();
    int rc;
    THCUNN_FLOATING(a->dtype, {
        const scalar_t *as = data<scalar_t>(a), *bs = data<scalar_t>(b), *ys = data<scalar_t>(y);
        rc = reduced ? for_each(fn, n, MarginForwardFn<scalar_t, double>{data<double>(scratch),
                                                                          as, bs, ys, margin})
                     : for_each(fn, n, MarginForwardFn<scalar_t, scalar_t>{
                                           data<scalar_t>(output), as, bs, ys, margin});
    })
    if (!rc && reduced) rc = reduce_into(output, scratch, reduction);
    return rc;
}

extern "C" THCUNN_API int thcunn_margin_ranking_loss_backward_input(
    thc_tensor *grad_input1, thc_tensor *grad_input2, const thc_tensor *grad_output,
    const thc_tensor *input1, const thc_tensor *input2, const thc_tensor *target, double margin,
    int reduction) {
    const char *fn = "margin_ranking_loss_backward_input";
    if (thcunn__check_runtime(fn) || check_pair(fn, input1, input2, target, reduction) ||
        check_same(fn, "input1", input1, "target", target) ||
        (grad_input1 && thcunn__check_like(fn, "grad_input1", grad_input1, input1)) ||
        (grad_input2 && thcunn__check_like(fn, "grad_input2", grad_input2, input1)))
        return thcunn_last_status();
    const int64_t n = thcunn__numel(input1);
    if (check_grad_output(fn, grad_output, n, input1->dtype, reduction))
        return thcunn_last_status();
    if (!grad_input1 && !grad_input2) return THC_OK;
    Held h;
    thc_tensor *a = h.contig(input1), *b = h.contig(input2), *y = h.contig(target);
    thc_tensor *gy = h.contig(grad_output);
    if (h.failed) return thcunn__from_thc();
    int64_t step;
    double scale;
    grad_scaling(reduction, n, &step, &scale);
    int rc;
    THCUNN_FLOATING(a->dtype, rc = for_each(fn, n, MarginBackwardFn<scalar_t>{
                                                       mdata<scalar_t>(grad_input1),
                                                       mdata<scalar_t>(grad_input2),
                                                       data<scalar_t>(gy), data<scalar_t>(a),
                                                       data<scalar_t>(b), data<scalar_t>(y),
                                                       step, scale, margin}))
    return rc;
}

// ---- cosine_embedding_loss ----------------------------------------------------------
// Row statistics without a thread looping over a whole row: an element-wise
// kernel writes x1*x2, x1^2 and x2^2 into a float64 (3, N, D) scratch and
// libTHC's reduction over D (a block per row on a GPU when rows are long)
// gives (3, N): dot, |x1|^2, |x2|^2.

namespace {

template <typename T> struct CosProductsFn {
    double *p;   // (3, M)
    const T *a, *b;
    int64_t M;
    THCUNN_HD void operator()(int64_t i) const {
        const double u = (double)a[i], v = (double)b[i];
        p[i] = u * v;
        p[M + i] = u * u;
        p[2 * M + i] = v * v;
    }
};

// loss of row r from its statistics s (3, N)
THCUNN_HD inline double cos_loss(const double *s, int64_t N, int64_t r, double yv,
                                 double margin) {
    const double c = s[r] / sqrt((s[N + r] + kCosineEps) * (s[2 * N + r] + kCosineEps));
    return yv == 1 ? 1 - c : yv == -1 ? (c - margin > 0 ? c - margin : 0) : 0;
}

template <typename T, typename O> struct CosForwardFn {
    O *out;
    const double *s;
    const T *y;
    int64_t N;
    double margin;
    THCUNN_HD void operator()(int64_t r) const {
        out[r] = (O)cos_loss(s, N, r, (double)y[r], margin);
    }
};

template <typename T> struct CosBackwardFn {
    T *g1, *g2;   // either may be NULL
    const double *s;
    const T *gy, *a, *b, *y;
    int64_t N, D, gy_step;
    double scale, margin;
    THCUNN_HD void operator()(int64_t i) const {
        const int64_t r = i / D;
        const double m1 = s[N + r] + kCosineEps, m2 = s[2 * N + r] + kCosineEps;
        const double denom = sqrt(m1 * m2), c = s[r] / denom, yv = (double)y[r];
        // d loss / d cos, times the incoming gradient
        double dc = yv == 1 ? -1.0 : (yv == -1 && c - margin > 0) ? 1.0 : 0.0;
        dc *= (double)gy[r * gy_step] * scale;
        // d cos / d x1 = x2 / denom - cos x1 / m1 (x2 alike)
        const double p = dc / denom, u = (double)a[i], v = (double)b[i];
        if (g1) g1[i] = (T)(p * v - dc * c / m1 * u);
        if (g2) g2[i] = (T)(p * u - dc * c / m2 * v);
    }
};

int cosine_geometry(const char *fn, const thc_tensor *x1, const thc_tensor *x2,
                    const thc_tensor *y, int reduction, int64_t *N, int64_t *D) {
    char a[256], b[256];
    if (check_pair(fn, x1, x2, y, reduction)) return thcunn_last_status();
    if (x1->ndim != 1 && x1->ndim != 2)
        return thcunn__error(THC_ERR_RUNTIME, "%s: 1D target tensor expects 2D input tensors, "
                             "or 0D target expects 1D inputs, but got input1 %s", fn,
                             thcunn__shape_of(x1, a));
    *N = x1->ndim == 2 ? x1->sizes[0] : 1;
    *D = x1->sizes[x1->ndim - 1];
    if (thcunn__check_float(fn, "target", y)) return thcunn_last_status();
    if (y->ndim != x1->ndim - 1 || (y->ndim == 1 && y->sizes[0] != *N)) {
        if (x1->ndim == 2)
            return thcunn__error(THC_ERR_RUNTIME, "%s: expected target of shape [%lld] for "
                                 "inputs %s, but got target %s", fn, (long long)*N,
                                 thcunn__shape_of(x1, a),
                                 thcunn__shape_of(y, b));
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected a 0-d target for inputs %s, but "
                             "got target %s", fn, thcunn__shape_of(x1, a),
                             thcunn__shape_of(y, b));
    }
    if (y->dtype != x1->dtype)
        return thcunn__error(THC_ERR_TYPE, "%s: expected target of scalar type %s but found %s",
                             fn, thcunn__type_name(x1->dtype), thcunn__type_name(y->dtype));
    return THC_OK;
}

// (3, N) float64 statistics of the rows of a and b (contiguous (N, D))
thc_tensor *cos_stats(const char *fn, const thc_tensor *a, const thc_tensor *b, int64_t N,
                      int64_t D, int *rc) {
    const int64_t sizes[3] = {3, N, D}, M = N * D;
    const int last = 2;
    thc_tensor *p = thc_empty(3, sizes, THC_FLOAT64);
    if (!p) {
        *rc = thcunn__from_thc();
        return NULL;
    }
    THCUNN_FLOATING(a->dtype, *rc = for_each(fn, M, CosProductsFn<scalar_t>{
                                                        data<double>(p), data<scalar_t>(a),
                                                        data<scalar_t>(b), M}))
    thc_tensor *s = *rc ? NULL : thc_reduce(THC_RED_SUM, p, 1, &last, 0, THC_FLOAT64);
    if (!*rc && !s) *rc = thcunn__from_thc();
    thc_tensor_release(p);
    return s;
}

}  // namespace

extern "C" THCUNN_API int thcunn_cosine_embedding_loss_forward(thc_tensor *output,
                                                               const thc_tensor *input1,
                                                               const thc_tensor *input2,
                                                               const thc_tensor *target,
                                                               double margin, int reduction) {
    const char *fn = "cosine_embedding_loss";
    int64_t N, D;
    if (thcunn__check_runtime(fn) ||
        cosine_geometry(fn, input1, input2, target, reduction, &N, &D) ||
        check_loss_output(fn, output, target, reduction))
        return thcunn_last_status();
    Held h;
    const bool reduced = reduction != THCUNN_REDUCTION_NONE;
    thc_tensor *a = h.contig(input1), *b = h.contig(input2), *y = h.contig(target);
    thc_tensor *scratch = reduced ? h.scratch(1, &N) : NULL;
    if (h.failed) return thcunn__from_thc();
    int rc = THC_OK;
    thc_tensor *s = h.hold(cos_stats(fn, a, b, N, D, &rc));
    if (rc) return rc;
    THCUNN_FLOATING(a->dtype, {
        const scalar_t *ys = data<scalar_t>(y);
        const double *ss = data<double>(s);
        rc = reduced ? for_each(fn, N, CosForwardFn<scalar_t, double>{data<double>(scratch), ss,
                                                                       ys, N, margin})
                     : for_each(fn, N, CosForwardFn<scalar_t, scalar_t>{data<scalar_t>(output),
                                                                         ss, ys, N, margin});
    })
    if (!rc && reduced) rc = reduce_into(output, scratch, reduction);
    return rc;
}

extern "C" THCUNN_API int thcunn_cosine_embedding_loss_backward_input(
    thc_tensor *grad_input1, thc_tensor *grad_input2, const thc_tensor *grad_output,
    const thc_tensor *input1, const thc_tensor *input2, const thc_tensor *target, double margin,
    int reduction) {
    const char *fn = "cosine_embedding_loss_backward_input";
    int64_t N, D;
    if (thcunn__check_runtime(fn) ||
        cosine_geometry(fn, input1, input2, target, reduction, &N, &D) ||
        (grad_input1 && thcunn__check_like(fn, "grad_input1", grad_input1, input1)) ||
        (grad_input2 && thcunn__check_like(fn, "grad_input2", grad_input2, input1)) ||
        check_grad_output(fn, grad_output, N, input1->dtype, reduction))
        return thcunn_last_status();
    if (!grad_input1 && !grad_input2) return THC_OK;
    Held h;
    thc_tensor *a = h.contig(input1), *b = h.contig(input2), *y = h.contig(target);
    thc_tensor *gy = h.contig(grad_output);
    if (h.failed) return thcunn__from_thc();
    int rc = THC_OK;
    thc_tensor *s = h.hold(cos_stats(fn, a, b, N, D, &rc));
    if (rc) return rc;
    int64_t step;
    double scale;
    grad_scaling(reduction, N, &step, &scale);
    THCUNN_FLOATING(a->dtype, rc = for_each(fn, N * D, CosBackwardFn<scalar_t>{
                                                           mdata<scalar_t>(grad_input1),
                                                           mdata<scalar_t>(grad_input2),
                                                           data<double>(s), data<scalar_t>(gy),
                                                           data<scalar_t>(a), data<scalar_t>(b),
                                                           data<scalar_t>(y), N, D, step, scale,
                                                           margin}))
    return rc;
}
