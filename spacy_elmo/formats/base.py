"""What every model format provides, so that adding one is a new module plus one line in `FORMATS`
(formats/__init__.py): telling its files apart, reading its sizes cheaply, loading it, and what a saved
spaCy pipeline must carry to rebuild it besides the options and the parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Protocol

from ..nn.bilm import BiLM
from ..nn.options import ElmoOptions


@dataclass(frozen=True)
class ModelLayout:
    """Where a model's files are: `files` maps a role (`options`, `weights` for bilm-tf and NLPL;
    `config`, `token_embedder`, `encoder`, `char_dic`, `word_dic` for ELMoForManyLangs) to a path
    relative to the directory or archive, `root` is the folder that holds them ('' for the top)."""

    format: str
    root: str
    files: Dict[str, str]


class ModelFormat(Protocol):
    """One published ELMo format. `name` is how the catalogue's `format` field names it; `expects`
    says which files it needs, for the error when no format matches; `description_key` is the key a
    saved pipeline keeps `describe`'s output under (None: the format needs nothing beyond the options)."""

    name: str
    expects: str
    description_key: Optional[str]

    def detect(self, files: Mapping[str, str]) -> Optional[Dict[str, str]]:
        """Role -> path of this format's files among `files` (the file names of one folder -> their
        paths), or None where the folder does not hold this format."""

    def read_options(self, directory: Path, layout: ModelLayout) -> ElmoOptions:
        """The model's sizes from its small files only (no weights are read)."""

    def load(self, directory: Path, layout: ModelLayout) -> BiLM:
        """The model, weights loaded and checked, in eval mode."""

    def describe(self, bilm: BiLM) -> Optional[Dict[str, Any]]:
        """What rebuilds `bilm` besides its options and parameters; None when `bilm` is not of this
        format or needs nothing more."""

    def rebuild(self, options: ElmoOptions, description: Dict[str, Any]) -> BiLM:
        """An untrained BiLM of this format from `describe`'s output (parameters are loaded afterwards)."""
