/* A tiny assertion harness for libTH's C test programs. */
#ifndef TH_CHECK_H
#define TH_CHECK_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "th.h"

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                          \
    do {                                                                     \
        check_count++;                                                       \
        if (!(cond)) {                                                       \
            check_failures++;                                                \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n",    \
                    __FILE__, __LINE__, #cond, th_last_error());             \
        }                                                                    \
    } while (0)

#define CHECK_CLOSE(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

#define SZ(...) ((const int64_t[]){__VA_ARGS__})
#define DV(...) ((const double[]){__VA_ARGS__})
#define IV(...) ((const int64_t[]){__VA_ARGS__})

/* 1 if t has the given shape and values (NaN matches NaN). */
static inline int same(const th_tensor *t, int ndim, const int64_t *sizes,
                       const double *vals) {
    if (!t || t->ndim != ndim) return 0;
    for (int i = 0; i < ndim; i++)
        if (t->sizes[i] != sizes[i]) return 0;
    int64_t n = th_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v;
        if (th_get_double(t, i, &v) != TH_OK) return 0;
        if (isnan(vals[i]) ? !isnan(v) : v != vals[i]) {
            fprintf(stderr, "  element %lld: got %g, want %g\n", (long long)i,
                    v, vals[i]);
            return 0;
        }
    }
    return 1;
}

/* The call fails with `status` and a message containing `text`. */
#define ERR(call, status, text)                                               \
    do {                                                                      \
        th_clear_error();                                                     \
        CHECK((call) && th_last_status() == (status) &&                       \
              strstr(th_last_error(), (text)) != NULL);                       \
    } while (0)

/* Reports and returns the exit status for main(). */
static int check_report(const char *name) {
    printf("%s: %d passed, %d failed\n", name, check_count - check_failures,
           check_failures);
    return check_failures ? 1 : 0;
}
#endif
