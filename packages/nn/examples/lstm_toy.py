"""Teach an LSTM the adding problem on variable-length sequences — ember.nn
and ember.optim only, generated data, a few seconds.

Each sequence has 5–15 steps of (value, marker) pairs: values uniform in
[0, 1), markers 1 at exactly two steps and 0 elsewhere.  The target is the
sum of the two marked values.  Predicting the mean sum (1.0) scores an
error of about 1/6; the network must learn to pick out and remember the
marked values, over sequences of different lengths, which are batched as
PackedSequences.

    python examples/lstm_toy.py [--steps 400] [--hidden 32]
"""
import argparse
import time

import numpy as np

import ember
import ember.nn as nn
import ember.nn.functional as F
import ember.optim as optim
from ember.nn.utils.rnn import pack_padded_sequence


class Adder(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.lstm = nn.LSTM(2, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = self.lstm(packed)
        return self.head(h[-1]).squeeze(1)   # the state after each sequence's own last step


def make_batch(rng, n, min_len, max_len):
    """(padded inputs (n, max_len, 2), lengths, targets)."""
    lengths = rng.integers(min_len, max_len + 1, n)
    x = np.zeros((n, max_len, 2), np.float32)
    y = np.zeros(n, np.float32)
    for i, length in enumerate(lengths):
        x[i, :length, 0] = rng.random(length)
        marked = rng.choice(length, 2, replace=False)
        x[i, marked, 1] = 1.0
        y[i] = x[i, marked, 0].sum()
    return ember.from_numpy(x), ember.from_numpy(lengths.astype(np.int64)), ember.from_numpy(y)


def evaluate(model, batch):
    x, lengths, y = batch
    model.eval()
    with ember.no_grad():
        loss = F.mse_loss(model(x, lengths), y).item()
    model.train()
    return loss


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--min-len", type=int, default=5)
    parser.add_argument("--max-len", type=int, default=15)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)

    ember.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    test = make_batch(rng, 500, args.min_len, args.max_len)
    model = Adder(args.hidden)
    opt = optim.Adam(model.parameters(), lr=args.lr)
    first = evaluate(model, test)
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        x, lengths, y = make_batch(rng, args.batch_size, args.min_len, args.max_len)
        loss = F.mse_loss(model(x, lengths), y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if not args.quiet and (step % 50 == 0 or step == args.steps):
            print(f"step {step}: train loss {loss.item():.4f}  test loss "
                  f"{evaluate(model, test):.4f}  ({time.perf_counter() - start:.1f} s)")
    final = evaluate(model, test)
    print(f"test loss: {first:.4f} before training, {final:.4f} after "
          f"(predicting the mean scores about 0.167)")
    return first, final


if __name__ == "__main__":
    main()
