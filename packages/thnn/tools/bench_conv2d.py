"""conv2d forward and forward+backward (input, weight and bias grads),
ember.thnn against PyTorch (CPU), float32, interleaved, medians.

    python tools/bench_conv2d.py [--threads 1 2] [--repeat 15]

Run it against an installed ember-thnn (from outside packages/thnn, or
after building in place).  Prints one line per shape and thread count
with the ratio ember time / torch time."""
import argparse
import time

import numpy as np
import torch

import ember.th as th
import ember.thnn as nn

SHAPES = [((64, 1, 28, 28), (20, 1, 5, 5), 0), ((8, 64, 56, 56), (64, 64, 3, 3), 1)]


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
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    for nt in args.threads:
        torch.set_num_threads(nt)
        th.set_num_threads(nt)
        for xs, ws, p in SHAPES:
            x, w, b = (rng.standard_normal(s).astype(np.float32) for s in (xs, ws, (ws[0],)))
            X, W, B = th.from_numpy(x), th.from_numpy(w), th.from_numpy(b)
            y = nn.conv2d_forward(X, W, B, 1, p)
            gy = rng.standard_normal(tuple(y.shape)).astype(np.float32)
            GY = th.from_numpy(gy)
            tx, tw, tb = (torch.from_numpy(v).requires_grad_() for v in (x, w, b))
            tgy = torch.from_numpy(gy)

            def e_fwd():
                nn.conv2d_forward(X, W, B, 1, p)

            def e_fwd_bwd():
                nn.conv2d_forward(X, W, B, 1, p)
                nn.conv2d_backward_input(GY, xs, W, 1, p)
                nn.conv2d_backward_params(GY, X, ws, 1, p)

            def t_fwd():
                with torch.no_grad():
                    torch.nn.functional.conv2d(tx, tw, tb, 1, p)

            def t_fwd_bwd():
                out = torch.nn.functional.conv2d(tx, tw, tb, 1, p)
                torch.autograd.grad(out, (tx, tw, tb), tgy)

            ef, tf, eb, tb_ = bench([e_fwd, t_fwd, e_fwd_bwd, t_fwd_bwd], args.repeat)
            print(f"threads={nt} input {xs} weight {ws} pad {p}: "
                  f"fwd ember {ef * 1e3:.2f} ms torch {tf * 1e3:.2f} ms ratio {ef / tf:.2f} | "
                  f"fwd+bwd ember {eb * 1e3:.2f} ms torch {tb_ * 1e3:.2f} ms ratio {eb / tb_:.2f}")


if __name__ == "__main__":
    main()
