"""`fill-elmo`: a config from `spacy init config` turned into one whose heads learn from ELMo
(pipeline/fill_config.py). The same command is `spacy init fill-elmo` (cli/spacy_init.py)."""

import configparser
from pathlib import Path
from typing import Any, Optional

import typer
from typing_extensions import Annotated
from wasabi import msg

from ..elmo.errors import InputError
from .app import app

# The `[paths]` a config from `spacy init config` leaves null that `spacy train` needs.
CORPUS_PATHS = ("train", "dev")
MODEL_HELP = (
    "A bundled or downloaded model's name (`python -m spacy_elmo models`), a model directory or archive, or "
    "hf:ORG/REPO[@REVISION]; default: the bundled default."
)
TOK2VEC_HELP = (
    "instead: each head's Tok2Vec embeds ELMo beside its hash embeddings, into its encoder (the shipped "
    "configs); beside: each head keeps its tok2vec, ELMo's mix concatenated to it."
)
SHARED_HELP = (
    "One ELMo mix in the `tok2vec` component the heads listen to (spaCy's default shape), or one per head "
    "(the paper's task-specific mixes, the default)."
)


@app.command("fill-elmo")
def fill_elmo_command(
    base_path: Annotated[
        Path,
        typer.Argument(
            exists=True, dir_okay=False, allow_dash=True, help="Config to fill, from `spacy init config` ('-': stdin)."
        ),
    ],
    output_path: Annotated[
        Path, typer.Argument(dir_okay=False, allow_dash=True, help="Config file to write ('-': stdout, the default).")
    ] = Path("-"),
    model: Annotated[Optional[str], typer.Option("--model", "-m", help=MODEL_HELP)] = None,
    frozen: Annotated[bool, typer.Option("--frozen/--fine-tune", help="Keep the biLM fixed, or train it too.")] = True,
    tok2vec: Annotated[str, typer.Option("--tok2vec", help=TOK2VEC_HELP)] = "instead",
    shared: Annotated[bool, typer.Option("--shared/--per-head", help=SHARED_HELP)] = False,
) -> None:
    """Put an `elmo` component first and an ElmoListener (its own layer mix) in every head that has a
    tok2vec (tagger, parser, ner, textcat, spancat, ...), or in the `tok2vec` component they listen to;
    `[system] gpu_allocator` becomes "pytorch" where it is unset."""
    from confection import Config, ConfigValidationError

    from ..elmo.util.io import atomic_output, read_text
    from ..pipeline.fill_config import config_text, fill_elmo_config, untouched_components

    text = typer.get_text_stream("stdin").read() if str(base_path) == "-" else read_text(base_path, "config")
    try:
        base = Config().from_str(text, interpolate=False)
    except (configparser.Error, ConfigValidationError) as err:
        raise InputError(f"{base_path} is not a spaCy config: {err}") from None
    filled = fill_elmo_config(base, model=model, frozen=frozen, tok2vec=tok2vec, shared=shared)
    for name, architecture in untouched_components(base).items():
        # stderr: the filled config may be going to stdout
        typer.echo(f"{name} ({architecture}) has no tok2vec for ELMo to feed: it stays as it is", err=True)
    if str(output_path) == "-":
        typer.echo(config_text(filled), nl=False)
        return
    with atomic_output(output_path) as tmp:
        Path(tmp).write_text(config_text(filled), encoding="utf8")
    msg.good(f"wrote {output_path}")
    typer.echo("train it: " + _train_command(filled, output_path))  # one line, to copy (wasabi would wrap it)


def _train_command(config: Any, path: Path) -> str:
    """`spacy train` on the written config, with `--paths.X` for each path it leaves to the command line
    (spaCy's `init config` hint names its two corpora so)."""
    unset = [key for key, value in config.get("paths", {}).items() if value is None and key in CORPUS_PATHS]
    given = "".join(f" --paths.{key} ./{key}.spacy" for key in unset)
    return f"python -m spacy train {path} --output ./output{given}"
