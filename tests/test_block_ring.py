"""Blocks read into reused buffers (:class:`~chaingraph.sources.loaders.compression.BlockRing`):
a buffer is refilled only once nothing but the ring refers to it, so a block the caller
still holds (itself, or a numpy or Arrow view of it) keeps its bytes, and the blocks of a
long stream take a fixed number of buffers."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from chaingraph.sources.loaders.compression import RING_BLOCKS, BlockRing, read_blocks_into


def test_a_buffer_is_reused_once_dropped_and_never_while_held() -> None:
    ring = BlockRing(8, capacity=2)
    first = ring.take(8)
    view = np.frombuffer(first, dtype=np.uint8)  # a view keeps the buffer the caller's
    del first
    second = ring.take(8)
    assert second is not view.base and len(ring) == 2
    del view
    third = ring.take(8)
    assert third is not second and len(ring) == 2  # the first buffer, free again
    assert ring.take(8) is not third and len(ring) == 2  # both held: a new one, not kept


def test_a_buffer_cut_at_its_last_line_is_whole_again() -> None:
    ring = BlockRing(8, capacity=1)
    block = ring.take(8)
    del block[5:]
    del block
    assert len(ring.take(8)) == 8


def test_other_sizes_are_not_kept() -> None:
    ring = BlockRing(8, capacity=4)
    assert len(ring.take(16)) == 16 and len(ring) == 0


def test_a_long_stream_takes_a_fixed_number_of_buffers() -> None:
    data = b"".join(b"line %d\n" % i for i in range(20_000))
    seen: set[int] = set()
    out = []
    for block in read_blocks_into(io.BytesIO(data), size=1024):
        seen.add(id(block))
        out.append(bytes(block))
    assert b"".join(out) == data
    assert len(out) > 100 and len(seen) <= RING_BLOCKS + 1  # +1: the short last block


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=120),
       size=st.integers(4, 64), hold=st.lists(st.sampled_from(["drop", "numpy", "arrow", "block"]),
                                              min_size=1, max_size=8))
def test_held_blocks_keep_their_bytes_while_later_blocks_are_read(lines: list[bytes], size: int,
                                                                   hold: list[str]) -> None:
    data = b"\n".join(lines)
    kept: list[tuple[object, bytes]] = []
    read = []
    for i, block in enumerate(read_blocks_into(io.BytesIO(data), size=size)):
        copy = bytes(block)
        read.append(copy)
        how = hold[i % len(hold)]
        if how == "numpy":
            kept.append((np.frombuffer(block, dtype=np.uint8), copy))
        elif how == "arrow":
            kept.append((pa.py_buffer(block), copy))
        elif how == "block":
            kept.append((block, copy))
        del block
    assert b"".join(read) == data
    for held, copy in kept:
        assert bytes(held) == copy  # type: ignore[call-overload]


def test_a_line_longer_than_a_block_is_handed_on_as_soon_as_it_ends() -> None:
    # a JSON dump's entity may be megabytes on one line: the block that holds it must not
    # take as much again of the lines after it (chunks are parsed, and batches cut, whole)
    data = b"x" * 5000 + b"\n" + b"".join(b"line %d\n" % i for i in range(2000))
    blocks = [bytes(b) for b in read_blocks_into(io.BytesIO(data), size=256)]
    assert b"".join(blocks) == data
    assert blocks[0].startswith(b"x" * 5000) and len(blocks[0]) <= 5001 + 256
