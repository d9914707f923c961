"""`ember-vision` command line: `ember-vision train ...`, `ember-vision export ...`."""
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: ember-vision train|export [options]   (ember-vision COMMAND --help for "
              "the options)")
        return 0 if argv else 2
    if argv[0] not in ("train", "export"):
        print(f"ember-vision: unknown command {argv[0]!r} (known: train, export)",
              file=sys.stderr)
        return 2
    if argv[0] == "export":
        from . import export
        return export.main(argv[1:])
    from . import train
    return train.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
