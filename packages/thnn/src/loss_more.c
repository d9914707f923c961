/* kl_div, margin_ranking_loss and cosine_embedding_loss, with reductions
 * none / mean / sum ('batchmean' is sum divided by the batch size, done
 * by the caller).  Inputs of one shape and dtype (the caller broadcasts);
 * double accumulators; OpenMP over elements (rows for cosine). */
#include <math.h>

#include "thnn_internal.h"

static inline double ld(const th_tensor *t, int64_t k) {
    return t->dtype == TH_FLOAT32 ? (double)((const float *)thnn__data(t))[k]
                                  : ((const double *)thnn__data(t))[k];
}
static inline void st(th_tensor *t, int64_t k, double v) {
    if (t->dtype == TH_FLOAT32) ((float *)thnn__data(t))[k] = (float)v;
    else ((double *)thnn__data(t))[k] = v;
}

static int check_reduction(const char *fn, int reduction) {
    if (reduction < THNN_REDUCTION_NONE || reduction > THNN_REDUCTION_SUM)
        return thnn__error(TH_ERR_VALUE, "%s: %d is not a valid value for "
                           "reduction (0 none, 1 mean, 2 sum)", fn, reduction);
    return TH_OK;
}

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

/* grad_output element i after the reduction's scaling */
static inline double grad_at(const th_tensor *gy, int64_t i, int reduction, int64_t n) {
    if (reduction == THNN_REDUCTION_NONE) return ld(gy, i);
    return reduction == THNN_REDUCTION_MEAN ? ld(gy, 0) / (double)n : ld(gy, 0);
}

static void reduce_store(th_tensor *out, double sum, int64_t n, int reduction) {
    if (reduction == THNN_REDUCTION_MEAN) st(out, 0, n ? sum / (double)n : NAN);
    else if (reduction == THNN_REDUCTION_SUM) st(out, 0, sum);
}

/* ---- kl_div: target * (log(target) - input), or with log_target
 * exp(target) * (target - input); a target of 0 contributes 0. ---------- */
static inline double kl(double x, double t, int log_target) {
    if (log_target) return exp(t) * (t - x);
    return t > 0 ? t * (log(t) - x) : t == 0 ? 0.0 : NAN; /* log of t < 0 */
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
    double sum = 0;
    #pragma omp parallel for reduction(+:sum) schedule(static) if(n > THNN_GRAIN)
    for (int64_t i = 0; i < n; i++) {
        const double l = kl(ld(x, i), ld(t, i), log_target);
        if (reduction == THNN_REDUCTION_NONE) st(output, i, l);
        else sum += l;
    }
    reduce_store(output, sum, n, reduction);
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
    #pragma omp parallel for schedule(static) if(n > THNN_GRAIN)
    for (int64_t i = 0; i < n; i++) {
        const double g = grad_at(gy, i, reduction, n), xv = ld(x, i), tv = ld(t, i);
        if (log_target) {
            const double e = exp(tv);
            if (grad_input) st(grad_input, i, -g * e);
            if (grad_target) st(grad_target, i, g * e * (tv - xv + 1));
        } else {
            if (grad_input) st(grad_input, i, -g * tv);
            if (grad_target) st(grad_target, i, tv > 0 ? g * (log(tv) - xv + 1) : 0.0);
        }
    }
done:
    thnn__release(x); thnn__release(t); thnn__release(gy);
    return rc;
}

/* ---- margin_ranking_loss: max(0, -target * (input1 - input2) + margin) */
static int check_pair(const char *fn, const th_tensor *x1, const th_tensor *x2,
                      const th_tensor *y, int reduction) {
    int rc;
    if ((rc = check_reduction(fn, reduction))) return rc;
    if ((rc = thnn__check_float(fn, "input1", x1))) return rc;
    if ((rc = check_same(fn, "input1", x1, "input2", x2))) return rc;
    if (!y) return thnn__error(TH_ERR_VALUE, "%s: target must not be NULL", fn);
    return TH_OK;
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
    double sum = 0;
    #pragma omp parallel for reduction(+:sum) schedule(static) if(n > THNN_GRAIN)
    for (int64_t i = 0; i < n; i++) {
        double l = -ld(y, i) * (ld(a, i) - ld(b, i)) + margin;
        if (l < 0) l = 0;
        if (reduction == THNN_REDUCTION_NONE) st(output, i, l);
        else sum += l;
    }
    reduce_store(output, sum, n, reduction);
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
    #pragma omp parallel for schedule(static) if(n > THNN_GRAIN)
    for (int64_t i = 0; i < n; i++) {
        const double yv = ld(y, i);
        const int active = -yv * (ld(a, i) - ld(b, i)) + margin > 0;
        const double g = active ? grad_at(gy, i, reduction, n) * yv : 0.0;
        if (grad_input1) st(grad_input1, i, -g);
        if (grad_input2) st(grad_input2, i, g);
    }
done:
    thnn__release(a); thnn__release(b); thnn__release(y); thnn__release(gy);
    return rc;
}

/* ---- cosine_embedding_loss over rows of (N, D) or one (D) pair:
 * cos = <x1, x2> / sqrt((|x1|^2 + eps) (|x2|^2 + eps)), eps = 1e-12;
 * target 1: 1 - cos, target -1: max(0, cos - margin), other targets 0. */
#define COSINE_EPS 1e-12

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

/* dot, |x1|^2 + eps, |x2|^2 + eps of row r */
static inline void cos_row(const th_tensor *a, const th_tensor *b, int64_t r, int64_t D,
                           double *dot, double *m1, double *m2) {
    double s = 0, s1 = 0, s2 = 0;
    for (int64_t d = 0; d < D; d++) {
        const double u = ld(a, r * D + d), v = ld(b, r * D + d);
        s += u * v; s1 += u * u; s2 += v * v;
    }
    *dot = s; *m1 = s1 + COSINE_EPS; *m2 = s2 + COSINE_EPS;
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
    double sum = 0;
    #pragma omp parallel for reduction(+:sum) schedule(static) if(N * D > THNN_GRAIN)
    for (int64_t r = 0; r < N; r++) {
        double dot, m1, m2;
        cos_row(a, b, r, D, &dot, &m1, &m2);
        const double c = dot / sqrt(m1 * m2), yv = ld(y, r);
        const double l = yv == 1 ? 1 - c : yv == -1 ? (c - margin > 0 ? c - margin : 0) : 0;
        if (reduction == THNN_REDUCTION_NONE) st(output, r, l);
        else sum += l;
    }
    reduce_store(output, sum, N, reduction);
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
    #pragma omp parallel for schedule(static) if(N * D > THNN_GRAIN)
    for (int64_t r = 0; r < N; r++) {
        double dot, m1, m2;
        cos_row(a, b, r, D, &dot, &m1, &m2);
        const double denom = sqrt(m1 * m2), c = dot / denom, yv = ld(y, r);
        /* d loss / d cos */
        double dc = yv == 1 ? -1.0 : (yv == -1 && c - margin > 0) ? 1.0 : 0.0;
        dc *= grad_at(gy, r, reduction, N);
        for (int64_t d = 0; d < D; d++) {
            const double u = ld(a, r * D + d), v = ld(b, r * D + d);
            if (grad_input1) st(grad_input1, r * D + d, dc * (v / denom - c * u / m1));
            if (grad_input2) st(grad_input2, r * D + d, dc * (u / denom - c * v / m2));
        }
    }
done:
    thnn__release(a); thnn__release(b); thnn__release(y); thnn__release(gy);
    return rc;
}
