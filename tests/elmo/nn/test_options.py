import json

import pytest

from spacy_elmo.elmo.nn.options import PRESETS, ElmoOptions, OptionsError, preset, with_changes
from tests.support.paths import ALLENNLP_DIR, BILM_TF_DIR


def _base():
    return json.loads((ALLENNLP_DIR / "options.json").read_text())


@pytest.mark.parametrize("directory", [ALLENNLP_DIR, BILM_TF_DIR])
def test_fixture_options_load(directory):
    options = ElmoOptions.from_file(directory / "options.json")
    assert options.lstm.projection_dim == 16
    assert options.char_cnn.n_filters == 124
    assert options.output_dim == 32 and options.n_output_layers == 3


def test_round_trip_keeps_training_keys(tmp_path):
    data = _base()
    data.update(
        {
            "bidirectional": True,
            "dropout": 0.1,
            "all_clip_norm_val": 10.0,
            "n_epochs": 10,
            "n_train_tokens": 768648884,
            "batch_size": 128,
            "n_tokens_vocab": 793471,
            "unroll_steps": 20,
            "n_negative_samples_batch": 8192,
        }
    )
    options = ElmoOptions.from_dict(data)
    options.to_file(tmp_path / "options.json")
    again = ElmoOptions.from_file(tmp_path / "options.json")
    assert again == options
    assert again.to_dict()["n_train_tokens"] == 768648884
    assert again.training.unroll_steps == 20


@pytest.mark.parametrize("n_characters", [261, 262])
def test_both_character_counts_load(n_characters):
    data = _base()
    data["char_cnn"]["n_characters"] = n_characters
    assert ElmoOptions.from_dict(data).char_cnn.n_characters == n_characters


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["lstm"].pop("dim"), "lstm.dim"),
        (lambda d: d.pop("char_cnn"), "char_cnn"),
        (lambda d: d["char_cnn"].pop("filters"), "char_cnn.filters"),
        (lambda d: d["lstm"].update(dims=5), "lstm.dims"),
        (lambda d: d.update(learning_rte=0.2), "learning_rte"),
        (lambda d: d["lstm"].update(projection_dim=0), "lstm.projection_dim"),
        (lambda d: d["lstm"].update(n_layers=2.5), "lstm.n_layers"),
        (lambda d: d["char_cnn"].update(n_characters=300), "n_characters"),
        (lambda d: d["char_cnn"].update(activation="gelu"), "activation"),
        (lambda d: d["char_cnn"]["filters"].append([60, 4]), "filters[5]"),
        (lambda d: d["char_cnn"]["filters"].append([2]), "filters[5]"),
        (lambda d: d["lstm"].update(cell_clip=-1), "lstm.cell_clip"),
        (lambda d: d.update(dropout=1.5), "dropout"),
        (lambda d: d["lstm"].update(use_skip_connections="yes"), "use_skip_connections"),
    ],
)
def test_bad_options_name_the_key(mutate, message):
    data = _base()
    mutate(data)
    with pytest.raises(OptionsError, match=message.replace("[", r"\[").replace("]", r"\]")):
        ElmoOptions.from_dict(data)


def test_file_errors(tmp_path):
    with pytest.raises(OptionsError, match="does not exist"):
        ElmoOptions.from_file(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(OptionsError, match="not valid JSON"):
        ElmoOptions.from_file(bad)


@pytest.mark.parametrize(
    "text, problem",
    [("[" * 100_000 + "]" * 100_000, "nested too deeply"), ('{"lstm": ' + "9" * 5000 + "}", "digits")],
)
def test_json_that_python_cannot_hold_is_the_files_error(tmp_path, text, problem):
    path = tmp_path / "options.json"
    path.write_text(text)
    with pytest.raises(OptionsError, match=f"options file {path} is not valid JSON: .*{problem}"):
        ElmoOptions.from_file(path)


def test_presets_are_the_published_sizes():
    assert set(PRESETS) == {"tiny", "small", "medium", "original"}
    original = preset("original")
    assert (original.lstm.dim, original.projection_dim, original.char_cnn.n_highway) == (4096, 512, 2)
    assert original.char_cnn.n_filters == 2048
    assert preset("small").lstm.dim == 1024 and preset("medium").projection_dim == 256
    with pytest.raises(OptionsError, match="unknown preset"):
        preset("huge")


def test_with_changes_describes_a_new_size_and_checks_it():
    base = preset("small")
    changed = with_changes(base, {"lstm.dim": 2048, "char_cnn.n_highway": 2})
    assert (changed.lstm.dim, changed.char_cnn.n_highway) == (2048, 2)
    assert changed.lstm.projection_dim == base.lstm.projection_dim and base.lstm.dim == 1024
    with pytest.raises(OptionsError, match="no key 'lstm.cells'"):
        with_changes(base, {"lstm.cells": 8})
    with pytest.raises(OptionsError, match="dim"):
        with_changes(base, {"lstm.dim": "wide"})
