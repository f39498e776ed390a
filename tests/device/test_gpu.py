"""A copy of the biLM on a device gives the CPU's results: the biLM (bundled, and original size on a
GPU; stateless, warm, stateful) and the `elmo` component (under `spacy.require_gpu()` on a GPU) with a
fine-tuned biLM. Each check is one function run for every device: on the CPU in CI (a copy on the CPU,
and the tiny size instead of the original), so that the code cannot rot unseen, and on a CUDA GPU
where there is one (`pytest tests/device/test_gpu.py`). No precision flag is set here: under torch's defaults
(cuDNN TF32 on) the biLM must still compute in fp32 (elmo/nn/precision.py). GPU speed:
`python -m benchmarks.bench_gpu`."""

from typing import List

import numpy as np
import pytest
import torch

from spacy_elmo import BiLM, load_bilm, preset
from spacy_elmo.elmo.nn.fast.fast_bilm import make_fast
from spacy_elmo.elmo.nn.run_options import RunOptions
from spacy_elmo.elmo.sources import bundled_model_paths
from tests.support.paths import WARMUP_TEXT

TOLERANCE = 1e-4
NEEDS_CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
# (model, device): the original size only where a GPU makes it quick.
MODELS_ON_DEVICES = [
    ("bundled", "cpu"),
    ("tiny", "cpu"),
    pytest.param("bundled", "cuda", marks=NEEDS_CUDA),
    pytest.param("original", "cuda", marks=NEEDS_CUDA),
]
DEVICES = ["cpu", pytest.param("cuda", marks=NEEDS_CUDA)]


def sentences(n: int) -> List[List[str]]:
    lines = [line.split() for line in WARMUP_TEXT.read_text(encoding="utf8").splitlines() if line.split()]
    return [lines[i % len(lines)] for i in range(n)]


def cpu_bilm(name: str) -> BiLM:
    if name == "bundled":
        return load_bilm(*bundled_model_paths())
    torch.manual_seed(0)
    return BiLM(preset(name)).eval()


@pytest.mark.parametrize("mode", ["stateless", "warm", "stateful"])
@pytest.mark.parametrize("name, device", MODELS_ON_DEVICES)
def test_bilm_on_a_device_matches_the_cpu(name, device, mode):
    cpu = cpu_bilm(name)
    other = BiLM(cpu.options)
    other.load_state_dict(cpu.state_dict())
    other.to(device).eval()
    if mode == "warm":
        cpu.set_warm_start()
        other.set_warm_start()
    stateful = mode == "stateful"
    batch = sentences(24)
    for _ in range(2 if stateful else 1):  # the second stateful call starts from the carried states
        for x, y in zip(
            cpu.embed(batch, stateful=stateful, batch_size=8), other.embed(batch, stateful=stateful, batch_size=8)
        ):
            np.testing.assert_allclose(y, x, atol=TOLERANCE, rtol=0)


@pytest.mark.parametrize("time_loop", ["wavefront", "captured"])
@pytest.mark.parametrize("mode", ["stateless", "stateful"])
@pytest.mark.parametrize("name, device", MODELS_ON_DEVICES)
def test_time_loops_on_a_device_match_the_step_loop_on_the_cpu(name, device, mode, time_loop):
    """The wavefront eager, and captured: the first call of a bucket captures its CUDA graph, the second
    replays it; both must give the CPU's step loop."""
    cpu = cpu_bilm(name)
    other = BiLM(cpu.options)
    other.load_state_dict(cpu.state_dict())
    other.to(device).eval()
    stateful = mode == "stateful"
    batch = sentences(24)
    for _ in range(2):
        expected = cpu.embed(batch, stateful=stateful, batch_size=8, run=RunOptions(time_loop="step"))
        got = other.embed(batch, stateful=stateful, batch_size=8, run=RunOptions(time_loop=time_loop))
        for x, y in zip(expected, got):
            np.testing.assert_allclose(y, x, atol=TOLERANCE, rtol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_bf16_on_a_device_is_near_the_exact_cpu(device):
    """The reduced-precision mode where it is meant to run; its bound as in tests/elmo/nn/fast/test_bf16.py."""
    cpu = cpu_bilm("bundled")
    other = BiLM(cpu.options)
    other.load_state_dict(cpu.state_dict())
    fast = make_fast(other.to(device).eval(), "bf16")
    batch = sentences(16)
    expected = np.concatenate([e[-1] for e in cpu.embed(batch, batch_size=8)])
    for time_loop in ("step", "captured", "captured"):
        got = np.concatenate([g[-1] for g in fast.embed(batch, batch_size=8, run=RunOptions(time_loop=time_loop))])
        assert 1e-5 < np.abs(got - expected).max() < 0.1


@pytest.mark.parametrize("device", DEVICES)
def test_component_on_a_device_matches_the_cpu_and_fine_tunes(device):
    import spacy
    from spacy.training import Example

    if device == "cuda":
        pytest.importorskip("cupy", reason="spaCy's GPU ops need CuPy")
    texts = [" ".join(s) for s in sentences(16)]

    def build() -> "spacy.language.Language":
        nlp = spacy.blank("en")
        nlp.add_pipe("elmo", config={"frozen": False})
        listener = {
            "@architectures": "spacy-elmo.ElmoListener.v1",
            "upstream": "elmo",
            "mix": {"@layers": "spacy-elmo.ScalarMix.v2", "layer_norm": True, "dropout": 0.1},
        }
        nlp.add_pipe("tagger", config={"model": {"@architectures": "spacy.Tagger.v2", "tok2vec": listener}})
        examples = [
            Example.from_dict(nlp.make_doc(t), {"tags": ["X" if i % 2 else "Y" for i, _ in enumerate(t.split())]})
            for t in texts
        ]
        nlp.initialize(lambda: examples)
        return nlp, examples

    def vectors(nlp) -> np.ndarray:
        ops = nlp.get_pipe("elmo").model.ops
        return np.concatenate([ops.to_numpy(d._.elmo["vectors"]) for d in nlp.pipe(texts, batch_size=4)])

    cpu_nlp, _ = build()
    expected = vectors(cpu_nlp)
    if device == "cuda":
        spacy.require_gpu()
    try:
        nlp, examples = build()
        np.testing.assert_allclose(vectors(nlp), expected, atol=TOLERANCE, rtol=0)
        optimizer = nlp.create_optimizer()
        losses: dict = {}
        for _ in range(3):
            nlp.update(examples, sgd=optimizer, losses=losses)
        assert np.isfinite(losses["tagger"])
    finally:
        spacy.require_cpu()


@pytest.mark.parametrize("device", DEVICES)
def test_dump_gpu_id_runs_on_that_device_and_writes_the_cpus_layers(device, tmp_path, monkeypatch):
    """`dump --gpu-id N` (-1: the CPU) through the library's own device choice: torch alone, no CuPy."""
    import h5py

    import spacy_elmo.elmo.embed.dump as dump_module
    from spacy_elmo.elmo.embed.dump import DumpSettings, dump

    batch = sentences(12)
    text = tmp_path / "input.txt"
    text.write_text("\n".join(" ".join(words) for words in batch) + "\n", encoding="utf8")
    ran_on = []
    write_layers = dump_module.write_layers

    def spy(bilm, *args, **kwargs):
        ran_on.append(next(bilm.parameters()).device.type)
        return write_layers(bilm, *args, **kwargs)

    monkeypatch.setattr(dump_module, "write_layers", spy)
    out = tmp_path / "layers.hdf5"
    dump(text, out, DumpSettings(batch_size=8, progress=False, gpu_id=0 if device == "cuda" else -1))
    assert ran_on == [device]
    with h5py.File(out, "r") as written:
        for i, layers in enumerate(cpu_bilm("bundled").embed(batch)):
            np.testing.assert_allclose(written[str(i)][()], layers, atol=TOLERANCE, rtol=0)
