/* A tiny assertion harness for the C test programs of libTH and of the
 * libraries built on it (libTHNN, libTHC, libTHCUNN), installed with th.h.
 *
 * Include the library's own header first and define CHECK_LIB as its
 * function prefix (th, thnn, thc or thcunn; th when not defined): a failed
 * check prints <CHECK_LIB>_last_error(), and ERR reads the library's last
 * status.  For test programs only: not part of libTH's API or ABI.
 */
#ifndef TH_CHECK_H
#define TH_CHECK_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CHECK_LIB
#define CHECK_LIB th
#endif
#define CHECK_PASTE_(lib, name) lib##name
#define CHECK_PASTE(lib, name) CHECK_PASTE_(lib, name)
#define CHECK_LAST_ERROR() CHECK_PASTE(CHECK_LIB, _last_error)()
#define CHECK_LAST_STATUS() CHECK_PASTE(CHECK_LIB, _last_status)()
#define CHECK_CLEAR_ERROR() CHECK_PASTE(CHECK_LIB, _clear_error)()

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                          \
    do {                                                                     \
        check_count++;                                                       \
        if (!(cond)) {                                                       \
            check_failures++;                                                \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n",    \
                    __FILE__, __LINE__, #cond, CHECK_LAST_ERROR());          \
        }                                                                    \
    } while (0)

#define CHECK_CLOSE(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

/* Literal arrays of sizes, doubles and int64 values. */
#define SZ(...) ((const int64_t[]){__VA_ARGS__})
#define DV(...) ((const double[]){__VA_ARGS__})
#define IV(...) ((const int64_t[]){__VA_ARGS__})

/* `failed` (a status, or a test such as "returned NULL") is nonzero, the
 * library's last status is `status` and its message contains `text`. */
#define ERR(failed, status, text)                                            \
    do {                                                                     \
        CHECK_CLEAR_ERROR();                                                 \
        CHECK((failed) != 0 && CHECK_LAST_STATUS() == (status) &&            \
              strstr(CHECK_LAST_ERROR(), (text)) != NULL);                   \
    } while (0)

/* Reports and returns the exit status for main(). */
static int check_report(const char *name) {
    printf("%s: %d passed, %d failed\n", name, check_count - check_failures,
           check_failures);
    return check_failures ? 1 : 0;
}
#endif
