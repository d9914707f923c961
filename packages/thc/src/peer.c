/* Copies between devices (copy_ and to('cuda:N') of a tensor on another
 * device): the source is made contiguous in the destination's dtype on
 * its own device, moved in one peer copy, then copied into the
 * destination as any copy (its strides, broadcasting).  Plain C over the
 * runtime calls, so the ordering logic runs on the emulated devices too. */
#include <string.h>

#include "runtime.h"
#include "thc_internal.h"

/* The work queued on `waiter` from now on waits for what `stream` has
 * queued so far (streams of any devices; `stream`'s device is current). */
static int order_after(void *waiter, void *stream) {
    void *event = NULL;
    int rc = thc_event_create(&event, 0);
    if (!rc) rc = thc_event_record(event, stream);
    if (!rc) rc = thc_stream_wait_event(waiter, event);
    if (event) thc_event_destroy(event);   /* released once it has happened */
    return rc;
}

/* One contiguous same-dtype copy from src (device s) into dst (device d,
 * current), on s's current stream: after the work queued on d's current
 * stream (dst's memory may still be in use there) and before the work
 * queued there later (which reads dst). */
static int peer_copy(thc_tensor *dst, const thc_tensor *src) {
    int d = dst->storage->device, s = src->storage->device;
    size_t nbytes = (size_t)thc_numel(dst) * thc_dtype_itemsize(dst->dtype);
    if (nbytes == 0) return THC_OK;
    void *dst_stream = thc__stream();
    int rc = thc_set_device(s);
    void *src_stream = rc ? NULL : thc__stream();
    if (!rc) {
        thc_set_device(d);
        rc = order_after(src_stream, dst_stream);
        thc_set_device(s);
    }
    if (!rc) rc = thc__memcpy_peer(thc__ptr(dst), d, thc__ptr(src), s, nbytes, src_stream);
    if (!rc) rc = order_after(dst_stream, src_stream);
    int back = thc_set_device(d);
    return rc ? rc : back;
}

int thc__copy_between_devices(thc_tensor *dst, const thc_tensor *src) {
    int d = dst->storage->device, s = src->storage->device;
    /* on the source's device: contiguous, in the destination's dtype */
    int rc = thc_set_device(s);
    thc_tensor *c = NULL;
    if (!rc) c = src->dtype == dst->dtype ? thc_contiguous(src) : thc_to_dtype(src, dst->dtype);
    int back = thc_set_device(d);
    if (!c) return rc ? rc : thc_last_status();
    if (back) {
        thc_tensor_release(c);
        return back;
    }
    int direct = thc_is_contiguous(dst) && dst->ndim == c->ndim &&
                 memcmp(dst->sizes, c->sizes, (size_t)dst->ndim * sizeof *dst->sizes) == 0;
    thc_tensor *landed = direct ? dst : thc_empty(c->ndim, c->sizes, dst->dtype);
    rc = landed ? peer_copy(landed, c) : thc_last_status();
    thc_tensor_release(c);   /* stream order keeps its memory until the copy ran */
    if (!rc && !direct) rc = thc_copy(dst, landed);
    if (!direct) thc_tensor_release(landed);
    if (!rc) thc__bump_version(dst);
    return rc;
}
