"""The envelope of a Fivetran batch file: AES-256-CBC, then ZSTD or GZIP, undone in memory.

Fivetran writes ``Cipher(Compress(payload))`` with a 16-byte IV prefix (protocol reference §6),
the payload being CSV or Parquet. This module undoes the layers as a chain of chunk generators,
entirely in memory: decrypted plaintext is never written to disk. Error messages name the file,
never key material or contents. Runtime layer: no pyspark here.
"""

from __future__ import annotations

import io
import os
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, Final, Protocol

import zstandard
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from spark_destination.core.errors import BatchFileError
from spark_destination.core.model import Compression, Encryption, FileParams

__all__ = ["PARQUET_MAGIC", "as_stream", "open_plain_stream", "parquet_not_csv", "plain_chunks"]

# The first bytes of a Parquet file (and its last).
PARQUET_MAGIC: Final = b"PAR1"


def parquet_not_csv(path: str) -> str:
    """What a CSV reader says of a Parquet file: Fivetran writes what Capabilities announced."""
    return (
        f"batch file '{path}' is a Parquet file, but this destination announced CSV in "
        "Capabilities (the server's --batch-file-format)"
    )


KEY_BYTES = 32
IV_BYTES = 16
AES_BLOCK_BYTES = 16
CHUNK_BYTES = 1 << 20
# Compressed bytes handed to the decompressor at a time. Its output for one input is one chunk,
# so this bounds a chunk at this size times the compression ratio: read 1 MiB at a time, an
# earliest-start file (1M rows in 423 KiB, 70:1) came out as one 30 MiB chunk, and the parser
# could start only once all of it was decompressed (docs/benchmarks.md, "Decoding").
DECOMPRESS_SLICE_BYTES = 128 << 10


# ---------------------------------------------------------------------------------------------
# Byte layers: file -> decrypt -> decompress, each a generator of non-empty chunks.
# ---------------------------------------------------------------------------------------------


class _ChunkStream(io.RawIOBase):
    """A read-only raw stream over an iterator of byte chunks.

    Exceptions raised by the iterator (our BatchFileErrors) surface from ``read``; pyarrow
    re-raises Python exceptions from file objects unchanged, so they reach the caller as is.
    """

    def __init__(self, chunks: Iterator[bytes], on_close: Callable[[], None]) -> None:
        super().__init__()
        self._chunks = chunks
        self._on_close = on_close
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = memoryview(chunk)
        target = memoryview(buffer).cast("B")
        n = min(len(target), len(self._pending))
        target[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self) -> None:
        if not self.closed:
            # Stop the generator chain first (releases decoder state), then the file.
            close_chunks = getattr(self._chunks, "close", None)
            if close_chunks is not None:
                close_chunks()
            self._on_close()
        super().close()


def _file_chunks(fh: BinaryIO, path: str) -> Iterator[bytes]:
    while True:
        try:
            chunk = fh.read(CHUNK_BYTES)
        except OSError as exc:
            raise BatchFileError(f"cannot read batch file '{path}': {exc.strerror}") from None
        if not chunk:
            return
        yield chunk


def _open_file(path: str) -> BinaryIO:
    try:
        return open(path, "rb")  # noqa: SIM115 - closed by the stream that owns it
    except FileNotFoundError:
        raise BatchFileError(f"batch file '{path}' does not exist") from None
    except OSError as exc:
        raise BatchFileError(f"cannot open batch file '{path}': {exc.strerror}") from None


def _check_key(path: str, key: bytes | None) -> bytes:
    # Never echo the key: only its length may appear in a message.
    if key is None:
        raise BatchFileError(f"batch file '{path}' is AES-encrypted but no key was sent for it")
    if len(key) != KEY_BYTES:
        raise BatchFileError(
            f"the key for batch file '{path}' is {len(key)} bytes; AES-256 needs {KEY_BYTES}"
        )
    return key


def _check_ciphertext_size(fh: BinaryIO, path: str) -> None:
    """Fail fast on an obviously truncated file: IV plus whole blocks, at least one (padding)."""
    size = os.fstat(fh.fileno()).st_size
    body = size - IV_BYTES
    if body < AES_BLOCK_BYTES:
        raise BatchFileError(
            f"batch file '{path}' is truncated: {size} bytes is too short for an AES IV "
            "and one block"
        )
    if body % AES_BLOCK_BYTES:
        raise BatchFileError(
            f"batch file '{path}' is truncated: ciphertext length {body} is not a multiple of "
            f"{AES_BLOCK_BYTES}"
        )


def _decrypt(chunks: Iterator[bytes], key: bytes, iv: bytes, path: str) -> Iterator[bytes]:
    decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    # The unpadder holds back the last block until finalize, so padding is stripped in-stream.
    unpadder = padding.PKCS7(AES_BLOCK_BYTES * 8).unpadder()
    for chunk in chunks:
        plain = unpadder.update(decryptor.update(chunk))
        if plain:
            yield plain
    try:
        tail = unpadder.update(decryptor.finalize()) + unpadder.finalize()
    except ValueError:
        # Bad PKCS#7 padding is the only integrity signal CBC gives: a wrong key almost always
        # trips it (and the decompressor catches most of the rest).
        raise BatchFileError(
            f"cannot decrypt batch file '{path}': wrong key or corrupted file"
        ) from None
    if tail:
        yield tail


class _Decompressor(Protocol):
    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    def decompress(self, data: bytes | memoryview) -> bytes: ...


@dataclass(frozen=True, slots=True)
class _Codec:
    name: str
    unit: str  # what the stream is made of: zstd frames, gzip members
    new: Callable[[], _Decompressor]
    error: type[Exception]


_ZSTD: Final = _Codec(
    "zstd", "frame", lambda: zstandard.ZstdDecompressor().decompressobj(), zstandard.ZstdError
)
# zlib checks each gzip member's CRC32 trailer.
_GZIP: Final = _Codec("gzip", "member", lambda: zlib.decompressobj(wbits=31), zlib.error)


def _slices(chunks: Iterator[bytes], size: int) -> Iterator[memoryview]:
    """``chunks`` cut into pieces of at most ``size`` bytes (views, not copies)."""
    for chunk in chunks:
        view = memoryview(chunk)
        for start in range(0, len(view), size):
            yield view[start : start + size]


def _decompress(chunks: Iterator[bytes], path: str, codec: _Codec) -> Iterator[bytes]:
    """Stream-decompress one or more concatenated zstd frames or gzip members.

    Uses ``decompressobj`` rather than a stream reader because zstandard's reader silently
    returns short (even empty) output for a truncated frame; ``eof`` lets us detect truncation.
    """
    dobj = codec.new()
    consumed_any = False
    in_unit = False
    for piece in _slices(chunks, DECOMPRESS_SLICE_BYTES):
        first = not consumed_any
        consumed_any = True
        data: bytes | memoryview = piece
        while data:
            try:
                out = dobj.decompress(data)
            except codec.error:
                # Parquet is compressed inside the file: only a CSV reader decompresses it.
                if first and bytes(piece[: len(PARQUET_MAGIC)]) == PARQUET_MAGIC:
                    raise BatchFileError(parquet_not_csv(path)) from None
                raise BatchFileError(
                    f"batch file '{path}' is not valid {codec.name} data (wrong key or "
                    "corrupted file?)"
                ) from None
            in_unit = not dobj.eof
            if out:
                yield out
            data = dobj.unused_data if dobj.eof else b""
            if dobj.eof:
                dobj = codec.new()
    # An input of zero bytes decodes to nothing (as Python's gzip does); anything else must end
    # on a frame (member) boundary.
    if consumed_any and in_unit:
        raise BatchFileError(
            f"batch file '{path}' is truncated: the {codec.name} stream ends mid-{codec.unit}"
        )


def plain_chunks(
    path: str, key: bytes | None, params: FileParams
) -> tuple[Iterator[bytes], BinaryIO]:
    """Build the decoding chain; returns the plaintext chunks and the file that must be closed.

    Key, existence and size problems are raised here, eagerly, not on first read.
    """
    if params.encryption is Encryption.AES:
        aes_key = _check_key(path, key)
    fh = _open_file(path)
    try:
        chunks = _file_chunks(fh, path)
        if params.encryption is Encryption.AES:
            _check_ciphertext_size(fh, path)
            iv = fh.read(IV_BYTES)
            chunks = _decrypt(chunks, aes_key, iv, path)
        if params.compression is Compression.ZSTD:
            chunks = _decompress(chunks, path, _ZSTD)
        elif params.compression is Compression.GZIP:
            chunks = _decompress(chunks, path, _GZIP)
    except BaseException:
        fh.close()
        raise
    return chunks, fh


def as_stream(chunks: Iterator[bytes], fh: BinaryIO) -> io.BufferedReader:
    return io.BufferedReader(_ChunkStream(chunks, fh.close), buffer_size=CHUNK_BYTES)


def open_plain_stream(path: str, *, key: bytes | None, params: FileParams) -> BinaryIO:
    """Open a batch file and return its decrypted, decompressed bytes as a read-only stream.

    The result is a context manager; closing it closes the file. Decoding errors surface as
    ``BatchFileError`` from ``read``.
    """
    chunks, fh = plain_chunks(path, key, params)
    return as_stream(chunks, fh)
