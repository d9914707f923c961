/* group_norm over (N, C, *): channels split into G groups of C/G, each
 * (sample, group) normalized over its C/G * L elements, then the
 * per-channel affine.  OpenMP over (sample, group) in the forward and
 * the input backward, over channels in the parameter backward; double
 * accumulators for both dtypes. */
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

typedef struct gn_geom {
    int64_t N, C, G, D, L; /* D = C / G channels per group, L spatial */
} gn_geom;

static int geometry(const char *fn, const th_tensor *input, int64_t num_groups,
                    gn_geom *g) {
    char a[256];
    int rc = thnn__check_float(fn, "input", input);
    if (rc) return rc;
    if (input->ndim < 2)
        return thnn__error(TH_ERR_RUNTIME, "%s: Expected at least 2 dimensions for "
                           "input tensor but received %d (input of shape %s)", fn,
                           input->ndim, thnn__shape(input, a));
    g->N = input->sizes[0]; g->C = input->sizes[1]; g->G = num_groups; g->L = 1;
    if (num_groups < 1)
        return thnn__error(TH_ERR_VALUE, "%s: num_groups must be positive, got %lld",
                           fn, (long long)num_groups);
    if (g->C % num_groups)
        return thnn__error(TH_ERR_RUNTIME, "Expected number of channels in input to "
                           "be divisible by num_groups, but got input of shape %s "
                           "and num_groups=%lld", thnn__shape(input, a),
                           (long long)num_groups);
    g->D = g->C / num_groups;
    for (int i = 2; i < input->ndim; i++) g->L *= input->sizes[i];
    return TH_OK;
}

/* save_mean / save_rstd: (N, G) of the input's dtype */
static int check_stats(const char *fn, const th_tensor *mean, const th_tensor *rstd,
                       const gn_geom *g, int dtype) {
    const int64_t s[2] = {g->N, g->G};
    int rc;
    if ((rc = thnn__check_out(fn, "save_mean", mean, 2, s, dtype))) return rc;
    return thnn__check_out(fn, "save_rstd", rstd, 2, s, dtype);
}

static int check_grad(const char *fn, const th_tensor *gy, const th_tensor *x) {
    char a[256], b[256];
    int rc = thnn__check_float(fn, "grad_output", gy);
    if (rc) return rc;
    int ok = gy->ndim == x->ndim && gy->dtype == x->dtype;
    for (int i = 0; ok && i < x->ndim; i++) ok = gy->sizes[i] == x->sizes[i];
    if (!ok)
        return thnn__error(TH_ERR_RUNTIME, "%s: grad_output %s (%s) does not match "
                           "input %s (%s)", fn, thnn__shape(gy, a),
                           thnn__dtype_name(gy->dtype), thnn__shape(x, b),
                           thnn__dtype_name(x->dtype));
    return TH_OK;
}

THNN_API int thnn_group_norm_forward(th_tensor *output, th_tensor *save_mean,
                                     th_tensor *save_rstd, const th_tensor *input,
                                     const th_tensor *weight, const th_tensor *bias,
                                     int64_t num_groups, double eps) {
    static const char fn[] = "group_norm";
    gn_geom g;
    int rc;
    if ((rc = geometry(fn, input, num_groups, &g))) return rc;
    const int dt = input->dtype;
    if ((rc = thnn__check_like(fn, "output", output, input))) return rc;
    if ((rc = check_stats(fn, save_mean, save_rstd, &g, dt))) return rc;
    if ((rc = thnn__check_vec(fn, "weight", weight, g.C, dt))) return rc;
    if ((rc = thnn__check_vec(fn, "bias", bias, g.C, dt))) return rc;
    th_tensor *x = thnn__contig(input);
    th_tensor *w = weight ? thnn__contig(weight) : NULL, *b = bias ? thnn__contig(bias) : NULL;
    if (!x || (weight && !w) || (bias && !b)) { rc = thnn_last_status(); goto done; }
    const int64_t rows = g.N * g.G, len = g.D * g.L;
    #pragma omp parallel for schedule(static) if(rows * len > THNN_GRAIN)
    for (int64_t r = 0; r < rows; r++) {
        /* the group's elements are contiguous: channels r%G*D.. of sample r/G */
        const int64_t base = r * len, c0 = (r % g.G) * g.D;
        double s = 0, ss = 0;
        for (int64_t k = 0; k < len; k++) s += ld(x, base + k);
        const double mean = len ? s / (double)len : 0.0;
        for (int64_t k = 0; k < len; k++) {
            double d = ld(x, base + k) - mean;
            ss += d * d;
        }
        const double rstd = 1.0 / sqrt((len ? ss / (double)len : 0.0) + eps);
        st(save_mean, r, mean);
        st(save_rstd, r, rstd);
        for (int64_t j = 0; j < g.D; j++) {
            const double scale = (w ? ld(w, c0 + j) : 1.0) * rstd;
            const double shift = (b ? ld(b, c0 + j) : 0.0) - mean * scale;
            for (int64_t i = 0; i < g.L; i++) {
                const int64_t k = base + j * g.L + i;
                st(output, k, ld(x, k) * scale + shift);
            }
        }
    }
done:
    thnn__release(x); thnn__release(w); thnn__release(b);
    return rc;
}

THNN_API int thnn_group_norm_backward_input(th_tensor *grad_input,
                                            const th_tensor *grad_output,
                                            const th_tensor *input,
                                            const th_tensor *weight,
                                            const th_tensor *save_mean,
                                            const th_tensor *save_rstd,
                                            int64_t num_groups) {
    static const char fn[] = "group_norm_backward_input";
    gn_geom g;
    int rc;
    if ((rc = geometry(fn, input, num_groups, &g))) return rc;
    const int dt = input->dtype;
    if ((rc = check_grad(fn, grad_output, input))) return rc;
    if ((rc = thnn__check_vec(fn, "weight", weight, g.C, dt))) return rc;
    if ((rc = thnn__check_like(fn, "grad_input", grad_input, input))) return rc;
    if (!save_mean || !save_rstd)
        return thnn__error(TH_ERR_VALUE, "%s: save_mean and save_rstd are needed", fn);
    th_tensor *x = thnn__contig(input), *gy = thnn__contig(grad_output);
    th_tensor *w = weight ? thnn__contig(weight) : NULL;
    th_tensor *mt = thnn__contig(save_mean), *rt = thnn__contig(save_rstd);
    if (!x || !gy || (weight && !w) || !mt || !rt) { rc = thnn_last_status(); goto done; }
    if ((rc = check_stats(fn, mt, rt, &g, dt))) goto done;
    const int64_t rows = g.N * g.G, len = g.D * g.L;
    #pragma omp parallel for schedule(static) if(rows * len > THNN_GRAIN)
    for (int64_t r = 0; r < rows; r++) {
        const int64_t base = r * len, c0 = (r % g.G) * g.D;
        const double mean = ld(mt, r), rstd = ld(rt, r);
        /* with u = grad_output * weight and xh the normalized input:
         * grad_input = rstd * (u - mean(u) - xh * mean(u * xh)) */
        double su = 0, sux = 0;
        for (int64_t j = 0; j < g.D; j++) {
            const double wc = w ? ld(w, c0 + j) : 1.0;
            for (int64_t i = 0; i < g.L; i++) {
                const int64_t k = base + j * g.L + i;
                const double u = ld(gy, k) * wc;
                su += u;
                sux += u * (ld(x, k) - mean) * rstd;
            }
        }
        const double mu = su / (double)len, mux = sux / (double)len;
        for (int64_t j = 0; j < g.D; j++) {
            const double wc = w ? ld(w, c0 + j) : 1.0;
            for (int64_t i = 0; i < g.L; i++) {
                const int64_t k = base + j * g.L + i;
                const double xh = (ld(x, k) - mean) * rstd;
                st(grad_input, k, rstd * (ld(gy, k) * wc - mu - xh * mux));
            }
        }
    }
done:
    thnn__release(x); thnn__release(gy); thnn__release(w);
    thnn__release(mt); thnn__release(rt);
    return rc;
}

THNN_API int thnn_group_norm_backward_params(th_tensor *grad_weight,
                                             th_tensor *grad_bias,
                                             const th_tensor *grad_output,
                                             const th_tensor *input,
                                             const th_tensor *save_mean,
                                             const th_tensor *save_rstd,
                                             int64_t num_groups) {
    static const char fn[] = "group_norm_backward_params";
    gn_geom g;
    int rc;
    if ((rc = geometry(fn, input, num_groups, &g))) return rc;
    const int dt = input->dtype;
    if ((rc = check_grad(fn, grad_output, input))) return rc;
    if (grad_weight && (rc = thnn__check_out(fn, "grad_weight", grad_weight, 1, &g.C, dt))) return rc;
    if (grad_bias && (rc = thnn__check_out(fn, "grad_bias", grad_bias, 1, &g.C, dt))) return rc;
    if (!save_mean || !save_rstd)
        return thnn__error(TH_ERR_VALUE, "%s: save_mean and save_rstd are needed", fn);
    th_tensor *x = thnn__contig(input), *gy = thnn__contig(grad_output);
    th_tensor *mt = thnn__contig(save_mean), *rt = thnn__contig(save_rstd);
    if (!x || !gy || !mt || !rt) { rc = thnn_last_status(); goto done; }
    if ((rc = check_stats(fn, mt, rt, &g, dt))) goto done;
    #pragma omp parallel for schedule(static) if(g.N * g.C * g.L > THNN_GRAIN)
    for (int64_t c = 0; c < g.C; c++) {
        double sw = 0, sb = 0;
        for (int64_t n = 0; n < g.N; n++) {
            const int64_t r = n * g.G + c / g.D;
            const double mean = ld(mt, r), rstd = ld(rt, r);
            for (int64_t i = 0; i < g.L; i++) {
                const int64_t k = (n * g.C + c) * g.L + i;
                const double gv = ld(gy, k);
                sb += gv;
                sw += gv * (ld(x, k) - mean) * rstd;
            }
        }
        if (grad_weight) st(grad_weight, c, sw);
        if (grad_bias) st(grad_bias, c, sb);
    }
done:
    thnn__release(x); thnn__release(gy); thnn__release(mt); thnn__release(rt);
    return rc;
}
