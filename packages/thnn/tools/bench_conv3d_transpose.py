"""conv_transpose2d and conv3d forward and forward+backward (input, weight
and bias grads), ember.thnn against PyTorch (CPU), float32, interleaved,
medians.

    python tools/bench_conv3d_transpose.py [--threads 1] [--repeat 7]

Run it against an installed ember-thnn (from outside packages/thnn).
Prints one line per case and thread count with the ratio ember time /
torch time."""
import argparse
import time

import numpy as np
import torch

import ember.th as th
import ember.thnn as nn

F = torch.nn.functional
# name, input, weight, ember forward / backward_input / backward_params, torch op
CASES = [
    ("conv_transpose2d k4 s2 p1", (8, 64, 28, 28), (64, 32, 4, 4),
     lambda x, w, b: nn.conv_transpose2d_forward(x, w, b, 2, 1),
     lambda gy, xs, w: nn.conv_transpose2d_backward_input(gy, xs, w, 2, 1),
     lambda gy, x, ws: nn.conv_transpose2d_backward_params(gy, x, ws, 2, 1),
     lambda x, w, b: F.conv_transpose2d(x, w, b, 2, 1)),
    ("conv3d k3 p1", (4, 16, 16, 16, 16), (32, 16, 3, 3, 3),
     lambda x, w, b: nn.conv3d_forward(x, w, b, 1, 1),
     lambda gy, xs, w: nn.conv3d_backward_input(gy, xs, w, 1, 1),
     lambda gy, x, ws: nn.conv3d_backward_params(gy, x, ws, 1, 1),
     lambda x, w, b: F.conv3d(x, w, b, 1, 1)),
]


def bench(fns, repeat):
    """Median seconds of each function, run interleaved."""
    for f in fns:
        f()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for i, f in enumerate(fns):
            t = time.perf_counter()
            f()
            times[i].append(time.perf_counter() - t)
    return [float(np.median(t)) for t in times]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    for nt in args.threads:
        torch.set_num_threads(nt)
        th.set_num_threads(nt)
        for name, xs, ws, fwd, bwd_in, bwd_p, top in CASES:
            bias_len = ws[1] if name.startswith("conv_transpose") else ws[0]
            x, w, b = (rng.standard_normal(s).astype(np.float32) for s in (xs, ws, (bias_len,)))
            X, W, B = th.from_numpy(x), th.from_numpy(w), th.from_numpy(b)
            y = fwd(X, W, B)
            gy = rng.standard_normal(tuple(y.shape)).astype(np.float32)
            GY = th.from_numpy(gy)
            tx, tw, tb = (torch.from_numpy(v).requires_grad_() for v in (x, w, b))
            tgy = torch.from_numpy(gy)

            def e_fwd():
                fwd(X, W, B)

            def e_fwd_bwd():
                fwd(X, W, B)
                bwd_in(GY, xs, W)
                bwd_p(GY, X, ws)

            def t_fwd():
                with torch.no_grad():
                    top(tx, tw, tb)

            def t_fwd_bwd():
                torch.autograd.grad(top(tx, tw, tb), (tx, tw, tb), tgy)

            ef, tf, eb, tb_ = bench([e_fwd, t_fwd, e_fwd_bwd, t_fwd_bwd], args.repeat)
            print(f"threads={nt} {name} input {xs} weight {ws}: "
                  f"fwd ember {ef * 1e3:.1f} ms torch {tf * 1e3:.1f} ms ratio {ef / tf:.2f} | "
                  f"fwd+bwd ember {eb * 1e3:.1f} ms torch {tb_ * 1e3:.1f} ms ratio {eb / tb_:.2f}")


if __name__ == "__main__":
    main()
