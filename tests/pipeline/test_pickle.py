"""An initialized pipeline pickles (spaCy's `nlp.pipe(n_process=...)` under the `spawn` start method, the
default on macOS and Windows, pickles every component into each worker) and the copy gives the same
vectors and predictions, also while it trains with cached layers."""

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import spacy
from spacy.training import Example

from tests.support.paths import REPO
from tests.support.pipelines import elmo_config, tiny_tagger_pipeline

TEXTS = ["The cat sat on the mat .", "Dogs bark .", "She went to the bank .", "Yes", "A  spaced   text ."]
TAGS = {"The cat sat on the mat .": ["DT", "NN", "VBD", "IN", "DT", "NN", "."], "Dogs bark .": ["NNS", "VBP", "."]}


def _examples(nlp):
    return [Example.from_dict(nlp.make_doc(text), {"tags": tags}) for text, tags in TAGS.items()]


def _vectors(docs):
    return [doc._.elmo["vectors"] for doc in docs]


def _tiny_elmo(**model):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config(**model))
    return nlp


def _assert_same_vectors(expected, docs):
    """Equal up to float rounding: a token's char-CNN row depends on the batch it was first encoded in
    (elmo/nn/token_cache.py), and the copy encodes its tokens anew."""
    for a, doc in zip(expected, docs):
        np.testing.assert_allclose(a, doc._.elmo["vectors"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a, np.stack([token.vector for token in doc]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fast_mode", [None, "int8"])
def test_an_initialized_elmo_pipeline_pickles(fast_mode):
    nlp = _tiny_elmo(fast_mode=fast_mode)
    nlp.initialize()
    expected = _vectors(nlp.pipe(TEXTS))
    copy = pickle.loads(pickle.dumps(nlp))
    _assert_same_vectors(expected, copy.pipe(TEXTS))
    _assert_same_vectors(expected, [pickle.loads(pickle.dumps(doc)) for doc in nlp.pipe(TEXTS)])  # with hooks


def test_a_pipeline_with_a_listening_head_pickles_and_predicts_the_same():
    nlp = tiny_tagger_pipeline(frozen=True)
    nlp.initialize(lambda: _examples(nlp))
    for _ in range(3):
        nlp.update(_examples(nlp))
    nlp.get_pipe("elmo").finish_training()
    expected = list(nlp.pipe(TEXTS))
    copy = pickle.loads(pickle.dumps(nlp))
    docs = list(copy.pipe(TEXTS))
    _assert_same_vectors(_vectors(expected), docs)
    assert [[t.tag_ for t in doc] for doc in docs] == [[t.tag_ for t in doc] for doc in expected]


def test_a_training_pipeline_pickles_without_its_cached_layers():
    """The cached layers (up to `cache_mb`) and the training docs to top up with stay behind; the copy still
    trains."""
    nlp = tiny_tagger_pipeline(frozen=True)
    nlp.initialize(lambda: _examples(nlp))
    nlp.update(_examples(nlp))
    assert len(nlp.get_pipe("elmo").cache) > 0
    copy = pickle.loads(pickle.dumps(nlp))
    elmo = copy.get_pipe("elmo")
    assert elmo.cache.live and len(elmo.cache) == 0
    copy.update(_examples(copy))
    assert len(elmo.cache) == len(TAGS)
    _assert_same_vectors(_vectors(nlp.pipe(TEXTS)), copy.pipe(TEXTS))


SPAWN_SCRIPT = """
import multiprocessing

import numpy as np
import torch
from spacy.language import Language
from spacy.training import Example

from spacy_elmo import restore_vectors
from tests.support.pipelines import tiny_tagger_pipeline

TEXTS = {texts!r}
TAGS = {tags!r}


@Language.component("torch_threads")
def torch_threads(doc):
    doc.user_data["torch threads"] = torch.get_num_threads()
    return doc


if __name__ == "__main__":
    multiprocessing.set_start_method("spawn")
    torch.set_num_threads(2)
    nlp = tiny_tagger_pipeline(frozen=True)
    nlp.add_pipe("torch_threads")
    nlp.initialize(lambda: [Example.from_dict(nlp.make_doc(t), {{"tags": tags}}) for t, tags in TAGS.items()])
    expected = list(nlp.pipe(TEXTS))
    docs = list(nlp.pipe(TEXTS, n_process=2, batch_size=2))
    assert restore_vectors(docs) == len(TEXTS)
    for a, b in zip(expected, docs):
        np.testing.assert_allclose(a._.elmo["vectors"], b._.elmo["vectors"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a._.elmo["vectors"], np.stack([t.vector for t in b]), rtol=1e-5, atol=1e-6)
        assert [t.tag_ for t in a] == [t.tag_ for t in b]
        assert a.user_data["torch threads"] == 2 and b.user_data["torch threads"] == 1
    print("same vectors")
"""


@pytest.mark.slow
def test_nlp_pipe_with_two_spawned_processes(tmp_path):
    """In a fresh interpreter, as the start method can be set only once per process. The workers run
    torch on one thread (two workers of torch's default count each oversubscribe the cores)."""
    script = tmp_path / "spawn_pipe.py"
    script.write_text(textwrap.dedent(SPAWN_SCRIPT.format(texts=TEXTS, tags=TAGS)))
    env = {name: value for name, value in _env().items() if name != "OMP_NUM_THREADS"}
    command = [sys.executable, str(script)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=REPO, env=env)
    assert result.returncode == 0 and "same vectors" in result.stdout, result.stderr[-3000:]


def _env():
    """This checkout first on the path, so the workers import the code under test."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    return env
