/* Thread-local last error, library facts, and the no-CUDA device entry
 * points. */
#include <stdio.h>
#include <string.h>

#include "thc_internal.h"

static char cuda_error_text[512];

/* The message is libTH's thread-local error, so that libTH's metadata
 * functions and libTHC's own checks report through one place. */
static int set_message(int status, const char *fmt, va_list ap) {
    char message[1024];
    vsnprintf(message, sizeof message, fmt, ap);
    return th_error_set(status, message);
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
THC_API const char *thc_last_error(void) { return th_last_error(); }
THC_API int thc_last_status(void) { return th_last_status(); }
THC_API void thc_clear_error(void) { th_clear_error(); }

THC_API int thc_abi_version_major(void) { return THC_ABI_VERSION_MAJOR; }
THC_API int thc_abi_version_minor(void) { return THC_ABI_VERSION_MINOR; }
THC_API const char *thc_version(void) { return THC_VERSION_STRING; }
