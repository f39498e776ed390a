"""The pretraining GPU options run on the CPU through the same code (CI runs it; tests/test_gpu.py keeps
what needs CUDA): prefetching in a thread, char ids gathered from the run's token table on the device,
negatives drawn per step from a generator on the device, bf16 autocast and the TF32 opt-in."""

import math

import pytest

from spacy_elmo.pretrain import load_config, train
from spacy_elmo.pretrain.checkpoint import LOG_FILE, MetricsLog
from spacy_elmo.pretrain.export import WEIGHTS_FILE

from .paths import PRETRAIN_TINY_CONFIG
from .tiny_corpus import write_tiny_corpus

SAMPLED = {"training.softmax": "sampled", "training.n_negative_samples": 8, "logging.plot": False}


def run(tmp_path, name, **settings):
    overrides = {**write_tiny_corpus(tmp_path / "corpus"), **SAMPLED, "training.max_steps": 6, **settings}
    out = tmp_path / name
    return train(load_config(PRETRAIN_TINY_CONFIG, overrides), out, show_progress=False), MetricsLog(out / LOG_FILE)


@pytest.mark.slow
def test_prefetching_on_the_cpu_computes_what_a_plain_run_computes(tmp_path):
    plain, _ = run(tmp_path, "plain")
    prefetched, _ = run(tmp_path, "prefetched", **{"training.prefetch": 3})
    assert prefetched.digests == plain.digests


@pytest.mark.slow
def test_tf32_bf16_and_prefetch_together_train_on_the_cpu(tmp_path):
    result, log = run(
        tmp_path,
        "all",
        **{"training.tf32": True, "training.bf16": True, "training.prefetch": 2, "logging.log_every": 3},
    )
    assert result.step == 6
    records = [r for r in log.records() if r["event"] == "train"]
    assert [r["step"] for r in records] == [3, 6]
    assert all(math.isfinite(r["perplexity"]) and math.isfinite(r["grad_norm"]) for r in records)
    assert (tmp_path / "all" / WEIGHTS_FILE).is_file()
