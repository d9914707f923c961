/* Errors, library facts and argument checks. */
#include <stdarg.h>
#include <stdio.h>

#include "thcunn_internal.h"

static __thread char last_message[1024];
static __thread int last_status;

int thcunn__error(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    last_status = status;
    return status;
}

int thcunn__from_thc(void) {
    int status = thc_last_status();
    return thcunn__error(status ? status : THC_ERR_RUNTIME, "%s", thc_last_error());
}

THCUNN_API const char *thcunn_last_error(void) { return last_message; }
THCUNN_API int thcunn_last_status(void) { return last_status; }
THCUNN_API void thcunn_clear_error(void) {
    last_message[0] = '\0';
    last_status = THC_OK;
}
THCUNN_API int thcunn_abi_version_major(void) { return THCUNN_ABI_VERSION_MAJOR; }
THCUNN_API int thcunn_abi_version_minor(void) { return THCUNN_ABI_VERSION_MINOR; }
THCUNN_API const char *thcunn_version(void) { return THCUNN_VERSION_STRING; }

#ifdef THCUNN_NO_CUDA
THCUNN_API int thcunn_has_cuda(void) { return 0; }
#else
THCUNN_API int thcunn_has_cuda(void) { return 1; }
#endif

int thcunn__check_runtime(const char *what) {
    if (thcunn_has_cuda() && !thc_has_cuda())
        return thcunn__error(THC_ERR_RUNTIME, "%s: libTHCUNN was built with CUDA but the loaded "
                             "libTHC was not; install an ember-thc built with CUDA", what);
    if (!thcunn_has_cuda() && !thc_is_emulated())
        return thcunn__error(THC_ERR_RUNTIME, "%s: libTHCUNN was built without CUDA "
                             "(EMBER_NO_CUDA=1); it runs only on libTHC's emulated device "
                             "(EMBER_THC_EMULATE=1): rebuild ember-thcunn with nvcc", what);
    return THC_OK;
}

const char *thcunn__shape_str(int ndim, const int64_t *sizes, char *buf) {
    int pos = 0;
    buf[pos++] = '[';
    for (int i = 0; i < ndim && pos < 200; i++)
        pos += snprintf(buf + pos, 256 - pos, i ? ", %lld" : "%lld", (long long)sizes[i]);
    buf[pos++] = ']';
    buf[pos] = '\0';
    return buf;
}

int thcunn__size_overflow(const char *fn, const char *what) {
    return thcunn__error(THC_ERR_RUNTIME, "%s: %s overflows int64", fn, what);
}

int thcunn__planes(const char *fn, const thc_tensor *t, int from, int to, int64_t *planes) {
    int64_t n = 1;
    for (int i = from; i < to; i++)
        if (thcunn__mul_ovf(n, t->sizes[i], &n))
            return thcunn__size_overflow(fn, "the number of planes");
    *planes = n;
    return THC_OK;
}

int thcunn__window_fits(const char *fn, int64_t in, int64_t kernel, int64_t padding,
                        int64_t dilation) {
    int64_t padded, extent;
    if (thcunn__mul_ovf(padding, 2, &padded) || thcunn__add_ovf(in, padded, &padded) ||
        thcunn__mul_ovf(dilation, kernel - 1, &extent) || thcunn__add_ovf(extent, 1, &extent))
        return thcunn__error(THC_ERR_RUNTIME, "%s: input size %lld with padding %lld, kernel "
                             "%lld and dilation %lld overflows int64", fn, (long long)in,
                             (long long)padding, (long long)kernel, (long long)dilation);
    return THC_OK;
}

int64_t thcunn__window_count(int64_t in, int64_t kernel, int64_t stride, int64_t padding,
                             int64_t dilation, int ceil_mode) {
    /* both terms fit and are >= 0: the difference cannot overflow */
    int64_t span = in + 2 * padding - (dilation * (kernel - 1) + 1);
    return (ceil_mode && span > 0 ? (span - 1) / stride + 1 : span / stride) + 1;
}

int64_t thcunn__numel(const thc_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->sizes[i];
    return n;
}

/* Kernels run on libTHC's current device, which cannot reach memory of
 * another one: on a machine with several devices a tensor elsewhere is an
 * error (not a fault).  The device count is taken once. */
static int on_current_device(const char *what, const char *arg, const thc_tensor *t) {
    static int several = -1;
    if (several < 0) {
        int n = 0;
        thc_device_count(&n);
        several = n > 1;
    }
    int current = 0;
    if (!several || thc_get_device(&current) || current == t->storage->device) return THC_OK;
    return thcunn__error(THC_ERR_RUNTIME, "%s: %s is on cuda:%d but the current device is "
                         "cuda:%d; make cuda:%d current first", what, arg, t->storage->device,
                         current, t->storage->device);
}

int thcunn__check_tensor(const char *what, const char *arg, const thc_tensor *t, int floating) {
    if (!t) return thcunn__error(THC_ERR_VALUE, "%s: %s is NULL", what, arg);
    if (t->storage->device < 0)
        return thcunn__error(THC_ERR_RUNTIME, "%s: %s is not a tensor on a CUDA device", what,
                             arg);
    if (on_current_device(what, arg, t)) return thcunn_last_status();
    if (floating && t->dtype != THC_FLOAT32 && t->dtype != THC_FLOAT64)
        return thcunn__error(THC_ERR_TYPE, "%s: %s must be float32 or float64, got %s", what,
                             arg, thc_dtype_name(t->dtype));
    return THC_OK;
}

int thcunn__check_output(const char *what, const char *arg, const thc_tensor *t, int ndim,
                         const int64_t *sizes, int dtype) {
    if (thcunn__check_tensor(what, arg, t, 0)) return thcunn_last_status();
    int same = t->ndim == ndim && t->dtype == dtype;
    for (int i = 0; same && i < ndim; i++) same = t->sizes[i] == sizes[i];
    char b1[256], b2[256];
    if (!same)
        return thcunn__error(THC_ERR_RUNTIME, "%s: %s must be a %s tensor of shape %s, got %s %s",
                             what, arg, thc_dtype_name(dtype), thcunn__shape_str(ndim, sizes, b1),
                             thc_dtype_name(t->dtype), thcunn__shape_str(t->ndim, t->sizes, b2));
    if (!thc_is_contiguous(t))
        return thcunn__error(THC_ERR_RUNTIME, "%s: %s must be contiguous", what, arg);
    return THC_OK;
}

/* ---- checks in libTHNN's words, shared by the kernel families ---------- */

const char *thcunn__type_name(int dtype) {
    static const char *names[] = {"Float", "Double", "Half", "BFloat16", "Char",
                                  "Byte",  "Short",  "Int",  "Long",     "Bool"};
    return dtype >= 0 && dtype < THC_NUM_DTYPES ? names[dtype] : "?";
}

const char *thcunn__shape_of(const thc_tensor *t, char *buf) {
    return thcunn__shape_str(t->ndim, t->sizes, buf);
}

int thcunn__thc_failed(const char *fn) {
    int st = thc_last_status();
    return thcunn__error(st ? st : THC_ERR_RUNTIME, "%s: %s", fn, thc_last_error());
}

int thcunn__check_device(const char *fn, const char *name, const thc_tensor *t) {
    if (!t) return thcunn__error(THC_ERR_VALUE, "%s: %s must not be NULL", fn, name);
    if (!t->storage || t->storage->device < 0)
        return thcunn__error(THC_ERR_RUNTIME, "%s: %s is not a tensor on a CUDA device", fn,
                             name);
    return on_current_device(fn, name, t);
}

int thcunn__check_float(const char *fn, const char *name, const thc_tensor *t) {
    if (thcunn__check_device(fn, name, t)) return thcunn_last_status();
    if (t->dtype != THC_FLOAT32 && t->dtype != THC_FLOAT64)
        return thcunn__error(THC_ERR_TYPE, "%s: expected %s of scalar type Float or Double but "
                             "found %s", fn, name, thcunn__type_name(t->dtype));
    return THC_OK;
}

int thcunn__check_out(const char *fn, const char *name, const thc_tensor *t, int ndim,
                      const int64_t *sizes, int dtype) {
    char a[256], b[256];
    if (thcunn__check_device(fn, name, t)) return thcunn_last_status();
    int ok = t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++) ok = t->sizes[i] == sizes[i];
    if (!ok)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected %s of shape %s but got %s", fn, name,
                             thcunn__shape_str(ndim, sizes, a), thcunn__shape_of(t, b));
    if (t->dtype != dtype)
        return thcunn__error(THC_ERR_TYPE, "%s: expected %s of scalar type %s but found %s", fn,
                             name, thcunn__type_name(dtype), thcunn__type_name(t->dtype));
    if (!thc_is_contiguous(t))
        return thcunn__error(THC_ERR_RUNTIME, "%s: %s must be contiguous", fn, name);
    return THC_OK;
}

int thcunn__check_like(const char *fn, const char *name, const thc_tensor *t,
                       const thc_tensor *like) {
    if (thcunn__check_device(fn, name, t)) return thcunn_last_status();
    return thcunn__check_out(fn, name, t, like->ndim, like->sizes, like->dtype);
}

int thcunn__check_vec(const char *fn, const char *name, const thc_tensor *t, int64_t n,
                      int dtype) {
    char a[256];
    if (!t) return THC_OK;
    if (thcunn__check_device(fn, name, t)) return thcunn_last_status();
    if (t->ndim != 1 || t->sizes[0] != n)
        return thcunn__error(THC_ERR_RUNTIME, "%s: expected %s of shape [%lld] but got %s", fn,
                             name, (long long)n, thcunn__shape_of(t, a));
    if (t->dtype != dtype)
        return thcunn__error(THC_ERR_TYPE, "%s: expected scalar type %s but found %s for %s", fn,
                             thcunn__type_name(dtype), thcunn__type_name(t->dtype), name);
    return THC_OK;
}

thc_tensor *thcunn__contig(const thc_tensor *t) {
    thc_tensor *c = thc_contiguous(t);
    if (!c) thcunn__from_thc();
    return c;
}

void thcunn__release_all(thc_tensor **ts, int n) {
    for (int i = 0; i < n; i++) thc_tensor_release(ts[i]);
}
