/* The kernels declared in softplus.h, for float32 and float64 tensors of any
 * strides (inputs are made contiguous; outputs must already be). */
#include "softplus.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static __thread char message[256];   /* per thread, like libTH's own */

static int fail(const char *what) {
    snprintf(message, sizeof message, "%s", what);
    return 1;
}

const char *softplus_last_error(void) { return message; }

static int same_shape(const th_tensor *a, const th_tensor *b) {
    return a->ndim == b->ndim &&
           memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) == 0;
}

/* checks shared by both directions: one float dtype, one shape, a writable
 * contiguous output */
static int check(const th_tensor *out, const th_tensor *a, const th_tensor *b,
                 double beta) {
    if (a->dtype != TH_FLOAT32 && a->dtype != TH_FLOAT64)
        return fail("softplus: expected a float32 or float64 tensor");
    if (out->dtype != a->dtype || (b && b->dtype != a->dtype))
        return fail("softplus: all tensors must have the same dtype");
    if (!same_shape(out, a) || (b && !same_shape(b, a)))
        return fail("softplus: all tensors must have the same shape");
    if (!th_is_contiguous(out))
        return fail("softplus: the output tensor must be contiguous");
    if (!(beta > 0))
        return fail("softplus: beta must be positive");
    return 0;
}

/* log(1 + exp(z)) without overflow: max(z, 0) + log1p(exp(-|z|)) */
static double softplus(double z) { return fmax(z, 0.0) + log1p(exp(-fabs(z))); }
static double sigmoid(double z) {
    return z >= 0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z));
}

#define LOOP(T, BODY)                                                  \
    do {                                                               \
        T *o = (T *)th_data_ptr(out);                                  \
        const T *p = (const T *)th_data_ptr(xc);                       \
        const T *q = gc ? (const T *)th_data_ptr(gc) : NULL;           \
        for (int64_t i = 0; i < n; i++) BODY;                          \
        (void)q;                                                       \
    } while (0)

int softplus_forward(th_tensor *out, const th_tensor *x, double beta) {
    if (!out || !x) return fail("softplus_forward: NULL tensor");
    if (check(out, x, NULL, beta)) return 1;
    th_tensor *xc = th_contiguous(x), *gc = NULL;
    if (!xc) return fail(th_last_error());
    int64_t n = th_numel(x);
    if (x->dtype == TH_FLOAT64)
        LOOP(double, o[i] = softplus(beta * p[i]) / beta);
    else
        LOOP(float, o[i] = (float)(softplus(beta * (double)p[i]) / beta));
    th_tensor_release(xc);
    return 0;
}

int softplus_backward(th_tensor *grad_x, const th_tensor *grad_out,
                      const th_tensor *x, double beta) {
    th_tensor *out = grad_x;
    if (!out || !grad_out || !x) return fail("softplus_backward: NULL tensor");
    if (check(out, x, grad_out, beta)) return 1;
    th_tensor *xc = th_contiguous(x);
    th_tensor *gc = xc ? th_contiguous(grad_out) : NULL;
    if (!gc) {
        fail(th_last_error());
        th_tensor_release(xc);
        return 1;
    }
    int64_t n = th_numel(x);
    if (x->dtype == TH_FLOAT64)
        LOOP(double, o[i] = q[i] * sigmoid(beta * p[i]));
    else
        LOOP(float, o[i] = (float)((double)q[i] * sigmoid(beta * (double)p[i])));
    th_tensor_release(gc);
    th_tensor_release(xc);
    return 0;
}
