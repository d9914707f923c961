/* The caching allocator on a fake device: host memory with a capacity,
 * streams that are busy until the test says they are done. */
#include <stdint.h>
#include <stdlib.h>
#include "check.h"

#define MiB ((size_t)1 << 20)

typedef struct fake {
    size_t capacity, used;
    int mallocs, frees, syncs;
    int busy[4];       /* per fake stream: 1 while work is queued */
} fake;

static int fake_malloc(void *ctx, void **ptr, size_t n) {
    fake *f = ctx;
    if (f->used + n > f->capacity) return THC_ERR_MEMORY;
    *ptr = malloc(n);
    if (!*ptr) return THC_ERR_MEMORY;
    f->used += n;
    f->mallocs++;
    return THC_OK;
}

/* the fake frees need the size: keep it simple by tracking via a table */
static void *seen_ptr[256];
static size_t seen_size[256];

static int tracked_malloc(void *ctx, void **ptr, size_t n) {
    int rc = fake_malloc(ctx, ptr, n);
    if (rc != THC_OK) return rc;
    for (int i = 0; i < 256; i++)
        if (!seen_ptr[i]) {
            seen_ptr[i] = *ptr;
            seen_size[i] = n;
            return THC_OK;
        }
    return THC_ERR_RUNTIME;
}

static int fake_free(void *ctx, void *ptr) {
    fake *f = ctx;
    for (int i = 0; i < 256; i++)
        if (seen_ptr[i] == ptr) {
            f->used -= seen_size[i];
            seen_ptr[i] = NULL;
            free(ptr);
            f->frees++;
            return THC_OK;
        }
    return THC_ERR_RUNTIME;
}

static int stream_id(void *s) { return (int)(uintptr_t)s; }

static int fake_sync(void *ctx, void *stream) {
    fake *f = ctx;
    f->busy[stream_id(stream)] = 0;
    f->syncs++;
    return THC_OK;
}

static int fake_query(void *ctx, void *stream) {
    fake *f = ctx;
    return f->busy[stream_id(stream)] ? 0 : 1;
}

static int fake_info(void *ctx, size_t *free_b, size_t *total) {
    fake *f = ctx;
    *free_b = f->capacity - f->used;
    *total = f->capacity;
    return THC_OK;
}

#define S(i) ((void *)(uintptr_t)(i))

static thc_allocator *make(fake *f, size_t capacity) {
    memset(f, 0, sizeof *f);
    f->capacity = capacity;
    static thc_device_ops ops;
    ops = (thc_device_ops){f, tracked_malloc, fake_free, fake_sync, fake_query, fake_info};
    return thc_allocator_new(&ops);
}

static thc_alloc_stats stats(thc_allocator *a) {
    thc_alloc_stats s;
    memset(&s, 0, sizeof s);
    CHECK(thc_allocator_stats(a, &s) == THC_OK);
    return s;
}

static void test_rounding(void) {
    CHECK(thc_allocator_round_size(0) == 0);
    CHECK(thc_allocator_round_size(1) == 512);
    CHECK(thc_allocator_round_size(512) == 512);
    CHECK(thc_allocator_round_size(513) == 1024);
    CHECK(thc_allocator_round_size(3 * MiB + 1) == 3 * MiB + 512);
}

static void test_small_blocks_share_a_segment(void) {
    fake f;
    thc_allocator *a = make(&f, 64 * MiB);
    void *p = NULL, *q = NULL, *z = S(1);
    CHECK(thc_allocator_malloc(a, &z, 0, S(0)) == THC_OK && z == NULL);
    CHECK(thc_allocator_malloc(a, &p, 100, S(0)) == THC_OK && p);
    CHECK(thc_allocator_malloc(a, &q, 1000, S(0)) == THC_OK && q);
    CHECK((char *)q == (char *)p + 512);            /* split from the same 2 MiB segment */
    thc_alloc_stats s = stats(a);
    CHECK(s.allocated_bytes == 512 + 1024);
    CHECK(s.reserved_bytes == (int64_t)(2 * MiB));
    CHECK(s.num_segments == 1 && f.mallocs == 1);
    CHECK(thc_allocator_free(a, p) == THC_OK);
    void *r = NULL;
    CHECK(thc_allocator_malloc(a, &r, 200, S(0)) == THC_OK && r == p);   /* reused */
    CHECK(thc_allocator_free(a, r) == THC_OK && thc_allocator_free(a, q) == THC_OK);
    s = stats(a);
    CHECK(s.allocated_bytes == 0 && s.max_allocated_bytes == 1536);
    CHECK(s.num_allocs == 3 && s.num_frees == 3);
    /* all merged back: a 2 MiB - 512 request fits the segment again */
    void *big = NULL;
    CHECK(thc_allocator_malloc(a, &big, 1 * MiB - 512, S(0)) == THC_OK && big == p);
    CHECK(f.mallocs == 1);
    CHECK(thc_allocator_free(a, big) == THC_OK);
    thc_allocator_delete(a);
    CHECK(f.used == 0 && f.frees == 1);
}

static void test_large_blocks(void) {
    fake f;
    thc_allocator *a = make(&f, 64 * MiB);
    void *p = NULL, *q = NULL;
    CHECK(thc_allocator_malloc(a, &p, 3 * MiB, S(0)) == THC_OK);
    CHECK(stats(a).reserved_bytes == (int64_t)(4 * MiB));   /* rounded to 2 MiB */
    /* the 1 MiB left is not split off a large block: the block holds 4 MiB */
    CHECK(stats(a).allocated_bytes == (int64_t)(4 * MiB));
    CHECK(thc_allocator_free(a, p) == THC_OK);
    /* 1 MiB request from the cached 4 MiB block: split, rest stays cached */
    CHECK(thc_allocator_malloc(a, &q, 1 * MiB, S(0)) == THC_OK && q == p);
    CHECK(f.mallocs == 1);
    void *r = NULL;
    CHECK(thc_allocator_malloc(a, &r, 2 * MiB, S(0)) == THC_OK && (char *)r == (char *)p + MiB);
    CHECK(f.mallocs == 1);
    CHECK(thc_allocator_free(a, q) == THC_OK && thc_allocator_free(a, r) == THC_OK);
    /* merged again into one whole segment that empty_cache releases */
    CHECK(thc_allocator_empty_cache(a) == THC_OK);
    CHECK(f.used == 0 && stats(a).reserved_bytes == 0 && stats(a).num_segments == 0);
    CHECK(stats(a).max_reserved_bytes == (int64_t)(4 * MiB));
    CHECK(thc_allocator_reset_peak_stats(a) == THC_OK);
    CHECK(stats(a).max_reserved_bytes == 0 && stats(a).max_allocated_bytes == 0);
    thc_allocator_delete(a);
}

static void test_empty_cache_keeps_live_segments(void) {
    fake f;
    thc_allocator *a = make(&f, 64 * MiB);
    void *p = NULL, *q = NULL;
    CHECK(thc_allocator_malloc(a, &p, 512, S(0)) == THC_OK);
    CHECK(thc_allocator_malloc(a, &q, 5 * MiB, S(0)) == THC_OK);
    CHECK(thc_allocator_free(a, q) == THC_OK);
    CHECK(thc_allocator_empty_cache(a) == THC_OK);
    CHECK(stats(a).reserved_bytes == (int64_t)(2 * MiB) && f.used == 2 * MiB);
    CHECK(thc_allocator_free(a, p) == THC_OK);
    thc_allocator_delete(a);
    CHECK(f.used == 0);
}

static void test_streams(void) {
    fake f;
    thc_allocator *a = make(&f, 64 * MiB);
    void *p = NULL, *q = NULL;
    CHECK(thc_allocator_malloc(a, &p, 4096, S(1)) == THC_OK);
    CHECK(thc_allocator_free(a, p) == THC_OK);
    /* another stream does not get stream 1's cached block */
    CHECK(thc_allocator_malloc(a, &q, 4096, S(2)) == THC_OK && q != p);
    CHECK(f.mallocs == 2);
    CHECK(thc_allocator_free(a, q) == THC_OK);
    /* record_stream: the block waits until stream 3 is idle */
    CHECK(thc_allocator_malloc(a, &p, 4096, S(1)) == THC_OK);
    CHECK(thc_allocator_record_stream(a, p, S(3)) == THC_OK);
    CHECK(thc_allocator_record_stream(a, p, S(1)) == THC_OK);   /* own stream: no-op */
    f.busy[3] = 1;
    CHECK(thc_allocator_free(a, p) == THC_OK);
    CHECK(stats(a).num_pending_frees == 1);
    void *r = NULL;
    CHECK(thc_allocator_malloc(a, &r, 4096, S(1)) == THC_OK && r != p);
    CHECK(thc_allocator_free(a, r) == THC_OK);
    f.busy[3] = 0;
    CHECK(thc_allocator_malloc(a, &r, 4096, S(1)) == THC_OK);
    CHECK(stats(a).num_pending_frees == 0);
    CHECK(thc_allocator_free(a, r) == THC_OK);
    thc_allocator_delete(a);
    CHECK(f.used == 0);
}

static void test_out_of_memory(void) {
    fake f;
    thc_allocator *a = make(&f, 8 * MiB);
    void *p = NULL, *q = NULL, *r = NULL;
    CHECK(thc_allocator_malloc(a, &p, 4 * MiB, S(0)) == THC_OK);
    CHECK(thc_allocator_free(a, p) == THC_OK);
    /* cached 4 MiB on stream 0 does not fit a stream-1 request of 6 MiB:
     * the cache is released and the retry succeeds */
    CHECK(thc_allocator_malloc(a, &q, 6 * MiB, S(1)) == THC_OK && q);
    CHECK(f.frees == 1 && stats(a).reserved_bytes == (int64_t)(6 * MiB));
    /* now it cannot fit at all */
    thc_clear_error();
    CHECK(thc_allocator_malloc(a, &r, 3 * MiB, S(1)) == THC_ERR_MEMORY && r == NULL);
    CHECK(thc_last_status() == THC_ERR_MEMORY);
    CHECK(strstr(thc_last_error(), "CUDA out of memory. Tried to allocate 3.00 MiB") != NULL);
    CHECK(strstr(thc_last_error(), "6.00 MiB is allocated by tensors") != NULL);
    CHECK(strstr(thc_last_error(), "8.00 MiB in total, of which 2.00 MiB is free") != NULL);
    CHECK(stats(a).num_ooms == 1);
    /* a pending block is waited for (synchronized) before giving up */
    CHECK(thc_allocator_record_stream(a, q, S(2)) == THC_OK);
    f.busy[2] = 1;
    CHECK(thc_allocator_free(a, q) == THC_OK);
    CHECK(thc_allocator_malloc(a, &r, 7 * MiB, S(1)) == THC_OK && f.syncs == 1);
    CHECK(thc_allocator_free(a, r) == THC_OK);
    thc_allocator_delete(a);
    CHECK(f.used == 0);
}

static void test_bad_input(void) {
    fake f;
    thc_allocator *a = make(&f, 8 * MiB);
    int x;
    void *p = NULL;
    ERR(thc_allocator_free(a, &x), THC_ERR_VALUE, "was not allocated by this allocator");
    CHECK(thc_allocator_malloc(a, &p, 100, S(0)) == THC_OK);
    CHECK(thc_allocator_free(a, p) == THC_OK);
    ERR(thc_allocator_free(a, p), THC_ERR_VALUE, "or was freed already");
    ERR(thc_allocator_record_stream(a, &x, S(1)), THC_ERR_VALUE, "not a live allocation");
    ERR(thc_allocator_malloc(a, &p, SIZE_MAX, S(0)), THC_ERR_MEMORY, "Tried to allocate");
    ERR(thc_allocator_malloc(a, &p, SIZE_MAX - 4096, S(0)), THC_ERR_MEMORY, "Tried to allocate");
    ERR(thc_allocator_malloc(a, &p, SIZE_MAX / 2 + 1, S(0)), THC_ERR_MEMORY, "Tried to allocate");
    CHECK(f.mallocs == 1);   /* none of these reached the device */
    ERR(thc_allocator_malloc(NULL, &p, 1, S(0)), THC_ERR_VALUE, "allocator or ptr is NULL");
    ERR(thc_allocator_stats(a, NULL), THC_ERR_VALUE, "is NULL");
    CHECK(thc_allocator_free(a, NULL) == THC_OK);
    thc_device_ops none = {0};
    thc_clear_error();
    CHECK(thc_allocator_new(&none) == NULL && strstr(thc_last_error(), "needs malloc") != NULL);
    thc_allocator_delete(NULL);
    thc_allocator_delete(a);
}

/* Random mix of sizes and frees, checking the books balance. */
static void test_random_mix(void) {
    fake f;
    thc_allocator *a = make(&f, 256 * MiB);
    void *ptrs[64] = {0};
    size_t sizes[64] = {0};
    int64_t live = 0, nlive = 0;
    srand(7);
    for (int step = 0; step < 4000; step++) {
        int i = rand() % 64;
        if (ptrs[i]) {
            CHECK(thc_allocator_free(a, ptrs[i]) == THC_OK);
            live -= (int64_t)thc_allocator_round_size(sizes[i]);
            nlive--;
            ptrs[i] = NULL;
        } else {
            sizes[i] = (rand() % 4 == 0) ? (size_t)(rand() % (6 * (int)MiB)) + 1
                                         : (size_t)(rand() % 70000) + 1;
            CHECK(thc_allocator_malloc(a, &ptrs[i], sizes[i], S(rand() % 2)) == THC_OK);
            memset(ptrs[i], i, sizes[i]);            /* no overlap with others */
            live += (int64_t)thc_allocator_round_size(sizes[i]);
            nlive++;
        }
        if (step % 500 == 0) CHECK(thc_allocator_empty_cache(a) == THC_OK);
    }
    for (int i = 0; i < 64; i++)
        if (ptrs[i]) {
            unsigned char *c = ptrs[i];
            CHECK(c[0] == (unsigned char)i && c[sizes[i] - 1] == (unsigned char)i);
        }
    /* large blocks may keep up to 1 MiB unsplit */
    CHECK(stats(a).allocated_bytes >= live &&
          stats(a).allocated_bytes <= live + nlive * (int64_t)MiB);
    CHECK(stats(a).reserved_bytes == (int64_t)f.used);
    for (int i = 0; i < 64; i++)
        if (ptrs[i]) CHECK(thc_allocator_free(a, ptrs[i]) == THC_OK);
    CHECK(thc_allocator_empty_cache(a) == THC_OK);
    CHECK(f.used == 0 && stats(a).allocated_bytes == 0);
    thc_allocator_delete(a);
}

int main(void) {
    test_rounding();
    test_small_blocks_share_a_segment();
    test_large_blocks();
    test_empty_cache_keeps_live_segments();
    test_streams();
    test_out_of_memory();
    test_bad_input();
    test_random_mix();
    return check_report("test_allocator");
}
