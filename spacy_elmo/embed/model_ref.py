"""The biLM a dump names, as a small picklable value: workers on other machines load it themselves,
and the manifest records it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Union

from ..errors import ElmoError
from ..models import load_bilm, resolve_model
from ..nn.bilm import BiLM


@dataclass(frozen=True)
class ModelReference:
    """`options` + `weights` (both paths), else `model`: what `load_bilm` takes (a model directory or
    archive of any format, a bundled name, a downloaded published model's name)."""

    model: str
    options: Optional[str] = None
    weights: Optional[str] = None

    @classmethod
    def from_cli(cls, model: str, options: Union[str, Path, None], weights: Union[str, Path, None]) -> "ModelReference":
        if (options is None) != (weights is None):
            raise ElmoError("give both --options and --weights, or neither (and a model name or directory)")
        if options is not None:
            return cls(model, str(options), str(weights))
        return cls(model)

    def check(self) -> None:
        """Fail now, before any worker starts, for a name that names no model."""
        if self.options is None:
            resolve_model(self.model)

    def load(self) -> BiLM:
        if self.options is not None:
            return load_bilm(self.options, self.weights)
        return load_bilm(resolve_model(self.model))

    def describe(self) -> Dict[str, str]:
        """For the manifest: the reference as given."""
        if self.options is not None:
            return {"options": self.options, "weights": str(self.weights)}
        return {"model": self.model}
