/* Helpers shared by libTHC's C and CUDA sources. */
#ifndef THC_INTERNAL_H
#define THC_INTERNAL_H
#include <stdarg.h>
#include "thc.h"

#ifdef __cplusplus
extern "C" {
#endif

#define THC_API __attribute__((visibility("default")))

/* Sets the thread-local error and returns `status` (or NULL). */
int thc__error(int status, const char *fmt, ...);
void *thc__error_null(int status, const char *fmt, ...);
/* Keeps the CUDA runtime's text for the last device failure. */
void thc__set_cuda_error_text(const char *text);

#ifdef __cplusplus
}
#endif
#endif
