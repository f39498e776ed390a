"""`download NAME`: fetch a catalogue model into the cache (the only command that downloads)."""

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from .app import app

if TYPE_CHECKING:
    from ..elmo.sources.hub.catalogue import Catalogue


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
    verify: bool = typer.Option(
        False, "--verify", help="Download nothing: say whether the cached model's files still match their sha256."
    ),
) -> None:
    """Download, verify and unpack a published model; interrupted downloads resume on the next run."""
    from ..elmo.sources.hub.catalogue import load_catalogue
    from ..elmo.sources.hub.download import download_model

    catalogue = load_catalogue(catalogue_path)
    if verify:
        _verify(name, cache, catalogue)
        return
    path = download_model(name, cache=cache, base_url=base_url, catalogue=catalogue, force=force)
    typer.echo(f"{name} is in {path}")


def _verify(name: str, cache: Optional[Path], catalogue: "Catalogue") -> None:
    """Exit 0 when every file of the cached model has the sha256 recorded at download, else list them."""
    from ..elmo.sources.hub import downloaded_model_dir
    from ..elmo.sources.hub.cache_layout import redownload_command
    from ..elmo.sources.hub.record import alterations

    path = downloaded_model_dir(name, cache, catalogue=catalogue)
    changes = alterations(path)
    if not changes:
        typer.echo(f"{name} in {path} is as downloaded: every file has the sha256 recorded then")
        return
    typer.echo(f"{name} in {path} was altered since it was downloaded:")
    for line in changes:
        typer.echo(f"  {line}")
    typer.echo(f"Replace it with:  {redownload_command(path)}")
    raise typer.Exit(1)
