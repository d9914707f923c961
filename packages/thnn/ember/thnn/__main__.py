"""python -m ember.thnn --cflags | --libs | --pkgconfig | --version: what a C
build against libTHNN (and the libTH it needs) takes."""
import argparse
import os

import ember.th as th
import ember.thnn as thnn


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m ember.thnn",
                                 description="Print what a C build against libTHNN needs.")
    ap.add_argument("--cflags", action="store_true", help="compiler flags (-I...)")
    ap.add_argument("--libs", action="store_true", help="linker flags (-lTHNN -lTH, rpaths)")
    ap.add_argument("--pkgconfig", action="store_true",
                    help="PKG_CONFIG_PATH value for thnn.pc and th.pc")
    ap.add_argument("--version", action="store_true")
    args = ap.parse_args(argv)
    out = []
    if args.version:
        out.append(thnn.__version__)
    if args.cflags:
        out.append(f"-I{thnn.get_include()} -I{th.get_include()}")
    if args.libs:
        d, t = thnn.get_lib_dir(), th.get_lib_dir()
        out.append(f"-L{d} -lTHNN -Wl,-rpath,{d} -L{t} -lTH -Wl,-rpath,{t}")
    if args.pkgconfig:
        out.append(os.pathsep.join([os.path.join(thnn.get_lib_dir(), "pkgconfig"),
                                    os.path.join(th.get_lib_dir(), "pkgconfig")]))
    if not out:
        ap.print_help()
        return 1
    print(" ".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
