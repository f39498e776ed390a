"""Where a biLM comes from: the one module that decides what a model reference is and loads it, for
`load_bilm`, BiLM.v2 (`path`, `name`, `options` + `weights`), the `elmo` component's `initialize`,
`dump --model` and `evaluate`.

A reference is, in this order:
1. an existing path: a model directory or archive of any format that `formats` reads (formats.FORMATS
   tells them apart), or an options.json, with its weights file;
2. a bundled model's name (bundled.py, always the package's own copy);
3. the name of a published model of the catalogue, read from the download cache (`hub`): nothing is
   downloaded here, and one that is not downloaded fails with the download command.

Checks that need no file run when a config is built (`model_reference`); files are read only when the
weights are loaded or, cheaply, the options (`reference_options`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Dict, Optional, Union

from ..errors import ElmoError
from ..formats import is_model_path, load_model, load_options_and_weights, model_options
from ..hub import downloaded_model_dir, is_catalogue_name
from ..hub.errors import ModelNotDownloadedError
from ..nn.bilm import BiLM
from ..nn.options import ElmoOptions
from .bundled import DEFAULT_MODEL, bundled_models

PathLike = Union[str, Path]


def is_model_name(name: str) -> bool:
    """Whether `name` names a bundled model or a published model of the catalogue."""
    return name in bundled_models() or is_catalogue_name(name)


def named_model_dir(name: str) -> Path:
    """The directory of the model called `name`: a bundled model, else a published model of the catalogue
    that `python -m spacy_elmo download` has put in the cache. A catalogue model that is not downloaded
    fails with the download command."""
    bundled = bundled_models()
    if name in bundled:
        return bundled[name]
    if is_catalogue_name(name):
        return downloaded_model_dir(name)
    raise ElmoError(
        f"no ELMo model {name!r}: not an existing file or directory, not a bundled model ({', '.join(bundled)}), "
        "and not in the catalogue of published models (`python -m spacy_elmo models` lists them)"
    )


def resolve_model(reference: PathLike) -> Path:
    """A model reference as a path: an existing file or directory is itself, anything else a name."""
    path = Path(reference)
    return path if path.exists() else named_model_dir(str(reference))


@dataclass(frozen=True)
class ModelReference:
    """Where a layer's biLM comes from, as its config says: a model `path` (directory or archive), an
    `options` path (with `weights`; alone, it may be a model directory or archive), or a model `name`;
    none of them means the default bundled model."""

    path: Optional[str] = None
    options: Optional[str] = None
    weights: Optional[str] = None
    name: Optional[str] = None

    def describe(self) -> Dict[str, str]:
        """The reference as given, for records such as a dump's manifest."""
        return {key: value for key, value in asdict(self).items() if value is not None}

    def overridden(self, options: Optional[PathLike], weights: Optional[PathLike]) -> "ModelReference":
        """The reference with `options` (+ `weights`) given at initialize, which win over the config."""
        if options is None:
            return self
        return ModelReference(options=str(options), weights=None if weights is None else str(weights))


def model_reference(
    options: Optional[PathLike] = None,
    weights: Optional[PathLike] = None,
    name: Optional[str] = None,
    path: Optional[PathLike] = None,
) -> ModelReference:
    """A layer's reference, with ambiguous or incomplete ones refused when the config is built, not when
    the weights are loaded; an unknown name fails here, saying where names come from."""
    if path is not None and (options is not None or weights is not None or name is not None):
        raise ElmoError(
            f"give either the model `path` ({path}) or `options`/`weights`/`name`, not both: the path's "
            "directory or archive holds the options and the weights"
        )
    if options is not None and name is not None:
        raise ElmoError(f"give either the model name ({name!r}) or an options path ({options}), not both")
    if weights is not None and options is None:
        raise ElmoError(f"weights {weights} given without `options`: the options.json says how to read them")
    if name is not None and not is_model_name(name):
        named_model_dir(name)
    reference = ModelReference(name=name)
    if path is not None:
        reference = replace(reference, path=str(path))
    if options is not None:
        reference = replace(reference, options=str(options), weights=None if weights is None else str(weights))
    return reference


def command_line_reference(
    model: str, options: Optional[PathLike] = None, weights: Optional[PathLike] = None
) -> ModelReference:
    """What a command names (`dump --model`, or `--options` with `--weights`): the pair, else `model` as an
    existing path, else as a model name (an unknown one fails here, before any work starts)."""
    if (options is None) != (weights is None):
        raise ElmoError("give both --options and --weights, or neither (and a model name or directory)")
    if options is not None:
        return model_reference(options=options, weights=weights)
    return model_reference(path=model) if Path(model).exists() else model_reference(name=model)


def reference_options(reference: ModelReference) -> Optional[ElmoOptions]:
    """The sizes of the referenced model from its small files alone (no weights); None when they are not
    there yet (a path that does not exist yet, a catalogue model not downloaded: loading says why)."""
    if reference.path is not None:
        return model_options(reference.path) if Path(reference.path).exists() else None
    if reference.options is None:
        try:
            return model_options(named_model_dir(reference.name or DEFAULT_MODEL))
        except ModelNotDownloadedError:
            return None
    if is_model_path(reference.options):
        return model_options(reference.options)
    return ElmoOptions.from_file(reference.options) if Path(reference.options).is_file() else None


def load_reference(reference: ModelReference, warm_start: bool = False) -> BiLM:
    """The referenced biLM, in eval mode (`warm_start`: see BiLM.set_warm_start)."""
    if reference.path is not None:
        return load_model(reference.path, warm_start)
    if reference.options is None:
        return load_model(named_model_dir(reference.name or DEFAULT_MODEL), warm_start)
    if reference.weights is None and is_model_path(reference.options):
        return load_model(reference.options, warm_start)
    if reference.weights is None:
        raise ElmoError(
            f"the biLM with options {reference.options} has no weights: set `weights` in the model "
            "config or in [initialize.components.<elmo component>]"
        )
    return _warm(load_options_and_weights(reference.options, reference.weights), warm_start)


def _warm(bilm: BiLM, warm_start: bool) -> BiLM:
    if warm_start:
        bilm.set_warm_start()
    return bilm


def load_bilm(
    options: Union[PathLike, ElmoOptions], weights: Optional[PathLike] = None, warm_start: bool = False
) -> BiLM:
    """A BiLM in eval mode, from one of:
    - a model directory or archive of any published format (bilm-tf/AllenNLP, NLPL, ELMoForManyLangs; see
      spacy_elmo/formats), a bundled model's name or the name of a downloaded published model
      (`python -m spacy_elmo models`), with no `weights`;
    - `options` (a path to options.json or ElmoOptions) with `weights` loaded (random initialisation
      when `weights` is None).
    `warm_start`: see BiLM.set_warm_start."""
    if weights is None and not isinstance(options, ElmoOptions):
        if isinstance(options, str) and not Path(options).exists() and is_model_name(options):
            return load_model(named_model_dir(options), warm_start)
        if is_model_path(options):
            return load_model(options, warm_start)
    return _warm(load_options_and_weights(options, weights), warm_start)
