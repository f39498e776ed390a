"""projects/bundled_model/scripts/corpus.py on a made-up source checkout: what is cut from a book, which
books are left out and why, the held-out books kept out, and the manifest."""

import json

import pytest

from projects.bundled_model.scripts.corpus import book_sentences, build, git_blob, sentences

PROSE = (
    "It was a dark night, and the wind blew hard over the hills.\nMr. Smith looked out of the\n"
    "window and saw _nothing_ at all [Illustration: a window] in the yard.[1] Then he went to bed.\n"
)


def _book(title, paragraphs, language="English"):
    return (
        f"The Project Gutenberg EBook of {title}\n\nTitle: {title}\n\nLanguage: {language}\n\n"
        "Release Date: May 1, 2004 [EBook #1234]\n\n"
        f"*** START OF THIS PROJECT GUTENBERG EBOOK {title.upper()} ***\n\nProduced by Someone\n\n"
        "CHAPTER I\n\n" + "\n\n".join(paragraphs) + "\n\n*** END OF THIS PROJECT GUTENBERG EBOOK ***\nLicense text.\n"
    )


VERSE = "The rose is red,\n  the violet blue,\nSugar is sweet,\n  and so are you."
DRAMA = "HAMLET. To be, or not to be, that is the question of the day here."


def test_a_book_loses_header_footer_headings_markup_and_verse():
    lines, reason = book_sentences(_book("Night", [PROSE, VERSE, PROSE]))
    assert reason is None
    assert lines[:3] == [
        "It was a dark night, and the wind blew hard over the hills.",
        "Mr. Smith looked out of the window and saw nothing at all in the yard.",
        "Then he went to bed.",
    ]
    assert len(lines) == 6
    assert not any("License" in s or "CHAPTER" in s or "Produced" in s or "rose" in s for s in lines)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("no header at all\n\n" + PROSE, "no Project Gutenberg header"),
        (_book("Play", [DRAMA] * 5 + [PROSE]), "drama"),
        (_book("Poems", [VERSE] * 5 + [PROSE]), "verse"),
    ],
)
def test_books_left_out_whole_say_why(text, reason):
    lines, why = book_sentences(text)
    assert lines == [] and why.startswith(reason)


def test_sentences_split_after_ends_but_not_after_abbreviations_or_initials():
    text = 'He said "Go." She went. Dr. Jones and J. Smith came! Did they? Yes.'
    assert list(sentences(text)) == ['He said "Go."', "She went.", "Dr. Jones and J. Smith came!", "Did they?", "Yes."]


def test_build_keeps_out_held_out_duplicate_and_foreign_books(tmp_path):
    source = tmp_path / "Gutenberg_Text"
    books = {
        "Author, A/Night.txt": _book("Night", [PROSE] * 3),
        "Author, B/Night.txt": _book("Night", [PROSE] * 3),  # the same book under another author
        "Author, A/Works, Volume 1.txt": _book("Works", [PROSE.replace("dark", "cold")] * 2),
        "Author, A/Works, Volume 2.txt": _book("Works", [PROSE.replace("dark", "warm")] * 2),  # the same Title
        "Author, A/Day.txt": _book("Day", [PROSE.replace("night", "day")] * 2),
        "Author, C/Held.txt": _book("Held Out Book", [PROSE]),
        "Author, C/Autre.txt": _book("Autre", [PROSE], language="French"),
    }
    for path, text in books.items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_text(text, encoding="utf8")
    heldout = tmp_path / "manifest.json"
    heldout.write_text(json.dumps([{"split": "test", "file": "Elsewhere/x.txt", "title": "Held-Out Book"}]))
    build(source, tmp_path / "out", heldout, shard_tokens=10, seed=0, limit=None)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    skipped = json.loads((tmp_path / "out" / "skipped.json").read_text())
    assert sorted(e["title"] for e in manifest) == ["Day", "Night", "Works", "Works"]
    assert skipped["Author, C/Held.txt"] == "held out (dev/test)"
    assert skipped["Author, C/Autre.txt"] == "language French"
    assert sum(1 for v in skipped.values() if v.startswith("duplicate")) == 1
    for entry in manifest:
        assert entry["git_blob"] == git_blob((source / entry["file"]).read_bytes())
        assert entry["ebook"] == "1234"
        shard = (tmp_path / "out" / "train" / entry["shard"]).read_text().splitlines()
        assert entry["n_sent"] == len(shard)  # shards of 10 words: one book each
        assert entry["n_tok"] == sum(len(s.split()) for s in shard)
        assert all(3 <= len(s.split()) <= 150 for s in shard)
