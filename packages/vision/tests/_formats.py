"""Writers for the file formats the dataset tests generate."""
import gzip
import io
import struct

import numpy as np

_IDX_CODES = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C,
              np.float32: 0x0D, np.float64: 0x0E}


def idx_bytes(array):
    """An IDX file: zero, zero, type code, rank, big-endian sizes, big-endian data."""
    header = bytes([0, 0, _IDX_CODES[array.dtype.type], array.ndim])
    header += struct.pack(">" + "I" * array.ndim, *array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def gz(data):
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as f:
        f.write(data)
    return out.getvalue()


def write_idx(path, array, gzipped=False):
    data = idx_bytes(array)
    if gzipped:
        with open(str(path) + ".gz", "wb") as f:
            f.write(gz(data))
    else:
        path.write_bytes(data)
