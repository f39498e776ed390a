"""The downstream project's new corpora (projects/downstream/scripts/convert.py): EWT's genre of each UD
sentence as exclusive `doc.cats`, Universal NER's entities as spancat's spans, UD's parse on the tagger's
corpus (the parser's), and the training samples of each, on two sentences written here in the public
files' formats."""

import sys

import pytest
import spacy
from spacy.tokens import DocBin

from projects.downstream.scripts.convert import GENRES, SPANS_KEY, genre, genre_docs, main, pos_docs, span_docs

CONLLU = """# sent_id = weblog-juancole.com_juancole_20051126063000_ENG_20051126_063000-0001
# text = Troops left Qaim.
1\tTroops\ttroop\tNOUN\tNNS\t_\t2\tnsubj\t_\t_
2\tleft\tleave\tVERB\tVBD\t_\t0\troot\t_\t_
3\tQaim\tQaim\tPROPN\tNNP\t_\t2\tobj\t_\tSpaceAfter=No
4\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_

# sent_id = reviews-086839-0002
# text = Great food
1\tGreat\tgreat\tADJ\tJJ\t_\t2\tamod\t_\t_
2\tfood\tfood\tNOUN\tNN\t_\t0\troot\t_\t_

"""

IOB2 = """# sent_id = weblog-juancole.com_juancole_20051126063000_ENG_20051126_063000-0001
1\tTroops\tO\t-\tann
2\tleft\tO\t-\tann
3\tNew\tB-LOC\t-\tann
4\tYork\tI-LOC\t-\tann
5\tand\tO\t-\tann
6\tAmazon\tB-OTH\t-\tann

"""


def test_each_sentence_gets_its_genre_as_one_true_class_of_five(tmp_path):
    path = tmp_path / "ud.conllu"
    path.write_text(CONLLU, encoding="utf8")
    docs = genre_docs(path)
    assert [max(doc.cats, key=doc.cats.get) for doc in docs] == ["weblog", "reviews"]
    assert all(sorted(doc.cats) == sorted(GENRES) and sum(doc.cats.values()) == 1.0 for doc in docs)
    assert [t.dep_ for t in docs[0]] == ["nsubj", "ROOT", "obj", "punct"]  # UD's parse stays on the docs


def test_a_sent_id_of_no_genre_is_refused_by_name():
    assert genre("email-enronsent01_01-0003") == "email"
    with pytest.raises(ValueError, match="'wiki-1' starts with no EWT genre"):
        genre("wiki-1")


def test_entities_become_spancats_spans_and_other_is_no_entity(tmp_path):
    path = tmp_path / "uner.iob2"
    path.write_text(IOB2, encoding="utf8")
    (doc,) = span_docs(path, spacy.blank("en").vocab)
    assert [(span.text, span.label_) for span in doc.spans[SPANS_KEY]] == [("New York", "LOC")]
    assert doc.ents == ()


def test_the_tagger_corpus_carries_uds_parse_for_the_parser(tmp_path):
    path = tmp_path / "ud.conllu"
    path.write_text(CONLLU, encoding="utf8")
    doc = pos_docs(path)[0]
    assert [t.head.i for t in doc] == [1, 1, 1, 1] and [t.dep_ for t in doc] == ["nsubj", "ROOT", "obj", "punct"]


def test_every_task_but_pos_ner_gets_its_training_samples(tmp_path, monkeypatch):
    for folder, name, text in (("ud_english_ewt", "conllu", CONLLU), ("uner_english_ewt", "iob2", IOB2)):
        (tmp_path / "assets" / folder).mkdir(parents=True)
        for split in ("train", "dev", "test"):
            (tmp_path / "assets" / folder / f"en_ewt-ud-{split}.{name}").write_text(text, encoding="utf8")
    argv = ["convert", str(tmp_path / "assets"), str(tmp_path / "corpus"), "--sizes", "1", "--seeds", "0", "3"]
    monkeypatch.setattr(sys, "argv", argv)
    main()
    nlp = spacy.blank("en")
    for task in ("pos", "ner", "genre", "spans"):
        for seed in (0, 3):
            sample = DocBin().from_disk(tmp_path / "corpus" / task / f"train-1-s{seed}.spacy")
            assert len(sample) == 1, (task, seed)
    assert not list((tmp_path / "corpus" / "pos_ner").glob("train-1-*"))
    genres = DocBin().from_disk(tmp_path / "corpus" / "genre" / "test.spacy").get_docs(nlp.vocab)
    assert [max(doc.cats, key=doc.cats.get) for doc in genres] == ["weblog", "reviews"]
    (spans,) = DocBin().from_disk(tmp_path / "corpus" / "spans" / "train-1-s0.spacy").get_docs(nlp.vocab)
    assert [s.text for s in spans.spans[SPANS_KEY]] == ["New York"]
