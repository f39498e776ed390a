"""`demo`: the `elmo` spaCy component on a few sentences with the bundled default model; no files needed."""

from typing import List, Sequence

import typer

from ..elmo.sources import DEFAULT_MODEL
from .app import app

SENTENCES = [
    "She went to the bank to withdraw money.",
    "He deposited the cheque at the bank.",
    "They sat on the bank of the river.",
    "The boat drifted toward the muddy bank of the stream.",
]
# The sense of "bank" in each sentence: the demo's claim is that context tells them apart.
SENSES = ("money", "money", "river", "river")


def nearest_others(similarity: Sequence[Sequence[float]]) -> List[int]:
    """For each row of a square similarity matrix, the column of its most similar other item (the first
    on a tie)."""
    nearest = []
    for i, row in enumerate(similarity):
        others = [j for j in range(len(row)) if j != i]
        nearest.append(max(others, key=row.__getitem__))
    return nearest


def same_sense_count(similarity: Sequence[Sequence[float]]) -> int:
    """How many of the sentences have the other sentence of their own sense as their nearest."""
    return sum(SENSES[i] == SENSES[j] for i, j in enumerate(nearest_others(similarity)))


@app.command("demo")
def demo_command(
    model: str = typer.Option(DEFAULT_MODEL, help="A bundled model, or a published one fetched with `download`."),
) -> None:
    """Contextual vectors through spaCy's own API: "bank" in two senses, span and doc similarity."""
    import spacy

    nlp = spacy.blank("en")
    # The top layer shows context best: the mean of the layers includes the context-free token layer.
    bilm = {"@architectures": "spacy-elmo.BiLM.v3", "model": model, "warm_start": True}
    nlp.add_pipe("elmo", config={"pooling": "top", "model": bilm})
    docs = list(nlp.pipe(SENTENCES))
    banks = [next(t for t in doc if t.text == "bank") for doc in docs]
    typer.echo(f"model {model}: token vectors of width {banks[0].vector.shape[0]} (top biLM layer)")
    for i, doc in enumerate(docs):
        typer.echo(f"  [{i}] {doc.text}  (bank: {SENSES[i]})")
    similarity = [[bank.similarity(other) for other in banks] for bank in banks]
    typer.echo('cosine similarity of "bank" in sentence i and j:')
    typer.echo("       " + "".join(f"[{j}]    " for j in range(len(docs))))
    for i, row in enumerate(similarity):
        typer.echo(f"  [{i}] " + " ".join(f"{value:.3f}" for value in row))
    typer.echo('nearest other "bank" of each sentence:')
    for i, j in enumerate(nearest_others(similarity)):
        verdict = "same sense" if SENSES[i] == SENSES[j] else f"other sense ({SENSES[j]}, not {SENSES[i]})"
        typer.echo(f"  [{i}] -> [{j}] {similarity[i][j]:.3f}  {verdict}")
    typer.echo(f"{same_sense_count(similarity)} of {len(docs)} nearest the other sentence of their own sense")
    money, river = docs[0], docs[2]
    typer.echo(
        f"span 'the bank' [0] vs [2]: {money[3:5].similarity(river[3:5]):.3f};  "
        f"doc [0] vs [1]: {money.similarity(docs[1]):.3f}, doc [0] vs [2]: {money.similarity(river):.3f}"
    )
