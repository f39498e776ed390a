"""`download NAME`: fetch a catalogue model into the cache (the only command that downloads)."""

from pathlib import Path
from typing import Optional

import typer

from ..hub.catalogue import load_catalogue
from ..hub.download import download_model
from . import app


@app.command("download")
def download_command(
    name: str = typer.Argument(..., help="A model name from `python -m spacy_elmo models`."),
    cache: Optional[Path] = typer.Option(
        None, "--cache-dir", help="Where models go (default: $SPACY_ELMO_CACHE or the user cache dir)."
    ),
    base_url: Optional[str] = typer.Option(
        None, "--base-url", help="A mirror holding each file at <base>/<host>/<path> (default: $SPACY_ELMO_MIRROR)."
    ),
    catalogue_path: Optional[Path] = typer.Option(
        None, "--catalogue", help="A catalogue JSON file to use instead of the package's."
    ),
    force: bool = typer.Option(False, "--force", help="Download again even if the model is in the cache."),
) -> None:
    """Download, verify and unpack a published model; interrupted downloads resume on the next run."""
    catalogue = load_catalogue(catalogue_path)
    path = download_model(name, cache=cache, base_url=base_url, catalogue=catalogue, force=force)
    typer.echo(f"{name} is in {path}")
