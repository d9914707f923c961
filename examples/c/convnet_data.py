"""Writes the weights, an input batch and ember's output for the small CNN
that convnet.c (and examples/lua/convnet.lua) run without Python:

    conv2d(1→4, 3×3) → relu → max_pool2d(2) → conv2d(4→8, 3×3) → relu
    → max_pool2d(2) → flatten → linear(32→10) → log_softmax

    python examples/c/convnet_data.py convnet.bin [--seed 0] [--batch 4]

File format (little-endian): the magic b"EMBRTNS1", a uint32 count, then
`count` records, each: uint32 name length, the name (UTF-8), uint32 dtype
code (0 = float32, libTH's TH_FLOAT32), uint32 ndim, ndim int64 sizes, and
the values in row-major order.  The records are conv1.weight, conv1.bias,
conv2.weight, conv2.bias, fc.weight, fc.bias, input and expected (the
(N, 10) log-probabilities ember computes).
"""
import argparse
import struct

import ember
import ember.nn.functional as F

MAGIC = b"EMBRTNS1"
FLOAT32 = 0


def forward(p, x):
    """The network, with ember.nn.functional: the reference the programs match."""
    x = F.max_pool2d(F.relu(F.conv2d(x, p["conv1.weight"], p["conv1.bias"])), 2)
    x = F.max_pool2d(F.relu(F.conv2d(x, p["conv2.weight"], p["conv2.bias"])), 2)
    x = F.linear(x.flatten(1), p["fc.weight"], p["fc.bias"])
    return F.log_softmax(x, dim=1)


def make(seed=0, batch=4):
    g = ember.Generator().manual_seed(seed)

    def randn(*shape, scale):
        return ember.randn(*shape, generator=g) * scale

    p = {"conv1.weight": randn(4, 1, 3, 3, scale=0.5), "conv1.bias": randn(4, scale=0.1),
         "conv2.weight": randn(8, 4, 3, 3, scale=0.3), "conv2.bias": randn(8, scale=0.1),
         "fc.weight": randn(10, 32, scale=0.3), "fc.bias": randn(10, scale=0.1)}
    p["input"] = ember.rand(batch, 1, 16, 16, generator=g)
    p["expected"] = forward(p, p["input"])
    return p


def write(path, tensors):
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<I", len(tensors)))
        for name, t in tensors.items():
            t = t.detach().to(ember.float32).contiguous()
            raw = name.encode()
            f.write(struct.pack("<I", len(raw)) + raw)
            f.write(struct.pack("<II", FLOAT32, t.dim()))
            f.write(struct.pack(f"<{t.dim()}q", *t.shape))
            f.write(t.numpy().astype("<f4").tobytes())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=4)
    args = ap.parse_args(argv)
    write(args.path, make(args.seed, args.batch))


if __name__ == "__main__":
    main()
