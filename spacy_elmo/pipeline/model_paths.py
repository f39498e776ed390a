"""The `[paths]` that name the biLM, and the check that a config reads the ones given: spaCy accepts an
override of a `[paths]` key its config lacks without a word."""

from __future__ import annotations

from typing import Any, Iterator

from spacy.language import Language

from ..elmo.errors import InputError

# The `[paths]` keys that name the biLM: the shipped configs' (BiLM.v3's `model`), and v2 configs' files.
MODEL_PATHS = ("elmo_model", "elmo_options", "elmo_weights")


def check_model_paths_read(nlp: Language) -> None:
    """spaCy adds an override of a `[paths]` key its config lacks without a word, so `--paths.elmo_options`
    given to a config of BiLM.v3 (the shipped ones since v3), or `--paths.elmo_model` to one that does not
    read it, would leave another model running than the one the user named: refused, naming the v3 form."""
    config = nlp.config
    paths = config.get("paths", {})
    # Read: named as `${paths.KEY}` or, in a config loaded interpolated, its value found elsewhere.
    values = list(_leaves({section: block for section, block in config.items() if section != "paths"}))
    unread = [
        key
        for key in MODEL_PATHS
        if paths.get(key) is not None and paths[key] not in values and f"${{paths.{key}}}" not in config.to_str()
    ]
    if unread:
        named = ", ".join(f"paths.{key} = {paths[key]!r}" for key in unread)
        raise InputError(
            f"{named}: nothing in this config reads it, so another model would run. The shipped configs take "
            "the model (a folder holding options.json and the weights, a model's name or hf:ORG/REPO) as "
            "--paths.elmo_model; other configs as the `model` of spacy-elmo.BiLM.v3 (--components.elmo.model.model)"
        )


def _leaves(block: Any) -> Iterator[Any]:
    if isinstance(block, dict):
        for value in block.values():
            yield from _leaves(value)
    else:
        yield block
