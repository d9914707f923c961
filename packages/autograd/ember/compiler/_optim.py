"""Fused optimizer steps: one generated kernel updates every parameter of
a group (Adam/AdamW, SGD with momentum), built and cached like the fusion
groups' kernels (_toolchain).

The update of each element is PyTorch's single-tensor rule, in the order
and dtype eager evaluation rounds it; hyperparameters are run-time
arguments, so one kernel per dtype and variant serves every step and
model.  The elements of all parameters are split into blocks spread over
libTH's thread pool.
"""
import math

import ember

from . import _toolchain

__all__ = ["adam", "sgd", "supported"]

BLOCK = 16384
_CTYPES = {ember.float32: "float", ember.float64: "double"}

_ARGS = """
typedef struct ember_optim_args {
    int64_t n;                 /* parameters */
    char **p, **g, **m, **v, **vmax;  /* per parameter: data pointers */
    const int64_t *numel;      /* per parameter */
    const int64_t *first;      /* per parameter: its first block */
    const double *hyper;       /* per parameter: the step's scalars */
    double lr, beta1, beta2, eps, wd, momentum, dampening;
    int64_t flags;             /* the variant bits (also compiled in as FLAGS) */
} ember_optim_args;
"""
_ENTRY_CDEF = "int ember_optim(const ember_optim_args *a, int64_t blocks);"
# variant bits, compiled into the kernel (branch-free inner loops vectorise)
DECOUPLED, MAXIMIZE, AMSGRAD, NESTEROV, DECAY, MOMENTUM = 1, 2, 4, 8, 32, 64

_ADAM = """
            T gi = g[i];
            if (FLAGS & 2) gi = -gi;
            if ((FLAGS & 32) && !(FLAGS & 1)) gi = (T)(gi + (T)a->wd * pp[i]);
            if ((FLAGS & 32) && (FLAGS & 1)) pp[i] = (T)(pp[i] * (T)(1 - a->lr * a->wd));
            const T w1 = (T)(1 - a->beta1);
            m[i] = (T)(m[i] + w1 * (gi - m[i]));
            v[i] = (T)((T)(v[i] * (T)a->beta2) + (T)(1 - a->beta2) * gi * gi);
            T vv = v[i];
            if (FLAGS & 4) {
                vmax[i] = (vv > vmax[i] || vv != vv) ? vv : vmax[i];
                vv = vmax[i];
            }
            const T denom = (T)((T)(sqrt(vv) / (T)h[1]) + (T)a->eps);
            pp[i] = (T)(pp[i] + (T)(-a->lr / h[0]) * (T)(m[i] / denom));"""

_SGD = """
            T gi = g[i];
            if (FLAGS & 2) gi = -gi;
            if (FLAGS & 32) gi = (T)(gi + (T)a->wd * pp[i]);
            if (FLAGS & 64) {
                const T b = fresh ? gi   /* a new buffer takes the gradient */
                    : (T)((T)(m[i] * (T)a->momentum) + (T)(1 - a->dampening) * gi);
                m[i] = b;
                gi = (FLAGS & 8) ? (T)(gi + (T)a->momentum * b) : b;
            }
            pp[i] = (T)(pp[i] - (T)a->lr * gi);"""


def _source(ctype, update, flags):
    return f"""#include <math.h>
#include <stdint.h>
#include "th.h"
#include <tgmath.h>
typedef {ctype} T;
#define FLAGS {flags}
{_ARGS}
static void body(int64_t begin, int64_t end, void *ctx) {{
    const ember_optim_args *a = (const ember_optim_args *)ctx;
    int64_t k = 0;
    for (int64_t b = begin; b < end; b++) {{
        while (k + 1 < a->n && a->first[k + 1] <= b) k++;   /* blocks ascend */
        while (a->first[k] > b) k--;
        const int64_t lo = (b - a->first[k]) * {BLOCK};
        const int64_t hi = lo + {BLOCK} < a->numel[k] ? lo + {BLOCK} : a->numel[k];
        T *restrict pp = (T *)a->p[k], *restrict m = a->m ? (T *)a->m[k] : 0;
        T *restrict v = a->v ? (T *)a->v[k] : 0, *restrict vmax = a->vmax ? (T *)a->vmax[k] : 0;
        const T *restrict g = (const T *)a->g[k];
        const double *h = a->hyper + 2 * k;
        const int fresh = h[0] != 0;
        (void)v; (void)vmax; (void)m; (void)h; (void)fresh;
        /* no operand aliases another: without the pragma GCC cannot prove
           that the stores leave a->lr, a->wd, ... alone and keeps it scalar */
        #pragma omp simd
        for (int64_t i = lo; i < hi; i++) {{{update}
        }}
    }}
}}

int ember_optim(const ember_optim_args *a, int64_t blocks) {{
    th_parallel_for(blocks, 1, body, (void *)a);
    return 0;
}}
"""


_ffi = None


def _cffi():
    global _ffi
    if _ffi is None:
        import cffi
        _ffi = cffi.FFI()
        _ffi.cdef(_ARGS + _ENTRY_CDEF)
    return _ffi


def supported(tensors):
    """Whether a fused step can run on these tensors: dense, contiguous CPU
    tensors of one floating dtype (float32 or float64)."""
    if not tensors:
        return False
    dtype = tensors[0].dtype
    return dtype in _CTYPES and all(
        t is not None and t.dtype == dtype and t.device.type == "cpu" and not t.is_sparse
        and t.is_contiguous() for t in tensors)


def _kernel(dtype, update, flags):
    return _toolchain.load(_source(_CTYPES[dtype], update, flags), ffi=_cffi(),
                           entry="ember_optim")[0]


def _run(kernel, params, grads, m, v, vmax, hyper, scalars, flags):
    ffi = _cffi()
    n = len(params)
    numel = [t.numel() for t in params]
    first, blocks = [], 0
    for k in numel:
        first.append(blocks)
        blocks += -(-k // BLOCK)
    keep = []

    def ptrs(ts):
        if ts is None:
            return ffi.NULL
        arr = ffi.new("char *[]", [ffi.cast("char *", t.data_ptr()) for t in ts])
        keep.append(arr)
        return arr
    a = ffi.new("ember_optim_args *")
    a.n = n
    a.p, a.g, a.m, a.v, a.vmax = ptrs(params), ptrs(grads), ptrs(m), ptrs(v), ptrs(vmax)
    numel_c = ffi.new("int64_t[]", numel)
    first_c = ffi.new("int64_t[]", first)
    hyper_c = ffi.new("double[]", hyper)
    a.numel, a.first, a.hyper = numel_c, first_c, hyper_c
    for name, value in scalars.items():
        setattr(a, name, value)
    a.flags = flags
    if blocks:
        kernel(a, blocks)


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, lr, beta1, beta2,
         eps, weight_decay, decoupled, maximize, amsgrad):
    """One Adam/AdamW step of every parameter, in place (steps: each
    parameter's step count after this step)."""
    flags = (DECOUPLED if decoupled else 0) | (MAXIMIZE if maximize else 0) | \
        (AMSGRAD if amsgrad else 0) | (DECAY if weight_decay else 0)
    kernel = _kernel(params[0].dtype, _ADAM, flags)
    hyper = []
    for s in steps:
        hyper += [1 - beta1 ** s, math.sqrt(1 - beta2 ** s)]
    _run(kernel, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else None,
         hyper, dict(lr=lr, beta1=beta1, beta2=beta2, eps=eps, wd=weight_decay), flags)


def sgd(params, grads, bufs, new_buffer, *, lr, momentum, dampening, weight_decay, nesterov,
        maximize):
    """One SGD step of every parameter, in place; bufs: the momentum buffers
    (None without momentum); new_buffer: per parameter, whether its buffer
    was just made (it then takes the gradient as it is, as eager SGD's)."""
    flags = (MAXIMIZE if maximize else 0) | (NESTEROV if nesterov else 0) | \
        (DECAY if weight_decay else 0) | (MOMENTUM if momentum else 0)
    kernel = _kernel(params[0].dtype, _SGD, flags)
    hyper = []
    for new in new_buffer:
        hyper += [1.0 if new else 0.0, 0.0]
    _run(kernel, params, grads, bufs if momentum else None, None, None, hyper,
         dict(lr=lr, momentum=momentum, dampening=dampening, wd=weight_decay), flags)
