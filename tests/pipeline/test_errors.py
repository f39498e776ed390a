"""A user's mistake met while spaCy initializes a pipeline (`spacy train`) is one message, as spaCy's
own config errors are, and stays the package's error of its type for code that catches it."""

import pytest
import spacy
from confection import ConfigValidationError
from spacy.tokens import Doc, DocBin, Span
from spacy.util import registry

from spacy_elmo.elmo.errors import OptionsError, OutputFileError
from spacy_elmo.elmo.nn.errors import FastModeError
from spacy_elmo.pipeline.errors import for_spacy_commands, said_by_spacy
from spacy_elmo.pipeline.factory import make_elmo
from tests.support.cli import run_cli
from tests.support.paths import CONFIGS
from tests.support.pipelines import REGISTERED

WORDS = "Alice went to Paris .".split()


def corpus(path, tagged: bool):
    """One sentence with tags, or with an entity and no tags."""
    doc = Doc(spacy.blank("en").vocab, words=WORDS, tags=["NNP", "VBD", "IN", "NNP", "."] if tagged else None)
    if not tagged:
        doc.ents = [Span(doc, 0, 1, label="PERSON")]
    DocBin(docs=[doc]).to_disk(path)
    return path


def assert_one_message(result, fragment: str) -> None:
    """spaCy's commands print a failure on stdout ("✘ ..."), exit status 1, no traceback."""
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr, (result.stdout + result.stderr)[-3000:]
    assert fragment in " ".join(result.stdout.split()), result.stdout[-2000:]


@pytest.mark.slow
def test_spacy_train_on_a_corpus_without_a_heads_annotation_is_one_message(tmp_path):
    untagged = corpus(tmp_path / "train.spacy", tagged=False)
    config = CONFIGS / "tagger_elmo.cfg"
    result = run_cli("train", config, "--paths.train", untagged, "--paths.dev", untagged, module="spacy")
    assert_one_message(result, "'tagger' learns part-of-speech tags (token.tag_) on the ELMo layers")


@pytest.mark.slow
def test_spacy_train_with_a_missing_model_is_one_message(tmp_path):
    tagged = corpus(tmp_path / "train.spacy", tagged=True)
    paths = ("--paths.train", tagged, "--paths.dev", tagged, "--paths.elmo_model", tmp_path / "nothere")
    result = run_cli("train", CONFIGS / "tagger_elmo.cfg", *paths, module="spacy")
    assert_one_message(result, f"no ELMo model '{tmp_path / 'nothere'}': not an existing file or directory")


@pytest.mark.slow
def test_spacy_train_fine_tuning_in_a_fast_mode_is_one_message(tmp_path):
    tagged = corpus(tmp_path / "train.spacy", tagged=True)
    paths = ("--paths.train", tagged, "--paths.dev", tagged)
    fine_tuned_fast = ("--components.elmo.frozen", "false", "--components.elmo.model.fast_mode", "int8")
    result = run_cli("train", CONFIGS / "tagger_elmo.cfg", *paths, *fine_tuned_fast, module="spacy")
    assert_one_message(result, "fast_mode 'int8' runs a frozen biLM only, and this one is fine-tuned")


@pytest.mark.slow
@pytest.mark.parametrize(
    "override,fragment",
    [
        (("--components.elmo.model.fast_mode", "int4"), "unknown fast_mode 'int4'"),
        (("--components.elmo.model.model", '""'), "`model` is empty"),
        (("--components.elmo.cache_mb", "-1"), "'cache_mb' must be a whole number of MiB"),
    ],
)
def test_spacy_train_with_a_refused_setting_is_one_message(tmp_path, override, fragment):
    tagged = corpus(tmp_path / "train.spacy", tagged=True)
    paths = ("--paths.train", tagged, "--paths.dev", tagged)
    result = run_cli("train", CONFIGS / "tagger_elmo.cfg", *paths, *override, module="spacy")
    assert_one_message(result, fragment)


def test_a_registered_builders_error_is_a_config_error_of_its_own_type():
    build = registry.architectures.get("spacy-elmo.BiLM.v3")
    with pytest.raises(FastModeError, match="unknown fast_mode") as caught:
        build(model="fixture-tiny", fast_mode="int4")
    assert isinstance(caught.value, ConfigValidationError)


def test_every_registered_builder_and_the_factory_speak_to_spacys_commands():
    wrapper = said_by_spacy(lambda: None).__code__
    for table, name in REGISTERED:
        assert getattr(registry, table).get(name).__code__ is wrapper, name
    assert make_elmo.__code__ is wrapper


@pytest.mark.parametrize("kind", [OptionsError, OutputFileError])
def test_the_error_keeps_its_type_message_and_attributes(kind):
    original = kind("options.json: no 'lstm' key; fix the file")
    original.path = "options.json"
    mixed = for_spacy_commands(original)
    assert isinstance(mixed, kind) and type(mixed).__name__ == kind.__name__
    assert str(mixed) == str(original) and mixed.path == "options.json"


def test_an_error_mixed_already_is_raised_as_it_is():
    """A head's mix, initialized by the `elmo` component's initialize, mixes its error first."""
    mixed = for_spacy_commands(OptionsError("options.json: no 'lstm' key"))
    assert for_spacy_commands(mixed) is mixed
