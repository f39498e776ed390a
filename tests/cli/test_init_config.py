"""`init-config`: a pretraining config of a model size, usable as written, never written over a file."""

from spacy_elmo.elmo.pretrain import load_config
from tests.support.cli import assert_clear_error, run_cli


def test_init_config_writes_a_usable_config_and_refuses_to_overwrite(tmp_path):
    out = tmp_path / "small.cfg"
    assert run_cli("init-config", "small", out).returncode == 0
    assert load_config(out, {"paths.train": "x"}).options.lstm.dim == 1024
    assert_clear_error(run_cli("init-config", "small", out), "--overwrite")
