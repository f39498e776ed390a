"""Prefetching the next steps' inputs in a thread (elmo/pretrain/prefetch.py) trains what a plain run trains, also
with the other GPU options (bf16 autocast, the TF32 opt-in) on the CPU."""

import math

import pytest

from spacy_elmo.elmo.pretrain.export import WEIGHTS_FILE
from tests.elmo.pretrain.test_step_modes import run


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
