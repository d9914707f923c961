"""Train LeNet-5 on generated MNIST-shaped data (1×28×28 images, 10
classes) with ember.nn and ember.optim — no downloads, a few seconds.

Each class is a fixed random stroke pattern; samples are that pattern,
shifted by up to 2 pixels, with noise. The network must learn
shift-tolerant features to separate them, which LeNet's convolutions and
pooling do in a couple of epochs.

    python examples/lenet_mnist_like.py [--epochs 3] [--train 1536]
"""
import argparse
import time

import numpy as np

import ember
import ember.nn as nn
import ember.nn.functional as F
import ember.optim as optim


class LeNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)    # 6×28×28
        self.conv2 = nn.Conv2d(6, 16, 5)              # 16×10×10
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)    # 6×14×14
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)    # 16×5×5
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def make_data(n, seed, templates):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    images = np.zeros((n, 1, 28, 28), np.float32)
    for i, y in enumerate(labels):
        dy, dx = rng.integers(-2, 3, 2)
        images[i, 0] = np.roll(templates[y], (dy, dx), axis=(0, 1))
    images += 0.3 * rng.standard_normal(images.shape).astype(np.float32)
    return ember.from_numpy(images), ember.from_numpy(labels.astype(np.int64))


def make_templates(seed=0):
    """Ten 28×28 'digits': a few random thick strokes in the middle 20×20."""
    rng = np.random.default_rng(seed)
    templates = np.zeros((10, 28, 28), np.float32)
    for t in templates:
        for _ in range(3):
            r0, c0 = rng.integers(6, 22, 2)
            r1, c1 = rng.integers(6, 22, 2)
            for s in np.linspace(0, 1, 40):
                r, c = int(r0 + s * (r1 - r0)), int(c0 + s * (c1 - c0))
                t[r - 1:r + 2, c - 1:c + 2] = 1.0
    return templates


def accuracy(model, x, y, batch=500):
    model.eval()
    correct = 0
    with ember.no_grad():
        for i in range(0, len(y), batch):
            correct += int((model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum())
    model.train()
    return correct / len(y)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--train", type=int, default=1536)
    parser.add_argument("--test", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)

    ember.manual_seed(args.seed)
    templates = make_templates(args.seed)
    x_train, y_train = make_data(args.train, args.seed + 1, templates)
    x_test, y_test = make_data(args.test, args.seed + 2, templates)

    model = LeNet()
    opt = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    steps_per_epoch = -(-args.train // args.batch_size)
    sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, epochs=args.epochs,
                                          steps_per_epoch=steps_per_epoch)
    start = time.perf_counter()
    for epoch in range(args.epochs):
        perm = ember.randperm(args.train)
        total = 0.0
        for i in range(0, args.train, args.batch_size):
            idx = perm[i:i + args.batch_size]
            loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        if not args.quiet:
            print(f"epoch {epoch + 1}: loss {total / args.train:.4f}  "
                  f"test accuracy {accuracy(model, x_test, y_test):.3f}  "
                  f"({time.perf_counter() - start:.1f} s)")
    acc = accuracy(model, x_test, y_test)
    print(f"final test accuracy: {acc:.3f}")
    return acc


if __name__ == "__main__":
    main()
