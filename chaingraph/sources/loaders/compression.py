"""Open dump files whatever their compression, and tell which dump format they hold.

gzip is read with ISA-L (the ``isal`` package, several times faster than zlib at
decompressing) when it is installed, else with Python's ``gzip``; either way a read error
reaches the caller of :func:`read_blocks` as :class:`OSError` or :class:`EOFError`.
Compression is recognised by its magic bytes, not the file name (a ``.gz`` that is not
gzip is an error naming the file). gzip files may have several members, as Wikidata's
parallel-compressed dumps do; Python's ``gzip`` reads them all.

>>> sniff_compression(b"\\x1f\\x8b\\x08\\x00"), sniff_compression(b"BZh91AY"), sniff_compression(b"[\\n{")
('gzip', 'bz2', None)
>>> dump_format("latest-all.json.bz2"), dump_format("wikidata.nt.gz"), dump_format("q42.ttl")
('json', 'nt', 'ttl')
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import importlib.util
import io
import queue
import re
import sys
import threading
from collections.abc import Callable, Generator
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, cast

from chaingraph.errors import InvalidInput, UnsupportedFormat

__all__ = ["BLOCK_BYTES", "PAUSED", "RING_BLOCKS", "BlockRing", "Format", "RawCounter", "check_content",
           "dump_date", "dump_format", "open_binary", "open_dump", "read_blocks", "read_blocks_into",
           "sniff_compression"]

#: decompressed bytes read at a time by :func:`read_blocks` and :func:`read_blocks_into` unless
#: the caller says (the JSON dump's chunks; N-Triples reads ``ntriples.BLOCK_BYTES``). Each block
#: in flight takes its buffer and its worker's arrays in proportion: with the blocks in reused
#: buffers (:class:`BlockRing`), 8 MB N-Triples blocks took ~100 MB less at their peak than 16 MB
#: ones, in the same CPU time (codex-m and 10x: peak 204 against 302-318 MB above baseline)
BLOCK_BYTES = 8 << 20

Format = Literal["json", "nt", "ttl"]

_MAGIC: tuple[tuple[bytes, str | None], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"PK\x03\x04", "zip"),
)
_SUPPORTED = {"gzip", "bz2"}
_COMPRESSED_SUFFIXES = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd",
                        ".zstd": "zstd", ".zip": "zip", ".lz4": "lz4", ".7z": "7z"}
_FORMAT_SUFFIXES: dict[str, Format] = {".json": "json", ".jsonl": "json", ".ndjson": "json",
                                       ".nt": "nt", ".ntriples": "nt", ".ttl": "ttl", ".turtle": "ttl"}
_DATE = re.compile(r"(?<!\d)(20\d{2})-?([01]\d)-?([0-3]\d)(?!\d)")


def sniff_compression(head: bytes) -> str | None:
    """Compression named by the first bytes of a file (``None`` = not compressed)."""
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


def dump_format(path: str | Path) -> Format:
    """``json``, ``nt`` or ``ttl`` from the file name (compression suffixes ignored)."""
    p = Path(path)
    suffixes = [s.lower() for s in p.suffixes]
    while suffixes and suffixes[-1] in _COMPRESSED_SUFFIXES:
        suffixes.pop()
    fmt = _FORMAT_SUFFIXES.get(suffixes[-1]) if suffixes else None
    if fmt is None:
        raise UnsupportedFormat(
            f"{path}: cannot tell the dump format from the name; name the file *.json, *.nt or "
            "*.ttl (optionally + .gz or .bz2): Wikidata JSON dump, N-Triples or Turtle")
    return fmt


def dump_date(path: str | Path) -> str | None:
    """The dump date written in a Wikidata dump file name, e.g. ``wikidata-20240101-all.json.gz``.

    >>> dump_date("wikidata-20240101-all.json.gz"), dump_date("latest-all.json.gz")
    ('2024-01-01', None)
    """
    m = _DATE.search(Path(path).name)
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}" if m else None


class RawCounter:
    """Position in the underlying (compressed) file, for progress bars and for guessing a
    file's size decompressed (:data:`~.ntriples.LARGE_FILE_HOLDS`)."""

    def __init__(self, raw: BinaryIO, size: int) -> None:
        self.raw = raw
        self.size = size

    def position(self) -> int:
        try:
            return self.raw.tell()
        except (OSError, ValueError):
            return self.size

    def fraction(self) -> float:
        """How much of the file is read, 0 to 1 (an empty file: all of it).

        >>> raw = io.BytesIO(b"abcd")
        >>> _ = raw.read(1)
        >>> RawCounter(raw, 4).fraction(), RawCounter(io.BytesIO(), 0).fraction()
        (0.25, 1.0)
        """
        return min(1.0, self.position() / self.size) if self.size > 0 else 1.0


def open_binary(path: str | Path) -> tuple[IO[bytes], RawCounter]:
    """Open ``path`` decompressed, as bytes; the counter reports compressed bytes read.

    Raises :class:`UnsupportedFormat` for a compression chaingraph does not read, or a
    file whose content does not match its compression suffix.
    """
    p = Path(path)
    try:
        raw = open(p, "rb")  # noqa: SIM115 (returned to the caller, who closes it)
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot open ({exc.strerror or exc}); check the path") from exc
    size = p.stat().st_size
    head = raw.read(8)
    raw.seek(0)
    kind = sniff_compression(head)
    claimed = next((c for s, c in _COMPRESSED_SUFFIXES.items() if p.name.lower().endswith(s)), None)
    if kind is not None and kind not in _SUPPORTED:
        raw.close()
        raise UnsupportedFormat(f"{path}: {kind} compression is not supported; recompress with gzip "
                                "or bzip2, or decompress the file first")
    if claimed is not None and claimed != kind:
        raw.close()
        what = f"{kind}-compressed" if kind else "not compressed"
        raise UnsupportedFormat(f"{path}: the name says {claimed} but the file is {what}; "
                                "rename it or recompress it with gzip or bzip2")
    counter = RawCounter(raw, size)
    stream: IO[bytes]
    # both read every member of a multi-member (parallel-compressed) file
    if kind == "gzip":
        stream = _gzip_reader(raw)
    elif kind == "bz2":
        stream = cast(IO[bytes], bz2.BZ2File(raw, mode="rb"))
    else:
        stream = raw
    return stream, counter


def _gzip_reader(raw: BinaryIO) -> IO[bytes]:
    if importlib.util.find_spec("isal") is not None:
        from isal import igzip

        return cast(IO[bytes], igzip.IGzipFile(fileobj=raw, mode="rb"))  # type: ignore[no-untyped-call]
    return cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))


def _as_os_error(exc: BaseException) -> BaseException:
    """ISA-L's errors (a corrupt deflate block) as the :class:`OSError` zlib would raise."""
    if type(exc).__name__ == "IsalError":
        return OSError(f"corrupt gzip data ({exc})")
    return exc


_WHAT = {"json": "a Wikidata JSON dump", "nt": "N-Triples", "ttl": "Turtle"}


def check_content(head: bytes, path: str | Path, fmt: Format) -> None:
    r"""Refuse a file whose first bytes (decompressed) cannot be ``fmt``: binary data, or
    the other dump format under a misleading name.

    >>> check_content(b'[\n{"id": "Q1"', "a.json", "json")
    >>> try:
    ...     check_content(b"<http://a> <http://b> <http://c> .", "a.json", "json")
    ... except UnsupportedFormat as exc:
    ...     print(str(exc).split("; ")[1])
    it looks like N-Triples: rename it *.nt
    """
    if b"\x00" in head:
        raise UnsupportedFormat(f"{path}: this is a binary file, not {_WHAT[fmt]}; pass a .json, .nt or "
                                ".ttl dump (optionally .gz or .bz2)")
    lines = [ln.strip() for ln in head.splitlines()]
    first = next((ln for ln in lines if ln and not ln.startswith(b"#")), b"")
    if not first:
        return
    looks: str | None = None
    if first[:1] in (b"[", b"{"):
        looks = "json"
    elif first[:1] in (b"<", b"_"):
        looks = "nt"
    elif first.lower().startswith((b"@prefix", b"@base", b"prefix", b"base")):
        looks = "ttl"
    if looks == fmt or (fmt == "ttl" and looks == "nt"):
        return
    shown = first[:16].decode("utf-8", errors="replace")
    hint = (f"it looks like {_WHAT[looks]}: rename it *.{looks}" if looks
            else "check that this is the file you meant")
    raise UnsupportedFormat(f"{path}: this is not {_WHAT[fmt]} (it starts with {shown!r}); {hint}")


def open_dump(path: str | Path, fmt: Format) -> tuple[IO[bytes], RawCounter]:
    """:func:`open_binary`, then :func:`check_content` on the first decompressed bytes."""
    stream, counter = open_binary(path)
    try:
        try:
            head = stream.peek(4096)[:4096]  # type: ignore[attr-defined]
        except Exception as exc:
            as_os = _as_os_error(exc)
            if as_os is exc:
                raise
            raise as_os from exc
        check_content(head, path, fmt)
    except (OSError, EOFError) as exc:
        stream.close()
        raise UnsupportedFormat(f"{path}: cannot be decompressed ({exc}); the file is corrupt or not "
                                "what its name says") from exc
    except UnsupportedFormat:
        stream.close()
        raise
    return stream, counter


#: decompressed bytes asked of the stream at a time when reading into a block: a corrupt or
#: truncated stream raises before it returns what it decompressed in that call
_READ_STEP = 1 << 18


def read_blocks(stream: IO[bytes], size: int = BLOCK_BYTES) -> Generator[bytes, None, None]:
    r"""Blocks of whole lines from ``stream`` (only the last may lack its newline).

    A background thread reads ahead and cuts the blocks at their last newline: ISA-L, zlib
    and bz2 release the GIL, so decompression runs on another core while the caller
    parses. A read error (truncated or corrupt file) is raised here, after every complete
    line read before it.

    >>> import io
    >>> list(read_blocks(io.BytesIO(b"a\nbb\nccc"), size=3))
    [b'a\n', b'bb\n', b'ccc']
    """
    read = getattr(stream, "read1", stream.read)  # read1 returns what is decompressed so far

    def reader(put: Callable[[Any], None], stop: threading.Event) -> None:
        buf = bytearray()

        def put_lines() -> None:  # the whole lines of buf, copied once
            cut = buf.rfind(b"\n") + 1
            if cut:
                put(bytes(memoryview(buf)[:cut]))
                del buf[:cut]

        try:
            while not stop.is_set():
                chunk = read(size)
                if not chunk:
                    break
                buf += chunk
                if len(buf) >= size:
                    put_lines()
        except BaseException as exc:  # handed to the consumer (after the lines before it)
            put_lines()  # a partial last line before the damage is not handed on
            put(_as_os_error(exc))
            return
        if buf:
            put(bytes(buf))
        put(None)

    yield from _read_ahead(reader)


class BlockRing:
    r"""Block buffers for a reader, each filled again once nothing but the ring refers to it.

    A block handed on is its taker's for as long as anything refers to it (a variable, a
    memoryview, a numpy array or an Arrow buffer over it: each holds a reference), so a
    buffer is refilled only when the ring holds the one reference left (CPython's reference
    count). The blocks of a stream thus take at most ``capacity`` buffers, each allocated
    once, however long the stream: without the ring every block was a new allocation, and
    the C library, which gives blocks freed before from its heap, left holes there that
    stayed resident and grew with the stream. A block of another size, or one needed while
    every buffer is in use, is a new ``bytearray`` the ring does not keep.

    >>> ring = BlockRing(4, capacity=2)
    >>> a = ring.take(4); a[:] = b"abcd"
    >>> b = ring.take(4)
    >>> a is b, len(ring)
    (False, 2)
    >>> del a
    >>> c = ring.take(4)
    >>> c is b, len(ring), bytes(b)  # the first buffer again (b is still held)
    (False, 2, b'\x00\x00\x00\x00')
    """

    def __init__(self, size: int, capacity: int) -> None:
        self.size = size
        self.capacity = capacity
        self._buffers: list[bytearray] = []
        self._lock = threading.Lock()  # the reader takes while another thread may release

    def __len__(self) -> int:
        return len(self._buffers)

    def take(self, length: int) -> bytearray:
        """A buffer of ``length`` bytes that nothing else refers to (its content is whatever
        it held before)."""
        with self._lock:
            if length == self.size:
                for i in range(len(self._buffers)):
                    if sys.getrefcount(self._buffers[i]) == _FREE_REFS:
                        block = self._buffers[i]
                        if len(block) < length:  # it was cut at its last line: the rest is still allocated
                            block.extend(bytes(length - len(block)))
                        return block
            block = bytearray(length)
            if length == self.size and len(self._buffers) < self.capacity:
                self._buffers.append(block)
            return block

    def release(self) -> int:
        """Let go of the buffers nothing else refers to (they are allocated again when
        needed): for a pause in reading, such as a chunk's build. Returns how many went.

        >>> ring = BlockRing(4, capacity=2)
        >>> a, b = ring.take(4), ring.take(4)
        >>> del b
        >>> ring.release(), len(ring)
        (1, 1)
        """
        with self._lock:
            # each buffer looked at is also referenced by the loop variable while it is
            kept = [b for b in self._buffers if sys.getrefcount(b) > _FREE_REFS + 1]
            released = len(self._buffers) - len(kept)
            self._buffers = kept
        return released


#: the references to a buffer of :class:`BlockRing` that nothing else holds: the ring's list's
#: and the argument of :func:`sys.getrefcount`
_FREE_REFS = 2

#: blocks in flight at once that :func:`read_blocks_into` reads into reused buffers: the one
#: being read, two queued, and what a consumer holds (N-Triples: one per staging worker and
#: one waiting)
RING_BLOCKS = 8


#: what :func:`read_blocks_into` yields, in place of a block, once it has paused (see ``gate``)
PAUSED = object()


def read_blocks_into(stream: IO[bytes], size: int = BLOCK_BYTES, ring: BlockRing | None = None,
                     gate: threading.Event | None = None) -> Generator[Any, None, None]:
    r""":func:`read_blocks`, but each block is a ``bytearray`` the stream decompresses into
    (``readinto``): no block is copied after decompression, and the caller may change it.
    Blocks are read into reused buffers (``ring``, by default one of :data:`RING_BLOCKS`
    buffers of ``size`` bytes): a block is the caller's for as long as the caller refers to
    it, then its buffer takes a later block.

    ``gate``: blocks are read while it is set. Cleared, the reader stops before its next
    block and :data:`PAUSED` follows the last block read (so the caller has every block read
    so far, and the reader holds none); set again, reading goes on.

    >>> import io
    >>> [bytes(b) for b in read_blocks_into(io.BytesIO(b"a\nbb\nccc"), size=3)]
    [b'a\n', b'bb\n', b'ccc']
    """
    readinto = cast(io.BufferedIOBase, stream).readinto

    ring = BlockRing(size, RING_BLOCKS) if ring is None else ring

    def reader(put: Callable[[Any], None], stop: threading.Event) -> None:
        step = min(size, _READ_STEP)
        tail = b""  # the partial last line of the block before
        while not stop.is_set():
            if gate is not None and not gate.is_set():
                put(PAUSED)
                while not gate.wait(0.05):
                    if stop.is_set():
                        return
            block = ring.take(max(size, 2 * len(tail)))
            block[:len(tail)] = tail
            filled = len(tail)
            long = filled >= size  # a line longer than a block: handed on as soon as it ends
            ended = False
            try:
                with memoryview(block) as view:
                    while filled < len(block):  # a little at a time: a read error loses that much
                        got = readinto(view[filled:filled + step])
                        if not got:
                            ended = True
                            break
                        filled += got
                        if long and block.find(b"\n", filled - got, filled) >= 0:
                            break
            except BaseException as exc:  # the whole lines before the damage first
                cut = block.rfind(b"\n", 0, filled) + 1
                if cut:
                    del block[cut:]
                    put(block)
                put(_as_os_error(exc))
                return
            if ended:
                del block[filled:]
                if block:
                    put(block)
                break
            cut = block.rfind(b"\n", 0, filled) + 1
            if not cut:  # a line longer than the block: read on
                tail = bytes(memoryview(block)[:filled])
                continue
            tail = bytes(memoryview(block)[cut:filled])
            del block[cut:]
            put(block)
            del block  # the consumer's now: the ring sees it free once the consumer drops it
        put(None)

    yield from _read_ahead(reader)


def _read_ahead(reader: Callable[[Callable[[Any], None], threading.Event], None]
                ) -> Generator[Any, None, None]:
    """Run ``reader(put, stop)`` on a background thread and yield what it puts (blocks, then
    ``None`` at the end, or an exception to raise), two blocks ahead at most."""
    chunks: queue.Queue[Any] = queue.Queue(maxsize=2)
    stop = threading.Event()
    thread = threading.Thread(target=reader, args=(chunks.put, stop), name="chaingraph-read", daemon=True)
    thread.start()
    try:
        while True:
            item = chunks.get()
            if isinstance(item, BaseException):
                raise item
            if item is None:
                return
            yield item
    finally:
        stop.set()
        while thread.is_alive():  # unblock a reader waiting on a full queue
            with contextlib.suppress(queue.Empty):
                chunks.get(timeout=0.05)
