"""group_norm, upsampling, reflection padding, embedding_bag and the kl_div /
margin_ranking / cosine_embedding loss forwards, ember.thnn against PyTorch
(CPU), float32, interleaved, medians.

    python tools/bench_norm_resample.py [--threads 1 2] [--repeat 15]

Run it against an installed ember-thnn (from outside packages/thnn).
Prints one line per workload and thread count with the ratio
ember time / torch time."""
import argparse
import time

import numpy as np
import torch

import ember.th as th
import ember.thnn as nn

F = torch.nn.functional


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


def workloads():
    """(name, ember function, torch function) on the same fresh data."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 64, 32, 32)).astype(np.float32)
    w, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    ex, tx = th.from_numpy(x), torch.from_numpy(x)
    ew, eb, tw, tb = th.from_numpy(w), th.from_numpy(b), torch.from_numpy(w), torch.from_numpy(b)
    table = rng.standard_normal((10000, 128)).astype(np.float32)
    idx, offs = rng.integers(0, 10000, 4096), np.arange(0, 4096, 16)
    et, ei, eo = th.from_numpy(table), th.from_numpy(idx), th.from_numpy(offs)
    tt, ti, to = torch.from_numpy(table), torch.from_numpy(idx), torch.from_numpy(offs)
    p = rng.standard_normal(1 << 20).astype(np.float32)
    q = np.abs(rng.standard_normal(1 << 20)).astype(np.float32)
    ep, eq, tp, tq = th.from_numpy(p), th.from_numpy(q), torch.from_numpy(p), torch.from_numpy(q)
    u, v = (rng.standard_normal((4096, 256)).astype(np.float32) for _ in range(2))
    y = np.sign(rng.standard_normal(4096)).astype(np.float32)
    eu, ev, ey = th.from_numpy(u), th.from_numpy(v), th.from_numpy(y)
    tu, tv, ty = torch.from_numpy(u), torch.from_numpy(v), torch.from_numpy(y)
    return [
        ("group_norm 8x64x32x32, 8 groups", lambda: nn.group_norm_forward(ex, 8, ew, eb),
         lambda: F.group_norm(tx, 8, tw, tb)),
        ("upsample_nearest2d 32x32 -> 64x64", lambda: nn.upsample_nearest2d_forward(ex, (64, 64)),
         lambda: F.interpolate(tx, size=(64, 64), mode="nearest")),
        ("upsample_bilinear2d 32x32 -> 64x64",
         lambda: nn.upsample_bilinear2d_forward(ex, (64, 64)),
         lambda: F.interpolate(tx, size=(64, 64), mode="bilinear")),
        ("reflection_pad2d 3", lambda: nn.reflection_pad2d_forward(ex, 3),
         lambda: F.pad(tx, (3, 3, 3, 3), mode="reflect")),
        ("embedding_bag mean, 256 bags of 16, dim 128",
         lambda: nn.embedding_bag_forward(et, ei, eo, "mean"),
         lambda: F.embedding_bag(ti, tt, to, mode="mean")),
        ("kl_div sum, 2^20 elements", lambda: nn.kl_div_forward(ep, eq, "sum"),
         lambda: F.kl_div(tp, tq, reduction="sum")),
        ("margin_ranking_loss mean, 2^20 elements",
         lambda: nn.margin_ranking_loss_forward(ep, eq, ep, 0.1, "mean"),
         lambda: F.margin_ranking_loss(tp, tq, tp, 0.1)),
        ("cosine_embedding_loss mean, 4096x256",
         lambda: nn.cosine_embedding_loss_forward(eu, ev, ey, 0.1, "mean"),
         lambda: F.cosine_embedding_loss(tu, tv, ty, 0.1)),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    cases = workloads()
    for n in args.threads:
        th.set_num_threads(n)
        torch.set_num_threads(n)
        for name, fe, ft in cases:
            te, tt = bench([fe, ft], args.repeat)
            print(f"{n} thread(s)  {name:44s} ember {te * 1e3:8.3f} ms  torch "
                  f"{tt * 1e3:8.3f} ms  ratio {te / tt:5.2f}")


if __name__ == "__main__":
    main()
