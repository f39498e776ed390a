"""What one process's biLM layers share (pipeline/process_state.py): one fast copy per biLM and mode,
kept while the biLM lives; a mode that cannot run said once and None; forked children and
multiprocessing workers on one thread."""

import gc
import warnings

import pytest

from spacy_elmo import load_bilm
from spacy_elmo.elmo.manylangs.model import ManyLangsBiLM
from spacy_elmo.pipeline.bilm_layer import process_state
from spacy_elmo.pipeline.bilm_layer.process_state import ProcessState
from tests.support.paths import MANYLANGS_DIR, TINY_MODEL


@pytest.fixture(scope="module")
def bilm():
    return load_bilm(TINY_MODEL)


def test_a_fast_copy_is_made_once_per_bilm_and_mode(bilm):
    state = ProcessState()
    copy = state.fast_copy(bilm, "int8")
    assert copy is not None and copy is not bilm
    assert state.fast_copy(bilm, "int8") is copy


def test_a_fast_copy_goes_with_its_bilm(bilm):
    state = ProcessState()
    other = load_bilm(TINY_MODEL)
    state.fast_copy(other, "int8")
    assert len(state._fast) == 1
    del other
    gc.collect()
    assert len(state._fast) == 0


def test_a_mode_that_cannot_run_warns_once_and_gives_none():
    manylangs = load_bilm(MANYLANGS_DIR / "words-2layers-relu")
    assert isinstance(manylangs, ManyLangsBiLM)
    state = ProcessState()
    with pytest.warns(UserWarning, match="fast_mode 'int8' is not used: .* does not run ELMoForManyLangs"):
        assert state.fast_copy(manylangs, "int8") is None
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        assert state.fast_copy(manylangs, "int8") is None
    assert again == []


def test_the_fork_guard_is_registered_once(monkeypatch):
    registered = []
    monkeypatch.setattr(process_state.os, "register_at_fork", lambda **hooks: registered.append(hooks))
    state = ProcessState()
    state.single_threaded_in_workers()
    state.single_threaded_in_workers()
    assert registered == [{"after_in_child": process_state._one_thread}]


def test_a_forked_child_runs_torch_single_threaded(monkeypatch):
    threads = []
    monkeypatch.setattr(process_state.torch, "set_num_threads", threads.append)
    process_state._one_thread()
    assert threads == [1]


@pytest.mark.parametrize(
    "parent, omp, expected",
    [(None, None, []), ("a parent", None, [1]), ("a parent", "3", []), ("a parent", "", [1])],
    ids=["main process", "worker", "worker with OMP_NUM_THREADS", "worker with it empty"],
)
def test_a_multiprocessing_worker_runs_torch_single_threaded_once(monkeypatch, parent, omp, expected):
    """A worker started by spawn or forkserver, once, so that a count the user sets later stays; the
    real spawned workers: tests/pipeline/test_pickle.py."""
    threads = []
    monkeypatch.setattr(process_state.os, "register_at_fork", lambda **hooks: None)
    monkeypatch.setattr(process_state.multiprocessing, "parent_process", lambda: parent)
    monkeypatch.setattr(process_state.torch, "set_num_threads", threads.append)
    if omp is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", omp)
    state = ProcessState()
    state.single_threaded_in_workers()
    state.single_threaded_in_workers()
    assert threads == expected


@pytest.mark.parametrize("parent, warned", [(None, False), (object(), True)])
def test_a_stateful_biLM_in_a_worker_is_warned_of_once(monkeypatch, parent, warned):
    monkeypatch.setattr(process_state.multiprocessing, "parent_process", lambda: parent)
    state = ProcessState()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        state.warn_stateful_in_worker()
        state.warn_stateful_in_worker()
    assert len(caught) == warned
    assert all("run a stateful pipeline with n_process=1" in str(w.message) for w in caught)
