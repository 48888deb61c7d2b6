"""The collector arrangement: frozen after an analysis, garbage reclaimed when idle (after a
close or some growth) or at once when the heap grew by half."""

from __future__ import annotations

import asyncio
import gc
import sys
import weakref
from collections.abc import Iterator

import pytest

from pallas_ls.server.heap import HeapKeeper


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the cyclic collector frees it


def hoard_until(blocks: int) -> list[Node]:
    """Cycles (garbage only to a full pass) until the allocator has `blocks` in use."""
    hoard: list[Node] = []
    while sys.getallocatedblocks() < blocks:
        hoard += [Node() for _ in range(1000)]
    return hoard


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    """As in the server, objects are made with the collector off."""
    was_enabled = gc.isenabled()
    gc.disable()
    yield
    gc.unfreeze()
    if was_enabled:
        gc.enable()


def test_frozen_garbage_is_reclaimed_by_the_full_pass() -> None:
    loop = asyncio.new_event_loop()
    try:
        heap = HeapKeeper(loop, idle=3600)
        node = Node()
        ref = weakref.ref(node)
        heap.settled()
        del node
        gc.collect()
        assert ref() is not None  # frozen: ordinary passes do not see it
        heap.reclaim()
        assert ref() is None
        assert heap.passes == 1
        heap.stop()
    finally:
        loop.close()


def test_only_a_heap_grown_by_half_is_reclaimed_at_once() -> None:
    loop = asyncio.new_event_loop()
    try:
        heap = HeapKeeper(loop, idle=3600)
        heap.settled()
        baseline = sys.getallocatedblocks()
        hoard = hoard_until(int(baseline * 1.35))
        heap.settled()
        assert heap.passes == 0  # a third more: left to the idle pass
        hoard += hoard_until(int(baseline * 1.55))
        heap.settled()
        assert heap.passes == 1
        del hoard
        heap.stop()
    finally:
        loop.close()


async def _settle_idle(heap: HeapKeeper, ref: weakref.ref[Node]) -> None:
    """Wait (bounded) until the idle pass freed `ref`, or until the idle timer is done."""
    for _ in range(500):
        if ref() is None or heap._timer is None:
            return
        await asyncio.sleep(0.01)


def test_idle_server_reclaims_after_growth_or_a_close() -> None:
    async def scenario() -> None:
        heap = HeapKeeper(asyncio.get_running_loop(), idle=0.01)
        heap.settled()  # the baseline
        # A few replaced statements: not worth a pass over the whole heap.
        node = Node()
        ref = weakref.ref(node)
        heap.settled()
        del node
        await _settle_idle(heap, ref)
        assert heap.passes == 0 and ref() is not None
        # A document closed: its parse is garbage, the idle pass frees it.
        heap.later(dropped=True)
        await _settle_idle(heap, ref)
        assert heap.passes == 1 and ref() is None
        # Growth beyond idle_growth (but under growth): freed when idle.
        hoard = hoard_until(int(sys.getallocatedblocks() * 1.1))
        ref = weakref.ref(hoard[0])
        heap.settled()
        assert heap.passes == 1
        del hoard
        await _settle_idle(heap, ref)
        assert heap.passes == 2 and ref() is None
        heap.stop()

    asyncio.run(scenario())
