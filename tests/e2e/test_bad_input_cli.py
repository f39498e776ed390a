"""Bad files through the CLI as a user would give them: a clear message naming the file, no traceback,
nothing overwritten or half-written."""

import shutil

import h5py
import pytest

from tests.support.cli import assert_clear_error, run_cli
from tests.support.paths import PRETRAIN_TINY_CONFIG, REPO

FIXTURE = REPO / "tests" / "fixtures" / "elmo-allennlp"
OPTIONS, WEIGHTS = FIXTURE / "options.json", FIXTURE / "lm_weights.hdf5"
BILM_TF_TRAIN = REPO / "tests" / "fixtures" / "elmo-bilm-tf" / "train"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A tiny pretraining output directory (it has a softmax), for `evaluate`."""
    out = tmp_path_factory.mktemp("tiny") / "run"
    result = run_cli(
        "pretrain",
        PRETRAIN_TINY_CONFIG,
        "--output",
        out,
        "--no-progress",
        "--paths.train",
        BILM_TF_TRAIN / "data.txt",
        "--paths.vocab",
        BILM_TF_TRAIN / "vocab.txt",
        "--paths.dev",
        "null",
        "--training.max_steps",
        "3",
        "--logging.plot",
        "false",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return out


@pytest.fixture
def sentences(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("The bank .\nA river bank .\n", encoding="utf8")
    return path


def test_dump_with_an_hdf5_file_as_options(sentences, tmp_path):
    assert_clear_error(
        run_cli("dump", "--options", WEIGHTS, "--weights", WEIGHTS, sentences, tmp_path / "o.hdf5"),
        "lm_weights.hdf5",
        "not UTF-8",
    )


def test_dump_with_latin1_options(sentences, tmp_path):
    latin = tmp_path / "options.json"
    latin.write_bytes(OPTIONS.read_bytes() + "\n\xe9".encode("latin-1"))
    assert_clear_error(
        run_cli("dump", "--options", latin, "--weights", WEIGHTS, sentences, tmp_path / "o.hdf5"),
        "options.json",
        "not UTF-8",
    )


def test_dump_of_a_non_utf8_input(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    result = run_cli("dump", "--options", OPTIONS, "--weights", WEIGHTS, bad, tmp_path / "o.hdf5")
    assert_clear_error(result, "latin1.txt", "not UTF-8")
    assert not (tmp_path / "o.hdf5").exists()


def test_dump_refuses_to_overwrite_and_to_dump_nothing(sentences, tmp_path):
    target = tmp_path / "o.hdf5"
    target.write_bytes(b"precious")
    assert_clear_error(run_cli("dump", "--options", OPTIONS, "--weights", WEIGHTS, sentences, target), "--overwrite")
    assert target.read_bytes() == b"precious"
    assert run_cli("dump", "--options", OPTIONS, "--weights", WEIGHTS, sentences, target, "--overwrite").returncode == 0
    with h5py.File(target) as f:
        assert sorted(f) == ["0", "1"]
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert_clear_error(
        run_cli("dump", "--options", OPTIONS, "--weights", WEIGHTS, empty, tmp_path / "e.hdf5"),
        "empty.txt",
        "no tokens",
    )
    assert not (tmp_path / "e.hdf5").exists()


def test_evaluate_with_a_truncated_softmax(run_dir, tmp_path):
    broken = tmp_path / "run"
    shutil.copytree(run_dir, broken)
    softmax = broken / "softmax.hdf5"
    softmax.write_bytes(softmax.read_bytes()[: softmax.stat().st_size // 2])
    assert_clear_error(run_cli("evaluate", broken, BILM_TF_TRAIN / "data.txt"), "softmax.hdf5")


def test_evaluate_a_bundled_model_without_a_softmax(tmp_path):
    heldout = tmp_path / "heldout.txt"
    heldout.write_text("a b c .\n", encoding="utf8")
    assert_clear_error(run_cli("evaluate", "fixture-tiny", heldout), "fixture-tiny", "softmax.hdf5")


def test_evaluate_with_a_non_utf8_heldout_file(run_dir, tmp_path):
    bad = tmp_path / "heldout.txt"
    bad.write_bytes(b"ok line\n\xff\xfe broken\n")
    assert_clear_error(run_cli("evaluate", run_dir, bad), "heldout.txt", "not UTF-8")


@pytest.mark.parametrize("options", ["", "DIR"])
def test_dump_with_an_empty_or_directory_options_path(sentences, tmp_path, options):
    options = str(tmp_path) if options == "DIR" else options
    result = run_cli("dump", "--options", options, "--weights", WEIGHTS, sentences, tmp_path / "o.hdf5")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "options" in result.stderr.lower()


def test_evaluate_with_an_empty_directory_as_heldout_text(run_dir, tmp_path):
    empty = tmp_path / "heldout"
    empty.mkdir()
    assert_clear_error(run_cli("evaluate", run_dir, empty), str(empty), "holds no text files")
