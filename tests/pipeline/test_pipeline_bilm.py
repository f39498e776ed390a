"""The biLM of a saved spaCy pipeline (spacy_elmo/pipeline/pipeline_bilm.py): the weights the pipeline
holds now, fine-tuned ones included; the component to take it from named where several hold one; a folder
that does not load as a pipeline a package error, whatever its config holds."""

import pytest
import spacy
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spacy_elmo import load_bilm
from spacy_elmo.elmo.errors import ElmoError, InputError
from spacy_elmo.pipeline.pipeline_bilm import pipeline_bilm
from tests.support.pipelines import elmo_config

SENTENCES = [["She", "sat", "on", "the", "bank", "."]]


def _layers(bilm):
    return bilm.forward_sentences(SENTENCES).layers


def _saved(path, names=("elmo",)):
    nlp = spacy.blank("en")
    for name in names:
        nlp.add_pipe("elmo", name=name, config=elmo_config())
    nlp.initialize()
    with torch.no_grad():
        for parameter in nlp.get_pipe(names[0]).model.layers[0].shims[0]._model.parameters():
            parameter.add_(0.01)  # the biLM updated since it was loaded
    nlp.to_disk(path)
    return path


def test_the_biLM_is_the_one_the_pipeline_holds_now(tmp_path):
    bilm = pipeline_bilm(_saved(tmp_path / "nlp"))
    assert not torch.equal(_layers(bilm), _layers(load_bilm("fixture-tiny")))
    nlp = spacy.load(tmp_path / "nlp")
    assert torch.equal(_layers(bilm), _layers(nlp.get_pipe("elmo").model.layers[0].shims[0]._model.bilm))


def test_several_biLMs_need_the_component_named(tmp_path):
    path = _saved(tmp_path / "nlp", names=("elmo", "other"))
    with pytest.raises(InputError, match=r"2 components holding a biLM \(elmo, other\).*--component"):
        pipeline_bilm(path)
    assert torch.equal(_layers(pipeline_bilm(path, "other")), _layers(load_bilm("fixture-tiny")))
    with pytest.raises(InputError, match="'tagger' of .* holds no biLM; those that do: elmo, other"):
        pipeline_bilm(path, "tagger")


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=st.binary(max_size=200) | st.sampled_from([b"", b'[nlp]\nlang = "en"\npipeline = ["elmo"]\n']))
def test_a_folder_that_is_no_pipeline_is_a_package_error(tmp_path, config):
    (tmp_path / "config.cfg").write_bytes(config)
    (tmp_path / "meta.json").write_text('{"lang": "en", "name": "x", "version": "0.0.0"}', encoding="utf8")
    with pytest.raises(ElmoError) as error:
        pipeline_bilm(tmp_path)
    assert "\n" not in str(error.value)  # one line, as the CLI prints it
