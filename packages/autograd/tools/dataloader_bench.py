"""DataLoader throughput of ember against PyTorch (CPU), interleaved in one run:
batches/s for 64x1x28x28 float32 batches from a TensorDataset, 0 and 2 workers.

    python packages/autograd/tools/dataloader_bench.py [--samples 6400] [--repeat 3]

Each measurement is one full epoch (worker start-up included for the
2-worker case, as a user sees it); the median of --repeat epochs is
reported with the ratio ember / torch in batches per second (higher is
better for ember above 1.0).
"""
import argparse
import statistics
import time


def epoch_rate(mod, data_mod, x, y, workers):
    dl = data_mod.DataLoader(data_mod.TensorDataset(x, y), batch_size=64, shuffle=True,
                             num_workers=workers)
    t0 = time.perf_counter()
    n = 0
    for xb, yb in dl:
        n += 1
    return n / (time.perf_counter() - t0)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=6400)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    import ember
    import ember.utils.data as edata
    import numpy as np
    import torch
    import torch.utils.data as tdata
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    xs = np.random.default_rng(0).standard_normal((a.samples, 1, 28, 28)).astype(np.float32)
    ys = np.arange(a.samples) % 10
    data = {"ember": (ember, edata, ember.tensor(xs), ember.tensor(ys)),
            "torch": (torch, tdata, torch.tensor(xs), torch.tensor(ys))}
    print(f"{'workers':>8} {'ember b/s':>10} {'torch b/s':>10} {'ratio':>6}")
    for workers in (0, 2):
        rates = {"ember": [], "torch": []}
        for _ in range(a.repeat):
            for name in ("ember", "torch"):
                rates[name].append(epoch_rate(*data[name], workers))
        e, t = statistics.median(rates["ember"]), statistics.median(rates["torch"])
        print(f"{workers:>8} {e:>10.0f} {t:>10.0f} {e / t:>6.2f}")


if __name__ == "__main__":
    main()
