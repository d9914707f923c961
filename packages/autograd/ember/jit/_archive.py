"""ember.jit.save / load: a zip of the graph as JSON and each constant's
raw bytes.  Nothing in it is code: loading reads JSON and bytes, checks
every reference (values defined before use, targets that are dispatch
points, dtypes, byte counts) and refuses anything else with a
RuntimeError naming the file and the problem.

    ember_jit/graph.json      format, version, values, nodes, outputs
    ember_jit/tensors/<id>    a constant's bytes (little-endian, C order)
"""
import io
import json
import math
import os
import zipfile

import numpy as np

from . import _points
from ._graph import Graph, Node, Value

__all__ = ["save", "load"]

FORMAT = "ember.jit"
VERSION = 1
_ROLES = ("input", "param", "buffer", "const", "node")


def _enc(obj):
    import ember
    if isinstance(obj, Value):
        return {"$v": obj.id}
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else {"$float": repr(obj)}
    if isinstance(obj, list):
        return [_enc(x) for x in obj]
    if isinstance(obj, tuple):
        return {"$tuple": [_enc(x) for x in obj]}
    if isinstance(obj, dict):
        return {"$dict": [[_enc(k), _enc(v)] for k, v in obj.items()]}
    if isinstance(obj, slice):
        return {"$slice": [_enc(obj.start), _enc(obj.stop), _enc(obj.step)]}
    if obj is Ellipsis:
        return {"$ellipsis": True}
    if isinstance(obj, ember.dtype):
        return {"$dtype": str(obj).replace("ember.", "")}
    if isinstance(obj, ember.device):
        return {"$device": str(obj)}
    raise TypeError(f"ember.jit.save: an argument of type {type(obj).__name__} ({obj!r}) "
                    f"cannot be saved")


class _Bad(Exception):
    pass


def _dtype(name):
    import ember
    d = getattr(ember, name, None) if isinstance(name, str) else None
    if not isinstance(d, ember.dtype):
        raise _Bad(f"unknown dtype {name!r}")
    return d


def _dec(obj, defined):
    import ember
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, list):
        return [_dec(x, defined) for x in obj]
    if not isinstance(obj, dict) or len(obj) != 1:
        raise _Bad(f"unexpected argument {obj!r:.80}")
    (key, x), = obj.items()
    if key == "$v":
        if not isinstance(x, int) or isinstance(x, bool) or x not in defined:
            raise _Bad(f"reference to value {x!r:.40} before it is defined")
        return defined[x]
    if key == "$tuple" and isinstance(x, list):
        return tuple(_dec(y, defined) for y in x)
    if key == "$dict" and isinstance(x, list) and all(isinstance(p, list) and len(p) == 2
                                                       for p in x):
        return {_dec(k, defined): _dec(v, defined) for k, v in x}
    if key == "$slice" and isinstance(x, list) and len(x) == 3:
        return slice(*(_dec(y, defined) for y in x))
    if key == "$ellipsis":
        return Ellipsis
    if key == "$float" and x in ("inf", "-inf", "nan"):
        return float(x)
    if key == "$dtype":
        return _dtype(x)
    if key == "$device" and isinstance(x, str):
        try:
            return ember.device(x)
        except Exception as e:
            raise _Bad(f"bad device {x!r:.40}: {e}") from None
    raise _Bad(f"unexpected argument {obj!r:.80}")


def save(module, f):
    """Writes a traced module (ember.jit.trace's result) to f (a path or a
    binary file)."""
    graph = getattr(module, "graph", None)
    if not isinstance(graph, Graph):
        raise TypeError(f"ember.jit.save: expected a traced module (from ember.jit.trace), "
                        f"got {type(module).__name__}")
    tensors, meta = {}, {}
    for v in graph.constants:
        t = module._constant(v)
        grad = bool(t.requires_grad) and v.role == "param"
        t = t.detach().cpu()
        if str(t.dtype) == "ember.bfloat16":
            raise TypeError(f"ember.jit.save: constant {v.name} is bfloat16, which cannot be "
                            f"saved yet; convert the module to float32 first")
        arr = np.ascontiguousarray(t.numpy())
        tensors[v.id] = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        meta[str(v.id)] = {"requires_grad": grad, "shape": list(t.shape)}
    doc = {
        "format": FORMAT, "version": VERSION, "name": module._get_name(),
        "values": [{"name": v.name, "shape": list(v.shape), "dtype": v.dtype, "role": v.role}
                   for v in graph.values],
        "nodes": [{"target": n.target, "args": _enc(n.args), "kwargs": _enc(n.kwargs),
                   "outputs": [v.id for v in n.outputs], "source": n.source,
                   "inplace": n.inplace} for n in graph.nodes],
        "outputs": _enc(graph.outputs), "tensors": meta,
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("ember_jit/graph.json", json.dumps(doc))
        for vid, data in tensors.items():
            z.writestr(f"ember_jit/tensors/{vid}", data)
    data = buf.getvalue()
    if isinstance(f, (str, os.PathLike)):
        tmp = f"{os.fspath(f)}.tmp{os.getpid()}"
        with open(tmp, "wb") as out:
            out.write(data)
        os.replace(tmp, f)
    else:
        f.write(data)


def load(f, map_location=None):
    """Reads what ember.jit.save wrote; returns a traced module."""
    where = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file>")
    try:
        if isinstance(f, (str, os.PathLike)):
            with open(f, "rb") as fh:
                raw = fh.read()
        else:
            raw = f.read()
        return _load(raw, map_location)
    except _Bad as e:
        raise RuntimeError(f"ember.jit.load: {where}: not a valid ember.jit archive: {e}") \
            from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as e:
        raise RuntimeError(f"ember.jit.load: {where}: not a valid ember.jit archive "
                           f"(truncated or not a zip file: {e})") from None


def _load(raw, map_location):
    import ember
    from ._module import traced_module_class
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        names = set(z.namelist())
        if "ember_jit/graph.json" not in names:
            raise _Bad("no ember_jit/graph.json")
        try:
            doc = json.loads(z.read("ember_jit/graph.json"))
        except (ValueError, UnicodeDecodeError) as e:
            raise _Bad(f"graph.json is not JSON ({e})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise _Bad("graph.json is not an ember.jit graph")
        if doc.get("version") != VERSION:
            raise _Bad(f"format version {doc.get('version')!r}; this Ember reads {VERSION}")
        graph = Graph()
        defined = {}
        values = doc.get("values")
        if not isinstance(values, list):
            raise _Bad("no value list")
        for i, d in enumerate(values):
            if not isinstance(d, dict) or d.get("role") not in _ROLES or \
                    not isinstance(d.get("name"), str) or not isinstance(d.get("shape"), list) \
                    or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                               for s in d["shape"]):
                raise _Bad(f"value {i} is malformed")
            _dtype(d.get("dtype"))
            v = graph.new_value(d["name"], d["shape"], d["dtype"], d["role"])
            if v.role != "node":
                defined[v.id] = v
        tensors = {}
        meta = doc.get("tensors")
        if not isinstance(meta, dict):
            raise _Bad("no tensor table")
        for v in graph.constants:
            m = meta.get(str(v.id))
            member = f"ember_jit/tensors/{v.id}"
            if not isinstance(m, dict) or member not in names:
                raise _Bad(f"constant {v.name} has no data")
            dt = _dtype(v.dtype)
            arr_dtype = np.dtype(str(ember.empty(0, dtype=dt).numpy().dtype)).newbyteorder("<")
            count = math.prod(v.shape)
            info = z.getinfo(member)
            if info.file_size != count * arr_dtype.itemsize:
                raise _Bad(f"constant {v.name}: {info.file_size} bytes for shape "
                           f"{list(v.shape)} of {v.dtype}")
            arr = np.frombuffer(z.read(member), dtype=arr_dtype).reshape(v.shape)
            t = ember.from_numpy(arr.astype(arr_dtype.newbyteorder("="), copy=True))
            if map_location is not None:
                t = t.to(map_location)
            t.requires_grad_(bool(m.get("requires_grad", False)) and t.is_floating_point())
            tensors[v.id] = t
        nodes = doc.get("nodes")
        if not isinstance(nodes, list):
            raise _Bad("no node list")
        for i, d in enumerate(nodes):
            if not isinstance(d, dict) or not isinstance(d.get("target"), str):
                raise _Bad(f"node {i} is malformed")
            try:
                kind = _points.kind_of(d["target"])
            except KeyError:
                raise _Bad(f"node {i} calls {d['target']!r:.80}, which is not an Ember "
                           f"op") from None
            args, kwargs = _dec(d.get("args"), defined), _dec(d.get("kwargs"), defined)
            if not isinstance(args, tuple) or not isinstance(kwargs, dict) or \
                    not all(isinstance(k, str) for k in kwargs):
                raise _Bad(f"node {i} has malformed arguments")
            outs = d.get("outputs")
            if not isinstance(outs, list) or not all(
                    isinstance(o, int) and not isinstance(o, bool) and 0 <= o < len(values)
                    and graph.values[o].role == "node" and o not in defined for o in outs):
                raise _Bad(f"node {i} has malformed outputs")
            inplace = bool(d.get("inplace", False))
            if inplace and (len(outs) != 1 or not args or not isinstance(args[0], Value)):
                raise _Bad(f"node {i}: an in-place op writes one tensor")
            source = d.get("source") if isinstance(d.get("source"), str) else ""
            node = Node(d["target"], kind, args, kwargs, [graph.values[o] for o in outs],
                        source, inplace)
            for v in node.outputs:
                v.node = node
                defined[v.id] = v
            graph.nodes.append(node)
        graph.outputs = _dec(doc.get("outputs"), defined)
        name = doc.get("name") if isinstance(doc.get("name"), str) else "TracedModule"
    return traced_module_class()(graph, tensors, name)
