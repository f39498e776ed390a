"""The biLM computes in full fp32 whatever torch's process-wide TF32 flags, and leaves them as it found
them: flags observed from inside its calls (hooks on the char-CNN convolution and a recording LSTM
product), from the spaCy layer, and from a pretraining step, for callers that set TF32 on and off,
after an exception inside, and with the explicit TF32 opt-in. On the CPU the flags change nothing
numerically; what these tests pin is which flags a GPU would see (tests/device/test_gpu.py checks the numbers
under torch's defaults)."""

import threading
from typing import Dict, Iterator, List

import pytest
import spacy
import torch
from spacy.training import Example

from spacy_elmo import BiLM
from spacy_elmo.elmo.nn import precision
from spacy_elmo.elmo.nn.lstm import BiLSTMLayer
from spacy_elmo.elmo.nn.precision import fp32_scope
from spacy_elmo.elmo.nn.run_options import RunOptions
from spacy_elmo.elmo.pretrain import load_config, train
from spacy_elmo.pipeline.bilm_layer.thinc_bilm import ensure_loaded
from tests.support.paths import PRETRAIN_TINY_CONFIG
from tests.support.pipelines import TAGGER_ON_ELMO, elmo_config
from tests.support.tiny_corpus import write_tiny_corpus

SENTENCES = [["The", "bank", "raised", "its", "rates", "."], ["Rivers", "have", "banks", "."]]
FINE_GRAINED = precision._fine_grained("cudnn", "conv") is not None


def flags() -> Dict[str, object]:
    """What torch would use for the next float32 product, in the legacy API and (torch >= 2.9) the
    fine-grained one."""
    seen: Dict[str, object] = {
        "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
    }
    if FINE_GRAINED:
        for backend, op in precision._GPU_OPS + precision._CPU_OPS:
            seen[f"{backend}.{op}"] = getattr(getattr(torch.backends, backend), op).fp32_precision
    return seen


def expected(tf32: bool) -> Dict[str, object]:
    legacy: Dict[str, object] = {
        "cudnn.allow_tf32": tf32,
        "cuda.matmul.allow_tf32": tf32,
        "float32_matmul_precision": "high" if tf32 else "highest",
    }
    if FINE_GRAINED:
        legacy.update({f"{b}.{o}": "tf32" if tf32 else "ieee" for b, o in precision._GPU_OPS})
        legacy.update({f"{b}.{o}": "ieee" for b, o in precision._CPU_OPS})
    return legacy


FP32, TF32 = expected(False), expected(True)
CALLERS = {
    "tf32 on": lambda: (torch.set_float32_matmul_precision("high"), setattr(torch.backends.cudnn, "allow_tf32", True)),
    "tf32 off": lambda: (
        torch.set_float32_matmul_precision("highest"),
        setattr(torch.backends.cudnn, "allow_tf32", False),
    ),
    "bf16 products": lambda: torch.set_float32_matmul_precision("medium"),
}


@pytest.fixture(params=list(CALLERS))
def caller(request) -> Iterator[Dict[str, object]]:
    """The caller's flags set as the parameter says; yields them, and puts torch's defaults back."""
    CALLERS[request.param]()
    try:
        yield flags()
    finally:
        torch.set_float32_matmul_precision("highest")
        torch.backends.cudnn.allow_tf32 = True


class Recorder:
    """The flags seen inside the char-CNN's convolutions and the LSTM's projection products."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, bilm: BiLM) -> None:
        self.seen: List[Dict[str, object]] = []
        for conv in bilm.char_encoder.convs:
            conv.register_forward_hook(lambda *_: self.seen.append(flags()))
        products = BiLSTMLayer.projection_products

        def recording(layer: BiLSTMLayer, m: torch.Tensor, directions: slice) -> torch.Tensor:
            self.seen.append(flags())
            return products(layer, m, directions)

        monkeypatch.setattr(BiLSTMLayer, "projection_products", recording)

    def all_were(self, wanted: Dict[str, object]) -> bool:
        return bool(self.seen) and all(s == wanted for s in self.seen)


@pytest.fixture
def small_bilm() -> BiLM:
    torch.manual_seed(0)
    return BiLM(load_config(PRETRAIN_TINY_CONFIG).options).eval()


OPT_IN = RunOptions(tf32=True)
# Each call, and the flags it must compute under: fp32, unless TF32 travels with the call (RunOptions).
CALLS = {
    "forward_sentences": (lambda bilm: bilm.forward_sentences(SENTENCES), FP32),
    "forward": (lambda bilm: bilm(torch.from_numpy(bilm.char_mapper.batch_ids(SENTENCES))), FP32),
    "embed": (lambda bilm: bilm.embed(SENTENCES), FP32),
    "embed stateful": (lambda bilm: bilm.embed(SENTENCES, stateful=True), FP32),
    "embed_tokens": (lambda bilm: bilm.embed_tokens(SENTENCES[0]), FP32),
    "set_warm_start": (lambda bilm: bilm.set_warm_start(SENTENCES), FP32),
    "forward_sentences, tf32": (lambda bilm: bilm.forward_sentences(SENTENCES, run=OPT_IN), TF32),
    "embed, tf32": (lambda bilm: bilm.embed(SENTENCES, run=OPT_IN), TF32),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_bilm_calls_compute_in_fp32_unless_told_and_restore_the_callers_flags(caller, monkeypatch, small_bilm, call):
    recorder = Recorder(monkeypatch, small_bilm)
    run, wanted = CALLS[call]
    run(small_bilm)
    assert recorder.all_were(wanted), recorder.seen
    assert flags() == caller


def test_flags_are_restored_after_an_exception_inside(caller, small_bilm):
    def fail(*_):
        raise RuntimeError("inside the char-CNN")

    small_bilm.char_encoder.convs[0].register_forward_hook(fail)
    with pytest.raises(RuntimeError, match="inside the char-CNN"):
        small_bilm.embed(SENTENCES)
    assert flags() == caller


@pytest.mark.parametrize("tf32", [False, True])
def test_the_component_computes_in_fp32_unless_its_tf32_option_and_restores(caller, monkeypatch, tf32):
    """Prediction, and fine-tuning's forward and backward (a full backward hook sees the gradients
    through the char-CNN), with `tf32` of `spacy-elmo.BiLM.v3` as the config sets it."""
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={**elmo_config(tf32=tf32), "frozen": False})
    nlp.add_pipe("tagger", config=TAGGER_ON_ELMO)
    doc = nlp.make_doc("The bank raised its rates .")
    examples = [Example.from_dict(doc, {"tags": ["D", "N", "V", "D", "N", "P"]})]
    nlp.initialize(lambda: examples)
    bilm = ensure_loaded(nlp.get_pipe("elmo").model)
    recorder = Recorder(monkeypatch, bilm)
    in_backward: List[Dict[str, object]] = []
    bilm.char_encoder.convs[0].register_full_backward_hook(lambda *_: in_backward.append(flags()))
    list(nlp.pipe(["The bank raised its rates ."]))
    nlp.update(examples, sgd=nlp.create_optimizer())
    assert recorder.all_were(TF32 if tf32 else FP32), recorder.seen
    assert in_backward and all(s == (TF32 if tf32 else FP32) for s in in_backward), in_backward
    assert flags() == caller


def test_the_layer_builder_takes_tf32_and_defaults_to_exact():
    from spacy_elmo.pipeline.architectures import build_bilm_v3
    from spacy_elmo.pipeline.bilm_layer.thinc_bilm import run_settings

    assert run_settings(build_bilm_v3()).tf32 is False
    assert run_settings(build_bilm_v3(tf32=True)).tf32 is True


def test_nested_and_concurrent_calls_share_one_scope(caller):
    """The first call in saves the caller's flags, the last one out restores them; an exact call is
    never made TF32 by a concurrent opted-in one."""
    inside, release = threading.Event(), threading.Event()

    def other_thread() -> None:
        with fp32_scope(tf32=True):
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other_thread)
    thread.start()
    inside.wait(10)
    assert flags() == TF32
    with fp32_scope():
        assert flags() == FP32
        with fp32_scope(tf32=True):
            assert flags() == FP32
    assert flags() == TF32  # the other thread's call is still open
    release.set()
    thread.join()
    assert flags() == caller


def test_legacy_torch_without_fine_grained_flags(caller, monkeypatch):
    """torch < 2.9 has only the legacy flags: the scope sets and restores those."""
    monkeypatch.setattr(precision, "_fine_grained", lambda backend, op: None)
    with fp32_scope():
        assert torch.backends.cudnn.allow_tf32 is False
        assert torch.get_float32_matmul_precision() == "highest"
    assert flags() == caller


@pytest.mark.skipif(not FINE_GRAINED, reason="torch < 2.9 has no fine-grained fp32_precision flags")
def test_a_caller_mixing_the_legacy_and_fine_grained_apis_gets_its_flags_back():
    """torch.backends.fp32_precision = "tf32" leaves the legacy flags unreadable; the scope sets the
    fine-grained flags anyway and restores every one of them."""
    getter = torch._C._get_fp32_precision_getter
    keys = [("generic", "all"), *((b, o) for b in ("cuda", "mkldnn") for o in ("all", "matmul", "conv", "rnn"))]
    try:
        torch.backends.fp32_precision = "tf32"
        before = [getter(b, o) for b, o in keys]
        with fp32_scope():
            assert torch.backends.cudnn.conv.fp32_precision == "ieee"
            assert torch.backends.cuda.matmul.fp32_precision == "ieee"
            assert torch.backends.mkldnn.matmul.fp32_precision == "ieee"
        assert [getter(b, o) for b, o in keys] == before
    finally:
        torch.backends.fp32_precision = "none"
        torch.set_float32_matmul_precision("highest")
        torch.backends.cudnn.allow_tf32 = True


@pytest.mark.parametrize("tf32", [False, True])
def test_a_pretraining_step_computes_in_fp32_unless_tf32(caller, tmp_path, tf32):
    seen: List[Dict[str, object]] = []
    hook = torch.nn.modules.module.register_module_forward_hook(lambda *_: seen.append(flags()))
    try:
        config = load_config(
            PRETRAIN_TINY_CONFIG,
            {
                **write_tiny_corpus(tmp_path / "corpus"),
                "training.max_steps": 1,
                "training.tf32": tf32,
                "logging.plot": False,
            },
        )
        train(config, tmp_path / "run", show_progress=False)
    finally:
        hook.remove()
    assert seen and all(s == (TF32 if tf32 else FP32) for s in seen), seen
    assert flags() == caller
