"""Data-parallel helpers (elmo/pretrain/distributed.py): alone, every collective is the value itself and no
process group is made; on two gloo processes started as torchrun starts them, sums, gathers and
broadcasts agree on every rank."""

import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from spacy_elmo.elmo.pretrain import distributed
from spacy_elmo.elmo.pretrain.distributed import Context


def test_alone_the_context_is_rank_zero_of_one(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "1")
    context = distributed.setup()
    assert context.is_main and not context.distributed and context.host_group is None
    assert not dist.is_initialized()


def test_alone_every_collective_is_the_value_itself():
    context = Context()
    tensor = torch.tensor([1.0, 2.0])
    assert distributed.sum_across(context, tensor) is tensor
    assert distributed.host_sums(context, [3, 4]) == [3, 4]
    assert distributed.gather(context, "a") == ["a"]
    assert distributed.broadcast(context, {"k": 1}) == {"k": 1}
    distributed.barrier(context)
    distributed.wait_for_all(context)
    distributed.teardown(context)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank(rank, port, results):
    import os

    os.environ.update(RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    context = distributed.setup()
    try:
        results[rank] = (
            context.rank,
            distributed.sum_across(context, torch.tensor([float(rank + 1)])).tolist(),
            distributed.host_sums(context, [rank, 10]),
            distributed.gather(context, f"r{rank}"),
            distributed.broadcast(context, f"from {rank}"),
        )
        distributed.wait_for_all(context)
    finally:
        distributed.teardown(context)


@pytest.mark.slow
def test_two_gloo_processes_agree_on_sums_gathers_and_broadcasts(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # gloo on the CPU, as on a machine without a GPU
    with mp.Manager() as manager:
        results = manager.dict()
        mp.spawn(_rank, args=(_free_port(), results), nprocs=2, join=True)
        got = dict(results)
    for rank in (0, 1):
        assert got[rank] == (rank, [3.0], [1, 20], ["r0", "r1"], "from 0")
