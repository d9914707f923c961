/* Storages: device memory from each device's caching allocator, wrapped
 * memory of other libraries, and host scalars; reference counts; the
 * per-device allocators. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "thc_internal.h"

#define MAX_DEVICES 64

static thc_allocator *allocators[MAX_DEVICES];
static pthread_mutex_t allocators_lock = PTHREAD_MUTEX_INITIALIZER;

THC_API thc_allocator *thc_device_allocator(int device) {
    int n = 0;
    thc_device_count(&n);
    if (device < 0 || device >= n || device >= MAX_DEVICES)
        return thc__error_null(THC_ERR_RUNTIME,
                               "CUDA device %d does not exist (%d device%s%s%s)", device, n,
                               n == 1 ? "" : "s", n ? "" : ": ",
                               n ? "" : thc_cuda_error_text());
    pthread_mutex_lock(&allocators_lock);
    thc_allocator *a = allocators[device];
    if (!a) {
        const thc_device_ops *ops = thc__device_ops();
        const thc_event_ops *events = thc__event_ops(device);
        a = allocators[device] = ops ? thc_allocator_new(ops) : NULL;
        if (a && events) thc_allocator_set_event_ops(a, events);
    }
    pthread_mutex_unlock(&allocators_lock);
    return a;
}

static thc_storage *new_struct(void) {
    thc_storage *s = calloc(1, sizeof *s);
    if (!s) return thc__error_null(THC_ERR_MEMORY, "not enough host memory for a storage");
    s->refcount = 1;
    return s;
}

thc_storage *thc__storage_new(int64_t nbytes) {
    /* callers pass checked counts (checked.h); a negative one would reach
       the allocator as a huge size_t */
    if (nbytes < 0)
        return thc__error_null(THC_ERR_VALUE, "storage of %lld bytes: the size must "
                               "not be negative", (long long)nbytes);
    int device = 0;
    if (thc_get_device(&device)) return NULL;
    thc_allocator *a = thc_device_allocator(device);
    if (!a) return NULL;
    thc_storage *s = new_struct();
    if (!s) return NULL;
    if (thc_allocator_malloc(a, &s->data, (size_t)nbytes, thc__stream())) {
        free(s);
        return NULL;
    }
    s->nbytes = nbytes;
    s->device = device;
    return s;
}

/* host scalars: a few bytes of host memory, aligned for any dtype */
static thc_storage *host_storage(void) {
    thc_storage *s = new_struct();
    if (!s) return NULL;
    s->data = calloc(1, 16);
    if (!s->data) {
        free(s);
        return thc__error_null(THC_ERR_MEMORY, "not enough host memory for a scalar");
    }
    s->nbytes = 16;
    s->device = -1;
    return s;
}

THC_API thc_storage *thc_storage_wrap(void *data, int64_t nbytes, int device,
                                      thc_release_fn release, void *ctx) {
    if (nbytes < 0) return thc__error_null(THC_ERR_VALUE, "thc_storage_wrap: nbytes < 0");
    if (!data && nbytes > 0)
        return thc__error_null(THC_ERR_VALUE, "thc_storage_wrap: data is NULL");
    if (device < 0) return thc__error_null(THC_ERR_VALUE, "thc_storage_wrap: device < 0");
    thc_storage *s = new_struct();
    if (!s) return NULL;
    s->data = data;
    s->nbytes = nbytes;
    s->device = device;
    s->release = release;
    s->release_ctx = ctx;
    s->flags = 1;   /* wrapped: not the allocator's */
    return s;
}

THC_API void thc_storage_retain(thc_storage *s) {
    if (s) __atomic_add_fetch(&s->refcount, 1, __ATOMIC_RELAXED);
}

THC_API void thc_storage_release(thc_storage *s) {
    if (!s || __atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    if (s->device < 0) {
        free(s->data);
    } else if (s->flags & 1) {
        if (s->release) s->release(s->release_ctx, s->data);
    } else if (s->data) {
        /* the allocator keeps the block for its stream: no wait here */
        thc_allocator_free(allocators[s->device], s->data);
    }
    free(s);
}

static thc_tensor *host_scalar(int dtype) {
    if (thc__check_dtype(dtype)) return NULL;
    thc_storage *s = host_storage();
    if (!s) return NULL;
    thc_tensor *t = thc__wrap(s, 0, 0, NULL, NULL, dtype);
    thc_storage_release(s);
    if (t) t->flags = THC_TENSOR_WRAPPED_NUMBER;
    return t;
}

THC_API thc_tensor *thc_scalar_double(double v, int dtype) {
    thc_tensor *t = host_scalar(dtype);
    if (t) thc__store_double(thc__ptr(t), dtype, v);
    return t;
}

THC_API thc_tensor *thc_scalar_int64(int64_t v, int dtype) {
    thc_tensor *t = host_scalar(dtype);
    if (!t) return NULL;
    char *p = thc__ptr(t);
    switch (dtype) {
    case THC_INT64: memcpy(p, &v, 8); break;
    case THC_INT32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); } break;
    case THC_INT16: { int16_t x = (int16_t)v; memcpy(p, &x, 2); } break;
    case THC_INT8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); } break;
    case THC_UINT8: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); } break;
    default: thc__store_double(p, dtype, (double)v);
    }
    return t;
}

/* 1 when the machine has more than one device (counted once) */
static int several_devices(void) {
    static int several = -1;
    if (several < 0) {
        int n = 0;
        thc_device_count(&n);
        several = n > 1;
    }
    return several;
}

int thc__check_device(const char *what, const char *arg, const thc_tensor *t) {
    if (!t) return thc__error(THC_ERR_VALUE, "%s: %s is NULL", what, arg);
    int device = t->storage->device, current = 0;
    if (device < 0)
        return thc__error(THC_ERR_RUNTIME, "%s: %s is a host scalar, not a tensor on a "
                          "CUDA device", what, arg);
    /* work runs on the current device: a kernel there cannot reach memory of
     * another device (no peer access), so that is an error, not a fault */
    if (several_devices()) {
        if (thc_get_device(&current)) return thc_last_status();
        if (current != device)
            return thc__error(THC_ERR_RUNTIME, "%s: %s is on cuda:%d but the current device is "
                              "cuda:%d; make cuda:%d current first (set_device(%d), or a "
                              "`with device(%d):` block)", what, arg, device, current, device,
                              device, device);
    }
    return THC_OK;
}

/* ---- host <-> device ------------------------------------------------ */
/* `flags`: 0, or THC__NO_WAIT to queue the transfer and return at once */
static int from_host(thc_tensor *dst, const void *host, int flags, const char *what) {
    if (thc__check_device(what, "dst", dst)) return thc_last_status();
    int64_t n = thc_numel(dst), item = thc_dtype_itemsize(dst->dtype);
    if (n == 0) return THC_OK;
    if (!host) return thc__error(THC_ERR_VALUE, "%s: host is NULL", what);
    if (thc_is_contiguous(dst)) {
        if (thc__memcpy(thc__ptr(dst), host, (size_t)(n * item), THC__H2D | flags,
                        thc__stream()))
            return thc_last_status();
    } else {   /* through a contiguous device buffer, on the same stream */
        thc_tensor *tmp = thc__empty_like(dst, dst->dtype);
        if (!tmp) return thc_last_status();
        int rc = thc__memcpy(thc__ptr(tmp), host, (size_t)(n * item), THC__H2D | flags,
                             thc__stream());
        if (!rc) rc = thc_copy(dst, tmp);
        thc_tensor_release(tmp);   /* reused only by later work on this stream */
        if (rc) return rc;
    }
    thc__bump_version(dst);
    return THC_OK;
}

static int to_host(void *host, const thc_tensor *src, int flags, const char *what) {
    if (!src) return thc__error(THC_ERR_VALUE, "%s: src is NULL", what);
    int64_t n = thc_numel(src), item = thc_dtype_itemsize(src->dtype);
    if (n == 0) return THC_OK;
    if (!host) return thc__error(THC_ERR_VALUE, "%s: host is NULL", what);
    if (thc__on_host(src)) {
        memcpy(host, thc__ptr(src), (size_t)item);
        return THC_OK;
    }
    if (thc__check_device(what, "src", src)) return thc_last_status();
    thc_tensor *c = thc_contiguous(src);
    if (!c) return thc_last_status();
    int rc = thc__memcpy(host, thc__ptr(c), (size_t)(n * item), THC__D2H | flags,
                         thc__stream());
    thc_tensor_release(c);
    return rc;
}

THC_API int thc_copy_from_host(thc_tensor *dst, const void *host) {
    return from_host(dst, host, 0, "copy_from_host");
}

THC_API int thc_copy_to_host(void *host, const thc_tensor *src) {
    return to_host(host, src, 0, "copy_to_host");
}

THC_API int thc_copy_from_host_async(thc_tensor *dst, const void *host) {
    return from_host(dst, host, THC__NO_WAIT, "copy_from_host_async");
}

THC_API int thc_copy_to_host_async(void *host, const thc_tensor *src) {
    return to_host(host, src, THC__NO_WAIT, "copy_to_host_async");
}

static int element(const thc_tensor *t, int64_t linear, char *buf) {
    int64_t n = thc_numel(t);
    if (linear < 0 || linear >= n)
        return thc__error(THC_ERR_INDEX, "index %lld is out of bounds for a tensor of %lld "
                          "elements", (long long)linear, (long long)n);
    int64_t off = 0;
    for (int i = t->ndim - 1; i >= 0; i--) {
        off += (linear % t->sizes[i]) * t->strides[i];
        linear /= t->sizes[i];
    }
    int64_t item = thc_dtype_itemsize(t->dtype);
    const char *p = thc__ptr(t) + off * item;
    if (thc__on_host(t)) {
        memcpy(buf, p, (size_t)item);
        return THC_OK;
    }
    if (thc__check_device("item", "the tensor", t)) return thc_last_status();
    return thc__memcpy(buf, p, (size_t)item, THC__D2H, thc__stream());
}

THC_API int thc_get_double(const thc_tensor *t, int64_t linear, double *out) {
    char buf[16];
    if (element(t, linear, buf)) return thc_last_status();
    *out = thc__load_double(buf, t->dtype);
    return THC_OK;
}

THC_API int thc_get_int64(const thc_tensor *t, int64_t linear, int64_t *out) {
    char buf[16];
    if (element(t, linear, buf)) return thc_last_status();
    *out = thc__load_int64(buf, t->dtype);
    return THC_OK;
}

double thc__scalar_double(const thc_tensor *t) {
    double v = 0;
    thc_get_double(t, 0, &v);
    return v;
}

int64_t thc__scalar_int64(const thc_tensor *t) {
    int64_t v = 0;
    thc_get_int64(t, 0, &v);
    return v;
}

/* ---- the current stream: one per thread and device (a stream belongs to
 * the device it was made on) --------------------------------------------- */
static __thread void *current_streams[MAX_DEVICES];

static int stream_slot(void) {
    int device = 0;
    if (several_devices() && (thc_get_device(&device) || device < 0 || device >= MAX_DEVICES))
        device = 0;
    return device;
}

void *thc__stream(void) { return current_streams[stream_slot()]; }

THC_API void *thc_current_stream(void) { return current_streams[stream_slot()]; }

THC_API int thc_set_current_stream(void *stream) {
    current_streams[stream_slot()] = stream;
    return THC_OK;
}

THC_API int thc_tensor_record_stream(const thc_tensor *t, void *stream) {
    if (thc__check_device("record_stream", "the tensor", t)) return thc_last_status();
    thc_storage *s = t->storage;
    if (s->flags & 1) return THC_OK;   /* wrapped memory: its owner's business */
    return thc_allocator_record_stream(allocators[s->device], s->data, stream);
}
