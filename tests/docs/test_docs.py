"""Every code block of README.md, docs/*.md and the benchmarks' READMEs runs as written, in order, with
sybil: Python blocks in one namespace per document, shell blocks with bash (`set -euo pipefail`). Each
document runs in a sandbox folder of its own holding what a checkout holds after the README's set-up, on
tiny data: the configs and tests, the `.venv` running these tests, raw text (`raw/*.txt`, public
domain) and tiny tags / entities / both corpora where `make corpora` writes the real ones. No biLM's
files and no input text: a document makes those it reads with the commands it shows first. `spacy train`
stops after two steps (SPACY_CONFIG_OVERRIDES). A block that cannot run here says why in the Markdown,
as `<!-- skip: next "reason" -->`; `ini`, `json` and `text` blocks are data."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from sybil import Document, Example, Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

from tests.support.paths import REPO

DOCUMENTS = [
    "README.md",
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md")),
    "benchmarks/README.md",
    "projects/downstream/README.md",
    "projects/pipeline_template/README.md",
    "projects/wsd/README.md",
    "projects/bundled_model/README.md",
    "benchmarks/peers/README.md",
]
SAMPLE = REPO / "benchmarks" / "data" / "gutenberg-sample.txt"
SHELL_TIMEOUT = 300
SANDBOX = "__sandbox__"
# The model cards, out of the word budget: the package's and the bundled model's training record.
MODEL_CARD = r"(spacy_elmo/elmo/sources/|projects/bundled_model/)models/[^/]+/README\.md"


def run_shell(example: Example) -> Optional[str]:
    """Run a shell block in the document's sandbox; the failure message is its output."""
    sandbox = example.namespace[SANDBOX]
    venv_bin = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": str(venv_bin.parent),
        "SPACY_CONFIG_OVERRIDES": "--training.max_steps=2 --training.eval_frequency=1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", example.parsed],
        cwd=sandbox,
        env=env,
        capture_output=True,
        text=True,
        timeout=SHELL_TIMEOUT,
    )
    if result.returncode != 0:
        return f"exit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return None


SYBIL = Sybil(
    parsers=[
        PythonCodeBlockParser(),
        CodeBlockParser(language="bash", evaluator=run_shell),
        SkipParser(),
    ],
    path=str(REPO),
    patterns=DOCUMENTS,
)


def tiny_corpora(root: Path) -> None:
    """Tags, entities and both, where `make corpora` writes the real ones: sentences of the public-domain
    sample with a word-shape tag per token and every capitalised word after the first as a PERSON."""
    import spacy
    from spacy.tokens import DocBin, Span

    nlp = spacy.blank("en")
    lines = SAMPLE.read_text(encoding="utf8").splitlines()[:24]
    for task in ("pos", "ner", "pos_ner"):
        docs = []
        for doc in nlp.pipe(lines):
            if task != "ner":
                for token in doc:
                    token.tag_ = "NNP" if token.is_title else "." if token.is_punct else "NN"
            if task != "pos":
                doc.ents = [Span(doc, t.i, t.i + 1, label="PERSON") for t in doc[1:] if t.is_title]
            docs.append(doc)
        out = root / "projects" / "downstream" / "corpus" / task
        out.mkdir(parents=True)
        for split, part in (("train-all", docs[:16]), ("dev", docs[16:20]), ("test", docs[20:])):
            DocBin(docs=part).to_disk(out / f"{split}.spacy")


@pytest.fixture(scope="session")
def sandbox_template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("docs-sandbox")
    for shipped in ("configs", "tests"):
        (root / shipped).symlink_to(REPO / shipped)
    (root / ".venv").symlink_to(Path(sys.executable).parent.parent)
    lines = SAMPLE.read_text(encoding="utf8").splitlines()
    (root / "raw").mkdir()
    (root / "raw" / "book-a.txt").write_text("\n".join(lines[:200]) + "\n", encoding="utf8")
    (root / "raw" / "book-b.txt").write_text("\n".join(lines[200:]) + "\n", encoding="utf8")
    tiny_corpora(root)
    return root


DOCS: Dict[str, Document] = {name: SYBIL.parse(REPO / name) for name in DOCUMENTS}
EXAMPLES: List[Example] = [example for document in DOCS.values() for example in document]
_sandboxes: Dict[str, Path] = {}


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{Path(e.path).relative_to(REPO)}:{e.line}" for e in EXAMPLES])
def test_docs_block_runs_as_written(example: Example, sandbox_template, tmp_path_factory, monkeypatch):
    if example.path not in _sandboxes:
        sandbox = tmp_path_factory.mktemp("docs") / "checkout"
        shutil.copytree(sandbox_template, sandbox, symlinks=True)
        _sandboxes[example.path] = sandbox
        example.namespace[SANDBOX] = sandbox
    monkeypatch.chdir(_sandboxes[example.path])
    example.evaluate()


def test_every_code_block_is_run_or_is_data():
    """A block fenced as `sh`, `shell`, `console` or with no language would pass with nothing run:
    commands are fenced `bash` or `python`; configs and outputs `ini`, `json` or `text`."""
    for name in DOCUMENTS:
        text = (REPO / name).read_text(encoding="utf8")
        fences = re.findall(r"^```(\S*)", text, flags=re.MULTILINE)[::2]  # opening fences only
        assert set(fences) <= {"bash", "python", "ini", "json", "text"}, f"{name}: {sorted(set(fences))}"


def test_readme_stays_a_short_reference():
    """Reference material lives in docs/; the README keeps what it is, install, the uses and links."""
    words = len((REPO / "README.md").read_text(encoding="utf8").split())
    assert words <= 1200, f"README.md has {words} words"


def test_markdown_stays_within_its_word_budget():
    """All tracked Markdown but the changelog and the model cards: at most 12,500 words (8,000 until the
    migration page, the list of what was tried, the new heads and bulk options; 10,000 until the two-sided
    layout and the measured heads; 10,500 until the error table, the fuzzed readers, the snippets' own
    files, the install of a packaged pipeline, BiLM.v3 and the CPU's bf16; 12,000 until the fast modes'
    downstream scores, the exact path's roofline and the five-way peers table), so that facts are stated
    once and history goes to the commits."""
    listing = subprocess.run(["git", "ls-files", "*.md"], cwd=REPO, capture_output=True, text=True)
    if listing.returncode != 0 or not listing.stdout.split():
        pytest.skip("not a git checkout: no list of tracked files")
    tracked = listing.stdout.split()
    budgeted = [name for name in tracked if name != "CHANGELOG.md" and not re.fullmatch(MODEL_CARD, name)]
    words = {name: len((REPO / name).read_text(encoding="utf8").split()) for name in budgeted}
    assert sum(words.values()) <= 12500, sorted(words.items(), key=lambda item: -item[1])
