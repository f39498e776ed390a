"""`elmo`: AllenNLP 0.9's `allennlp elmo` command, its arguments and its HDF5 layout (a dataset per
sentence keyed by its line index, or by the sentence with --use-sentence-keys, and `sentence_to_index`),
as `spacy_elmo.allennlp.ElmoEmbedder.embed_file` writes it: states carried from batch to batch as
AllenNLP's were. `dump` is this package's own, stateless by default, with more choices of output."""

from pathlib import Path
from typing import Optional

import typer

from ..elmo.errors import InputError
from .app import app

FORMAT_FLAGS = ("--all", "--top", "--average")


@app.command("elmo")
def elmo_command(
    input_file: Path = typer.Argument(..., help="One whitespace-tokenized sentence per line, no blank lines."),
    output_file: Path = typer.Argument(..., help="HDF5 file to write."),
    all_layers: bool = typer.Option(False, "--all", help="Every layer: L+1 vectors per token."),
    top: bool = typer.Option(False, "--top", help="The top layer: a vector per token."),
    average: bool = typer.Option(False, "--average", help="The layers' average: a vector per token."),
    options_file: str = typer.Option(
        "allennlp-original",
        "--options-file",
        help="options.json (with --weight-file), or a model directory or name alone (`python -m spacy_elmo models`).",
    ),
    weight_file: Optional[str] = typer.Option(None, "--weight-file", help="The weights .hdf5 of --options-file."),
    batch_size: int = typer.Option(64, "--batch-size", min=1, help="Sentences per batch."),
    cuda_device: int = typer.Option(-1, "--cuda-device", help="The GPU to run on (-1: the CPU)."),
    forget_sentences: bool = typer.Option(False, "--forget-sentences", help="Write no sentence_to_index dataset."),
    use_sentence_keys: bool = typer.Option(
        False, "--use-sentence-keys", help="Key each dataset by its sentence instead of its line index."
    ),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace OUTPUT_FILE if it exists."),
) -> None:
    """Write each line's ELMo layers as AllenNLP 0.9's `allennlp elmo` did (one of --all, --top, --average)."""
    from ..allennlp import ElmoEmbedder

    chosen = [name for name, on in zip(FORMAT_FLAGS, (all_layers, top, average)) if on]
    if len(chosen) != 1:
        raise InputError(f"give one of {', '.join(FORMAT_FLAGS)} (got {', '.join(chosen) or 'none'})")
    if output_file.exists() and not overwrite:
        raise InputError(f"{output_file} exists; pass --overwrite to replace it, or choose another output file")
    embedder = ElmoEmbedder(options_file, weight_file, cuda_device)
    embedder.embed_file(input_file, output_file, chosen[0][2:], batch_size, forget_sentences, use_sentence_keys)
    typer.echo(f"wrote {output_file} ({chosen[0][2:]} layers, AllenNLP's layout)")
