"""/dev/shm (and the disk) are one budget per node, not per rank (issue #40, 5).

Every colocated training process of a node checks the free space before any of them writes, so each sees the same
free bytes; then each writes its own two adapter versions into the same /dev/shm. Here N ranks (LOCAL_WORLD_SIZE, as
torchrun and accelerate launch set it) check against one shared budget and then write what they chose: the ranks that
chose a place must fit in it together.
"""

from __future__ import annotations

import shutil
from collections import namedtuple

import pytest

from train.engines.adapter_storage import RAM_ROOT, choose_root, needed_bytes

MIB = 1024**2
Usage = namedtuple("Usage", "total used free")
ADAPTER = 37 * MIB  # Qwen2.5-1.5B 4-bit at rank 16 (tests/train/engines/test_adapter_storage.py)


class Node:
    """One machine's free space: /dev/shm and the disk, shared by every rank on it."""

    def __init__(self, shm: int, disk: int) -> None:
        self.free = {"shm": shm, "disk": disk}

    def usage(self, path):
        free = self.free["shm" if str(path).startswith(RAM_ROOT) else "disk"]
        return Usage(2 * free + 1, free, free)


def launch(monkeypatch, node: Node, ranks: int, configured: str | None = None) -> list[str]:
    """Each rank checks (all before any writes, as they start together), then writes its two versions."""
    monkeypatch.setattr(shutil, "disk_usage", node.usage)
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(ranks))
    chosen = []
    for rank in range(ranks):
        monkeypatch.setenv("LOCAL_RANK", str(rank))
        root = choose_root(ADAPTER, configured)
        chosen.append("shm" if root.parent == RAM_ROOT else "disk")
    for place in chosen:  # the first syncs: each rank's two versions land in its chosen place
        node.free[place] -= needed_bytes(ADAPTER)
    return chosen


@pytest.mark.parametrize("ranks", [2, 4, 8])
def test_ranks_of_one_node_fit_in_the_shm_they_share(monkeypatch, ranks):
    node = Node(shm=(ranks - 1) * needed_bytes(ADAPTER), disk=100 * 1024 * MIB)  # room for all but one rank
    chosen = launch(monkeypatch, node, ranks)
    assert node.free["shm"] >= 0, f"{chosen.count('shm')} ranks wrote into a /dev/shm that holds {ranks - 1}"
    assert chosen == ["disk"] * ranks  # one decision per node: all of its ranks on disk, with the notice


def test_a_shm_that_holds_every_rank_is_used(monkeypatch):
    node = Node(shm=4 * needed_bytes(ADAPTER), disk=0)
    assert launch(monkeypatch, node, 4) == ["shm"] * 4 and node.free["shm"] >= 0


def test_one_process_still_needs_only_its_own_two_versions(monkeypatch):
    node = Node(shm=needed_bytes(ADAPTER), disk=0)
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    monkeypatch.setattr(shutil, "disk_usage", node.usage)
    assert choose_root(ADAPTER).parent == RAM_ROOT


def test_the_refusal_counts_the_nodes_ranks(monkeypatch, tmp_path):
    node = Node(shm=0, disk=3 * needed_bytes(ADAPTER))
    with pytest.raises(OSError, match=r"4 training processes on this node"):
        launch(monkeypatch, node, 4)
    with pytest.raises(OSError, match=r"adapter_root .* 4 training processes on this node"):
        launch(monkeypatch, Node(shm=0, disk=3 * needed_bytes(ADAPTER)), 4, str(tmp_path / "a"))
