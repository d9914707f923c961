"""`ember-vision export`: one of ember.vision's models (optionally with a
checkpoint's weights) to an ONNX file, checked against Ember through
onnxruntime when it is installed.

    ember-vision export --model resnet18 [--checkpoint FILE] --out model.onnx [--dynamic-batch]

The checkpoint is a state_dict saved by ember.save or torch.save
(torchvision's key names are ember.vision's) or a checkpoint of
`ember-vision train` (its "model" entry).
"""
import argparse
import sys

import ember
import ember.onnx

from . import models


def _parser():
    p = argparse.ArgumentParser(prog="ember-vision export",
                                description="Export an ember.vision model to ONNX.")
    p.add_argument("--model", choices=models.list_models(), required=True)
    p.add_argument("--checkpoint", metavar="FILE",
                   help="weights: a state_dict (ember.save / torch.save) or a checkpoint of "
                        "ember-vision train")
    p.add_argument("--out", required=True, metavar="FILE", help="the .onnx file to write")
    p.add_argument("--dynamic-batch", action="store_true",
                   help="let the batch size (dim 0 of input and output) vary")
    p.add_argument("--num-classes", type=int, default=None,
                   help="classes of the model (default: the checkpoint's, else 1000; 10 for "
                        "lenet)")
    p.add_argument("--image-size", type=int, default=None,
                   help="side of the square example input (default 224; lenet 28)")
    p.add_argument("--opset", type=int, default=None, help="ONNX opset (default: the newest "
                   "the installed onnxruntime runs)")
    p.add_argument("--batch", type=int, default=1, help="batch of the example input")
    return p


def _state(parser, path):
    try:
        state = ember.load(path, map_location="cpu")
    except Exception as e:
        parser.error(f"--checkpoint: cannot read {path!r}: {e}")
    if isinstance(state, dict) and isinstance(state.get("model"), dict):
        state = state["model"]
    if not isinstance(state, dict) or not all(isinstance(v, ember.Tensor)
                                              for v in state.values()):
        parser.error(f"--checkpoint: {path!r} holds no state_dict")
    return state


def _classes(state):
    """The class count of a classifier's state_dict: the rows of its last weight."""
    weights = [v for k, v in state.items() if k.endswith("weight") and v.dim() >= 2]
    return int(weights[-1].shape[0]) if weights else None


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    state = _state(parser, args.checkpoint) if args.checkpoint else None
    classes = args.num_classes or (_classes(state) if state else None) or \
        (10 if args.model == "lenet" else 1000)
    kwargs = {"num_classes": classes}
    size = args.image_size or (28 if args.model == "lenet" else 224)
    channels = 3
    if args.model == "lenet":
        channels = state["conv1.weight"].shape[1] if state and "conv1.weight" in state else 1
        kwargs.update(in_channels=channels, image_size=size)
    model = models.get_model(args.model, **kwargs)
    if state is not None:
        try:
            model.load_state_dict(state)
        except (RuntimeError, KeyError) as e:
            parser.error(f"--checkpoint: does not fit {args.model}: {e}")
    model.eval()
    x = ember.randn(args.batch, channels, size, size)
    dynamic = {"input": {0: "batch"}, "logits": {0: "batch"}} if args.dynamic_batch else None
    try:
        ember.onnx.export(model, (x,), args.out, input_names=["input"],
                          output_names=["logits"], dynamic_axes=dynamic,
                          opset_version=args.opset)
    except ImportError as e:
        print(f"ember-vision export: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} ({args.model}, input {list(x.shape)}"
          f"{', dynamic batch' if args.dynamic_batch else ''})")
    try:
        import onnxruntime as ort
    except ImportError:
        print("onnxruntime is not installed: the file was not run")
        return 0
    batch = args.batch + 1 if args.dynamic_batch else args.batch
    x = ember.randn(batch, channels, size, size)
    sess = ort.InferenceSession(args.out, providers=["CPUExecutionProvider"])
    got = sess.run(None, {"input": x.numpy()})[0]
    with ember.no_grad():
        want = model(x).numpy()
    diff = float(abs(got - want).max())
    print(f"onnxruntime vs Ember on a random batch of {batch}: max abs difference {diff:.3g}")
    return 0
