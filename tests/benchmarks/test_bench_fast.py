"""benchmarks/bench_fast.py scores a trained pipeline with each fast mode as `spacy evaluate` reads its
corpus: the exact row, then each mode's, with the documents whose predictions the mode changed; then
one markdown row per mode, the pipelines side by side."""

import re
from copy import deepcopy

import torch
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from benchmarks.bench_fast import bench_pipeline
from spacy_elmo.pipeline.bilm_layer.process_state import PROCESS
from tests.support.pipelines import tiny_tagger_pipeline


def gold_docs(nlp):
    words = ["She", "flew", "to", "London", "and", "Paris", "."]
    tags = ["PRP", "VBD", "IN", "NNP", "CC", "NNP", "."]
    return [Doc(nlp.vocab, words=words[:n] + ["."], tags=tags[:n] + ["."]) for n in range(2, 7) for _ in range(2)]


def test_each_fast_mode_is_scored_beside_the_exact_biLM(tmp_path, capsys, monkeypatch):
    copies = []

    def far_from_exact(bilm, mode):
        """A "fast copy" whose vectors are far from the exact ones: its predictions must change."""
        copies.append(mode)
        copy = deepcopy(bilm)
        with torch.no_grad():
            for parameter in copy.parameters():
                parameter.neg_()
        return copy

    monkeypatch.setattr(PROCESS, "fast_copy", far_from_exact)
    nlp = tiny_tagger_pipeline(frozen=True)
    gold = gold_docs(nlp)
    examples = [Example(nlp.make_doc(doc.text), doc) for doc in gold]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(20):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(tmp_path / "pipeline")
    DocBin(docs=gold).to_disk(tmp_path / "test.spacy")
    bench_pipeline([tmp_path / "pipeline", tmp_path / "pipeline"], tmp_path / "test.spacy", ["int8"])
    out = capsys.readouterr().out
    rows = re.findall(r"(exact|int8)\s+tag_acc\s+([\d.]+)\s+(\d+) of (\d+)", out)[:2]
    assert [mode for mode, *_ in rows] == ["exact", "int8"]
    assert float(rows[0][1]) > 50, "the pipeline must tag for a change to show"
    assert rows[0][2] == "0" and int(rows[1][2]) > 0 and all(total == "10" for *_, total in rows)
    assert copies and set(copies) == {"int8"}, "the int8 rows must come from the int8 copy"
    table = re.findall(r"^\| tag_acc \| (exact|int8) \| ([\d.]+) / ([\d.]+) \| (\d+) / (\d+) \|$", out, re.MULTILINE)
    assert table == [(mode, score, score, changed, changed) for mode, score, changed, _ in rows], out


def test_the_speed_table_names_auto_s_choice_and_a_mode_the_cpu_cannot_run(fixture_paths, capsys, monkeypatch):
    """At the fixture model's size: each mode's row, auto's named by its choice, bf16 said not to run
    where the CPU has no bf16 units."""
    from benchmarks import bench_fast
    from spacy_elmo.elmo.nn.fast import auto, bf16
    from spacy_elmo.elmo.nn.options import ElmoOptions

    monkeypatch.setattr(bf16, "has_bf16_units", lambda: False)
    monkeypatch.setattr(auto, "speedup", lambda exact, fast: 2.0)
    monkeypatch.setattr(bench_fast, "preset", lambda size: ElmoOptions.from_file(fixture_paths[0]))
    bench_fast.bench_size("tiny", ["int8", "bf16", "auto"], [1, 4], 40, bench_fast.DEFAULT_TEXT, rounds=2)
    out = capsys.readouterr().out
    assert "bf16: not run here: this CPU has no bf16 units" in out
    rows = re.findall(r"^\s+(\d+)\s+(\S+)\s+[\d.]+\s+[\d.]+x", out, re.MULTILINE)
    assert rows == [(b, m) for b in ("1", "4") for m in ("exact", "int8", "auto:int8")]
