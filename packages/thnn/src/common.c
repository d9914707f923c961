/* Errors, version and the argument checks shared by every kernel. */
#include <stdio.h>
#include <string.h>

#include "th_meta.h" /* th_dtype_title */
#include "thnn_internal.h"

#ifndef THNN_VERSION_STRING
#define THNN_VERSION_STRING "0.0.0"
#endif

static __thread char last_message[1024];
static __thread int last_status;

int thnn__error(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    last_status = status;
    return status;
}

int thnn__from_th(const char *where) {
    int st = th_last_status();
    return thnn__error(st ? st : TH_ERR_RUNTIME, "%s: %s", where,
                       th_last_error());
}

/* at most this many blocks (their sums live on the stack) */
#define SUM_BLOCKS 256

typedef struct sum_job {
    thnn_sum_fn fn;
    void *ctx;
    int64_t n, block;
    double *part;
} sum_job;

static void sum_blocks(int64_t b0, int64_t b1, void *p) {
    const sum_job *j = p;
    for (int64_t b = b0; b < b1; b++) {
        const int64_t lo = b * j->block, hi = lo + j->block < j->n ? lo + j->block : j->n;
        j->part[b] = j->fn(lo, hi, j->ctx);
    }
}

double thnn__parallel_sum(int64_t n, int64_t cost, thnn_sum_fn fn, void *ctx) {
    if (n <= 0) return 0.0;
    if (cost < 1) cost = 1;
    int64_t block = cost >= THNN_GRAIN ? 1 : (THNN_GRAIN + cost - 1) / cost;
    if ((n + block - 1) / block > SUM_BLOCKS) block = (n + SUM_BLOCKS - 1) / SUM_BLOCKS;
    double part[SUM_BLOCKS];
    sum_job j = {fn, ctx, n, block, part};
    const int64_t nblocks = (n + block - 1) / block;
    th_parallel_for(nblocks, 1, sum_blocks, &j);
    double s = 0.0;
    for (int64_t b = 0; b < nblocks; b++) s += part[b];
    return s;
}

THNN_API const char *thnn_last_error(void) { return last_message; }
THNN_API int thnn_last_status(void) { return last_status; }
THNN_API void thnn_clear_error(void) {
    last_message[0] = '\0';
    last_status = TH_OK;
}
THNN_API int thnn_abi_version_major(void) { return THNN_ABI_VERSION_MAJOR; }
THNN_API int thnn_abi_version_minor(void) { return THNN_ABI_VERSION_MINOR; }
THNN_API const char *thnn_version(void) { return THNN_VERSION_STRING; }

const char *thnn__shape(const th_tensor *t, char *buf) {
    int pos = 0;
    buf[pos++] = '[';
    for (int i = 0; i < t->ndim && pos < 200; i++)
        pos += snprintf(buf + pos, 256 - pos, i ? ", %lld" : "%lld",
                        (long long)t->sizes[i]);
    buf[pos++] = ']';
    buf[pos] = '\0';
    return buf;
}

/* PyTorch's scalar type names, as its messages use them */
const char *thnn__dtype_name(int dtype) { return th_dtype_title(dtype); }

int thnn__check_float(const char *fn, const char *name, const th_tensor *t) {
    if (!t) return thnn__error(TH_ERR_VALUE, "%s: %s must not be NULL", fn, name);
    if (t->dtype != TH_FLOAT32 && t->dtype != TH_FLOAT64)
        return thnn__error(TH_ERR_TYPE,
                           "%s: expected %s of scalar type Float or Double but "
                           "found %s", fn, name, thnn__dtype_name(t->dtype));
    return TH_OK;
}

int thnn__check_dtype(const char *fn, const char *name, const th_tensor *t,
                      int dtype) {
    if (!t) return thnn__error(TH_ERR_VALUE, "%s: %s must not be NULL", fn, name);
    if (t->dtype != dtype)
        return thnn__error(TH_ERR_TYPE,
                           "%s: expected scalar type %s but found %s for %s",
                           fn, thnn__dtype_name(dtype),
                           thnn__dtype_name(t->dtype), name);
    return TH_OK;
}

int thnn__check_out(const char *fn, const char *name, const th_tensor *out,
                    int ndim, const int64_t *sizes, int dtype) {
    char a[256], b[256];
    if (!out) return thnn__error(TH_ERR_VALUE, "%s: %s must not be NULL", fn, name);
    int ok = out->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++) ok = out->sizes[i] == sizes[i];
    if (!ok) {
        th_tensor tmp;
        tmp.ndim = ndim;
        memcpy(tmp.sizes, sizes, (size_t)ndim * sizeof *sizes);
        return thnn__error(TH_ERR_RUNTIME, "%s: expected %s of shape %s but got %s",
                           fn, name, thnn__shape(&tmp, a), thnn__shape(out, b));
    }
    if (out->dtype != dtype)
        return thnn__error(TH_ERR_TYPE, "%s: expected %s of scalar type %s but "
                           "found %s", fn, name, thnn__dtype_name(dtype),
                           thnn__dtype_name(out->dtype));
    if (!th_is_contiguous(out))
        return thnn__error(TH_ERR_RUNTIME, "%s: %s must be contiguous", fn, name);
    return TH_OK;
}

int thnn__check_like(const char *fn, const char *name, const th_tensor *out,
                     const th_tensor *like) {
    return thnn__check_out(fn, name, out, like->ndim, like->sizes, like->dtype);
}

int thnn__check_vec(const char *fn, const char *name, const th_tensor *t,
                    int64_t n, int dtype) {
    if (!t) return TH_OK;
    if (t->ndim != 1 || t->sizes[0] != n) {
        char a[256];
        return thnn__error(TH_ERR_RUNTIME, "%s: expected %s of shape [%lld] "
                           "but got %s", fn, name, (long long)n, thnn__shape(t, a));
    }
    return thnn__check_dtype(fn, name, t, dtype);
}

th_tensor *thnn__contig(const th_tensor *t) {
    th_tensor *c = th_contiguous(t);
    if (!c) thnn__from_th("contiguous");
    return c;
}

void thnn__release(th_tensor *t) {
    if (t) th_tensor_release(t);
}

th_tensor *thnn__view(const th_tensor *t, int64_t offset, int ndim,
                      const int64_t *sizes, const int64_t *strides) {
    th_tensor *v = th_tensor_from_storage(t->storage, t->offset + offset, ndim,
                                          sizes, strides, t->dtype);
    if (!v) thnn__from_th("view");
    return v;
}

int thnn__size_overflow(const char *fn, const char *what) {
    return thnn__error(TH_ERR_RUNTIME, "%s: %s overflows int64", fn, what);
}

THNN_API int64_t thnn_window_output_size(int64_t in, int64_t kernel,
                                         int64_t stride, int64_t padding,
                                         int64_t dilation, int ceil_mode) {
    if (in < 0) {
        thnn__error(TH_ERR_VALUE, "input size must be non-negative, got %lld",
                    (long long)in);
        return -1;
    }
    if (kernel < 1 || stride < 1 || dilation < 1 || padding < 0) {
        thnn__error(TH_ERR_VALUE, "kernel size, stride and dilation must be "
                    "positive and padding non-negative, but got kernel=%lld "
                    "stride=%lld padding=%lld dilation=%lld", (long long)kernel,
                    (long long)stride, (long long)padding, (long long)dilation);
        return -1;
    }
    /* span = in + 2 * padding - dilation * (kernel - 1) - 1, checked */
    int64_t padded, extent, span;
    if (thnn__mul_ovf(padding, 2, &padded) || thnn__add_ovf(in, padded, &padded) ||
        thnn__mul_ovf(dilation, kernel - 1, &extent) || extent == INT64_MAX) {
        thnn__error(TH_ERR_RUNTIME, "window output size: input size %lld with "
                    "padding %lld, kernel %lld and dilation %lld overflows int64",
                    (long long)in, (long long)padding, (long long)kernel,
                    (long long)dilation);
        return -1;
    }
    span = padded - (extent + 1); /* both >= 0: cannot overflow */
    /* ceil mode keeps a window that overhangs the end: with span in
       (-stride, 0) that is one window (C's division rounds toward 0, the
       ceiling of a negative quotient) */
    if (span < 0 && !(ceil_mode && span > -stride)) {
        thnn__error(TH_ERR_RUNTIME, "Calculated output size is too small: "
                    "input size %lld (padded %lld) is smaller than the kernel "
                    "extent %lld", (long long)in, (long long)padded,
                    (long long)(extent + 1));
        return -1;
    }
    int64_t out = (ceil_mode && span > 0 ? (span - 1) / stride + 1 : span / stride) + 1;
    /* the last window must start inside the input or its left padding
       (in + padding <= padded fits; a start beyond int64 is past it) */
    int64_t start;
    if (ceil_mode && (thnn__mul_ovf(out - 1, stride, &start) || start >= in + padding))
        out--;
    return out;
}
