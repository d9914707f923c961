"""Build and runtime facts, under PyTorch's names: `show()` and
`parallel_info()` return text for printing."""
import os

__all__ = ["show", "parallel_info"]


def parallel_info():
    """Intra-op and inter-op thread settings and libTH's pool counters."""
    import ember
    import ember.th as th
    lines = [
        "Ember parallel runtime:",
        f"\tember.get_num_threads() : {ember.get_num_threads()}",
        f"\tember.get_num_interop_threads() : {ember.get_num_interop_threads()}",
        f"\tusable cores : {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()}",
    ]
    for var in ("OMP_NUM_THREADS", "EMBER_SPIN_US", "EMBER_LOAD_CHECK"):
        lines.append(f"\tenvironment {var} : {os.environ.get(var, '[not set]')}")
    lines.append(th.parallel_info().rstrip())
    return "\n".join(lines) + "\n"


def show():
    """Which packages and C libraries this Ember is made of."""
    import ember.th as th
    lines = [f"Ember {_version('ember')}",
             f"  - ember-th {_version('ember-th')}: libTH {th.__version__}"
             f"{' with OpenBLAS (scipy-openblas32)' if th.has_blas() else ' with its blocked GEMM (TH_NO_BLAS)'}"
             f"{'' if th.has_threads() else ', single-threaded (TH_NO_THREADS)'}"]
    for dist in ("ember-thnn", "ember-nn", "ember-vision", "ember-thc", "ember-thcunn"):
        v = _version(dist)
        if v:
            lines.append(f"  - {dist} {v}")
    return "\n".join(lines) + "\n"


def _version(dist):
    from importlib import metadata
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
