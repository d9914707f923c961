"""ember.utils.serialization.load_lua on files written byte by byte from the
format's layout (t7writer.py; no files written by Lua Torch itself are
available here): values, shared and cyclic references, tensors and
storages of every type, and malformed files: every truncation and random
byte flips are refused with a ValueError naming the offset, never a crash."""
import random
import struct

import numpy as np
import pytest

import ember
from ember.utils.serialization import LuaFunction, LuaObject, load_lua
from t7writer import Function, Object, Storage, Table, Tensor, dumps


def load(tmp_path, obj, long_size=8, name="f.t7"):
    path = tmp_path / name
    path.write_bytes(dumps(obj, long_size))
    return load_lua(path, long_size=long_size)


def test_plain_values(tmp_path):
    value = {"n": 3, "x": 2.5, "neg": -7, "s": "héllo", "t": True, "f": False,
             "nested": {"a": [1, 2, {"deep": "yes"}]}, 4: "four", 2.5: "key"}
    got = load(tmp_path, value)
    assert got == {"n": 3, "x": 2.5, "neg": -7, "s": "héllo", "t": True, "f": False,
                   "nested": {"a": [1, 2, {"deep": "yes"}]}, 4: "four", 2.5: "key"}
    assert isinstance(got["n"], int) and isinstance(got["x"], float)
    assert load(tmp_path, None) is None
    assert load(tmp_path, b"\xff\xfe") == b"\xff\xfe"      # not UTF-8: bytes
    assert load(tmp_path, [10, 20, 30]) == [10, 20, 30]
    assert load(tmp_path, {1: "a", 3: "c"}) == {1: "a", 3: "c"}   # not an array
    assert load(tmp_path, {}) == {}


def test_shared_and_cyclic_references(tmp_path):
    shared = {"w": 1}
    cyclic = {"name": "me"}
    cyclic["self"] = cyclic
    got = load(tmp_path, {"a": shared, "b": shared, "c": cyclic})
    assert got["a"] is got["b"] and got["a"] == {"w": 1}
    assert got["c"]["self"] is got["c"]


def test_tables_as_keys_and_self_references(tmp_path):
    # a table with one pair whose key and value are the table itself
    t = Table()
    t.pairs = [(t, t)]
    got = load(tmp_path, t)
    (key, value), = got.items()
    assert key is got and value is got
    # tables (arrays too) keying tables
    inner, arr = {"x": 1}, [1, 2]
    got = load(tmp_path, Table([(inner, "by table"), (arr, "by array")]))
    keys = sorted(got, key=lambda k: isinstance(k, list))
    assert keys[0] == {"x": 1} and keys[1] == [1, 2]
    assert got[keys[0]] == "by table" and got[keys[1]] == "by array"
    # an instance of a class that refers to itself
    obj = Object("A", {})
    obj.fields["a"] = obj
    got = load(tmp_path, obj)
    assert isinstance(got, LuaObject) and got.a is got


@pytest.mark.parametrize("type_name,dtype", [
    ("Double", ember.float64), ("Float", ember.float32), ("Half", ember.float16),
    ("Long", ember.int64), ("Int", ember.int32), ("Short", ember.int16), ("Char", ember.int8),
    ("Byte", ember.uint8), ("Cuda", ember.float32), ("CudaDouble", ember.float64),
    ("CudaLong", ember.int64), ("CudaByte", ember.uint8)])
@pytest.mark.parametrize("long_size", [8, 4])
def test_tensors_and_storages_of_every_type(tmp_path, type_name, dtype, long_size):
    rng = np.random.default_rng(0)
    values = (rng.standard_normal(30) * 40).astype(np.float64)
    np_dtype = {ember.float64: np.float64, ember.float32: np.float32, ember.float16: np.float16,
                ember.int64: np.int64, ember.int32: np.int32, ember.int16: np.int16,
                ember.int8: np.int8, ember.uint8: np.uint8}[dtype]
    values = values.astype(np_dtype)
    storage = Storage(type_name, values)
    # a 3x4 view at offset 5 (1-based) with a transposed layout, and a second
    # tensor on the same storage
    t1 = Tensor(type_name, storage, [3, 4], [1, 5], offset=5)
    t2 = Tensor(type_name, storage, [2, 2, 2], [4, 2, 1], offset=2)
    empty = Tensor(type_name, None, [], [])
    got = load(tmp_path, {"t1": t1, "t2": t2, "s": storage, "empty": empty},
               long_size=long_size)
    step = values.itemsize
    expect1 = np.lib.stride_tricks.as_strided(values[4:], (3, 4), (step, 5 * step))
    assert got["t1"].dtype == dtype and got["t1"].shape == (3, 4)
    np.testing.assert_array_equal(got["t1"].numpy(), expect1)
    np.testing.assert_array_equal(got["t2"].numpy(), values[1:9].reshape(2, 2, 2))
    np.testing.assert_array_equal(got["s"].numpy(), values)
    assert got["empty"].numel() == 0
    # the two tensors and the storage share memory, as in Lua Torch
    got["s"][4] = 7
    got["s"][1] = 9
    assert float(got["t1"][0, 0]) == 7 and float(got["t2"][0, 0, 0]) == 9


def test_classes_versions_and_functions(tmp_path):
    fields = {"alpha": 0.5, "names": ["a", "b"]}
    got = load(tmp_path, {"new": Object("my.Thing", fields),
                          "old": Object("my.Old", {"k": 1}, versioned=False),
                          "fn": Function(b"\x1bLuaQ-bytecode", {1: "up"}, tag=8),
                          "fn6": Function(b"code", [], tag=6),
                          "fn7": Function(b"code7", None, tag=7)})
    assert isinstance(got["new"], LuaObject) and got["new"].torch_typename() == "my.Thing"
    assert got["new"].alpha == 0.5 and got["new"].names == ["a", "b"]
    assert got["old"].torch_typename() == "my.Old" and got["old"].k == 1
    assert isinstance(got["fn"], LuaFunction) and got["fn"].bytecode == b"\x1bLuaQ-bytecode"
    assert got["fn"].upvalues == ["up"] and got["fn7"].bytecode == b"code7"
    assert got["fn6"].bytecode == b"code" and got["fn6"].upvalues == {}
    # a recursive function is one object wherever it is referenced
    fn = Function(b"f", None)
    fn.upvalues = [fn]
    got = load(tmp_path, {"a": fn, "b": fn})
    assert got["a"] is got["b"] and got["a"].upvalues[0] is got["a"]


def _sample_file():
    storage = Storage("Float", np.arange(24, dtype=np.float32))
    shared = {"lr": 0.1}
    weight = Tensor("Float", storage, [4, 6], [6, 1])
    model = Object("nn.Unknown", {"weight": weight, "config": shared, "train": True})
    return dumps({"model": model,
                  "view": Tensor("Float", storage, [6, 4], [1, 6]),
                  "config": shared, "name": "sample", "f": Function(b"abc", [1.5])})


def test_every_truncation_is_refused(tmp_path):
    data = _sample_file()
    path = tmp_path / "cut.t7"
    for n in range(len(data)):
        path.write_bytes(data[:n])
        with pytest.raises(ValueError, match=r"load_lua: .*at offset \d+"):
            load_lua(path)
    path.write_bytes(data)
    assert load_lua(path)["name"] == "sample"


def test_random_byte_flips_never_crash(tmp_path):
    data = _sample_file()
    path = tmp_path / "flip.t7"
    rng = random.Random(0)
    refused = 0
    for _ in range(1500):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(mutated))
            mutated[i] = rng.choice([rng.randrange(256), 0xff, 0x7f, 0x80, 0])
        path.write_bytes(bytes(mutated))
        try:
            load_lua(path)
        except ValueError as e:
            assert "at offset" in str(e)
            refused += 1
    assert refused > 100


@pytest.mark.parametrize("body,message", [
    (struct.pack("<i", 9), "unknown type tag 9 at offset 0"),
    (struct.pack("<ii", 2, 2 ** 31 - 1), "a string needs 2147483647 bytes, 0 left at offset 8"),
    (struct.pack("<ii", 2, -5), "negative length -5 of a string at offset 4"),
    (struct.pack("<iii", 3, 1, 2 ** 30), "a table of 1073741824 pairs needs"),
    (struct.pack("<ii", 4, 1) + struct.pack("<i3s", 3, b"V 1") + struct.pack("<i19s", 19,
     b"torch.DoubleStorage") + struct.pack("<q", 2 ** 60), "a storage of 1152921504606846976"),
])
def test_size_fields_are_checked_against_the_bytes_left(tmp_path, body, message):
    path = tmp_path / "bad.t7"
    path.write_bytes(body)
    with pytest.raises(ValueError, match=message):
        load_lua(path)


def test_tensor_outside_its_storage_is_refused(tmp_path):
    storage = Storage("Double", np.arange(10.0))
    path = tmp_path / "oob.t7"
    path.write_bytes(dumps(Tensor("Double", storage, [3, 4], [4, 1])))
    with pytest.raises(ValueError, match=r"outside its storage of 10 elements at offset \d+"):
        load_lua(path)
    path.write_bytes(dumps(Tensor("Double", storage, [3], [-1], offset=3)))
    with pytest.raises(ValueError, match="negative size or stride"):
        load_lua(path)
    path.write_bytes(dumps(Tensor("Double", Storage("Float", np.ones(3)), [3], [1])))
    with pytest.raises(ValueError, match="tensor on a ember.float32 storage"):
        load_lua(path)


def test_deep_nesting_is_refused(tmp_path):
    value = []
    for _ in range(5000):
        value = [value]
    path = tmp_path / "deep.t7"
    path.write_bytes(dumps([1]))
    import sys
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(20000)
    try:
        data = dumps(value)
    finally:
        sys.setrecursionlimit(old)
    path.write_bytes(data)
    with pytest.raises(ValueError, match="nested deeper than 200 levels"):
        load_lua(path)
    with pytest.raises(ValueError, match="long_size must be 4 or 8"):
        load_lua(path, long_size=2)
