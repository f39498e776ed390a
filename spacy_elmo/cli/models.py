"""`models`: the catalogue of published ELMo models, and which of them are in the cache."""

from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer
from wasabi import table

from .app import app

if TYPE_CHECKING:
    from ..elmo.sources.hub.catalogue import Catalogue, ModelEntry


@app.command("models")
def models_command(
    language: Optional[str] = typer.Option(
        None, "--lang", "-l", help="Only models for this language (ISO code such as de, or a name such as German)."
    ),
    cache: Optional[Path] = typer.Option(
        None, "--cache-dir", help="Cache directory to check (default: $SPACY_ELMO_CACHE or the user cache dir)."
    ),
    catalogue_path: Optional[Path] = typer.Option(
        None, "--catalogue", help="A catalogue JSON file to list instead of the package's."
    ),
) -> None:
    """List the published models: name, language, format, size (layers x LSTM / projection), downloaded, and
    the publisher's page each comes from."""
    from ..elmo.sources.hub.cache_layout import cache_dir, is_downloaded
    from ..elmo.sources.hub.catalogue import load_catalogue

    catalogue = load_catalogue(catalogue_path)
    entries = catalogue.in_language(language) if language else catalogue.models
    root = cache_dir(cache)
    if not entries:
        typer.echo(f"no model for language {language!r}; languages: {', '.join(_languages(catalogue))}")
        raise typer.Exit(1)
    rows = [
        (
            e.name,
            e.language,
            e.format,
            e.size_label,
            f"{e.parameters_millions:g}M" if e.parameters_millions else "?",
            "yes" if is_downloaded(e.name, root) else "no",
            e.source,
        )
        for e in entries
    ]
    typer.echo(table(rows, header=("name", "lang", "format", "size", "params", "downloaded", "source"), divider=True))
    for line in _sources(entries):
        typer.echo(line)
    typer.echo(f"{len(rows)} models; cache: {root}. Fetch one with: python -m spacy_elmo download NAME")


def _sources(entries: List["ModelEntry"]) -> List[str]:
    """A line per file with mirrors (its URLs, in the order `download` tries them) and per file that is
    fetched by hand (its page)."""
    lines = []
    for entry in entries:
        for file in entry.files:
            if file.by_hand:
                lines.append(f"{entry.name} {file.file_name}: fetched by hand from {file.by_hand}")
            elif file.mirrors:
                lines.append(f"{entry.name} {file.file_name}: tried in order: {', then '.join(file.sources)}")
    return lines


def _languages(catalogue: "Catalogue") -> List[str]:
    return sorted({e.language for e in catalogue.models})
