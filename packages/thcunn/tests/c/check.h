/* A tiny assertion harness for libTHCUNN's C test programs. */
#ifndef THCUNN_CHECK_H
#define THCUNN_CHECK_H
#include <stdio.h>
#include <string.h>
#include "thcunn.h"

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                          \
    do {                                                                     \
        check_count++;                                                       \
        if (!(cond)) {                                                       \
            check_failures++;                                                \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n",    \
                    __FILE__, __LINE__, #cond, thcunn_last_error());            \
        }                                                                    \
    } while (0)

/* The call returns `status` and leaves a message containing `text`. */
#define ERR(call, status, text)                                              \
    do {                                                                     \
        thcunn_clear_error();                                                   \
        CHECK((call) == (status) && thcunn_last_status() == (status) &&         \
              strstr(thcunn_last_error(), (text)) != NULL);                     \
    } while (0)

static int check_report(const char *name) {
    printf("%s: %d passed, %d failed\n", name, check_count - check_failures,
           check_failures);
    return check_failures ? 1 : 0;
}
#endif
