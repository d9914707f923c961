/* The strided iteration engine: N same-shaped operands, dims reordered by
 * the first operand's strides and coalesced, then a 1-d inner loop per
 * contiguous run, split across threads when large. */
#include "th_internal.h"

/* |v| as unsigned: defined for INT64_MIN too */
static uint64_t iabs64(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

/* 1 if dim a should sit outside dim b (larger strides go outside). */
static int outer_of(const th_iter *it, int a, int b) {
    for (int k = 0; k < it->nops; k++) {
        uint64_t sa = iabs64(it->strides[k][a]), sb = iabs64(it->strides[k][b]);
        if (sa == 0 || sb == 0 || sa == sb) continue;
        return sa > sb;
    }
    return 0;
}

void th__iter_init(th_iter *it, int nops, const th_tensor *const *ops) {
    const th_tensor *t0 = ops[0];
    it->nops = nops;
    it->numel = th_numel(t0);
    int n = 0;
    for (int k = 0; k < nops; k++) it->data[k] = th__ptr(ops[k]);
    for (int d = 0; d < t0->ndim; d++) {
        if (t0->sizes[d] == 1) continue;
        it->shape[n] = t0->sizes[d];
        for (int k = 0; k < nops; k++)
            it->strides[k][n] = ops[k]->strides[d] * th_dtype_itemsize(ops[k]->dtype);
        n++;
    }
    it->ndim = n;
    if (it->numel == 0) return;
    /* insertion sort: outermost (largest stride) first, stable */
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && outer_of(it, j, j - 1); j--) {
            int64_t tmp = it->shape[j];
            it->shape[j] = it->shape[j - 1];
            it->shape[j - 1] = tmp;
            for (int k = 0; k < nops; k++) {
                tmp = it->strides[k][j];
                it->strides[k][j] = it->strides[k][j - 1];
                it->strides[k][j - 1] = tmp;
            }
        }
    }
    /* coalesce an outer dim into the inner one when strides line up */
    int m = 0;
    for (int d = 1; d < n; d++) {
        int ok = 1;
        for (int k = 0; k < nops && ok; k++) {
            /* a product beyond int64 cannot be a stride that addresses
             * memory: such dims never coalesce */
            int64_t span;
            ok = !th__mul_ovf(it->strides[k][d], it->shape[d], &span) &&
                 it->strides[k][m] == span;
        }
        if (ok) {
            it->shape[m] *= it->shape[d];
            for (int k = 0; k < nops; k++) it->strides[k][m] = it->strides[k][d];
        } else {
            m++;
            it->shape[m] = it->shape[d];
            for (int k = 0; k < nops; k++) it->strides[k][m] = it->strides[k][d];
        }
    }
    it->ndim = n ? m + 1 : 0;
}

int th__iter_is_1d(const th_iter *it) { return it->ndim <= 1; }

typedef struct {
    const th_iter *it;
    th_loop_fn fn;
    void *ctx;
} run_ctx;

static void run_range(int64_t begin, int64_t end, void *vctx) {
    const run_ctx *rc = vctx;
    const th_iter *it = rc->it;
    int nd = it->ndim, nops = it->nops;
    char *ptrs[TH_ITER_MAX_OPS];
    int64_t inner_strides[TH_ITER_MAX_OPS];
    if (nd == 0) {
        for (int k = 0; k < nops; k++) {
            ptrs[k] = it->data[k];
            inner_strides[k] = 0;
        }
        rc->fn(ptrs, inner_strides, 1, rc->ctx);
        return;
    }
    int64_t idx[TH_MAX_DIMS];
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = rem % it->shape[d];
        rem /= it->shape[d];
    }
    for (int k = 0; k < nops; k++) inner_strides[k] = it->strides[k][nd - 1];
    int64_t inner = it->shape[nd - 1];
    int64_t cur = begin;
    while (cur < end) {
        for (int k = 0; k < nops; k++) {
            char *p = it->data[k];
            for (int d = 0; d < nd; d++) p += idx[d] * it->strides[k][d];
            ptrs[k] = p;
        }
        int64_t n = TH_MIN(inner - idx[nd - 1], end - cur);
        rc->fn(ptrs, inner_strides, n, rc->ctx);
        cur += n;
        idx[nd - 1] += n;
        for (int d = nd - 1; d > 0 && idx[d] == it->shape[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

void th__iter_run(const th_iter *it, th_loop_fn fn, void *ctx, int parallel) {
    if (it->numel == 0) return;
    run_ctx rc = {it, fn, ctx};
    if (parallel && it->numel >= 2 * TH_GRAIN)
        th_parallel_for(it->numel, TH_GRAIN, run_range, &rc);
    else
        run_range(0, it->numel, &rc);
}
