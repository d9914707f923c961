/* The few device-runtime calls libTHC's tensor code makes, implemented by
 * device.cu for the CUDA runtime and by no_cuda.c for host-only builds
 * (no device, or the emulated device of host memory).  Internal. */
#ifndef THC_RUNTIME_H
#define THC_RUNTIME_H
#include <stddef.h>
#include "thc.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { THC__H2D = 0, THC__D2H = 1, THC__D2D = 2 };
/* or'ed into a kind: queue the copy and return without waiting for it */
enum { THC__NO_WAIT = 8 };

/* Ordered after the work queued on `stream`; H2D and D2H return once the
 * host side of the copy is done. */
int thc__memcpy(void *dst, const void *src, size_t nbytes, int kind, void *stream);
/* Device-to-device between two devices, queued on `stream` (a stream of
 * src_device); without peer access the driver stages it. */
int thc__memcpy_peer(void *dst, int dst_device, const void *src, int src_device, size_t nbytes,
                     void *stream);
/* Waits for the work queued on `stream`. */
int thc__stream_wait(void *stream);
/* The device functions the allocators run on (CUDA's or the emulated
 * device's), or NULL with an error when there is no device. */
const thc_device_ops *thc__device_ops(void);
/* Event functions for device `device`'s allocator (its events are made
 * and recorded with that device current), or NULL. */
const thc_event_ops *thc__event_ops(int device);
/* Checks the last kernel launch; returns THC_OK or an error naming `what`. */
int thc__launch_status(const char *what);

#ifdef __cplusplus
}
#endif
#endif
