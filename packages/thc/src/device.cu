// Device query and the CUDA runtime's device function table for the
// caching allocator.
#include <cuda_runtime.h>
#include <stdio.h>

#include "runtime.h"
#include "thc_internal.h"

// Keeps the runtime's text and sets the last error; returns the status.
// The runtime also keeps a failed call's error as the thread's last one:
// read it out, or the next launch check would blame an innocent kernel
// (a sticky error, one that spoils the context, stays anyway).
static int cuda_fail(const char *what, cudaError_t err) {
    (void)cudaGetLastError();
    thc__set_cuda_error_text(cudaGetErrorString(err));
    return thc__error(err == cudaErrorMemoryAllocation ? THC_ERR_MEMORY : THC_ERR_RUNTIME,
                      "%s: CUDA error %d (%s): %s", what, (int)err, cudaGetErrorName(err),
                      cudaGetErrorString(err));
}

extern "C" THC_API int thc_has_cuda(void) { return 1; }

extern "C" THC_API const char *thc_arch_list(void) { return THC_ARCH_LIST; }

extern "C" THC_API int thc_device_count(int *count) {
    if (!count) return thc__error(THC_ERR_VALUE, "thc_device_count: count is NULL");
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        // no driver or no GPU: zero devices, the reason kept for messages
        thc__set_cuda_error_text(cudaGetErrorString(err));
        cudaGetLastError();
        n = 0;
    }
    *count = n;
    return THC_OK;
}

extern "C" THC_API int thc_get_device(int *device) {
    if (!device) return thc__error(THC_ERR_VALUE, "thc_get_device: device is NULL");
    cudaError_t err = cudaGetDevice(device);
    return err == cudaSuccess ? THC_OK : cuda_fail("thc_get_device", err);
}

extern "C" THC_API int thc_set_device(int device) {
    int n = 0;
    thc_device_count(&n);
    if (device < 0 || device >= n)
        return thc__error(THC_ERR_VALUE, "thc_set_device: device %d does not exist (%d device%s%s%s)",
                          device, n, n == 1 ? "" : "s", n ? "" : ": ",
                          n ? "" : thc_cuda_error_text());
    cudaError_t err = cudaSetDevice(device);
    return err == cudaSuccess ? THC_OK : cuda_fail("thc_set_device", err);
}

extern "C" THC_API int thc_synchronize(void) {
    cudaError_t err = cudaDeviceSynchronize();
    return err == cudaSuccess ? THC_OK : cuda_fail("thc_synchronize", err);
}

static int cuda_malloc(void *, void **ptr, size_t nbytes) {
    cudaError_t err = cudaMalloc(ptr, nbytes);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();   // not sticky: clear it so later calls work
        return THC_ERR_MEMORY;
    }
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaMalloc", err);
}

static int cuda_free(void *, void *ptr) {
    cudaError_t err = cudaFree(ptr);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaFree", err);
}

static int cuda_stream_synchronize(void *, void *stream) {
    cudaError_t err = cudaStreamSynchronize((cudaStream_t)stream);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaStreamSynchronize", err);
}

// A stream or event query's answer: 1 done, 0 not yet, -1 on an error.
static int query_result(const char *what, cudaError_t err) {
    if (err == cudaSuccess) return 1;
    if (err == cudaErrorNotReady) {   // not an error, but recorded as one: clear it
        (void)cudaGetLastError();
        return 0;
    }
    cuda_fail(what, err);
    return -1;
}

static int cuda_stream_query(void *, void *stream) {
    return query_result("cudaStreamQuery", cudaStreamQuery((cudaStream_t)stream));
}

static int cuda_mem_info(void *, size_t *free_bytes, size_t *total_bytes) {
    cudaError_t err = cudaMemGetInfo(free_bytes, total_bytes);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaMemGetInfo", err);
}

static const thc_device_ops cuda_ops = {
    NULL, cuda_malloc, cuda_free, cuda_stream_synchronize, cuda_stream_query, cuda_mem_info,
};

extern "C" THC_API const thc_device_ops *thc_cuda_device_ops(void) { return &cuda_ops; }

extern "C" THC_API int thc_is_emulated(void) { return 0; }

extern "C" const thc_device_ops *thc__device_ops(void) { return &cuda_ops; }

// ---- the allocators' events: ctx is the allocator's device ------------------
static int cuda_event_record(void *ctx, void *stream, void **event) {
    int device = (int)(intptr_t)ctx, current = 0;
    cudaError_t err = cudaGetDevice(&current);
    if (err == cudaSuccess && current != device) err = cudaSetDevice(device);
    cudaEvent_t e = NULL;
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    if (err == cudaSuccess) err = cudaEventRecord(e, (cudaStream_t)stream);
    if (err != cudaSuccess && e) cudaEventDestroy(e);
    if (current != device) cudaSetDevice(current);
    if (err != cudaSuccess) return cuda_fail("the allocator's cudaEventRecord", err);
    *event = (void *)e;
    return THC_OK;
}

// the rest are the public event functions (thc.h), whatever the device
static int cuda_event_query(void *, void *event) { return thc_event_query(event); }
static int cuda_event_sync(void *, void *event) { return thc_event_synchronize(event); }
static int cuda_event_destroy(void *, void *event) { return thc_event_destroy(event); }

extern "C" const thc_event_ops *thc__event_ops(int device) {
    static thc_event_ops ops[64];   // filled under storage.c's allocators lock
    if (device < 0 || device >= 64) return NULL;
    ops[device] = {(void *)(intptr_t)device, cuda_event_record, cuda_event_query,
                   cuda_event_sync, cuda_event_destroy};
    return &ops[device];
}

extern "C" int thc__memcpy(void *dst, const void *src, size_t nbytes, int kind, void *stream) {
    static const cudaMemcpyKind kinds[] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                                           cudaMemcpyDeviceToDevice};
    int k = kind & ~THC__NO_WAIT;
    cudaError_t err = cudaMemcpyAsync(dst, src, nbytes, kinds[k], (cudaStream_t)stream);
    // unless asked not to, the host side is done before returning (the
    // caller may reuse or read its host buffer at once)
    if (err == cudaSuccess && k != THC__D2D && !(kind & THC__NO_WAIT))
        err = cudaStreamSynchronize((cudaStream_t)stream);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaMemcpyAsync", err);
}

extern "C" int thc__memcpy_peer(void *dst, int dst_device, const void *src, int src_device,
                                size_t nbytes, void *stream) {
    cudaError_t err = cudaMemcpyPeerAsync(dst, dst_device, src, src_device, nbytes,
                                          (cudaStream_t)stream);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaMemcpyPeerAsync", err);
}

extern "C" int thc__stream_wait(void *stream) {
    cudaError_t err = cudaStreamSynchronize((cudaStream_t)stream);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaStreamSynchronize", err);
}

extern "C" int thc__launch_status(const char *what) {
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) return THC_OK;
    thc__set_cuda_error_text(cudaGetErrorString(err));
    return thc__error(THC_ERR_RUNTIME, "%s: kernel launch failed: %s", what,
                      cudaGetErrorString(err));
}

// ---- streams, events, page-locked host memory ----------------------------------
extern "C" THC_API int thc_stream_create(void **stream) {
    if (!stream) return thc__error(THC_ERR_VALUE, "thc_stream_create: stream is NULL");
    cudaError_t err = cudaStreamCreateWithFlags((cudaStream_t *)stream, cudaStreamNonBlocking);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaStreamCreate", err);
}

extern "C" THC_API int thc_stream_destroy(void *stream) {
    if (!stream) return THC_OK;   // the default stream is not ours to destroy
    cudaError_t err = cudaStreamDestroy((cudaStream_t)stream);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaStreamDestroy", err);
}

extern "C" THC_API int thc_stream_synchronize(void *stream) {
    return cuda_stream_synchronize(NULL, stream);
}

extern "C" THC_API int thc_stream_query(void *stream) { return cuda_stream_query(NULL, stream); }

extern "C" THC_API int thc_stream_wait_event(void *stream, void *event) {
    cudaError_t err = cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaStreamWaitEvent", err);
}

extern "C" THC_API int thc_event_create(void **event, int enable_timing) {
    if (!event) return thc__error(THC_ERR_VALUE, "thc_event_create: event is NULL");
    cudaError_t err = cudaEventCreateWithFlags((cudaEvent_t *)event,
                                               enable_timing ? cudaEventDefault
                                                             : cudaEventDisableTiming);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaEventCreate", err);
}

extern "C" THC_API int thc_event_destroy(void *event) {
    cudaError_t err = cudaEventDestroy((cudaEvent_t)event);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaEventDestroy", err);
}

extern "C" THC_API int thc_event_record(void *event, void *stream) {
    cudaError_t err = cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaEventRecord", err);
}

extern "C" THC_API int thc_event_synchronize(void *event) {
    cudaError_t err = cudaEventSynchronize((cudaEvent_t)event);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaEventSynchronize", err);
}

extern "C" THC_API int thc_event_query(void *event) {
    return query_result("cudaEventQuery", cudaEventQuery((cudaEvent_t)event));
}

extern "C" THC_API int thc_event_elapsed_ms(void *start, void *end, float *ms) {
    if (!ms) return thc__error(THC_ERR_VALUE, "thc_event_elapsed_ms: ms is NULL");
    cudaError_t err = cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaEventElapsedTime", err);
}

extern "C" THC_API int thc_host_alloc(void **ptr, size_t nbytes) {
    if (!ptr) return thc__error(THC_ERR_VALUE, "thc_host_alloc: ptr is NULL");
    cudaError_t err = cudaHostAlloc(ptr, nbytes ? nbytes : 1, cudaHostAllocDefault);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        return thc__error(THC_ERR_MEMORY, "cannot allocate %zu bytes of page-locked host memory",
                          nbytes);
    }
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaHostAlloc", err);
}

extern "C" THC_API int thc_host_free(void *ptr) {
    cudaError_t err = cudaFreeHost(ptr);
    return err == cudaSuccess ? THC_OK : cuda_fail("cudaFreeHost", err);
}

extern "C" THC_API int thc_device_properties(int device, thc_device_props *out) {
    if (!out) return thc__error(THC_ERR_VALUE, "thc_device_properties: out is NULL");
    int n = 0;
    thc_device_count(&n);
    if (device < 0 || device >= n)
        return thc__error(THC_ERR_VALUE, "device %d does not exist (%d device%s)", device, n,
                          n == 1 ? "" : "s");
    cudaDeviceProp p;
    cudaError_t err = cudaGetDeviceProperties(&p, device);
    if (err != cudaSuccess) return cuda_fail("cudaGetDeviceProperties", err);
    snprintf(out->name, sizeof out->name, "%s", p.name);
    out->total_memory = (int64_t)p.totalGlobalMem;
    out->major = p.major;
    out->minor = p.minor;
    out->multi_processor_count = p.multiProcessorCount;
    return THC_OK;
}

extern "C" THC_API int thc_mem_get_info(int64_t *free_bytes, int64_t *total_bytes) {
    if (!free_bytes || !total_bytes)
        return thc__error(THC_ERR_VALUE, "thc_mem_get_info: NULL argument");
    size_t f = 0, t = 0;
    int rc = cuda_mem_info(NULL, &f, &t);
    *free_bytes = (int64_t)f;
    *total_bytes = (int64_t)t;
    return rc;
}
