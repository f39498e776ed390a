"""Device placement without a GPU: every tensor a call makes must be made where its model lives.

The model goes to torch's `meta` device (shapes, no data) and everything runs under a dispatch mode that
sees every aten op, the backward pass's too, and fails on one whose tensor inputs sit on two devices
(0-dim CPU tensors aside: torch treats them as scalars on any device). A tensor built on the host and
not moved is caught at the first op that mixes it with the model's, even where torch itself would allow
the mix (a CPU index into a CUDA tensor) and quietly copy it at every step.
Run with `pytest -k device`; on a machine with a GPU, tests/device/test_gpu.py runs the real thing.
"""

from typing import Any, List, Set

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from spacy_elmo import BiLM
from spacy_elmo.elmo.nn.char_encoder import token_lengths
from spacy_elmo.elmo.nn.chars import CharacterMapper
from spacy_elmo.elmo.nn.fast.fast_bilm import FastModeUnavailable, make_fast
from spacy_elmo.elmo.nn.options import ElmoOptions
from spacy_elmo.elmo.nn.softmax import LogUniformSampler
from spacy_elmo.elmo.pretrain.batching import StreamBatcher, TokenRows
from spacy_elmo.elmo.pretrain.distributed import Context
from spacy_elmo.elmo.pretrain.model import LanguageModel
from spacy_elmo.elmo.pretrain.steps import HostBatch, NonFiniteGuard, RunningStats
from spacy_elmo.elmo.pretrain.vocab import Vocabulary
from spacy_elmo.pipeline.bilm_layer import bilm_holder
from spacy_elmo.pipeline.bilm_layer import thinc_bilm as bilm_layer_module
from spacy_elmo.pipeline.bilm_layer.thinc_bilm import get_bilm
from tests.support.paths import TINY_MODEL
from tests.support.pipelines import tiny_tagger_pipeline

META = torch.device("meta")
SENTENCES = [["The", "bank", "raised", "its", "rates", "."], ["Rivers", "have", "banks", "."], ["Hi"]]


class MixedDevices(AssertionError):
    pass


class DeviceChecker(TorchDispatchMode):
    """Fails on any op whose tensor arguments live on more than one device; records the devices seen."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: Set[str] = set()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        flat, _ = tree_flatten((args, kwargs or {}))
        devices = {
            t.device for t in flat if isinstance(t, torch.Tensor) and not (t.device.type == "cpu" and t.dim() == 0)
        }
        if len(devices) > 1:
            raise MixedDevices(f"{func} mixes tensors on {sorted(map(str, devices))}")
        self.seen.update(str(d) for d in devices)
        return func(*args, **(kwargs or {}))


def tiny_options() -> ElmoOptions:
    return ElmoOptions.from_file(TINY_MODEL / "options.json")


def meta_bilm() -> BiLM:
    return BiLM(tiny_options()).to(META)


@pytest.mark.parametrize("mode", ["stateless", "warm", "stateful"])
def test_device_bilm_forward_and_backward(mode):
    bilm = meta_bilm()
    checker = DeviceChecker()
    with checker:
        if mode == "warm":
            bilm.set_warm_start([["A", "warm", "up", "."]])
        for _ in range(2 if mode == "stateful" else 1):
            out = bilm.forward_sentences(SENTENCES, stateful=mode == "stateful")
        assert out.layers.device == META and out.mask.device == META
        out.layers.sum().backward()
    assert "meta" in checker.seen
    assert all(p.grad is not None and p.grad.device == META for p in bilm.lstm.parameters())


def test_device_bilm_char_id_input():
    """`forward(char_ids)`: the caller's ids on the device; lengths go to the host once per batch."""
    bilm = meta_bilm()
    host_ids = CharacterMapper(50).batch_ids(SENTENCES)
    ids = torch.from_numpy(host_ids).to(META)
    checker = DeviceChecker()
    # Lengths cannot be read off a meta tensor, nor can the distinct rows be found (torch.unique): stand
    # in for the one device-to-host copy and encode every position.
    lengths = np.array([len(s) + 2 for s in SENTENCES])
    char_lengths = token_lengths(host_ids.reshape(-1, host_ids.shape[-1]))
    with checker:
        embedded = bilm.char_encoder.encode_rows(ids.view(-1, ids.shape[-1]), char_lengths).view(*ids.shape[:2], -1)
        out = bilm._contextualize(embedded, lengths, stateful=False)
    assert out.layers.device == META and "meta" in checker.seen


def test_device_checker_catches_a_tensor_left_on_the_host(monkeypatch):
    """The checker is no formality: the char ids of a batch left on the CPU fail the forward pass."""
    bilm = meta_bilm()

    def encode_on_host(self: BiLM, tokens: List[str]) -> torch.Tensor:
        ids = np.stack([self.char_mapper.token_ids(t) for t in tokens])
        return self.char_encoder.encode_rows(torch.from_numpy(ids))

    monkeypatch.setattr(BiLM, "_encode_strings", encode_on_host)
    with pytest.raises((MixedDevices, RuntimeError)):
        with DeviceChecker():
            bilm.forward_sentences(SENTENCES)


def test_device_int8_mode_refuses_a_gpu_model():
    with pytest.raises(FastModeUnavailable, match="CPU only.*use the exact BiLM"):
        make_fast(meta_bilm(), "int8")


def _pretraining_step(softmax: str) -> DeviceChecker:
    words = sorted({w for s in SENTENCES for w in s})
    vocab = Vocabulary(["<S>", "</S>", "<UNK>", *words])
    torch.manual_seed(0)
    model = LanguageModel(tiny_options(), len(vocab), dropout=0.1)
    model.to(META)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=0.2, initial_accumulator_value=1.0)
    sampler = LogUniformSampler(len(vocab), 4) if softmax == "sampled" else None
    fwd = next(StreamBatcher(iter(SENTENCES * 3), vocab, 2, 5))
    bwd = next(StreamBatcher(iter(SENTENCES[::-1] * 3), vocab, 2, 5, reverse=True))
    checker = DeviceChecker()
    with checker:
        batch = HostBatch.from_batches(fwd, bwd, TokenRows(CharacterMapper(50))).to(META)
        negatives, n_tries = sampler.sample(torch.Generator().manual_seed(0)) if sampler else (None, 0)
        negatives = negatives.to(META) if negatives is not None else None
        states = model.zero_states(2)
        out = model(batch, states, sampler, negatives, n_tries)
        loss = out.loss_sums[0] / out.counts[0] + out.loss_sums[1] / out.counts[1]
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        NonFiniteGuard(META).screen(norm, model.parameters(), 1)
        RunningStats(META).add(out.loss_sums, out.counts, norm)
        optimizer.step()
    assert all(h.device == META and c.device == META for h, c in out.states)
    return checker


@pytest.mark.parametrize("softmax", ["sampled", "full"])
def test_device_pretraining_step(softmax):
    assert "meta" in _pretraining_step(softmax).seen


def test_device_single_process_context_has_no_host_group():
    assert Context().host_group is None


@pytest.fixture
def meta_component_io(monkeypatch):
    """Call it to make thinc's torch <-> array conversions take meta tensors: zeros of the right shape
    out, meta in."""

    def torch2xp(tensor: torch.Tensor, ops: Any = None) -> np.ndarray:
        assert tensor.device == META, f"the biLM gave a tensor on {tensor.device}"
        return np.zeros(tensor.shape, dtype=np.float32)

    def xp2torch(array: np.ndarray, requires_grad: bool = False, device: Any = None) -> torch.Tensor:
        return torch.zeros(array.shape, device=device)

    def patch() -> None:
        monkeypatch.setattr(bilm_layer_module, "torch2xp", torch2xp)  # the fast path's conversion
        monkeypatch.setattr(bilm_holder, "torch2xp", torch2xp)  # the wrapper's conversions
        monkeypatch.setattr(bilm_holder, "xp2torch", xp2torch)

    return patch


@pytest.mark.parametrize("frozen", [True, False])
def test_device_component_predict_and_update(meta_component_io, frozen):
    from spacy.training import Example

    nlp = tiny_tagger_pipeline(frozen)
    tagger = nlp.get_pipe("tagger")
    examples = [Example.from_dict(nlp.make_doc("The bank rose ."), {"tags": ["D", "N", "V", "P"]})]
    nlp.initialize(lambda: examples)
    assert tagger is nlp.get_pipe("tagger")
    bilm = get_bilm(nlp.get_pipe("elmo").model)
    bilm.to(META)
    meta_component_io()
    checker = DeviceChecker()
    with checker:
        doc = nlp("The river bank .")
        nlp.update(examples, sgd=nlp.create_optimizer())
    assert doc._.elmo["layers"].shape[0] == bilm.n_layers
    assert "meta" in checker.seen
