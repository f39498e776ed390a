"""What a run reports while it trains (elmo/pretrain/progress.py): the steps the corpus asks for, the "train"
lines of the log (from rank 0 only), and a signal that ends a single-process run after its step."""

import os
import signal
import threading

import pytest
import torch

from spacy_elmo.elmo.pretrain.checkpoint import MetricsLog
from spacy_elmo.elmo.pretrain.corpus import CorpusStats
from spacy_elmo.elmo.pretrain.distributed import Context
from spacy_elmo.elmo.pretrain.model import LMOutput
from spacy_elmo.elmo.pretrain.progress import Position, ProgressReport, StopRequest, estimated_steps
from tests.support.pretraining import tiny_pretrain_config

STATS = CorpusStats(n_sentences=10, n_tokens=90)  # 100 forward targets per epoch


@pytest.mark.parametrize(
    "epochs, batch, unroll, world, expected", [(1, 2, 5, 1, 10), (3, 2, 5, 1, 30), (1, 3, 7, 2, 3)]
)
def test_steps_cover_the_corpus_n_epochs_times(epochs, batch, unroll, world, expected):
    config = tiny_pretrain_config(
        **{"training.n_epochs": epochs, "training.batch_size": batch, "training.unroll_steps": unroll}
    )
    assert estimated_steps(STATS, config, world_size=world) == expected


def output(loss_sum, count):
    """One step's output: the same summed loss and target count in both directions."""
    return LMOutput(loss_sums=torch.tensor([loss_sum, loss_sum]), counts=(count, count), states=None)


def test_the_main_rank_logs_a_train_line_with_the_position_and_perplexity(tmp_path):
    log = MetricsLog(tmp_path / "log.jsonl")
    report = ProgressReport(Context(), log, False, STATS, Position(0, 0, None), total=10)
    report.add(output(20.0, 10), torch.tensor(1.5))
    report.report(Position(step=1, tokens=50, states=None))
    report.close()
    (record,) = log.records()
    assert (record["event"], record["step"], record["tokens"]) == ("train", 1, 50)
    assert record["perplexity"] == pytest.approx(torch.exp(torch.tensor(2.0)).item(), rel=1e-5)
    assert record["grad_norm"] == 1.5 and record["tokens_per_s"] > 0


def test_other_ranks_write_no_line(tmp_path):
    log = MetricsLog(tmp_path / "log.jsonl")
    report = ProgressReport(Context(rank=1, world_size=1), log, False, STATS, Position(0, 0, None), total=10)
    report.add(output(20.0, 10), torch.tensor(1.5))
    report.report(Position(step=1, tokens=50, states=None))
    assert list(log.records()) == []


def test_sigterm_is_recorded_and_the_previous_handler_restored():
    before = signal.getsignal(signal.SIGTERM)
    stop = StopRequest(enabled=True)
    os.kill(os.getpid(), signal.SIGTERM)
    assert stop.requested and stop.signal == "SIGTERM"
    stop.restore()
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_signal_the_run_was_started_ignoring_stays_ignored():
    """A background command of a shell script starts with Ctrl-C ignored; the run leaves it so and
    still stops cleanly on SIGTERM."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        stop = StopRequest(enabled=True)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGINT)
        assert not stop.requested
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.requested and stop.signal == "SIGTERM"
        stop.restore()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_no_handler_when_disabled_or_off_the_main_thread():
    before = signal.getsignal(signal.SIGINT)
    assert StopRequest(enabled=False)._previous == {}
    found = []
    thread = threading.Thread(target=lambda: found.append(StopRequest(enabled=True)._previous))
    thread.start()
    thread.join()
    assert found == [{}] and signal.getsignal(signal.SIGINT) is before
