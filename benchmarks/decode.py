"""Benchmark: decrypt + decompress + parse (+ typing) of one CSV batch file, stage by stage.

Prints MB of CSV per second for each layer alone (AES-CBC, zstd, the quote check, pyarrow's
parse), for the precise path (every value parsed as text, then ``decode_file`` casts it) and for
the path staging takes (``typed_csv.decode_csv_file``: pyarrow types what it can exactly while
parsing), on a replace file and on an update file (half its values unmodified). The two paths run
alternately, several times, in one process: compare their ratio, not absolute figures (the
machine may be loaded). Asserts nothing. Needs no Spark.

Usage:
    .venv/bin/python benchmarks/decode.py            # 100k rows (~16 MB of CSV)
    .venv/bin/python benchmarks/decode.py --full     # 1M rows (~164 MB of CSV)
    .venv/bin/python benchmarks/decode.py --rows 600000 --runs 7
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import zstandard
from bench import COLUMNS, HEADER, PARAMS, Files, median_seconds, row, update_row
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from spark_destination.core.model import FileKind
from spark_destination.runtime.batch import csv_header, csv_text, envelope
from spark_destination.runtime.batch.typed_decode import DecodeSpec, decode_file

try:  # absent before the typed CSV path existed: then only the precise path is measured
    from spark_destination.runtime.batch.typed_csv import decode_csv_file
except ImportError:  # pragma: no cover
    decode_csv_file = None  # type: ignore[assignment]

SPEC = DecodeSpec(
    columns=COLUMNS,
    key=("id",),
    null_string=PARAMS.null_string,
    unmodified_string=PARAMS.unmodified_string,
)
CHUNK = 1 << 20


def precise(path: str, key: bytes, kind: FileKind) -> pa.Table:
    raw = csv_text.read_batch_file(path, key=key, params=PARAMS, columns=HEADER)
    return decode_file(raw, spec=SPEC, kind=kind, path=path)


def fast(path: str, key: bytes, kind: FileKind) -> pa.Table:
    assert decode_csv_file is not None
    return decode_csv_file(path, key=key, params=PARAMS, spec=SPEC, kind=kind)


def layers(path: str, key: bytes, runs: int) -> tuple[float, list[tuple[str, float]]]:
    """Each byte layer alone, on data already in memory; returns (MB of CSV, stages)."""
    blob = Path(path).read_bytes()
    iv, body = blob[:16], blob[16:]

    def decrypt() -> bytes:
        decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
        unpadder = padding.PKCS7(128).unpadder()
        parts = [
            unpadder.update(decryptor.update(body[i : i + CHUNK]))
            for i in range(0, len(body), CHUNK)
        ]
        return b"".join(parts) + unpadder.update(decryptor.finalize()) + unpadder.finalize()

    compressed = decrypt()

    def decompress() -> list[bytes]:
        dobj = zstandard.ZstdDecompressor().decompressobj()
        return [
            dobj.decompress(compressed[i : i + CHUNK]) for i in range(0, len(compressed), CHUNK)
        ]

    chunks = decompress()
    plain = b"".join(chunks)
    text = csv_text._csv_options(HEADER, 4 << 20)

    def chain() -> int:
        stream, fh = envelope.plain_chunks(path, key, PARAMS)
        try:
            return sum(len(c) for c in csv_header.guard_csv(stream, path))
        finally:
            fh.close()

    stages = [
        ("AES-CBC decrypt + unpad", median_seconds(runs, decrypt)),
        ("zstd decompress (1 MiB in)", median_seconds(runs, decompress)),
        (
            "quote count, bytes.count",
            median_seconds(runs, lambda: sum(c.count(b'"') for c in chunks)),
        ),
        (
            "quote count, numpy",
            median_seconds(
                runs,
                lambda: sum(np.count_nonzero(np.frombuffer(c, np.uint8) == 34) for c in chunks),
            ),
        ),
        ("file -> decrypt -> zstd -> quote check (chain)", median_seconds(runs, chain)),
        (
            "pyarrow parse as text, from memory",
            median_seconds(runs, lambda: pa_csv.read_csv(pa.BufferReader(plain), **text)),
        ),
    ]
    return len(plain) / 1e6, stages


def paths(path: str, key: bytes, kind: FileKind, runs: int) -> list[tuple[str, float]]:
    """The precise and the staged path, alternately; the text parse and typing apart too."""
    raw = csv_text.read_batch_file(path, key=key, params=PARAMS, columns=HEADER)
    typing = median_seconds(runs, lambda: decode_file(raw, spec=SPEC, kind=kind, path=path))
    seconds: dict[str, list[float]] = {"precise": [], "staged": [], "text": []}
    cpu: dict[str, list[float]] = {"precise": [], "staged": [], "text": []}
    for _ in range(runs):
        for name, work in (
            (
                "text",
                lambda: csv_text.read_batch_file(path, key=key, params=PARAMS, columns=HEADER),
            ),
            ("precise", lambda: precise(path, key, kind)),
            ("staged", lambda: fast(path, key, kind)),
        ):
            if name == "staged" and decode_csv_file is None:
                continue
            started, started_cpu = time.perf_counter(), time.process_time()
            work()
            seconds[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - started_cpu)
    out = [
        (
            "decrypt + decompress + parse as text (read_batch_file)",
            statistics.median(seconds["text"]),
        ),
        ("typing of the text table (decode_file)", typing),
        ("precise path: text parse + typing", statistics.median(seconds["precise"])),
    ]
    if seconds["staged"]:
        out.append(
            ("staged path: typed parse (decode_csv_file)", statistics.median(seconds["staged"]))
        )
        # CPU time (all threads) is the work done; less sensitive to a loaded machine.
        for name in ("precise", "staged"):
            out.append((f"  {name} path, CPU seconds", statistics.median(cpu[name])))
        ratio = statistics.median(seconds["precise"]) / statistics.median(seconds["staged"])
        print(f"(staged path {ratio:.2f}x as fast as the precise path, wall clock)")
    return out


def plain_mb(path: str, key: bytes) -> float:
    with envelope.open_plain_stream(path, key=key, params=PARAMS) as stream:
        return len(stream.read()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true", help="1M rows")
    parser.add_argument("--rows", type=int, help="rows per file (default 100k, 1M with --full)")
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (median)")
    args = parser.parse_args()
    n = args.rows or (1_000_000 if args.full else 100_000)
    rng = random.Random(9)
    with tempfile.TemporaryDirectory(prefix="sd-decode-") as tmp:
        files = Files(Path(tmp))
        upsert = files.write([row(i, rng) for i in range(n)])
        update = files.write([update_row(i, rng) for i in range(n)])
        # Warm-up: the first pyarrow.compute call of a process pays one-off set-up.
        small = files.write([row(i, rng) for i in range(2000)])
        precise(small, files.keys[small], FileKind.REPLACE)
        if decode_csv_file is not None:
            fast(small, files.keys[small], FileKind.REPLACE)
        mb, stages = layers(upsert, files.keys[upsert], args.runs)
        print(f"replace file: {n:,} rows, {mb:.0f} MB of CSV; medians of {args.runs} runs")
        print("stage | seconds | MB/s of CSV")
        print("---|---|---")
        for name, seconds in stages + paths(
            upsert, files.keys[upsert], FileKind.REPLACE, args.runs
        ):
            print(f"{name} | {seconds:.3f} | {mb / seconds:.0f}")
        update_mb = plain_mb(update, files.keys[update])
        print()
        print(f"update file: {n:,} rows, half the values unmodified, {update_mb:.0f} MB of CSV")
        for name, seconds in paths(update, files.keys[update], FileKind.UPDATE, args.runs):
            print(f"{name} | {seconds:.3f} | {update_mb / seconds:.0f}")


if __name__ == "__main__":
    main()
