"""Which device the biLM runs on: the one of thinc's current ops, as spaCy chooses it with `--gpu-id`.
The component (`bilm_layer/thinc_bilm.set_bilm`) and `dump --gpu-id` both go through here, so one local GPU
is picked and used the same way everywhere (thinc's `require_gpu`, as `spacy train --gpu-id` calls it)."""

from __future__ import annotations

from thinc.api import get_torch_default_device, require_cpu, require_gpu

from ..elmo.errors import InputError
from ..elmo.nn.bilm import BiLM


def use_gpu_id(gpu_id: int) -> None:
    """spaCy's `--gpu-id`: thinc's ops and torch's default device on GPU `gpu_id`; -1 for the CPU."""
    if gpu_id < 0:
        require_cpu()
        return
    try:
        require_gpu(gpu_id)
    except (ValueError, ImportError) as err:
        raise InputError(
            f"--gpu-id {gpu_id}: no GPU that spaCy can use ({err}); a GPU needs torch's CUDA build and CuPy "
            "(`pip install spacy[cuda12x]`), or leave --gpu-id out to run on the CPU"
        ) from None


def place_bilm(bilm: BiLM) -> BiLM:
    """`bilm` in eval mode on the device of thinc's current ops (a GPU after `use_gpu_id(n)` or
    `spacy.require_gpu()`)."""
    return bilm.eval().to(get_torch_default_device())
