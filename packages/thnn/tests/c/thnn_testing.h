/* Helpers of libTHNN's C test programs (one program per layer family):
 * tensors of reproducible pseudo-random values, int64 vectors, element
 * reads. */
#ifndef THNN_TESTING_H
#define THNN_TESTING_H
#include <string.h>

#include "check.h"

static inline th_tensor *make(int ndim, const int64_t *sizes, int dtype, unsigned seed) {
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

static inline th_tensor *longs(int64_t n, const int64_t *v) {
    th_tensor *t = th_empty(1, &n, TH_INT64);
    if (t) memcpy(th_data_ptr(t), v, (size_t)n * sizeof *v);
    return t;
}

static inline double at(const th_tensor *t, int64_t i) {
    double v = 0;
    th_get_double(t, i, &v);
    return v;
}

static inline double dot(const th_tensor *a, const th_tensor *b) {
    double s = 0;
    for (int64_t i = 0; i < th_numel(a); i++) s += at(a, i) * at(b, i);
    return s;
}

#endif
