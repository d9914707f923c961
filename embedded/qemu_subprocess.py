"""pytest plugin for test runs under qemu-user (embedded/aarch64_wheels.py):
a test that starts `sys.executable` (a fresh interpreter: a hang or a crash
in a child fails instead of killing the run) would exec an aarch64 program,
which this machine's kernel cannot run without binfmt_misc; the plugin
starts it through qemu-aarch64, as the run itself was started."""
import os
import subprocess
import sys

_QEMU = os.environ["EMBER_QEMU"]            # path of qemu-aarch64
_SYSROOT = os.environ["EMBER_QEMU_SYSROOT"]  # its -L folder
_popen_init = subprocess.Popen.__init__


def _through_qemu(self, args, *rest, **kwargs):
    if isinstance(args, (list, tuple)) and args and args[0] == sys.executable:
        args = [_QEMU, "-L", _SYSROOT, *args]
    return _popen_init(self, args, *rest, **kwargs)


subprocess.Popen.__init__ = _through_qemu
