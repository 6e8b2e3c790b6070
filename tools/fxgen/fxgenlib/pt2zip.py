"""Deterministic zip container in the layout of PyTorch's PyTorchStreamWriter.

torch >= 2.8 writes PT2 archives through the C++ ``PyTorchStreamWriter``
(miniz). This module reproduces that byte layout so that archives written
with an old torch (or without torch) look like the real thing:

* every record is stored (method 0) with general-purpose flags 0x0808
  (data descriptor follows the data, UTF-8 names);
* the local header carries zero CRC and sizes; a 16-byte data descriptor
  (signature, CRC-32, sizes) follows each record's data;
* an extra field ``FB`` + u16 length + ``Z`` padding aligns every record's
  data to 64 bytes (the field is always present, possibly with 0 padding);
* DOS date and time are 0 (as torch writes them), version fields are 0;
* the central directory carries no extra fields and is followed by a
  zip64 end-of-central-directory record, its locator and the classic
  end-of-central-directory record.

All names are placed under one root folder. Records are written in sorted
order, so the same records always give the same bytes.
"""

import struct
import zlib

ALIGNMENT = 64
FLAGS = 0x0808
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_DATA_DESCRIPTOR = struct.Struct("<IIII")
_CENTRAL_HEADER = struct.Struct("<IHHHHHHIIIHHHHHII")
_ZIP64_EOCD = struct.Struct("<IQHHIIQQQQ")
_ZIP64_LOCATOR = struct.Struct("<IIQI")
_EOCD = struct.Struct("<IHHHHIIH")


class ZipWriteError(Exception):
    """Raised when a record cannot be written."""


def _padding(offset, name_len):
    """Return the alignment extra field for a record whose header starts at offset."""
    start = offset + _LOCAL_HEADER.size + name_len + 4
    pad = (-start) % ALIGNMENT
    return b"FB" + struct.pack("<H", pad) + b"Z" * pad


def _hash_combine(seed, value):
    """c10::hash_combine on uint64 (boost's formula)."""
    mask = (1 << 64) - 1
    seed ^= (value + 0x9E3779B9 + ((seed << 6) & mask) + (seed >> 2)) & mask
    return seed & mask


def _fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & ((1 << 64) - 1)
    return h


def serialization_id(records):
    """A 40-digit id derived from record names and CRCs, like torch's.

    torch combines std::hash of every record name and the CRC-32 of every
    record's data; std::hash is not portable, so FNV-1a stands in for it.
    """
    name_hash = 0
    crc_hash = 0
    for name in sorted(records):
        name_hash = _hash_combine(name_hash, _fnv1a64(name.encode("utf-8")))
        crc_hash = _hash_combine(crc_hash, zlib.crc32(records[name]))
    return ("%020d%020d" % (name_hash, crc_hash)).encode("ascii")


def write_zip(root, records):
    """Return the bytes of a zip holding records (name -> bytes) under root/.

    Records are written in sorted name order.
    """
    if not root or "/" in root:
        raise ZipWriteError("root folder %r must be one non-empty path component" % root)
    out = bytearray()
    central = bytearray()
    count = 0
    for name in sorted(records):
        data = records[name]
        if not isinstance(data, (bytes, bytearray)):
            raise ZipWriteError("record %s: data must be bytes, got %s" % (name, type(data).__name__))
        if len(data) >= 0xFFFFFFFF:
            raise ZipWriteError("record %s: %d bytes needs zip64 sizes, not supported" % (name, len(data)))
        full = ("%s/%s" % (root, name)).encode("utf-8")
        offset = len(out)
        extra = _padding(offset, len(full))
        crc = zlib.crc32(data)
        out += _LOCAL_HEADER.pack(0x04034B50, 0, FLAGS, 0, 0, 0, 0, 0, 0, len(full), len(extra))
        out += full
        out += extra
        if len(out) % ALIGNMENT != 0:
            raise ZipWriteError("record %s: data offset %d is not %d-aligned" % (name, len(out), ALIGNMENT))
        out += data
        out += _DATA_DESCRIPTOR.pack(0x08074B50, crc, len(data), len(data))
        central += _CENTRAL_HEADER.pack(
            0x02014B50, 0, 0, FLAGS, 0, 0, 0, crc, len(data), len(data),
            len(full), 0, 0, 0, 0, 0, offset)
        central += full
        count += 1
    cd_offset = len(out)
    out += central
    cd_size = len(central)
    zip64_offset = len(out)
    out += _ZIP64_EOCD.pack(0x06064B50, 44, 0x031E, 0x2D, 0, 0, count, count, cd_size, cd_offset)
    out += _ZIP64_LOCATOR.pack(0x07064B50, 0, zip64_offset, 1)
    out += _EOCD.pack(0x06054B50, 0, 0, count, count, cd_size, cd_offset, 0)
    return bytes(out)
