/* Caching device allocator, in plain C over a table of device functions.
 *
 * Policy (see README "Caching allocator"):
 *  - requests are rounded up to 512 bytes;
 *  - rounded requests under 1 MiB come from the small pool, whose segments
 *    are 2 MiB; larger ones from the large pool, whose segments are the
 *    request rounded up to 2 MiB;
 *  - a free block bigger than the request is split (small pool: when 512
 *    bytes or more remain; large pool: when more than 1 MiB remains, so
 *    big segments are not whittled into slivers);
 *  - freed blocks merge with free neighbours of the same segment;
 *  - cached blocks belong to the stream they were allocated on and are
 *    reused only for requests on that stream.  A block used on other
 *    streams too (record_stream) waits after free for an event recorded on
 *    each of those streams at the free (with event functions; without
 *    them, or if recording fails, until each stream reports idle), then
 *    becomes reusable;
 *  - when the device is full, every cached whole segment is released and
 *    the device malloc retried once before the request fails.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thc_internal.h"

#define ROUND 512u
#define SMALL_LIMIT ((size_t)1 << 20)
#define SMALL_SEGMENT ((size_t)2 << 20)
#define LARGE_ROUND ((size_t)2 << 20)
#define NBINS 64
#define HASH_SIZE 4096
#define MAX_RECORDED 8

typedef struct block {
    char *ptr;
    size_t size;
    void *stream;
    int small;                       /* which pool */
    int allocated;
    struct block *prev, *next;       /* neighbours in the same segment */
    struct block *link;              /* free bin, hash chain or pending list */
    void *recorded[MAX_RECORDED];    /* other streams that used the block */
    int nrecorded;
    void *events[MAX_RECORDED];      /* after free: an event per recorded stream */
    int nevents;
} block;

struct thc_allocator {
    thc_device_ops ops;
    thc_event_ops events;            /* record == NULL: none */
    pthread_mutex_t lock;
    block *bins[2][NBINS];           /* [small][bin]: free blocks */
    block *live[HASH_SIZE];          /* allocated blocks by pointer */
    block *pending;                  /* freed, waiting on recorded streams */
    thc_alloc_stats stats;
};

THC_API size_t thc_allocator_round_size(size_t n) {
    if (n == 0) return 0;
    return (n + ROUND - 1) / ROUND * ROUND;
}

static int bin_of(size_t size) {
    int b = 0;
    while (size > ROUND && b < NBINS - 1) {
        size >>= 1;
        b++;
    }
    return b;
}

static size_t hash_ptr(const void *p) {
    return ((uintptr_t)p / ROUND) % HASH_SIZE;
}

static void bin_insert(thc_allocator *a, block *b) {
    block **head = &a->bins[b->small][bin_of(b->size)];
    b->link = *head;
    *head = b;
}

static void bin_remove(thc_allocator *a, block *b) {
    block **p = &a->bins[b->small][bin_of(b->size)];
    while (*p && *p != b) p = &(*p)->link;
    if (*p) *p = b->link;
    b->link = NULL;
}

/* Best fit on the stream, from the request's bin upwards. */
static block *find_free(thc_allocator *a, int small, size_t size, void *stream) {
    for (int bin = bin_of(size); bin < NBINS; bin++) {
        block *best = NULL;
        for (block *b = a->bins[small][bin]; b; b = b->link)
            if (b->stream == stream && b->size >= size &&
                (!best || b->size < best->size))
                best = b;
        if (best) return best;
    }
    return NULL;
}

static void update_peaks(thc_allocator *a) {
    thc_alloc_stats *s = &a->stats;
    if (s->allocated_bytes > s->max_allocated_bytes) s->max_allocated_bytes = s->allocated_bytes;
    if (s->reserved_bytes > s->max_reserved_bytes) s->max_reserved_bytes = s->reserved_bytes;
}

/* Hands every free whole segment back to the device. */
static int release_cached(thc_allocator *a) {
    int status = THC_OK;
    for (int small = 0; small < 2; small++)
        for (int bin = 0; bin < NBINS; bin++) {
            block **p = &a->bins[small][bin];
            while (*p) {
                block *b = *p;
                if (b->prev || b->next) {
                    p = &b->link;
                    continue;
                }
                int rc = a->ops.free(a->ops.ctx, b->ptr);
                if (rc != THC_OK) {
                    status = rc;
                    p = &b->link;
                    continue;
                }
                *p = b->link;
                a->stats.reserved_bytes -= (int64_t)b->size;
                a->stats.num_segments--;
                a->stats.num_device_frees++;
                free(b);
            }
        }
    return status;
}

/* Puts a freed block back in its bin, merged with free neighbours. */
static void insert_merged(thc_allocator *a, block *b) {
    block *n = b->next;
    if (n && !n->allocated && n->nrecorded == 0) {
        bin_remove(a, n);
        b->size += n->size;
        b->next = n->next;
        if (n->next) n->next->prev = b;
        free(n);
    }
    block *p = b->prev;
    if (p && !p->allocated && p->nrecorded == 0) {
        bin_remove(a, p);
        p->size += b->size;
        p->next = b->next;
        if (b->next) b->next->prev = p;
        free(b);
        b = p;
    }
    bin_insert(a, b);
}

static void destroy_events(thc_allocator *a, block *b) {
    for (int i = 0; i < b->nevents; i++) a->events.destroy(a->events.ctx, b->events[i]);
    b->nevents = 0;
}

/* A freed block's events, one per recorded stream, recorded now; without
 * event functions, or if one fails, none (it then waits for the streams). */
static void record_events(thc_allocator *a, block *b) {
    if (!a->events.record) return;
    for (int i = 0; i < b->nrecorded; i++) {
        if (a->events.record(a->events.ctx, b->recorded[i], &b->events[i]) != THC_OK) {
            destroy_events(a, b);
            return;
        }
        b->nevents = i + 1;
    }
}

/* Whether a pending block's events have all happened (wait: waits for
 * them); < 0 on an error. */
static int events_done(thc_allocator *a, block *b, int wait) {
    for (int i = 0; i < b->nevents; i++) {
        int rc = wait ? (a->events.synchronize(a->events.ctx, b->events[i]) == THC_OK ? 1 : -1)
                      : a->events.query(a->events.ctx, b->events[i]);
        if (rc != 1) return rc;
    }
    return 1;
}

/* Moves pending blocks whose events have happened (or, without events,
 * whose recorded streams are idle) to the free bins; `wait` waits for
 * them first. */
static int process_pending(thc_allocator *a, int wait) {
    block **p = &a->pending;
    while (*p) {
        block *b = *p;
        int ready = 1;
        if (b->nevents) {
            int rc = events_done(a, b, wait);
            if (rc < 0) return THC_ERR_RUNTIME;
            ready = rc == 1;
        }
        for (int i = 0; i < b->nrecorded && ready && !b->nevents; i++) {
            int rc;
            if (wait) {
                rc = a->ops.stream_synchronize(a->ops.ctx, b->recorded[i]);
                if (rc != THC_OK) return rc;
                continue;
            }
            rc = a->ops.stream_query(a->ops.ctx, b->recorded[i]);
            if (rc < 0) return THC_ERR_RUNTIME;
            ready = rc == 1;
        }
        if (!ready) {
            p = &b->link;
            continue;
        }
        *p = b->link;
        b->link = NULL;
        destroy_events(a, b);
        b->nrecorded = 0;
        a->stats.num_pending_frees--;
        insert_merged(a, b);
    }
    return THC_OK;
}

THC_API thc_allocator *thc_allocator_new(const thc_device_ops *ops) {
    if (!ops || !ops->malloc || !ops->free || !ops->stream_synchronize ||
        !ops->stream_query)
        return thc__error_null(THC_ERR_VALUE,
                               "thc_allocator_new: the device function table "
                               "needs malloc, free, stream_synchronize and "
                               "stream_query");
    thc_allocator *a = calloc(1, sizeof *a);
    if (!a) return thc__error_null(THC_ERR_MEMORY, "thc_allocator_new: out of host memory");
    a->ops = *ops;
    pthread_mutex_init(&a->lock, NULL);
    return a;
}

THC_API int thc_allocator_set_event_ops(thc_allocator *a, const thc_event_ops *ops) {
    if (!a || !ops || !ops->record || !ops->query || !ops->synchronize || !ops->destroy)
        return thc__error(THC_ERR_VALUE, "thc_allocator_set_event_ops: the allocator and "
                          "record, query, synchronize and destroy are needed");
    pthread_mutex_lock(&a->lock);
    int used = a->stats.num_allocs > 0;
    if (!used) a->events = *ops;
    pthread_mutex_unlock(&a->lock);
    if (used)
        return thc__error(THC_ERR_RUNTIME, "thc_allocator_set_event_ops: the allocator has "
                          "allocated already");
    return THC_OK;
}

THC_API void thc_allocator_delete(thc_allocator *a) {
    if (!a) return;
    /* free everything: live blocks and pending ones become free, segments
     * are then whole again */
    for (int h = 0; h < HASH_SIZE; h++)
        while (a->live[h]) {
            block *b = a->live[h];
            a->live[h] = b->link;
            b->allocated = 0;
            b->nrecorded = 0;
            insert_merged(a, b);
        }
    while (a->pending) {
        block *b = a->pending;
        a->pending = b->link;
        destroy_events(a, b);
        b->nrecorded = 0;
        insert_merged(a, b);
    }
    release_cached(a);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

static double mib(int64_t n) { return (double)n / (1 << 20); }

static int out_of_memory(thc_allocator *a, size_t asked, size_t segment) {
    thc_alloc_stats *s = &a->stats;
    char device[160] = "";
    size_t free_b = 0, total_b = 0;
    if (a->ops.mem_info && a->ops.mem_info(a->ops.ctx, &free_b, &total_b) == THC_OK)
        snprintf(device, sizeof device, " The device has %.2f MiB in total, of which %.2f MiB is free.",
                 mib((int64_t)total_b), mib((int64_t)free_b));
    s->num_ooms++;
    return thc__error(THC_ERR_MEMORY,
                      "CUDA out of memory. Tried to allocate %.2f MiB (a %.2f MiB "
                      "segment).%s %.2f MiB is allocated by tensors; %.2f MiB is "
                      "reserved by the caching allocator, of which %.2f MiB is "
                      "cached and unused (freeing the cache and retrying did not help).",
                      mib((int64_t)asked), mib((int64_t)segment), device,
                      mib(s->allocated_bytes), mib(s->reserved_bytes),
                      mib(s->reserved_bytes - s->allocated_bytes));
}

static int new_segment(thc_allocator *a, int small, size_t size, void *stream,
                       size_t asked, block **out) {
    size_t seg = small ? SMALL_SEGMENT : (size + LARGE_ROUND - 1) / LARGE_ROUND * LARGE_ROUND;
    block *b = calloc(1, sizeof *b);
    if (!b) return thc__error(THC_ERR_MEMORY, "thc_allocator_malloc: out of host memory");
    void *ptr = NULL;
    int rc = a->ops.malloc(a->ops.ctx, &ptr, seg);
    if (rc == THC_ERR_MEMORY) {
        /* wait for blocks pending on other streams, drop the cache, retry */
        int prc = process_pending(a, 1);
        int erc = release_cached(a);
        rc = (prc == THC_OK && erc == THC_OK) ? a->ops.malloc(a->ops.ctx, &ptr, seg)
                                              : (prc != THC_OK ? prc : erc);
        if (rc == THC_ERR_MEMORY) {
            free(b);
            return out_of_memory(a, asked, seg);
        }
    }
    if (rc != THC_OK) {
        free(b);
        return rc;
    }
    b->ptr = ptr;
    b->size = seg;
    b->stream = stream;
    b->small = small;
    a->stats.reserved_bytes += (int64_t)seg;
    a->stats.num_segments++;
    a->stats.num_device_mallocs++;
    *out = b;
    return THC_OK;
}

static int malloc_locked(thc_allocator *a, void **ptr, size_t nbytes, void *stream) {
    size_t size = thc_allocator_round_size(nbytes);
    /* no device holds half the address space; this also keeps the segment
     * rounding below from overflowing */
    if (size < nbytes || nbytes > SIZE_MAX / 2) {
        a->stats.num_ooms++;
        return thc__error(THC_ERR_MEMORY, "CUDA out of memory. Tried to allocate %zu bytes, "
                          "more than any device holds", nbytes);
    }
    int small = size < SMALL_LIMIT;
    int rc = process_pending(a, 0);
    if (rc != THC_OK) return rc;
    block *b = find_free(a, small, size, stream);
    if (b) {
        bin_remove(a, b);
    } else {
        rc = new_segment(a, small, size, stream, nbytes, &b);
        if (rc != THC_OK) return rc;
    }
    size_t rest = b->size - size;
    if (small ? rest >= ROUND : rest > SMALL_LIMIT) {
        block *r = calloc(1, sizeof *r);
        if (!r) {
            bin_insert(a, b);
            return thc__error(THC_ERR_MEMORY, "thc_allocator_malloc: out of host memory");
        }
        r->ptr = b->ptr + size;
        r->size = rest;
        r->stream = stream;
        r->small = small;
        r->prev = b;
        r->next = b->next;
        if (b->next) b->next->prev = r;
        b->next = r;
        b->size = size;
        bin_insert(a, r);
    }
    b->allocated = 1;
    size_t h = hash_ptr(b->ptr);
    b->link = a->live[h];
    a->live[h] = b;
    a->stats.allocated_bytes += (int64_t)b->size;
    a->stats.num_allocs++;
    update_peaks(a);
    *ptr = b->ptr;
    return THC_OK;
}

THC_API int thc_allocator_malloc(thc_allocator *a, void **ptr, size_t nbytes, void *stream) {
    if (!a || !ptr) return thc__error(THC_ERR_VALUE, "thc_allocator_malloc: allocator or ptr is NULL");
    *ptr = NULL;
    if (nbytes == 0) return THC_OK;
    pthread_mutex_lock(&a->lock);
    int rc = malloc_locked(a, ptr, nbytes, stream);
    pthread_mutex_unlock(&a->lock);
    return rc;
}

/* Unlinks and returns the live block at ptr, or NULL. */
static block *take_live(thc_allocator *a, void *ptr, int unlink) {
    block **p = &a->live[hash_ptr(ptr)];
    while (*p && (*p)->ptr != (char *)ptr) p = &(*p)->link;
    block *b = *p;
    if (b && unlink) {
        *p = b->link;
        b->link = NULL;
    }
    return b;
}

THC_API int thc_allocator_free(thc_allocator *a, void *ptr) {
    if (!a) return thc__error(THC_ERR_VALUE, "thc_allocator_free: allocator is NULL");
    if (!ptr) return THC_OK;
    pthread_mutex_lock(&a->lock);
    block *b = take_live(a, ptr, 1);
    if (!b) {
        pthread_mutex_unlock(&a->lock);
        return thc__error(THC_ERR_VALUE, "thc_allocator_free: %p was not allocated by this "
                          "allocator, or was freed already", ptr);
    }
    b->allocated = 0;
    a->stats.allocated_bytes -= (int64_t)b->size;
    a->stats.num_frees++;
    if (b->nrecorded) {
        record_events(a, b);
        b->link = a->pending;
        a->pending = b;
        a->stats.num_pending_frees++;
    } else {
        insert_merged(a, b);
    }
    pthread_mutex_unlock(&a->lock);
    return THC_OK;
}

THC_API int thc_allocator_record_stream(thc_allocator *a, void *ptr, void *stream) {
    if (!a) return thc__error(THC_ERR_VALUE, "thc_allocator_record_stream: allocator is NULL");
    pthread_mutex_lock(&a->lock);
    int rc = THC_OK;
    block *b = take_live(a, ptr, 0);
    if (!b) {
        rc = thc__error(THC_ERR_VALUE, "thc_allocator_record_stream: %p is not a live "
                        "allocation of this allocator", ptr);
    } else if (stream != b->stream) {
        int known = 0;
        for (int i = 0; i < b->nrecorded; i++) known |= b->recorded[i] == stream;
        if (!known && b->nrecorded == MAX_RECORDED)
            rc = thc__error(THC_ERR_RUNTIME, "thc_allocator_record_stream: an allocation "
                            "can be recorded on at most %d other streams", MAX_RECORDED);
        else if (!known)
            b->recorded[b->nrecorded++] = stream;
    }
    pthread_mutex_unlock(&a->lock);
    return rc;
}

THC_API int thc_allocator_empty_cache(thc_allocator *a) {
    if (!a) return thc__error(THC_ERR_VALUE, "thc_allocator_empty_cache: allocator is NULL");
    pthread_mutex_lock(&a->lock);
    int rc = process_pending(a, 0);
    if (rc == THC_OK) rc = release_cached(a);
    pthread_mutex_unlock(&a->lock);
    return rc;
}

THC_API int thc_allocator_stats(thc_allocator *a, thc_alloc_stats *out) {
    if (!a || !out) return thc__error(THC_ERR_VALUE, "thc_allocator_stats: allocator or out is NULL");
    pthread_mutex_lock(&a->lock);
    *out = a->stats;
    pthread_mutex_unlock(&a->lock);
    return THC_OK;
}

THC_API int thc_allocator_reset_peak_stats(thc_allocator *a) {
    if (!a) return thc__error(THC_ERR_VALUE, "thc_allocator_reset_peak_stats: allocator is NULL");
    pthread_mutex_lock(&a->lock);
    a->stats.max_allocated_bytes = a->stats.allocated_bytes;
    a->stats.max_reserved_bytes = a->stats.reserved_bytes;
    pthread_mutex_unlock(&a->lock);
    return THC_OK;
}
