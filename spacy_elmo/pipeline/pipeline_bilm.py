"""The biLM of a saved spaCy pipeline, as it is now (`export --model PIPELINE_DIR`): after
`spacy train --components.elmo.frozen false`, or any update before `nlp.to_disk`, its weights are no
longer the files the config names, and the pipeline's thinc bytes are the one place that holds them. The
pipeline is loaded as spaCy loads it, and the biLM taken from whichever component holds one: the `elmo`
component, or a head with a copy of its own (`replace_listeners`, ElmoTok2Vec.v1)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional

from spacy import load
from spacy.language import Language
from thinc.api import Model

from ..elmo.errors import InputError, InputFileError
from ..elmo.nn.bilm import BiLM
from .bilm_layer.thinc_bilm import LAYER_NAME, ensure_loaded


def _bilm_layers(nlp: Language) -> Dict[str, Model]:
    """Component name -> its biLM layer, for every component whose model holds one."""
    found: Dict[str, Model] = {}
    for name, pipe in nlp.components:
        model = getattr(pipe, "model", None)
        layers = [node for node in model.walk() if node.name == LAYER_NAME] if isinstance(model, Model) else []
        if layers:
            found[name] = layers[0]
    return found


def pipeline_bilm(path: Path, component: Optional[str] = None) -> BiLM:
    """The biLM the pipeline saved at `path` holds (in `component`, needed where several hold one)."""
    try:
        nlp = load(path)
    except (OSError, ValueError, KeyError, TypeError) as err:
        why = " ".join(str(err).split())  # spaCy's config errors span lines; the CLI shows one
        raise InputFileError(
            f"{path} does not load as a spaCy pipeline ({why}); save it again with nlp.to_disk"
        ) from None
    layers = _bilm_layers(nlp)
    holding = ", ".join(layers) or "none"
    if component is not None:
        if component not in layers:
            raise InputError(f"component {component!r} of {path} holds no biLM; those that do: {holding}")
        return ensure_loaded(layers[component])
    if len(layers) != 1:
        raise InputError(
            f"{path} has {len(layers)} components holding a biLM ({holding}); name the one to export with "
            "--component NAME"
        )
    return ensure_loaded(next(iter(layers.values())))
