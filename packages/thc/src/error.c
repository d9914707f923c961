/* Thread-local last error, library facts, and the no-CUDA device entry
 * points. */
#include <stdio.h>
#include <string.h>

#include "thc_internal.h"

static __thread char last_message[1024];
static __thread int last_status;
static char cuda_error_text[512];

static void set_message(int status, const char *fmt, va_list ap) {
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    last_status = status;
}

int thc__error(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_message(status, fmt, ap);
    va_end(ap);
    return status;
}

void *thc__error_null(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_message(status, fmt, ap);
    va_end(ap);
    return NULL;
}

void thc__set_cuda_error_text(const char *text) {
    snprintf(cuda_error_text, sizeof cuda_error_text, "%s", text ? text : "");
}

THC_API const char *thc_cuda_error_text(void) { return cuda_error_text; }
THC_API const char *thc_last_error(void) { return last_message; }
THC_API int thc_last_status(void) { return last_status; }
THC_API void thc_clear_error(void) {
    last_message[0] = '\0';
    last_status = THC_OK;
}

THC_API int thc_abi_version_major(void) { return THC_ABI_VERSION_MAJOR; }
THC_API int thc_abi_version_minor(void) { return THC_ABI_VERSION_MINOR; }
THC_API const char *thc_version(void) { return THC_VERSION_STRING; }
