"""`ember-vision` command line: `ember-vision train ...`."""
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: ember-vision train [options]   (ember-vision train --help for the options)")
        return 0 if argv else 2
    if argv[0] != "train":
        print(f"ember-vision: unknown command {argv[0]!r} (known: train)", file=sys.stderr)
        return 2
    from . import train
    return train.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
