"""benchmarks/bench_fast.py scores a trained pipeline with each fast mode as `spacy evaluate` reads its
corpus: the exact row, then each mode's, with the documents whose predictions the mode changed."""

import re

import spacy
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Example

from benchmarks.bench_fast import bench_pipeline
from spacy_elmo.pipeline.bilm_layer.process_state import PROCESS
from tests.support.pipelines import elmo_config

NER_ON_ELMO = {
    "model": {
        "@architectures": "spacy.TransitionBasedParser.v2",
        "state_type": "ner",
        "extra_state_tokens": False,
        "hidden_width": 16,
        "maxout_pieces": 2,
        "use_upper": True,
        "tok2vec": {
            "@architectures": "spacy-elmo.ElmoListener.v1",
            "upstream": "elmo",
            "mix": {"@layers": "spacy-elmo.ScalarMix.v1"},
        },
    }
}


def gold_docs(nlp):
    docs = []
    for i in range(12):
        doc = Doc(nlp.vocab, words=["She", "flew", "to", "London", "and", "Paris", "on", f"day{i}", "."])
        doc.ents = [Span(doc, 3, 4, "LOC"), Span(doc, 5, 6, "LOC")]
        docs.append(doc)
    return docs


def test_each_fast_mode_is_scored_beside_the_exact_biLM(tmp_path, capsys, monkeypatch):
    copies = []
    fast_copy = PROCESS.fast_copy
    monkeypatch.setattr(PROCESS, "fast_copy", lambda bilm, mode: copies.append(mode) or fast_copy(bilm, mode))
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config=elmo_config())
    nlp.add_pipe("ner", config=NER_ON_ELMO)
    gold = gold_docs(nlp)
    examples = [Example(nlp.make_doc(doc.text), doc) for doc in gold]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(tmp_path / "pipeline")
    DocBin(docs=gold).to_disk(tmp_path / "test.spacy")
    bench_pipeline([tmp_path / "pipeline"], tmp_path / "test.spacy", ["int8"])
    rows = re.findall(r"(exact|int8)\s+ents_f\s+([\d.]+)\s+(\d+) of (\d+)", capsys.readouterr().out)
    assert [mode for mode, *_ in rows] == ["exact", "int8"]
    assert rows[0][2] == "0" and all(total == "12" for *_, total in rows)
    assert copies and set(copies) == {"int8"}, "the int8 rows must come from the int8 copy"
