"""Downloading and checking dataset files (urllib only).

Downloads are resumable and atomic: bytes go to ``<file>.part`` next to the
target, an interrupted download continues from there with an HTTP Range
request, and the finished file is checked against its MD5 before it is
renamed into place, so the target path only ever holds a complete, verified
file.
"""
import hashlib
import http.client
import os
import tarfile
import urllib.error
import urllib.request
import zipfile

__all__ = ["calculate_md5", "check_md5", "check_integrity", "download_url",
           "download_from_mirrors", "extract_archive", "download_and_extract_archive"]

_CHUNK = 1 << 16
_USER_AGENT = "ember-vision"
# attempts per mirror: a dropped connection resumes from the partial file
_ATTEMPTS = 3


def calculate_md5(fpath, chunk_size=1 << 20):
    md5 = hashlib.md5()
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            md5.update(chunk)
    return md5.hexdigest()


def check_md5(fpath, md5):
    return calculate_md5(fpath) == md5


def check_integrity(fpath, md5=None):
    """True when ``fpath`` is a file and (if given) has the MD5 ``md5``."""
    if not os.path.isfile(fpath):
        return False
    return md5 is None or check_md5(fpath, md5)


def _fetch_once(url, part, timeout):
    """Append the rest of ``url`` to ``part``; return True when it is complete."""
    have = os.path.getsize(part) if os.path.exists(part) else 0
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as e:
        if e.code == 416 and have:      # nothing left past what we have
            return True
        raise
    with response:
        # a server that ignores Range answers 200 with the whole file: start over
        mode = "ab" if have and response.status == 206 else "wb"
        expected = response.headers.get("Content-Length")
        written = 0
        with open(part, mode) as f:
            while True:
                chunk = response.read(_CHUNK)
                if not chunk:
                    break
                f.write(chunk)
                written += len(chunk)
        if expected is not None and written < int(expected):
            raise http.client.IncompleteRead(b"", int(expected) - written)
    return True


def download_url(url, root, filename=None, md5=None, timeout=60):
    """Download ``url`` to ``root/filename`` unless a file with that MD5 is
    already there.  Raises ``OSError`` (``urllib.error.URLError``) when the
    server cannot be reached and ``RuntimeError`` on a checksum mismatch."""
    root = os.path.expanduser(os.fspath(root))
    filename = filename or os.path.basename(url.rstrip("/"))
    fpath = os.path.join(root, filename)
    if check_integrity(fpath, md5):
        return fpath
    os.makedirs(root, exist_ok=True)
    part = fpath + ".part"
    last_error = None
    for _ in range(_ATTEMPTS):
        try:
            _fetch_once(url, part, timeout)
            break
        except (http.client.IncompleteRead, ConnectionError, TimeoutError) as e:
            last_error = e          # keep the partial file and resume
    else:
        raise OSError(f"download of {url} was interrupted {_ATTEMPTS} times "
                      f"(partial file kept at {part}): {last_error}")
    if md5 is not None:
        got = calculate_md5(part)
        if got != md5:
            os.remove(part)
            raise RuntimeError(f"checksum mismatch for {filename} downloaded from {url}: "
                               f"expected MD5 {md5}, got {got}; the partial file was removed")
    os.replace(part, fpath)
    return fpath


def download_from_mirrors(mirrors, filename, root, md5=None, save_as=None):
    """Try ``mirror + filename`` for each mirror in turn.  When none can be
    reached, raise ``RuntimeError`` saying where to put the file by hand."""
    errors = []
    for mirror in mirrors:
        url = mirror if mirror.endswith(filename) else mirror.rstrip("/") + "/" + filename
        try:
            return download_url(url, root, save_as or filename, md5)
        except RuntimeError:
            raise                       # checksum mismatch: do not paper over it
        except (OSError, ValueError, http.client.HTTPException) as e:
            errors.append(f"{url}: {e}")
    target = os.path.join(os.path.expanduser(os.fspath(root)), save_as or filename)
    tried = "\n  ".join(errors) if errors else "(no mirror configured)"
    raise RuntimeError(f"could not download {filename}; tried:\n  {tried}\n"
                       f"Without a network, download it elsewhere and put it at {target}")


def extract_archive(from_path, to_path=None, members=None):
    """Extract a .tar(.gz) or .zip archive (only regular files and folders, no
    paths leaving ``to_path``)."""
    to_path = to_path or os.path.dirname(from_path)
    if zipfile.is_zipfile(from_path):
        with zipfile.ZipFile(from_path) as z:
            names = [n for n in z.namelist() if members is None or n in members]
            for name in names:
                _check_inside(to_path, name, from_path)
            z.extractall(to_path, names)
        return to_path
    try:
        with tarfile.open(from_path) as t:
            if hasattr(tarfile, "data_filter"):
                t.extractall(to_path, filter="data")
            else:               # Python before 3.11.4: check the members ourselves
                chosen = [m for m in t.getmembers() if m.isfile() or m.isdir()]
                for member in chosen:
                    _check_inside(to_path, member.name, from_path)
                t.extractall(to_path, chosen)
    except tarfile.TarError as e:
        raise RuntimeError(f"{from_path}: cannot extract the archive ({type(e).__name__}: {e})") from None
    return to_path


def _check_inside(root, name, archive):
    target = os.path.realpath(os.path.join(root, name))
    if not target.startswith(os.path.realpath(root) + os.sep):
        raise RuntimeError(f"{archive}: member {name!r} would be written outside {root}")


def download_and_extract_archive(mirrors, filename, download_root, extract_root=None, md5=None):
    path = download_from_mirrors(mirrors, filename, download_root, md5)
    extract_archive(path, extract_root or download_root)
    return path
