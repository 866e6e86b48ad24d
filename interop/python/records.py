"""The records the PyPI interop tests produce and check byte for byte.

cmd/broker/pypi_interop_test.go makes the same bytes on the Go side: keep
the two in step. Values are binary (every byte value occurs) and made of
runs, so that every codec really compresses them: librdkafka sends a batch
uncompressed when compression would not make it smaller.
"""

import base64
import json
import sys


def key(i):
    return b"key-%d" % i


def value(i):
    size = 100 + (i * 97) % 3000
    return b"rec-%06d|" % i + bytes((i + j // 16) % 256 for j in range(size))


def headers(i):
    return [("i", b"%d" % i), ("bin", bytes([0, 255, i % 256]))]


def encode(partition, offset, k, v, hdrs):
    """One consumed record as the Go test reads it (bytes in base64)."""
    b64 = lambda b: None if b is None else base64.b64encode(b).decode()
    return {
        "partition": partition,
        "offset": offset,
        "key": b64(k),
        "value": b64(v),
        "headers": [{"key": hk, "value": b64(hv)} for hk, hv in (hdrs or [])],
    }


def report(records=None, error=None):
    """Prints the one line of JSON the Go test parses, and exits."""
    print(json.dumps({"records": records or [], "error": error or ""}))
    sys.exit(0)
