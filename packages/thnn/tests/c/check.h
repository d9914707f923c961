/* A tiny assertion harness for libTHNN's C test programs. */
#ifndef THNN_CHECK_H
#define THNN_CHECK_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "thnn.h"

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                          \
    do {                                                                     \
        check_count++;                                                       \
        if (!(cond)) {                                                       \
            check_failures++;                                                \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n",    \
                    __FILE__, __LINE__, #cond, thnn_last_error());           \
        }                                                                    \
    } while (0)

#define CHECK_CLOSE(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

static int check_report(const char *name) {
    printf("%s: %d passed, %d failed\n", name, check_count - check_failures,
           check_failures);
    return check_failures ? 1 : 0;
}
#endif
