"""ONNX export of ResNet-18 (3x224x224, batch 1, eval mode, opset 17):
ember.onnx.export against torch.onnx.export (the TorchScript exporter,
dynamo=False: the dynamo exporter needs onnxscript) on the same weights, in
one process, interleaved; prints the median wall time of each over
--rounds runs (after one untimed run each) and the file sizes.

    python bench/onnx_export.py [--rounds 5]
"""
import argparse
import io
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import ember  # noqa: E402
import ember.onnx  # noqa: E402
from ember.vision import models  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--opset", type=int, default=17)
    args = p.parse_args()
    import torch
    from workloads.vision import torch_resnet18
    ember.manual_seed(0)
    em = models.resnet18().eval()
    tm = torch_resnet18(torch.nn).eval()
    tm.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                        for k, v in em.state_dict().items()})
    x = ember.randn(1, 3, 224, 224)
    tx = torch.from_numpy(x.numpy().copy())

    def run_ember():
        buf = io.BytesIO()
        ember.onnx.export(em, (x,), buf, opset_version=args.opset, input_names=["input"],
                          output_names=["output"])
        return buf.getvalue()

    def run_torch():
        buf = io.BytesIO()
        torch.onnx.export(tm, (tx,), buf, opset_version=args.opset, input_names=["input"],
                          output_names=["output"], dynamo=False)
        return buf.getvalue()

    sizes = {"ember": len(run_ember()), "torch": len(run_torch())}   # untimed first runs
    times = {"ember": [], "torch": []}
    for _ in range(args.rounds):
        for name, fn in (("ember", run_ember), ("torch", run_torch)):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    # both files compute the same logits
    import onnxruntime as ort
    outs = {}
    for name, fn in (("ember", run_ember), ("torch", run_torch)):
        sess = ort.InferenceSession(fn(), providers=["CPUExecutionProvider"])
        outs[name] = sess.run(None, {"input": x.numpy()})[0]
    diff = float(np.abs(outs["ember"] - outs["torch"]).max())
    te, tt = statistics.median(times["ember"]), statistics.median(times["torch"])
    print(f"machine: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} cpus, "
          f"Python {platform.python_version()}, torch {torch.__version__}")
    print("| exporter | median time (s) | file size (bytes) |")
    print("|---|---|---|")
    print(f"| ember.onnx.export | {te:.3f} | {sizes['ember']} |")
    print(f"| torch.onnx.export (dynamo=False) | {tt:.3f} | {sizes['torch']} |")
    print(f"| ratio Ember/PyTorch | {te / tt:.2f} | {sizes['ember'] / sizes['torch']:.4f} |")
    print(f"max |ORT(ember file) - ORT(torch file)| = {diff:.3g}")


if __name__ == "__main__":
    main()
