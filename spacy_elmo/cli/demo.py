"""`demo`: the biLM on a few sentences with the bundled default model; no files needed."""
import numpy as np
import typer

from ..models import DEFAULT_MODEL, bundled_model_paths
from ..weights import load_bilm
from . import app

SENTENCES = [
    "She went to the bank to withdraw money .",
    "They sat on the bank of the river .",
    "He deposited the cheque at the bank .",
]


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@app.command("demo")
def demo_command(model: str = typer.Option(DEFAULT_MODEL, help="Name of a bundled model.")) -> None:
    """Embed three sentences and compare the contextual vectors of "bank"."""
    bilm = load_bilm(*bundled_model_paths(model))
    sentences = [s.split() for s in SENTENCES]
    layers = bilm.embed(sentences)
    typer.echo(f"model {model}: {bilm.n_layers} layers of width {bilm.output_dim}")
    banks = []
    for sentence, out in zip(sentences, layers):
        position = sentence.index("bank")
        banks.append(out[:, position].mean(axis=0))
        typer.echo(f"{' '.join(sentence)!r}: layers {out.shape}")
    typer.echo(f"cos(bank money, bank river)  = {_cosine(banks[0], banks[1]):.4f}")
    typer.echo(f"cos(bank money, bank cheque) = {_cosine(banks[0], banks[2]):.4f}")
    typer.echo("token layer alone (identical in every context): "
               f"{np.allclose(layers[0][0, 4], layers[1][0, 4])}")
