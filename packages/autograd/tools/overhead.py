"""Per-op overhead of ember against PyTorch (CPU, 1 thread), interleaved in
one run: `a + b` on 1-element tensors, and `(a * b).sum().backward()`.

    python packages/autograd/tools/overhead.py [--repeat 7]

Prints microseconds per call (the best of `--repeat` timeit batches of
`--number` calls, libraries alternating) and the ratio ember / torch.
"""
import argparse
import timeit


def _cases(mod):
    a = mod.ones(1)
    b = mod.ones(1)
    ga = mod.ones(1, requires_grad=True)
    gb = mod.ones(1, requires_grad=True)

    def fwd_bwd():
        (ga * gb).sum().backward()

    return {
        "a + b (1 element)": lambda: a + b,
        "a + b, a requires grad": lambda: ga + b,
        "(a * b).sum().backward()": fwd_bwd,
        "x.exp() (no grad)": lambda: a.exp(),
        "x[0] (no grad)": lambda: a[0],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--number", type=int, default=20000)
    args = ap.parse_args()
    import ember
    import torch
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    cases = {"ember": _cases(ember), "torch": _cases(torch)}
    best = {lib: {k: float("inf") for k in c} for lib, c in cases.items()}
    for _ in range(args.repeat):  # interleaved, so load changes hit both alike
        for name in cases["ember"]:
            for lib in ("ember", "torch"):
                t = timeit.timeit(cases[lib][name], number=args.number) / args.number
                best[lib][name] = min(best[lib][name], t)
    print(f"{'case':32} {'ember us':>9} {'torch us':>9} {'ratio':>6}")
    for name in cases["ember"]:
        e, t = best["ember"][name] * 1e6, best["torch"][name] * 1e6
        print(f"{name:32} {e:9.2f} {t:9.2f} {e / t:6.2f}")


if __name__ == "__main__":
    main()
