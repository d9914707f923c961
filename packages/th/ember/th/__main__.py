"""python -m ember.th --cflags | --libs | --version: build flags for C code."""
import argparse
import os

import ember.th as th


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m ember.th",
                                 description="Print what a C build against libTH needs.")
    ap.add_argument("--cflags", action="store_true", help="compiler flags (-I...)")
    ap.add_argument("--libs", action="store_true", help="linker flags (-L... -lTH, rpath)")
    ap.add_argument("--pkgconfig", action="store_true", help="folder of th.pc")
    ap.add_argument("--version", action="store_true")
    args = ap.parse_args(argv)
    out = []
    if args.version:
        out.append(th.__version__)
    if args.cflags:
        out.append(f"-I{th.get_include()}")
    if args.libs:
        d = th.get_lib_dir()
        out.append(f"-L{d} -lTH -Wl,-rpath,{d}")
    if args.pkgconfig:
        out.append(os.path.join(th.get_lib_dir(), "pkgconfig"))
    if not out:
        ap.print_help()
        return 1
    print(" ".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
