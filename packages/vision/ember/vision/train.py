"""Train an image classifier: ``ember-vision train`` or
``python -m ember.vision.train``.

The default trains a LeNet-style CNN on the 8×8 Digits shipped with the
package.  Each epoch shows a progress bar, prints the training loss and the
test accuracy and writes a checkpoint (model, optimizer, scheduler, epoch,
history, random state); the end writes a PNG of the curves and of labelled
test images, and prints a summary line.  The loop is ember.utils.trainer's
Trainer with its plugins (progress bar, scheduler, validation, checkpoint)
and the command's own epoch record.
"""
import argparse
import os
import random
import sys
import time
from dataclasses import dataclass

import numpy as np

import ember
import ember.nn.functional as F
import ember.optim as optim
from ember.utils.data import DataLoader, Subset, TensorDataset
from ember.utils.trainer import Checkpoint, Plugin, ProgressBar, SchedulerStep, Trainer, Validation

from . import datasets, models
from . import transforms as T

CHECKPOINT = "checkpoint.pt"
REPORT = "report.png"


@dataclass(frozen=True)
class DatasetSpec:
    name: str                 # the class in ember.vision.datasets
    channels: int
    size: int
    mean: tuple
    std: tuple
    augment: tuple            # callables building the training-only transforms
    folder: str               # sub-folder tried under --root: <root>/<folder>/ holding the files


DATASETS = {
    # no augmentation on 8×8 digits: a one-pixel random shift cost 2 points of
    # accuracy in 15-epoch runs (98.3% without, 96.4% with)
    "digits": DatasetSpec("Digits", 1, 8, (0.3056,), (0.3761,), (), "digits"),
    "mnist": DatasetSpec("MNIST", 1, 28, (0.1307,), (0.3081,),
                         (lambda: T.RandomCrop(28, padding=2),), "mnist"),
    "fashion-mnist": DatasetSpec("FashionMNIST", 1, 28, (0.2860,), (0.3530,),
                                 (lambda: T.RandomCrop(28, padding=2),), "fashion-mnist"),
    "cifar10": DatasetSpec("CIFAR10", 3, 32, (0.4914, 0.4822, 0.4465),
                           (0.2470, 0.2435, 0.2616),
                           (lambda: T.RandomCrop(32, padding=4), T.RandomHorizontalFlip),
                           "cifar10"),
}

# smallest input side each family accepts; smaller images are resized up
_MIN_SIDE = {"alexnet": 63, "vgg": 32, "squeezenet": 32, "densenet": 32}


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _non_negative_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def build_parser():
    p = argparse.ArgumentParser(
        prog="ember-vision train",
        description="Train an image classifier with Ember and report its test accuracy.")
    p.add_argument("--dataset", choices=sorted(DATASETS), default="digits",
                   help="digits ships with the package; the others read files under --root "
                        "(default: %(default)s)")
    p.add_argument("--root", default="data",
                   help="folder holding the dataset files, directly, in <root>/<dataset>/ or "
                        "in <root>/<Class>/raw/ (default: %(default)s)")
    p.add_argument("--download", action="store_true",
                   help="fetch missing dataset files into --root")
    p.add_argument("--model", choices=models.list_models(), default="lenet",
                   help="default: %(default)s")
    p.add_argument("--epochs", type=_positive_int, default=None,
                   help="number of epochs (default: 15 on digits, 5 on mnist, 10 otherwise)")
    p.add_argument("--batch-size", type=_positive_int, default=None,
                   help="default: 32 on digits, 64 otherwise")
    p.add_argument("--lr", type=_positive_float, default=None,
                   help="peak learning rate of Adam's one-cycle schedule (default: 0.01 for "
                        "lenet, 0.001 for the others)")
    p.add_argument("--threads", type=_positive_int, default=None,
                   help="CPU threads for the kernels (default: Ember's default)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="default: cpu")
    p.add_argument("--seed", type=int, default=0,
                   help="the same seed gives the same run (default: %(default)s)")
    p.add_argument("--workers", type=_non_negative_int, default=0,
                   help="DataLoader worker processes (default: %(default)s)")
    p.add_argument("--limit", type=_positive_int, default=None, metavar="N",
                   help="train on the first N training samples only (quick runs)")
    p.add_argument("--out", default=None,
                   help="folder for the checkpoint and the PNG "
                        "(default: ./ember-runs/<dataset>-<model>)")
    p.add_argument("--nproc", type=_positive_int, default=1, metavar="N",
                   help="train on N processes of this machine (DistributedDataParallel, "
                        "each process a share of every batch; needs ember-distributed; "
                        "default: %(default)s)")
    p.add_argument("--compile", action="store_true",
                   help="train the model through ember.compile (its element-wise chains "
                        "fused into generated C kernels); the summary line says how many "
                        "fusion groups it found and its forward's speed against eager")
    p.add_argument("--resume", nargs="?", const="", default=None, metavar="CHECKPOINT",
                   help="continue from a checkpoint (default: the one in --out) at the epoch "
                        "after the last one it holds")
    return p


def _fill_defaults(args):
    if args.epochs is None:
        args.epochs = {"digits": 15, "mnist": 5}.get(args.dataset, 10)
    if args.batch_size is None:
        args.batch_size = 32 if args.dataset == "digits" else 64
    if args.lr is None:
        args.lr = 1e-2 if args.model == "lenet" else 1e-3
    if args.out is None:
        args.out = os.path.join("ember-runs", f"{args.dataset}-{args.model}")
    return args


# -- data --------------------------------------------------------------------

def _input_side(spec, model_name):
    if model_name == "lenet":
        return spec.size
    family = next((f for f in _MIN_SIDE if model_name.startswith(f)), None)
    return max(spec.size, _MIN_SIDE.get(family, 0))


def _transforms(spec, model_name, train):
    steps = [factory() for factory in spec.augment] if train else []
    side = _input_side(spec, model_name)
    if side != spec.size:
        steps.append(T.Resize(side))
    mean, std = spec.mean, spec.std
    if model_name != "lenet" and spec.channels == 1:
        steps.append(T.Grayscale(num_output_channels=3))   # the ImageNet models take RGB
        mean, std = mean * 3, std * 3
    return T.Compose(steps + [T.ToTensor(), T.Normalize(mean, std)])


def _open_dataset(parser, args, spec, train, transform):
    cls = getattr(datasets, spec.name)
    if spec.name == "Digits":
        return cls(train=train, transform=transform)
    errors = []
    for root in (args.root, os.path.join(args.root, spec.folder)):
        try:
            return cls(root, train=train, transform=transform,
                       download=args.download and root == args.root)
        except RuntimeError as e:      # files missing or unreadable under this root
            errors.append(f"{root}: {e}")
    parser.error(f"--dataset {args.dataset}: cannot read the files under --root "
                 f"{args.root!r} ({'; '.join(errors)}); use --download to fetch them")


@dataclass
class Ranks:
    """This process's place in a distributed run (rank 0 of 1 otherwise)."""
    rank: int = 0
    size: int = 1

    @property
    def main(self):
        return self.rank == 0


def _loaders(parser, args, spec, ranks=Ranks()):
    train_set = _open_dataset(parser, args, spec, True, _transforms(spec, args.model, True))
    test_set = _open_dataset(parser, args, spec, False, _transforms(spec, args.model, False))
    if args.limit is not None:
        train_set = Subset(train_set, range(min(args.limit, len(train_set))))
    for kind, dataset in (("training", train_set), ("test", test_set)):
        if len(dataset) == 0:
            parser.error(f"--dataset {args.dataset}: the {kind} set under --root "
                         f"{args.root!r} is empty")
    workers = dict(num_workers=args.workers, persistent_workers=args.workers > 0)
    data = train_set if spec.augment else _preload(train_set)
    if not spec.augment:
        workers = {}
    if ranks.size > 1:
        # each rank a share of every batch: the same number of steps as one
        # process with the whole batch
        from ember.utils.data.distributed import DistributedSampler
        sampler = DistributedSampler(data, num_replicas=ranks.size, rank=ranks.rank,
                                     shuffle=True, seed=args.seed)
        train_loader = DataLoader(data, batch_size=args.batch_size // ranks.size,
                                  sampler=sampler, **workers)
    else:
        train_loader = DataLoader(data, batch_size=args.batch_size, shuffle=True, **workers)
    test_loader = DataLoader(_preload(test_set), batch_size=max(args.batch_size, 256))
    return train_set, test_set, train_loader, test_loader


def _preload(dataset):
    """The dataset's items as two tensors.  Only for transforms without a
    random step: each item is then the same every epoch, so decoding and
    transforming it once (instead of once per epoch, image by image) gives
    the same batches, faster."""
    items = [dataset[i] for i in range(len(dataset))]
    images = ember.stack([image for image, _ in items])
    labels = ember.tensor([int(label) for _, label in items], dtype=ember.int64)
    return TensorDataset(images, labels)


# -- model and optimisation --------------------------------------------------

def build_model(args, spec, classes):
    if args.model == "lenet":
        return models.lenet(num_classes=classes, in_channels=spec.channels,
                            image_size=spec.size)
    return models.get_model(args.model, num_classes=classes)


def _device(parser, name):
    if name == "cuda":
        cuda = getattr(ember, "cuda", None)
        if cuda is None or not cuda.is_available():
            parser.error("--device cuda: no CUDA device is available to Ember (install "
                         "ember-thc on a machine with an NVIDIA GPU), use --device cpu")
    return ember.device(name)


def _seed_everything(seed):
    ember.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed % 2 ** 32)


# -- the training loop: ember.utils.trainer and the command's plugins ---------

class _DeviceBatches:
    """A loader's batches moved to the device.  Each pass notes when it
    began (an epoch's time counts its loader's start) and, for a
    distributed sampler, sets the epoch of the trainer it feeds."""

    def __init__(self, loader, device, trainer=None):
        self.loader, self.device, self.trainer = loader, device, trainer
        self.started = None

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        self.started = time.perf_counter()
        if self.trainer is not None and hasattr(self.loader.sampler, "set_epoch"):
            self.loader.sampler.set_epoch(self.trainer.epoch + 1)
        for images, labels in self.loader:
            yield images.to(self.device), labels.to(self.device)


class _EpochRecord(Plugin):
    """The command's history, one entry per epoch: the training loss over
    the epoch's samples (over every process's in a distributed run), the
    Validation plugin's test loss and accuracy, the epoch's seconds; rank 0
    prints the epoch's line.  Register it after Validation."""
    _state = ("history",)

    def __init__(self, batches, ranks, epochs, history):
        super().__init__([(1, "iteration"), (1, "epoch")])
        self.batches, self.ranks, self.epochs, self.history = batches, ranks, epochs, history
        self._total, self._seen = 0.0, 0

    def iteration(self, i, images, labels, output, loss):
        self._total += float(loss) * len(labels)
        self._seen += len(labels)

    def epoch(self, epoch):
        total, seen = self._total, float(self._seen)
        self._total, self._seen = 0.0, 0
        if self.ranks.size > 1:
            import ember.distributed as dist
            sums = ember.tensor([total, seen], dtype=ember.float64)
            dist.all_reduce(sums)
            total, seen = sums.tolist()
        if not self.ranks.main:          # rank 0 alone evaluates, saves and reports
            return
        test = self.trainer.stats["validation"]
        seconds = time.perf_counter() - self.batches.started
        for key, value in (("train_loss", total / seen), ("test_loss", test["loss"]),
                           ("test_accuracy", test["accuracy"]), ("seconds", seconds)):
            self.history[key].append(value)
        print(f"epoch {epoch}/{self.epochs}: train loss {total / seen:.4f}  test loss "
              f"{test['loss']:.4f}  test accuracy {100 * test['accuracy']:.2f}%  "
              f"({seconds:.1f} s)")


class _CommandTrainer(Trainer):
    """The Trainer whose checkpoints are the command's own (what --resume
    and the models' ``weights=`` read): the module's weights rather than a
    wrapper's, the scheduler, the history and the run's options."""

    def __init__(self, net, module, optimizer, batches, scheduler, args):
        super().__init__(net, F.cross_entropy, optimizer, batches)
        self.module, self.scheduler, self.args = module, scheduler, args
        self.record = None

    def state_dict(self):
        return {
            "model": self.module.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "epoch": self.epoch,
            "iterations": self.iterations,
            "history": self.record.history,
            "args": {k: getattr(self.args, k) for k in _RUN_OPTIONS},
            "rng_state": ember.get_rng_state(),
        }

    def save_checkpoint(self, path):
        return _save_checkpoint(self, path)


# -- checkpoints -------------------------------------------------------------

# the options a checkpoint records; all but epochs must match for --resume
_RUN_OPTIONS = ("dataset", "model", "batch_size", "lr", "seed", "limit", "epochs")


def _load_checkpoint(parser, path, args):
    if not os.path.isfile(path):
        parser.error(f"--resume: no checkpoint at {path!r}")
    try:
        state = ember.load(path)
    except Exception as e:    # any unreadable file is a user error here
        parser.error(f"--resume: cannot read {path!r}: {e}")
    if not isinstance(state, dict) or not {"model", "optimizer", "epoch"} <= set(state):
        parser.error(f"--resume: {path!r} is not a checkpoint of ember-vision train")
    saved = state.get("args", {})
    for option in _RUN_OPTIONS:
        if option == "epochs":
            continue           # training longer than first planned is what resume is for
        if option in saved and saved[option] != getattr(args, option):
            parser.error(f"--resume: the checkpoint was trained with --{option.replace('_', '-')}"
                         f" {saved[option]}, not {getattr(args, option)}")
    return state


def _save_checkpoint(trainer, path):
    """Written atomically (a temporary file renamed over the last one)."""
    return Trainer.save_checkpoint(trainer, path)


def _scheduler(optimizer, args, steps_per_epoch):
    return optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, epochs=args.epochs,
                                         steps_per_epoch=steps_per_epoch)


# -- the report --------------------------------------------------------------

def _shown_indices(test_set, predictions, count=24):
    """Up to a third of the grid from the test images the model got wrong,
    the rest spread evenly over the test set."""
    count = min(count, len(test_set))
    targets = ember.tensor([int(test_set.targets[i]) for i in range(len(test_set))]) \
        if not isinstance(test_set.targets, ember.Tensor) else test_set.targets
    wrong = (predictions != targets).nonzero().flatten().tolist()[:count // 3]
    spread = np.linspace(0, len(test_set) - 1, count).round().astype(int).tolist()
    return sorted(wrong + [i for i in spread if i not in wrong][:count - len(wrong)])


def _compile_summary(model, net, loader, device, repeats=5):
    """'; ember.compile: N fusion groups, forward X.XXx eager': the groups the
    compiled training step found, and one test batch's forward timed both
    ways (eval mode, no grad)."""
    groups = sum(len(g.groups) for g in net._compiled.graphs().values())
    images = next(iter(loader))[0].to(device)
    model.eval()
    times = {"eager": [], "compiled": []}
    with ember.no_grad():
        net(images)
        net(images)                  # traced, then built: not timed
        for _ in range(repeats):
            for name, fn in (("eager", model), ("compiled", net)):
                t = time.perf_counter()
                fn(images)
                times[name].append(time.perf_counter() - t)
    model.train()
    ratio = min(times["eager"]) / min(times["compiled"])
    return (f"; ember.compile: {groups} fusion group{'s' if groups != 1 else ''}, "
            f"forward {ratio:.2f}x eager")


def _report(path, model, test_set, spec, args, history, elapsed, device, predictions):
    from ._report import save_report
    indices = _shown_indices(test_set, predictions)
    images = ember.stack([test_set[i][0] for i in indices])
    labels = [int(test_set[i][1]) for i in indices]
    model.eval()
    with ember.no_grad():
        predictions = model(images.to(device)).argmax(1).cpu().tolist()
    mean = np.array(spec.mean, np.float32).reshape(-1, 1, 1)
    std = np.array(spec.std, np.float32).reshape(-1, 1, 1)
    # undo Normalize; a grey image given to an RGB model is shown once
    shown = images.numpy()[:, :spec.channels] * std + mean
    classes = test_set.classes
    accuracy = history["test_accuracy"][-1]
    title = (f"{args.dataset} / {args.model}: test accuracy {100 * accuracy:.2f}% after "
             f"{len(history['test_accuracy'])} epochs, {elapsed:.1f} s training")
    save_report(path, history, shown, labels, predictions, classes, title,
                caption="test images, up to a third of them mistakes: predicted label "
                        "(true label when wrong)")


# -- the command -------------------------------------------------------------

def _join(parser, args):
    """Ranks() on one process; in a distributed run (started by --nproc or
    ember.distributed.run), joins the process group."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return Ranks()
    import ember.distributed as dist
    if not dist.is_available():
        parser.error("--nproc: ember-distributed is not installed")
    if not dist.is_initialized():
        dist.init_process_group("mpi")
    ranks = Ranks(dist.get_rank(), dist.get_world_size())
    if args.batch_size % ranks.size:
        parser.error(f"--batch-size {args.batch_size} does not split over {ranks.size} "
                     f"processes")
    if args.threads is None:     # the machine's cores shared between the ranks
        ember.set_num_threads(max(1, (os.cpu_count() or 1) // ranks.size))
    return ranks


def run(args, parser):
    spec = DATASETS[args.dataset]
    device = _device(parser, args.device)
    if args.threads is not None:
        ember.set_num_threads(args.threads)
    ranks = _join(parser, args)
    say = print if ranks.main else (lambda *a, **k: None)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        parser.error(f"--out {args.out!r} exists and is not a folder")
    if ranks.main:
        os.makedirs(args.out, exist_ok=True)
    checkpoint_path = os.path.join(args.out, CHECKPOINT)
    resume_path = None
    if args.resume is not None:
        resume_path = args.resume or checkpoint_path
    state = _load_checkpoint(parser, resume_path, args) if resume_path else None
    if state is not None and state["epoch"] >= args.epochs:
        parser.error(f"--resume: the checkpoint already reached epoch {state['epoch']} of "
                     f"--epochs {args.epochs}; ask for more epochs")

    _seed_everything(args.seed)
    train_set, test_set, train_loader, test_loader = _loaders(parser, args, spec, ranks)
    model = build_model(args, spec, len(test_set.classes)).to(device)
    net = model
    if ranks.size > 1:
        if args.compile:
            parser.error("--compile trains one process: leave out --nproc")
        net = ember.nn.parallel.DistributedDataParallel(model)
    elif args.compile:
        net = ember.compile(model)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    batches = _DeviceBatches(train_loader, device)
    scheduler = _scheduler(optimizer, args, len(batches))
    trainer = _CommandTrainer(net, model, optimizer, batches, scheduler, args)
    batches.trainer = trainer
    history = {"train_loss": [], "test_loss": [], "test_accuracy": [], "seconds": []}
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        if state["args"].get("epochs") == args.epochs and "scheduler" in state:
            scheduler.load_state_dict(state["scheduler"])
        else:                           # a longer run: replay the schedule to this point
            for _ in range(state["epoch"] * len(batches)):
                scheduler.step()
        history = {k: list(v) for k, v in state["history"].items()}
        # before the plugins register: their first due times count from here
        trainer.epoch = state["epoch"]
        trainer.iterations = state.get("iterations", state["epoch"] * len(batches))

    trainer.register_plugin(SchedulerStep(scheduler))
    if ranks.main:
        trainer.register_plugin(ProgressBar(epochs=args.epochs, dynamic_ncols=True))
        validation = trainer.register_plugin(
            Validation(_DeviceBatches(test_loader, device), model=model))
    trainer.record = trainer.register_plugin(_EpochRecord(batches, ranks, args.epochs, history))
    if ranks.main:
        trainer.register_plugin(Checkpoint(checkpoint_path))
    if state is not None:
        ember.set_rng_state(state["rng_state"])
        say(f"resuming from {resume_path} after epoch {state['epoch']}")

    say(f"{args.dataset}: {len(train_set)} training and {len(test_set)} test images; "
          f"{args.model}: {sum(p.numel() for p in model.parameters()):,} parameters; "
          f"{ember.get_num_threads()} thread(s), device {device}" +
        (f", {ranks.size} processes" if ranks.size > 1 else ""))
    start = time.perf_counter()
    trainer.run(args.epochs)
    if ranks.size > 1:
        import ember.distributed as dist
        dist.barrier()
        dist.destroy_process_group()
        if not ranks.main:
            return None
    elapsed = sum(history["seconds"])
    report_path = os.path.join(args.out, REPORT)
    _report(report_path, model, test_set, spec, args, history, elapsed, device,
            validation.predictions)
    accuracy = history["test_accuracy"][-1]
    compiled = _compile_summary(model, net, test_loader, device) if args.compile else ""
    print(f"final test accuracy {100 * accuracy:.2f}% on {len(test_set)} images "
          f"({args.dataset}, {args.model}, {len(history['seconds'])} epochs) in "
          f"{elapsed:.1f} s (this run {time.perf_counter() - start:.1f} s){compiled}; "
          f"checkpoint {checkpoint_path}, report {report_path}")
    return {"history": history, "accuracy": accuracy, "checkpoint": checkpoint_path,
            "report": report_path}


def main(argv=None):
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _fill_defaults(parser.parse_args(argv))
    if args.nproc > 1 and "WORLD_SIZE" not in os.environ:
        if args.batch_size % args.nproc:
            parser.error(f"--batch-size {args.batch_size} does not split over {args.nproc} "
                         f"processes")
        # start the ranks, each running this command
        try:
            from ember.distributed.run import main as launch
        except ImportError:
            parser.error("--nproc: ember-distributed is not installed")
        return launch(["--nproc-per-node", str(args.nproc), "-m", "ember.vision.train",
                       *argv])
    run(args, parser)
    return 0


if __name__ == "__main__":
    sys.exit(main())
