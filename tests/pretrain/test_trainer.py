"""Pretraining on the tiny bilm-tf corpus: streams, batching, learning, export, resume, bad input.

The model is configs/pretrain_tiny.cfg (char dim 4, filters [[1,4],[2,8],[3,16]], 1 highway, projection
16, LSTM cell 32, full softmax): the small preset's recipe at sizes that train in seconds.
"""

import json
from collections import Counter

import numpy as np
import pytest
import torch

from spacy_elmo import load_bilm
from spacy_elmo.nn.char_encoder import token_lengths
from spacy_elmo.nn.chars import CharacterMapper
from spacy_elmo.pretrain import (
    ConfigError,
    CorpusError,
    RunDirError,
    TrainingError,
    VocabError,
    load_language_model,
    parse_overrides,
    train,
    unigram_perplexity,
)
from spacy_elmo.pretrain import (
    trainer as trainer_module,
)
from spacy_elmo.pretrain.batching import PAD_TARGET, StreamBatcher, TokenRows
from spacy_elmo.pretrain.checkpoint import CHECKPOINT_FILE, MetricsLog, load_checkpoint
from spacy_elmo.pretrain.corpus import expand_paths, sentence_stream
from spacy_elmo.pretrain.model import LanguageModel, parameters_digest
from spacy_elmo.pretrain.start import initialize_from
from spacy_elmo.pretrain.steps import HostBatch
from spacy_elmo.pretrain.vocab import Vocabulary, build_vocabulary
from tests.support.cli import run_cli
from tests.support.paths import ALLENNLP_DIR, TRAIN_TEXT, TRAIN_VOCAB
from tests.support.pretraining import tiny_pretrain_config as tiny_config

SENTENCES = [line.split() for line in TRAIN_TEXT.read_text(encoding="utf8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """The full tiny run (80 epochs, minutes on a loaded 2-core CPU), for the test that it learns."""
    out = tmp_path_factory.mktemp("run")
    result = train(tiny_config(**{"logging.plot": True}), out, show_progress=False)
    return out, result


@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    """A few steps of the tiny run (seconds), held out at its end: for what any finished run must do."""
    out = tmp_path_factory.mktemp("short-run")
    result = train(tiny_config(**{"training.max_steps": 12}), out, show_progress=False)
    return out, result


# --- streams and batches ---------------------------------------------------------------------------


def test_stream_packs_rows_with_boundaries_as_targets_only():
    vocab = build_vocabulary(Counter("a b c".split()))
    a, b, c = vocab.ids("abc")
    forward = list(StreamBatcher(iter([["a", "b"], ["c"]]), vocab, batch_size=1, unroll_steps=3))
    assert [x.tokens[0] for x in forward] == [["<S>", "a", "b"], ["<S>", "c"]]
    assert forward[0].targets.tolist() == [[a, b, 1]]
    assert forward[1].targets.tolist() == [[c, 1, PAD_TARGET]]
    backward = list(StreamBatcher(iter([["a", "b"], ["c"]]), vocab, batch_size=1, unroll_steps=3, reverse=True))
    assert [x.tokens[0] for x in backward] == [["</S>", "b", "a"], ["</S>", "c"]]
    assert backward[0].targets.tolist() == [[b, a, 0]]


def test_rows_continue_their_own_text_across_batches():
    vocab = Vocabulary.from_file(TRAIN_VOCAB)
    batches = list(StreamBatcher(iter(SENTENCES), vocab, batch_size=3, unroll_steps=7))
    rows = [sum((batch.tokens[i] for batch in batches), []) for i in range(3)]
    assert sum(len(r) for r in rows) == sum(len(s) + 1 for s in SENTENCES)
    for row in rows:  # each row is whole sentences, each starting with <S>
        starts = [i for i, t in enumerate(row) if t == "<S>"]
        sentences = [row[s + 1 : e] for s, e in zip(starts, starts[1:] + [len(row)])]
        assert all(s in SENTENCES for s in sentences)


def test_streams_are_shuffled_per_direction_and_split_between_ranks(tmp_path):
    files = []
    for k in range(3):
        files.append(tmp_path / f"{k}.txt")
        files[-1].write_text("".join(f"s{k}_{i} x\n" for i in range(20)), encoding="utf8")

    def firsts(stream):
        return [s[0] for s in stream]

    forward = firsts(sentence_stream(files, 1, 0, "forward", buffer_size=7))
    assert sorted(forward) == sorted(f"s{k}_{i}" for k in range(3) for i in range(20))
    assert forward == firsts(sentence_stream(files, 1, 0, "forward", buffer_size=7))
    assert forward != firsts(sentence_stream(files, 1, 0, "backward", buffer_size=7))
    two_epochs = firsts(sentence_stream(files, 2, 0, "forward", buffer_size=7))
    assert two_epochs[:60] == forward and two_epochs[60:] != forward
    ranks = [firsts(sentence_stream(files, 1, 0, "forward", 7, rank=r, world_size=2)) for r in range(2)]
    assert not set(ranks[0]) & set(ranks[1]) and sorted(ranks[0] + ranks[1]) == sorted(forward)


def test_paths_errors_name_the_pattern(tmp_path):
    with pytest.raises(CorpusError, match="nothing-here"):
        expand_paths([str(tmp_path / "nothing-here*.txt")])


def test_char_encoding_per_distinct_token_matches_per_position():
    config = tiny_config()
    torch.manual_seed(0)
    model = LanguageModel(config.options, 32)
    vocab = Vocabulary.from_file(TRAIN_VOCAB)
    mapper = CharacterMapper(50)
    fwd = next(StreamBatcher(iter(SENTENCES), vocab, 2, 6))
    bwd = next(StreamBatcher(iter(SENTENCES[::-1]), vocab, 2, 6, reverse=True))
    batch = HostBatch.from_batches(fwd, bwd, TokenRows(mapper)).to(torch.device("cpu"))
    assert batch.char_ids.shape[0] < sum(fwd.lengths) + sum(bwd.lengths)
    unique = model.bilm.char_encoder(batch.char_ids.unsqueeze(0))[0][batch.index[0]]
    direct = model.bilm.char_encoder(torch.from_numpy(mapper.batch_ids(fwd.tokens, add_boundaries=False)))
    assert torch.allclose(unique, direct, atol=1e-6)
    # The distinct tokens come shortest first, so the char-CNN never reorders them on the device.
    assert np.array_equal(batch.char_lengths, token_lengths(batch.char_ids.numpy()))
    assert np.all(np.diff(batch.char_lengths) >= 0)


# --- config ----------------------------------------------------------------------------------------


def test_overrides_parse_like_spacy_train():
    assert parse_overrides(["--training.batch_size", "64", "--paths.train=a/*.txt", "--logging.plot", "false"]) == {
        "training.batch_size": 64,
        "paths.train": "a/*.txt",
        "logging.plot": False,
    }
    with pytest.raises(ConfigError, match="needs a value"):
        parse_overrides(["--training.batch_size"])


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"training.bacth_size": 3}, "bacth_size"),
        ({"model.char_cnn.filters": [[1, 4], [60, 8]]}, "exceeds max_characters_per_token"),
        ({"training.dropout": 1.5}, "dropout"),
        ({"training.softmax": "hierarchical"}, "softmax"),
    ],
)
def test_bad_configs_name_the_key(overrides, message):
    with pytest.raises(ConfigError, match=message):
        tiny_config(**overrides)


# --- training, perplexity, export ------------------------------------------------------------------


@pytest.mark.slow
def test_perplexity_falls_far_below_unigram(trained):
    out, result = trained
    unigram = unigram_perplexity(Vocabulary.from_file(TRAIN_VOCAB), TRAIN_TEXT, TRAIN_TEXT)
    assert result.heldout is not None
    assert result.heldout.average < unigram / 3, (result.heldout, unigram)
    records = list(MetricsLog(out / "log.jsonl").records())
    assert {"train", "eval", "checkpoint", "end"} <= {r["event"] for r in records}
    assert (out / "perplexity.png").stat().st_size > 1000


def test_export_reproduces_the_trainers_activations(short_run):
    out, _ = short_run
    model, vocab = load_language_model(out)
    checkpoint = load_checkpoint(out / CHECKPOINT_FILE)
    trainer_model = LanguageModel(model.options, len(vocab))
    trainer_model.load_state_dict(checkpoint["model"])
    trainer_model.eval()
    exported = load_bilm(out / "options.json", out / "weights.hdf5")
    sentences = SENTENCES[:3] + [["unseen", "wordz", "!"]]
    for ours, theirs in zip(trainer_model.bilm.embed(sentences), exported.embed(sentences)):
        np.testing.assert_allclose(ours, theirs, atol=1e-6)
    assert torch.equal(model.softmax.weight, trainer_model.softmax.weight)
    assert json.loads((out / "options.json").read_text())["char_cnn"]["n_characters"] == 262


def test_evaluate_cli_reports_the_trainers_heldout_perplexity(short_run):
    out, result = short_run
    # The trainer evaluates with the config's window (10) and eval batch (64); the packing of sentences
    # into rows, hence the context carried into each sentence, depends on both.
    cli = run_cli("evaluate", out, TRAIN_TEXT, "--json", "--unroll-steps", 10, "--batch-size", 64)
    assert cli.returncode == 0, cli.stderr
    reported = json.loads(cli.stdout)
    assert reported["average"] == pytest.approx(result.heldout.average, rel=1e-5)
    assert reported["n_tokens"] == sum(len(s) + 1 for s in SENTENCES)


@pytest.mark.slow  # 200 training steps: minutes on a loaded 2-core CPU
def test_sampled_softmax_trains(tmp_path):
    config = tiny_config(**{"training.softmax": "sampled", "training.n_negative_samples": 8, "training.max_steps": 200})
    result = train(config, tmp_path / "run", show_progress=False)
    assert result.step == 200
    assert result.heldout.average < unigram_perplexity(Vocabulary.from_file(TRAIN_VOCAB), TRAIN_TEXT, TRAIN_TEXT)


def test_resume_continues_exactly(tmp_path):
    settings = {"training.n_epochs": 10, "logging.checkpoint_every": 4, "logging.eval_every": 4}
    straight = train(tiny_config(**settings, **{"training.max_steps": 10}), tmp_path / "a", show_progress=False)
    train(tiny_config(**settings, **{"training.max_steps": 6}), tmp_path / "b", show_progress=False)
    resumed = train(
        tiny_config(**settings, **{"training.max_steps": 10}), tmp_path / "b", resume=True, show_progress=False
    )
    assert resumed.step == straight.step == 10 and resumed.tokens == straight.tokens
    assert resumed.digests == straight.digests
    steps = [r["step"] for r in MetricsLog(tmp_path / "b" / "log.jsonl").records() if r["event"] == "eval"]
    assert steps == [4, 6, 8, 10]


def test_continue_from_a_run_and_from_published_weights(short_run, tmp_path):
    out, _ = short_run
    config = tiny_config(**{"paths.init": str(out), "training.max_steps": 1})
    model = LanguageModel(config.options, 32)
    initialize_from(model, Vocabulary.from_file(TRAIN_VOCAB), out)
    exported, _ = load_language_model(out)
    assert parameters_digest(model) == parameters_digest(exported)
    train(config, tmp_path / "continued", show_progress=False)

    published = json.loads((ALLENNLP_DIR / "options.json").read_text())
    overrides = {f"model.lstm.{k}": v for k, v in published["lstm"].items()}
    overrides.update({f"model.char_cnn.{k}": v for k, v in published["char_cnn"].items() if k != "embedding"})
    overrides.update({"paths.init": str(ALLENNLP_DIR / "lm_weights.hdf5"), "training.max_steps": 2})
    assert train(tiny_config(**overrides), tmp_path / "from-published", show_progress=False).step == 2
    with pytest.raises(ConfigError, match="lstm.dim"):
        train(tiny_config(**{"paths.init": str(out), "model.lstm.dim": 48}), tmp_path / "mismatch", show_progress=False)
    assert not (tmp_path / "mismatch").exists()


# --- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key, text, error, message",
    [("paths.train", "\n \n", CorpusError, "no tokens"), ("paths.vocab", "the\nof\n", VocabError, "<UNK>")],
    ids=["empty-corpus", "vocab-without-specials"],
)
def test_a_bad_corpus_or_vocabulary_fails_and_writes_nothing(tmp_path, key, text, error, message):
    bad = tmp_path / "bad.txt"
    bad.write_text(text, encoding="utf8")
    with pytest.raises(error, match=message):
        train(tiny_config(**{key: str(bad)}), tmp_path / "run", show_progress=False)
    assert not (tmp_path / "run").exists()


def test_sizes_that_disagree_fail_before_writing(tmp_path):
    config = tiny_config(**{"training.softmax": "sampled", "training.n_negative_samples": 32})
    with pytest.raises(ConfigError, match="n_negative_samples"):
        train(config, tmp_path / "run", show_progress=False)
    assert not (tmp_path / "run").exists()


def test_output_directory_holding_another_run_is_refused(short_run, tmp_path):
    out, _ = short_run
    before = sorted((p.name, p.stat().st_mtime_ns) for p in out.iterdir())
    with pytest.raises(RunDirError, match="--resume"):
        train(tiny_config(), out, show_progress=False)
    with pytest.raises(RunDirError, match="training.batch_size"):
        train(tiny_config(**{"training.batch_size": 3}), out, resume=True, show_progress=False)
    assert sorted((p.name, p.stat().st_mtime_ns) for p in out.iterdir()) == before


def test_nan_stops_with_a_clear_message(tmp_path, monkeypatch):
    class Poisoned(LanguageModel):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            with torch.no_grad():
                self.softmax.bias.fill_(float("nan"))

    monkeypatch.setattr(trainer_module, "LanguageModel", Poisoned)
    with pytest.raises(TrainingError, match="NaN"):
        train(tiny_config(), tmp_path / "run", show_progress=False)
    assert not (tmp_path / "run" / CHECKPOINT_FILE).exists()
