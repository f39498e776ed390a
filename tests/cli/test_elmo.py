"""`elmo`, AllenNLP 0.9's command as a user types it: its arguments, its layout (a dataset per line keyed
by index or by sentence, `sentence_to_index`), the shapes of --all, --top and --average, the numbers
`ElmoEmbedder` gives (states carried), and one clear error for a missing or doubled output flag."""

import json

import h5py
import numpy as np
import pytest

from spacy_elmo.allennlp import ElmoEmbedder
from tests.support.cli import assert_clear_error, run_cli
from tests.support.tiny_corpus import write_lines

LINES = ["The first sentence .", "Another one", "x"]


@pytest.fixture
def source(tmp_path):
    return write_lines(tmp_path / "in.txt", LINES)


def test_allennlps_command_line_writes_allennlps_layout(fixture_paths, source, tmp_path):
    options, weights = fixture_paths
    embedder = ElmoEmbedder(options, weights)
    expected = list(embedder.embed_sentences((line.split() for line in LINES), batch_size=2))
    shapes = {"all": lambda n: (3, n, 32), "top": lambda n: (n, 32), "average": lambda n: (n, 32)}
    for flag, shape in shapes.items():
        target = tmp_path / f"{flag}.hdf5"
        args = ["--options-file", options, "--weight-file", weights, "--batch-size", 2, "--cuda-device", -1]
        result = run_cli("elmo", source, target, f"--{flag}", *args)
        assert result.returncode == 0, result.stderr
        with h5py.File(target, "r") as f:
            assert sorted(f) == ["0", "1", "2", "sentence_to_index"]
            assert json.loads(f["sentence_to_index"][0]) == {line: str(i) for i, line in enumerate(LINES)}
            for i, line in enumerate(LINES):
                assert f[str(i)].shape == shape(len(line.split()))
            picked = {"all": expected[0], "top": expected[0][-1], "average": expected[0].mean(axis=0)}[flag]
            np.testing.assert_allclose(f["0"][()], picked, atol=1e-6, rtol=0)


def test_sentence_keys_and_a_model_name_for_the_options_file(source, tmp_path):
    target = tmp_path / "out.hdf5"
    result = run_cli("elmo", source, target, "--top", "--use-sentence-keys", "--options-file", "fixture-tiny")
    assert result.returncode == 0, result.stderr
    with h5py.File(target, "r") as f:
        assert sorted(f) == sorted(LINES)


@pytest.mark.parametrize("flags, shown", [([], "got none"), (["--all", "--top"], "got --all, --top")])
def test_one_output_flag_is_required(source, tmp_path, flags, shown):
    result = run_cli("elmo", source, tmp_path / "out.hdf5", *flags, "--options-file", "fixture-tiny")
    assert_clear_error(result, "give one of --all, --top, --average", shown)
    assert not (tmp_path / "out.hdf5").exists()


def test_an_existing_output_is_kept_without_overwrite(source, tmp_path):
    target = tmp_path / "out.hdf5"
    target.write_text("mine", encoding="utf8")
    result = run_cli("elmo", source, target, "--all", "--options-file", "fixture-tiny")
    assert_clear_error(result, "--overwrite")
    assert target.read_text(encoding="utf8") == "mine"
    assert run_cli("elmo", source, target, "--all", "--options-file", "fixture-tiny", "--overwrite").returncode == 0
