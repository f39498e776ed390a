"""`demo`: the `elmo` spaCy component on a few sentences with the bundled default model; no files needed."""
import typer

from ..models import DEFAULT_MODEL
from . import app

SENTENCES = [
    "She went to the bank to withdraw money.",
    "They sat on the bank of the river.",
    "He deposited the cheque at the bank.",
]


@app.command("demo")
def demo_command(model: str = typer.Option(DEFAULT_MODEL, help="Name of a bundled model.")) -> None:
    """Contextual vectors through spaCy's own API: "bank" in three contexts, span and doc similarity."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={"model": {"@architectures": "spacy-elmo.BiLM.v1", "name": model}})
    money, river, cheque = nlp.pipe(SENTENCES)
    banks = [next(t for t in doc if t.text == "bank") for doc in (money, river, cheque)]
    typer.echo(f"model {model}: token vectors of width {banks[0].vector.shape[0]} (mean of the biLM layers)")
    for doc in (money, river, cheque):
        typer.echo(f"  {doc.text!r}")
    typer.echo(f"bank (money) vs bank (river):  {banks[0].similarity(banks[1]):.4f}")
    typer.echo(f"bank (money) vs bank (cheque): {banks[0].similarity(banks[2]):.4f}")
    typer.echo(f"'the bank' (money) vs 'the bank' (river): {money[3:5].similarity(river[3:5]):.4f}")
    typer.echo(f"doc (money) vs doc (cheque): {money.similarity(cheque):.4f}; "
               f"doc (money) vs doc (river): {money.similarity(river):.4f}")
