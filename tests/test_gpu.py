"""The GPU paths give the CPU's results: the biLM (bundled and original size; stateless, warm, stateful)
and the `elmo` component under `spacy.require_gpu()` with a fine-tuned biLM. Skipped without CUDA (and
the component test without CuPy); on a GPU machine `pytest tests/test_gpu.py`. GPU speed:
`python -m benchmarks.bench_gpu`."""

from typing import List

import numpy as np
import pytest
import torch

from spacy_elmo import BiLM, load_bilm, preset
from spacy_elmo.models import bundled_model_paths

from .paths import WARMUP_TEXT

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
TOLERANCE = 1e-4


def sentences(n: int) -> List[List[str]]:
    lines = [line.split() for line in WARMUP_TEXT.read_text(encoding="utf8").splitlines() if line.split()]
    return [lines[i % len(lines)] for i in range(n)]


def cpu_bilm(name: str) -> BiLM:
    if name == "original":
        torch.manual_seed(0)
        return BiLM(preset("original")).eval()
    return load_bilm(*bundled_model_paths())


@pytest.mark.parametrize("mode", ["stateless", "warm", "stateful"])
@pytest.mark.parametrize("name", ["bundled", "original"])
def test_bilm_on_the_gpu_matches_the_cpu(name, mode):
    torch.backends.cuda.matmul.allow_tf32 = False
    cpu = cpu_bilm(name)
    gpu = BiLM(cpu.options)
    gpu.load_state_dict(cpu.state_dict())
    gpu.to("cuda").eval()
    if mode == "warm":
        cpu.set_warm_start()
        gpu.set_warm_start()
    stateful = mode == "stateful"
    batch = sentences(24)
    for _ in range(2 if stateful else 1):  # the second stateful call starts from the carried states
        for x, y in zip(
            cpu.embed(batch, stateful=stateful, batch_size=8), gpu.embed(batch, stateful=stateful, batch_size=8)
        ):
            np.testing.assert_allclose(y, x, atol=TOLERANCE, rtol=0)


def test_component_under_require_gpu_matches_the_cpu_and_fine_tunes():
    pytest.importorskip("cupy", reason="spaCy's GPU ops need CuPy")
    import spacy
    from spacy.training import Example

    texts = [" ".join(s) for s in sentences(16)]

    def build() -> "spacy.language.Language":
        nlp = spacy.blank("en")
        nlp.add_pipe("elmo", config={"frozen": False})
        listener = {
            "@architectures": "spacy-elmo.ElmoListener.v1",
            "upstream": "elmo",
            "mix": {"@layers": "spacy-elmo.ScalarMix.v1", "layer_norm": True, "dropout": 0.1},
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
    spacy.require_gpu()
    try:
        gpu_nlp, examples = build()
        np.testing.assert_allclose(vectors(gpu_nlp), expected, atol=TOLERANCE, rtol=0)
        optimizer = gpu_nlp.create_optimizer()
        losses: dict = {}
        for _ in range(3):
            gpu_nlp.update(examples, sgd=optimizer, losses=losses)
        assert np.isfinite(losses["tagger"])
    finally:
        spacy.require_cpu()
