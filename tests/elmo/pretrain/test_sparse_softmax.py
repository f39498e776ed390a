"""Sparse softmax updates: the rows of a step's targets and negatives only, the same training as dense."""

import pytest
import torch

from spacy_elmo.elmo.pretrain import ConfigError, load_config, train
from spacy_elmo.elmo.pretrain.checkpoint import CHECKPOINT_FILE, MetricsLog, load_checkpoint
from spacy_elmo.elmo.pretrain.steps import clip_gradients
from tests.support.paths import PRETRAIN_TINY_CONFIG, REPO

DATA = REPO / "tests" / "fixtures" / "elmo-bilm-tf" / "train" / "data.txt"
VOCAB = REPO / "tests" / "fixtures" / "elmo-bilm-tf" / "train" / "vocab.txt"
# Dense and sparse Adagrad apply the same update to the same rows; only the order of float additions
# (the coalesced duplicate targets) differs.
TOLERANCE = 1e-5


def config(**overrides):
    base = {
        "paths.train": str(DATA),
        "paths.vocab": str(VOCAB),
        "paths.dev": None,
        "logging.plot": False,
        "training.softmax": "sampled",
        "training.n_negative_samples": 8,
        "training.max_steps": 15,
        "logging.log_every": 1,
        "logging.checkpoint_every": 100,
    }
    base.update(overrides)
    return load_config(PRETRAIN_TINY_CONFIG, base)


def test_sparse_and_dense_softmax_train_the_same_model(tmp_path):
    runs = {}
    for sparse in (False, True):
        out = tmp_path / f"sparse-{sparse}"
        train(config(**{"training.sparse_softmax": sparse}), out, show_progress=False)
        losses = [r["perplexity"] for r in MetricsLog(out / "log.jsonl").records() if r["event"] == "train"]
        runs[sparse] = (losses, load_checkpoint(out / CHECKPOINT_FILE)["model"])
    (dense_losses, dense_params), (sparse_losses, sparse_params) = runs[False], runs[True]
    assert len(dense_losses) == 15
    assert sparse_losses == pytest.approx(dense_losses, rel=TOLERANCE)
    for name, value in dense_params.items():
        torch.testing.assert_close(sparse_params[name], value, rtol=TOLERANCE, atol=TOLERANCE)


def test_sparse_softmax_gradients_hold_only_the_used_rows():
    weight = torch.nn.Parameter(torch.randn(50, 4))
    dense = torch.nn.Parameter(torch.randn(3))
    from spacy_elmo.elmo.nn.softmax import GatherRows

    rows, bias = GatherRows.apply(torch.tensor([3, 7, 3]), weight, torch.nn.Parameter(torch.zeros(50)))
    ((rows * 100).sum() + (dense * 100).sum()).backward()
    assert weight.grad.is_sparse and weight.grad.coalesce()._indices().tolist() == [[3, 7]]
    norm = clip_gradients([weight, dense], 1.0)
    total = torch.cat([weight.grad.coalesce()._values().flatten(), dense.grad]).norm()
    assert norm > 1.0 and total == pytest.approx(1.0, rel=1e-4)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"training.softmax": "full"}, 'needs softmax = "sampled"'),
        ({"training.optimizer": "adam"}, "adagrad or sgd"),
    ],
)
def test_sparse_softmax_settings_that_cannot_work_are_refused(overrides, message):
    with pytest.raises(ConfigError, match=message):
        config(**{"training.sparse_softmax": True, **overrides})
