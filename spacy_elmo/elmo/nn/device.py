"""Which torch device the library runs on when a caller names a GPU by number (`dump --gpu-id`), chosen
by torch alone: the library side needs neither thinc nor CuPy to use a GPU. The spaCy side follows
thinc's current ops instead (pipeline/device.py), as `spacy train --gpu-id` sets them."""

from __future__ import annotations

import torch

from ..errors import InputError


def torch_device(gpu_id: int) -> torch.device:
    """The CPU for a negative `gpu_id`, else CUDA device `gpu_id`, made torch's current one; an InputError
    naming the fix where torch sees no such GPU."""
    if gpu_id < 0:
        return torch.device("cpu")
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if gpu_id >= count:
        seen = "no GPU (a CPU build of torch, or no driver)" if count == 0 else f"GPUs 0-{count - 1}"
        raise InputError(
            f"--gpu-id {gpu_id}: torch sees {seen}; install torch's CUDA build for a GPU, or leave --gpu-id "
            "out to run on the CPU"
        )
    torch.cuda.set_device(gpu_id)
    return torch.device("cuda", gpu_id)


def default_device() -> torch.device:
    """The first GPU where torch sees one, else the CPU (a Ray actor given `num_gpus`)."""
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
