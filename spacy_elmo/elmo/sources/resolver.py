"""Where a biLM comes from: the one module that decides what a model reference is (`resolve`) and the
one typed answer every caller takes (`ResolvedModel`): `load_bilm`, BiLM.v3 (and v2) and the `elmo` component,
`dump` (local and Ray), the Ray Data embedder and `evaluate`.

A reference is, in this order:
1. an existing path: a model directory or archive of any format that `formats` reads (formats.FORMATS
   tells them apart), or an options.json, with its weights file;
2. a bundled model's name (bundled.py, always the package's own copy);
3. the name of a published model of the catalogue, read from the download cache (`hub`): nothing is
   downloaded here, and one that is not downloaded fails with the download command;
4. `hf:ORG/REPO[@REVISION]`, a repository on the Hugging Face Hub holding a model folder of any of those
   formats, fetched into huggingface_hub's own cache when the weights are loaded (elmo/sources/hub/hf.py).

Checks that need no file run when a reference is made (`model_reference`, `reference_to`) or, for a
config's one `model` (BiLM.v3), when the config is built (`check_reference`); files are read only when the
weights are loaded or, cheaply, the options (`reference_options`).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, Literal, Optional, Union

from ..errors import InputError, InputFileError
from ..formats import is_model_path, load_model, load_options_and_weights, model_options
from ..nn.bilm import BiLM
from ..nn.fast.fast_bilm import make_fast, resolve_mode
from ..nn.options import ElmoOptions
from ..util.validation import short_repr
from .bundled import DEFAULT_MODEL, bundled_models
from .hub import downloaded_model_dir, is_catalogue_name
from .hub.cache_layout import redownload_hint
from .hub.errors import ModelNotDownloadedError
from .hub.hf import hub_snapshot, is_hf_reference, parse_hf_reference

PathLike = Union[str, Path]
# Where a resolved model came from: a path given, a bundled name, a catalogue name, an options.json, the Hub.
Origin = Literal["path", "bundled", "catalogue", "options", "hf"]


def is_model_name(name: str) -> bool:
    """Whether `name` names a bundled model or a published model of the catalogue."""
    return name in bundled_models() or is_catalogue_name(name)


def _check_name(name: str) -> None:
    if is_hf_reference(name):
        parse_hf_reference(name)
    elif not is_model_name(name):
        raise InputError(
            f"no ELMo model {name!r}: not an existing file or directory, not a bundled model "
            f"({', '.join(bundled_models())}), not in the catalogue of published models "
            "(`python -m spacy_elmo models` lists them), and not a Hugging Face Hub reference (hf:ORG/REPO)"
        )


def _check_given(**values: Optional[PathLike]) -> None:
    """An empty path names the working directory (`Path("")` is "."), so `path = ""` would load whatever
    model sits there, or fail far from the setting: refused, naming the key."""
    for key, value in values.items():
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise InputError(
                f"`{key}` is {short_repr(value)} (a {type(value).__name__}), which names no model: give the model's "
                "path or name as a string"
            )
        if isinstance(value, str) and not value.strip():
            raise InputError(
                f"`{key}` is empty ({value!r}), which names no model (as a path, the working directory): give the "
                f"model's path or name, or leave `{key}` out for the bundled default model"
            )


def _check_weights(options: Optional[PathLike], weights: Optional[PathLike]) -> None:
    if weights is not None and options is None:
        raise InputError(
            f"weights {weights} given without options: give the options.json (or the model directory) "
            "that says how to read them"
        )


@dataclass(frozen=True)
class ModelReference:
    """Where a biLM comes from, as a config or a command gives it: a model `path` (directory or archive),
    an `options` path (with `weights`; alone, it may be a model directory or archive, or an options.json
    of an untrained biLM), or a model `name`; none of them means the default bundled model."""

    path: Optional[str] = None
    options: Optional[str] = None
    weights: Optional[str] = None
    name: Optional[str] = None

    def describe(self) -> Dict[str, str]:
        """The reference as given, for records such as a dump's manifest."""
        return {key: value for key, value in asdict(self).items() if value is not None}

    def overridden(self, options: Optional[PathLike], weights: Optional[PathLike]) -> "ModelReference":
        """The reference with `options` (+ `weights`) given at initialize, which win over the config."""
        _check_given(options=options, weights=weights)
        _check_weights(options, weights)
        if options is None:
            return self
        return ModelReference(options=str(options), weights=None if weights is None else str(weights))


def model_reference(
    options: Optional[PathLike] = None,
    weights: Optional[PathLike] = None,
    name: Optional[str] = None,
    path: Optional[PathLike] = None,
) -> ModelReference:
    """A reference from a config's fields, with ambiguous or incomplete ones refused now, not when the
    weights are loaded; an unknown name fails here, saying where names come from."""
    _check_given(path=path, options=options, weights=weights, name=name)
    if path is not None and (options is not None or weights is not None or name is not None):
        raise InputError(
            f"give either the model `path` ({path}) or `options`/`weights`/`name`, not both: the path's "
            "directory or archive holds the options and the weights"
        )
    if options is not None and name is not None:
        raise InputError(f"give either the model name ({name!r}) or an options path ({options}), not both")
    _check_weights(options, weights)
    if name is not None:
        _check_name(name)
    return ModelReference(
        path=None if path is None else str(path),
        options=None if options is None else str(options),
        weights=None if weights is None else str(weights),
        name=name,
    )


def reference_to(model: PathLike, weights: Optional[PathLike] = None) -> ModelReference:
    """What one value names (`load_bilm(x)`, `dump --model x`, the Ray embedder's `model`): with
    `weights`, `model` is their options.json; else an existing path (a file that is no archive is an
    options.json alone), else a model name."""
    _check_given(model=model, weights=weights)
    if model is None:
        raise InputError(
            "no model given (None): give a model's name (`python -m spacy_elmo models`), its directory or "
            "archive, or its options.json with the weights"
        )
    try:
        is_file, exists = Path(model).is_file(), Path(model).exists()
    except OSError as err:  # a name too long for a path, a folder that cannot be searched
        raise InputError(
            f"model {short_repr(model)} is neither a model name nor a path this system can look up "
            f"({err.strerror}); give the model's name, or the path of its directory, archive or options.json"
        ) from None
    if weights is not None or (is_file and not is_model_path(model)):
        return model_reference(options=model, weights=weights)
    return model_reference(path=model) if exists else model_reference(name=str(model))


def check_reference(model: PathLike) -> None:
    """The checks of `reference_to(model)` that hold wherever a config is read: an empty value and a
    malformed `hf:` reference are refused. Whether the value is an existing path or a model's name is asked
    when the weights are read (initialize or first use, `reference_to`), as spacy-curated-transformers
    reads its model loaders only at initialize: a saved pipeline's config still names the folder it was
    trained from, which need not exist where the pipeline is loaded, since the weights travel with it."""
    _check_given(model=model)
    if is_hf_reference(str(model)):
        parse_hf_reference(str(model))


@dataclass(frozen=True)
class ResolvedModel:
    """A reference resolved to files: `path`, a model directory or archive of a format in
    formats.FORMATS, or `options`, an options.json with its `weights` (None: an untrained biLM).
    `origin` says which kind of source it was and `reference` the source as given."""

    reference: ModelReference
    origin: Origin
    path: Optional[Path] = None
    options: Optional[Path] = None
    weights: Optional[Path] = None

    @property
    def trained(self) -> bool:
        """Whether loading gives trained weights (an options.json alone gives a random biLM)."""
        return self.path is not None or self.weights is not None

    def load(self, warm_start: bool = False, untrained: bool = False) -> BiLM:
        """The biLM, in eval mode (`warm_start`: see BiLM.set_warm_start). An options.json without
        weights is refused unless `untrained` (`load_bilm`'s random initialisation). A model `download`
        installed that is damaged fails with the command that replaces it."""
        if self.path is None:
            assert self.options is not None
            if not (self.trained or untrained):
                raise InputError(
                    f"the biLM with options {self.options} has no weights: give its weights file (`weights` in "
                    "the model config or in [initialize.components.<elmo component>], `--weights` on a command)"
                )
            return _warm(load_options_and_weights(self.options, self.weights), warm_start)
        try:
            return load_model(self.path, warm_start)
        except InputFileError as err:
            hint = redownload_hint(self.path)
            if not hint:
                raise
            raise type(err)(f"{err}{hint}") from None

    def model_path(self) -> Path:
        """The model directory or archive, for what needs the model's own folder (`evaluate`, a published
        mix); an options.json with its weights is refused."""
        if self.path is None:
            raise InputError(f"{self.options} is an options file; give the directory or archive of the model")
        return self.path

    def read_options(self) -> Optional[ElmoOptions]:
        """The model's sizes from its small files alone (no weights); None when they are not there yet
        (a path that does not exist yet: loading says why)."""
        if self.path is not None:
            return model_options(self.path) if self.path.exists() else None
        assert self.options is not None
        return ElmoOptions.from_file(self.options) if self.options.is_file() else None


def _warm(bilm: BiLM, warm_start: bool) -> BiLM:
    if warm_start:
        bilm.set_warm_start()
    return bilm


def resolve(reference: ModelReference, cached_only: bool = False) -> ResolvedModel:
    """The files `reference` names. A catalogue model that is not downloaded fails with the download
    command (ModelNotDownloadedError); so does a Hub model not in huggingface_hub's cache when it is
    offline or `cached_only`; paths that do not exist are resolved as given, and fail when read."""
    if reference.path is not None:
        return ResolvedModel(reference, "path", path=Path(reference.path))
    if reference.options is not None:
        options = Path(reference.options)
        if reference.weights is None and is_model_path(options):
            return ResolvedModel(reference, "path", path=options)
        weights = None if reference.weights is None else Path(reference.weights)
        return ResolvedModel(reference, "options", options=options, weights=weights)
    name = reference.name or DEFAULT_MODEL
    bundled = bundled_models()
    if name in bundled:
        return ResolvedModel(reference, "bundled", path=bundled[name])
    _check_name(name)
    if is_hf_reference(name):
        return ResolvedModel(reference, "hf", path=hub_snapshot(name, cached_only))
    return ResolvedModel(reference, "catalogue", path=downloaded_model_dir(name))


def reference_options(reference: ModelReference) -> Optional[ElmoOptions]:
    """The sizes of the referenced model from its small files alone; None when they are not there yet (a
    path that does not exist yet, a catalogue or Hub model not downloaded: loading says why)."""
    try:
        return resolve(reference, cached_only=True).read_options()
    except ModelNotDownloadedError:
        return None


def load_bilm(
    options: Union[PathLike, ElmoOptions],
    weights: Optional[PathLike] = None,
    warm_start: bool = False,
    fast_mode: Optional[str] = None,
) -> BiLM:
    """A BiLM in eval mode, from one of:
    - a model directory or archive of any published format (bilm-tf/AllenNLP, NLPL, ELMoForManyLangs; see
      spacy_elmo/elmo/formats/), a bundled model's name or the name of a downloaded published model
      (`python -m spacy_elmo models`), or `hf:ORG/REPO[@REVISION]` on the Hugging Face Hub, with no `weights`;
    - `options` (a path to options.json or ElmoOptions) with `weights` loaded (random initialisation
      when `weights` is None).
    `warm_start`: see BiLM.set_warm_start. `fast_mode`: None (exact), or a fast mode's frozen copy
    ("int8" on a CPU, "bf16" on a GPU or a CPU with bf16 units, "auto": the one that pays here, else
    the exact biLM; elmo/nn/fast/fast_bilm.make_fast, docs/fast_modes.md)."""
    if isinstance(options, ElmoOptions):
        bilm = _warm(load_options_and_weights(options, weights), warm_start)
    else:
        bilm = resolve(reference_to(options, weights)).load(warm_start, untrained=True)
    mode = None if fast_mode is None else resolve_mode(bilm, fast_mode)
    return bilm if mode is None else make_fast(bilm, mode)
