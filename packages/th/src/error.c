/* Thread-local last error and small message helpers. */
#include <stdio.h>

#include "th_internal.h"

static __thread char last_message[1024];
static __thread int last_status;

static void set_message(int status, const char *fmt, va_list ap) {
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    last_status = status;
}

int th__error(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_message(status, fmt, ap);
    va_end(ap);
    return status;
}

void *th__error_null(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_message(status, fmt, ap);
    va_end(ap);
    return NULL;
}

int th_error_set(int status, const char *message) {
    snprintf(last_message, sizeof last_message, "%s", message ? message : "");
    last_status = status;
    return status;
}

const char *th_last_error(void) { return last_message; }
int th_last_status(void) { return last_status; }
void th_clear_error(void) {
    last_message[0] = '\0';
    last_status = TH_OK;
}

const char *th__shape_str(int ndim, const int64_t *sizes, char *buf) {
    int pos = 0;
    buf[pos++] = '[';
    for (int i = 0; i < ndim && pos < 200; i++)
        pos += snprintf(buf + pos, 256 - pos, i ? ", %lld" : "%lld",
                        (long long)sizes[i]);
    buf[pos++] = ']';
    buf[pos] = '\0';
    return buf;
}
TH_EXPORT_AS(th_shape_str, th__shape_str);

int th__wrap_dim(int dim, int ndim) {
    int n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n) {
        th__error(TH_ERR_INDEX,
                  "Dimension out of range (expected to be in range of "
                  "[%d, %d], but got %d)", -n, n - 1, dim);
        return -1;
    }
    return dim < 0 ? dim + n : dim;
}
TH_EXPORT_AS(th_wrap_dim, th__wrap_dim);

int th_abi_version_major(void) { return TH_ABI_VERSION_MAJOR; }
int th_abi_version_minor(void) { return TH_ABI_VERSION_MINOR; }
const char *th_version(void) { return TH_VERSION_STRING; }

int th_has_blas(void) {
#ifdef TH_NO_BLAS
    return 0;
#else
    return 1;
#endif
}

int th_has_openmp(void) { return 0; }
