"""Downloads through a local HTTP server: mirrors, MD5, resume, no network."""
import hashlib
import http.server
import io
import os
import pickle
import socket
import tarfile
import threading
import zipfile

import numpy as np
import pytest

from ember.vision import datasets
from ember.vision.datasets.utils import download_url
from _formats import gz, idx_bytes


class FileServer:
    """Serves ``files`` (name -> bytes) with HTTP Range support.  Names in
    ``truncate_once`` are cut off half way the first time they are asked for;
    with ``honour_range = False`` every answer is the whole file."""

    def __init__(self):
        self.files = {}
        self.requests = []
        self.truncate_once = set()
        self.honour_range = True
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                name = self.path.lstrip("/")
                server.requests.append((name, self.headers.get("Range")))
                if name not in server.files:
                    self.send_error(404)
                    return
                body = server.files[name]
                start = 0
                rng = self.headers.get("Range")
                if rng and server.honour_range:
                    start = int(rng.split("=")[1].split("-")[0])
                    if start >= len(body):
                        self.send_response(416)
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                part = body[start:]
                self.send_header("Content-Length", str(len(part)))
                self.end_headers()
                if name in server.truncate_once:
                    server.truncate_once.discard(name)
                    self.wfile.write(part[: len(part) // 2])
                    self.close_connection = True
                    return
                self.wfile.write(part)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def add(self, name, data):
        self.files[name] = data
        return hashlib.md5(data).hexdigest()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = FileServer()
    yield s
    s.close()


@pytest.fixture(autouse=True)
def no_proxy_for_localhost(monkeypatch):
    # urllib would send 127.0.0.1 through a proxy named in the environment
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def _closed_port_url():
    """A URL on a port nothing listens on: connections are refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


UNREACHABLE = _closed_port_url()


def mnist_files(n=3):
    rng = np.random.RandomState(0)
    images = rng.randint(0, 256, size=(n, 28, 28)).astype(np.uint8)
    labels = rng.randint(0, 10, size=n).astype(np.uint8)
    files = {}
    for prefix in ("train", "t10k"):
        files[f"{prefix}-images-idx3-ubyte.gz"] = gz(idx_bytes(images))
        files[f"{prefix}-labels-idx1-ubyte.gz"] = gz(idx_bytes(labels))
    return files, images, labels


def test_mnist_download_tries_mirrors_in_order(tmp_path, server, monkeypatch):
    files, images, labels = mnist_files()
    resources = [(name, server.add(name, data)) for name, data in files.items()]
    monkeypatch.setattr(datasets.MNIST, "mirrors", [UNREACHABLE, server.url])
    monkeypatch.setattr(datasets.MNIST, "resources", resources)
    ds = datasets.MNIST(tmp_path, download=True)
    np.testing.assert_array_equal(ds.data.numpy(), images)
    raw = tmp_path / "MNIST" / "raw"
    assert sorted(os.listdir(raw)) == sorted(files)           # no .part left behind
    # a second call finds the files and fetches nothing
    count = len(server.requests)
    datasets.MNIST(tmp_path, train=False, download=True)
    assert len(server.requests) == count


def test_checksum_mismatch_removes_the_partial_file(tmp_path, server):
    server.add("f.bin", b"x" * 1000)
    with pytest.raises(RuntimeError, match="checksum mismatch for f.bin") as info:
        download_url(server.url + "f.bin", tmp_path, md5="0" * 32)
    assert "expected MD5 " + "0" * 32 in str(info.value)
    assert os.listdir(tmp_path) == []


def test_checksum_mismatch_is_not_hidden_by_other_mirrors(tmp_path, server, monkeypatch):
    files, _, _ = mnist_files()
    for name, data in files.items():
        server.add(name, data)
    monkeypatch.setattr(datasets.FashionMNIST, "mirrors", [server.url, server.url])
    with pytest.raises(RuntimeError, match="checksum mismatch"):
        datasets.FashionMNIST(tmp_path, download=True)          # the real MD5s do not match
    assert not (tmp_path / "FashionMNIST" / "raw" / "train-images-idx3-ubyte.gz").exists()


def test_resume_continues_a_partial_file_with_a_range_request(tmp_path, server):
    data = bytes(range(256)) * 40
    md5 = server.add("big.bin", data)
    (tmp_path / "big.bin.part").write_bytes(data[:3000])
    path = download_url(server.url + "big.bin", tmp_path, md5=md5)
    assert open(path, "rb").read() == data
    assert server.requests == [("big.bin", "bytes=3000-")]
    assert not (tmp_path / "big.bin.part").exists()


def test_interrupted_download_resumes_within_the_call(tmp_path, server):
    data = os.urandom(50_000)
    md5 = server.add("drop.bin", data)
    server.truncate_once.add("drop.bin")
    path = download_url(server.url + "drop.bin", tmp_path, md5=md5)
    assert open(path, "rb").read() == data
    assert server.requests[0] == ("drop.bin", None)
    assert server.requests[1] == ("drop.bin", f"bytes={len(data) // 2}-")


def test_server_without_range_support_restarts_the_file(tmp_path, server):
    data = b"abcdefghij" * 100
    md5 = server.add("f.bin", data)
    server.honour_range = False
    (tmp_path / "f.bin.part").write_bytes(b"zzzz")
    path = download_url(server.url + "f.bin", tmp_path, md5=md5)
    assert open(path, "rb").read() == data


def test_complete_partial_file_is_finished_on_416(tmp_path, server):
    data = b"0123456789"
    md5 = server.add("f.bin", data)
    (tmp_path / "f.bin.part").write_bytes(data)
    assert open(download_url(server.url + "f.bin", tmp_path, md5=md5), "rb").read() == data


def test_no_network_says_where_to_put_the_files(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.KMNIST, "mirrors", [UNREACHABLE])
    with pytest.raises(RuntimeError) as info:
        datasets.KMNIST(tmp_path, download=True)
    message = str(info.value)
    assert "could not download train-images-idx3-ubyte.gz" in message
    assert UNREACHABLE + "train-images-idx3-ubyte.gz" in message
    assert "Without a network" in message
    assert str(tmp_path / "KMNIST" / "raw" / "train-images-idx3-ubyte.gz") in message


def test_missing_file_on_the_server_is_reported(tmp_path, server, monkeypatch):
    monkeypatch.setattr(datasets.SVHN, "mirrors", [server.url])
    with pytest.raises(RuntimeError, match="404"):
        datasets.SVHN(tmp_path, split="test", download=True)


def test_cifar10_download_unpacks_the_archive(tmp_path, server, monkeypatch):
    buf = io.BytesIO()
    rng = np.random.RandomState(3)
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        def add(name, obj):
            payload = pickle.dumps(obj, protocol=2)
            info = tarfile.TarInfo("cifar-10-batches-py/" + name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
        for name in datasets.CIFAR10.train_list + datasets.CIFAR10.test_list:
            add(name, {"data": rng.randint(0, 256, (2, 3072)).astype(np.uint8), "labels": [1, 2]})
        add("batches.meta", {"label_names": [f"k{i}" for i in range(10)]})
    md5 = server.add("cifar-10-python.tar.gz", buf.getvalue())
    monkeypatch.setattr(datasets.CIFAR10, "mirrors", [server.url])
    monkeypatch.setattr(datasets.CIFAR10, "tgz_md5", md5)
    ds = datasets.CIFAR10(tmp_path, download=True)
    assert len(ds) == 10 and ds.classes[3] == "k3"


def test_emnist_download_unpacks_the_zip(tmp_path, server, monkeypatch):
    images = np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for part in ("train", "test"):
            z.writestr(f"gzip/emnist-letters-{part}-images-idx3-ubyte.gz", gz(idx_bytes(images)))
            z.writestr(f"gzip/emnist-letters-{part}-labels-idx1-ubyte.gz",
                       gz(idx_bytes(np.array([1, 26], np.uint8))))
    md5 = server.add("gzip.zip", buf.getvalue())
    monkeypatch.setattr(datasets.EMNIST, "mirrors", [server.url])
    monkeypatch.setattr(datasets.EMNIST, "archive", ("gzip.zip", md5))
    ds = datasets.EMNIST(tmp_path, split="letters", download=True)
    assert ds.targets.tolist() == [1, 26] and ds.classes[26] == "Z"
    assert sorted(os.listdir(tmp_path / "EMNIST" / "raw"))[0] == "emnist-letters-test-images-idx3-ubyte.gz"
    assert not (tmp_path / "EMNIST" / "raw" / "gzip.zip").exists()


def test_extract_archive_refuses_members_outside_the_folder(tmp_path):
    from ember.vision.datasets.utils import extract_archive
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("../evil.txt")
        info.size = 4
        tar.addfile(info, io.BytesIO(b"evil"))
    archive = tmp_path / "a" / "bad.tar"
    archive.parent.mkdir()
    archive.write_bytes(buf.getvalue())
    with pytest.raises(RuntimeError, match="bad.tar: cannot extract"):
        extract_archive(str(archive))
    assert not (tmp_path / "evil.txt").exists()
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w") as z:
        z.writestr("ok.txt", b"fine")
    (tmp_path / "a" / "good.zip").write_bytes(zbuf.getvalue())
    extract_archive(str(tmp_path / "a" / "good.zip"))
    assert (tmp_path / "a" / "ok.txt").read_bytes() == b"fine"
    (tmp_path / "a" / "junk.tar.gz").write_bytes(b"\x1f\x8bnot really")
    with pytest.raises(RuntimeError, match="junk.tar.gz: cannot extract"):
        extract_archive(str(tmp_path / "a" / "junk.tar.gz"))
