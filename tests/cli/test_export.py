"""`python -m spacy_elmo export` (spacy_elmo/cli/export.py): a model name to a folder that loads back by
path as the model it names; a folder holding files already is refused without a traceback; a trained
pipeline's biLM, fine-tuned, taken out in the published layout that every loader reads, its vectors the
pipeline's."""

import numpy as np
import spacy
import torch
from spacy.training import Example

from spacy_elmo import load_bilm
from spacy_elmo.allennlp import ElmoEmbedder
from tests.support.cli import assert_clear_error, run_cli
from tests.support.pipelines import elmo_config, tiny_tagger_pipeline

WORDS = ["She", "sat", "on", "the", "bank", "."]


def test_export_writes_a_folder_that_loads_as_the_model(tmp_path):
    result = run_cli("export", tmp_path / "tiny", "--model", "fixture-tiny", "--repo-id", "org/tiny")
    assert result.returncode == 0, result.stderr
    assert "model.safetensors" in result.stdout
    sentences = [["A", "test", "."]]
    exported = load_bilm(tmp_path / "tiny").forward_sentences(sentences).layers
    assert torch.equal(exported, load_bilm("fixture-tiny").forward_sentences(sentences).layers)
    assert "hf:org/tiny" in (tmp_path / "tiny" / "README.md").read_text(encoding="utf8")
    assert_clear_error(run_cli("export", tmp_path / "tiny"), "not a new or empty folder")


def _fine_tuned_pipeline(path):
    """A tagger on an `elmo` whose biLM learns (`--components.elmo.frozen false`), a few updates, saved."""
    nlp = tiny_tagger_pipeline(frozen=False)
    examples = [Example.from_dict(nlp.make_doc(" ".join(WORDS)), {"tags": ["PRP", "VBD", "IN", "DT", "NN", "."]})]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(path)


def test_export_takes_a_fine_tuned_biLM_out_of_a_pipeline_loadable_by_every_loader(tmp_path):
    _fine_tuned_pipeline(tmp_path / "model-best")
    doc = spacy.load(tmp_path / "model-best")(" ".join(WORDS))
    pipeline_layers = doc._.elmo["layers"].astype(np.float32)
    result = run_cli("export", tmp_path / "bilm", "--model", tmp_path / "model-best")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "bilm"
    assert "spaCy pipeline" in (out / "README.md").read_text(encoding="utf8")
    bilm = load_bilm(out)
    assert not np.allclose(load_bilm("fixture-tiny").embed([WORDS])[0], pipeline_layers, atol=1e-3)  # it learned
    loaded = {
        "folder": bilm.embed([WORDS])[0],
        "hdf5": load_bilm(out / "options.json", out / "lm_weights.hdf5").embed([WORDS])[0],
        "allennlp": ElmoEmbedder(out / "options.json", out / "lm_weights.hdf5", stateful=False).embed_sentence(WORDS),
    }
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config(path=str(out)))
    loaded["component"] = nlp(" ".join(WORDS))._.elmo["layers"].astype(np.float32)
    for name, layers in loaded.items():
        np.testing.assert_allclose(layers, pipeline_layers, rtol=2e-3, atol=2e-3, err_msg=name)  # float16 stored


def test_a_pipeline_folder_elsewhere_points_to_export_and_component_needs_a_pipeline(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    nlp.to_disk(tmp_path / "nlp")
    (tmp_path / "in.txt").write_text("The bank .\n", encoding="utf8")
    result = run_cli("dump", tmp_path / "in.txt", tmp_path / "out.hdf5", "--model", tmp_path / "nlp")
    assert_clear_error(
        result, "is a saved spaCy pipeline", f"python -m spacy_elmo export DIR --model {tmp_path / 'nlp'}"
    )
    result = run_cli("export", tmp_path / "out", "--model", "fixture-tiny", "--component", "elmo")
    assert_clear_error(result, "--component picks among a saved spaCy pipeline's biLMs")
    (tmp_path / "nlp" / "config.cfg").write_text("not a config", encoding="utf8")
    result = run_cli("export", tmp_path / "nlp", "--model", tmp_path / "nlp")  # its folder checked first
    assert_clear_error(result, "is not a new or empty folder")
