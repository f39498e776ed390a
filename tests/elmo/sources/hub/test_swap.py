"""Giving a model its final directory (elmo/sources/hub/swap.py): the swap replaces what was there whole, and `recover`
finishes or undoes what a killed run left between its renames."""

import os
import time

from spacy_elmo.elmo.sources.hub.swap import install, leftovers, recover, temp_dir


def folder(path, text):
    path.mkdir(parents=True)
    (path / "weights.hdf5").write_text(text)
    return path


def test_the_temporary_folder_sits_beside_the_final_one_named_by_this_process(tmp_path):
    final = tmp_path / "elmo-small"
    assert temp_dir(final) == tmp_path / f".elmo-small.{os.getpid()}.tmp"


def test_install_replaces_the_old_model_and_leaves_nothing_beside_it(tmp_path):
    final = folder(tmp_path / "m", "old")
    install(folder(temp_dir(final), "new"), final)
    assert (final / "weights.hdf5").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


def test_leftovers_are_the_models_own_newest_first_tmp_before_old(tmp_path):
    final = tmp_path / "m"
    old = folder(tmp_path / ".m.11.old", "a")
    early = folder(tmp_path / ".m.12.tmp", "b")
    late = folder(tmp_path / ".m.13.tmp", "c")
    os.utime(early, (time.time() - 60, time.time() - 60))
    folder(tmp_path / ".mm.14.tmp", "other model")
    folder(tmp_path / ".m.x.tmp", "no pid")
    assert leftovers(final) == [late, early, old]
    assert leftovers(tmp_path / "missing" / "m") == []


def test_recover_puts_a_complete_new_copy_in_place_and_removes_the_rest(tmp_path):
    final = tmp_path / "m"
    folder(tmp_path / ".m.11.old", "old")
    folder(tmp_path / ".m.12.tmp", "complete")
    recover(final, complete=lambda path: True)
    assert (final / "weights.hdf5").read_text() == "complete"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


def test_recover_falls_back_to_the_old_copy_when_the_new_one_is_incomplete(tmp_path):
    final = tmp_path / "m"
    folder(tmp_path / ".m.11.old", "old")
    folder(tmp_path / ".m.12.tmp", "half")
    recover(final, complete=lambda path: path.suffix == ".old")
    assert (final / "weights.hdf5").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


def test_recover_keeps_an_installed_model_and_removes_leftovers(tmp_path):
    final = folder(tmp_path / "m", "installed")
    folder(tmp_path / ".m.12.tmp", "complete")
    recover(final, complete=lambda path: True)
    assert (final / "weights.hdf5").read_text() == "installed"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]
