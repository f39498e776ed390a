"""A TF-Hub module's biLM: bilm-tf's network plus the layer mix the module was published with.

The mix is part of the model a user loaded (the module's `elmo` output is that mix of its layers), so it
is declared here, travels with the model through a saved spaCy pipeline (`description`, read back by
formats.rebuild) and can start `spacy-elmo.ScalarMix.v2` (`start_from`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from .bilm import BiLM
from .options import ElmoOptions


@dataclass(frozen=True)
class PublishedMix:
    """A module's trained layer mix: `weights` before the softmax (one per layer), `gamma` the scale."""

    weights: List[float]
    gamma: float

    def to_dict(self) -> Dict[str, Any]:
        return {"weights": list(self.weights), "gamma": self.gamma}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "PublishedMix":
        return cls([float(w) for w in data["weights"]], float(data["gamma"]))


class TfHubBiLM(BiLM):
    """A BiLM loaded from a TF-Hub module; `published_mix` is its trained mix (None where the module
    has none under a known name)."""

    def __init__(self, options: ElmoOptions, published_mix: Optional[PublishedMix], dropout: float = 0.0) -> None:
        super().__init__(options, dropout)
        self.published_mix = published_mix

    def description(self) -> Dict[str, Any]:
        """What, besides the options and the parameters, rebuilds this model (see formats.rebuild)."""
        return {"published_mix": None if self.published_mix is None else self.published_mix.to_dict()}
