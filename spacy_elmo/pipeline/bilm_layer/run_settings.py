"""How the biLM layer runs (`stateful`, `max_batch_tokens`, `fast_mode`, `tf32`, `warm_start`,
`time_loop`, and, in a head's own copy, whether it trains): settings of the pipeline's config, read from
it every time the pipeline is built.

thinc saves a layer's attrs beside its weights and, when a pipeline is loaded, writes the saved values
over the ones the config has just built (`Model.from_dict`). A setting changed in a saved pipeline's
config, or overridden in `spacy.load(..., config=...)` (`fast_mode = "int8"` to serve a pipeline
trained exact, a larger `max_batch_tokens` on a larger machine), would then be ignored without a word.
Held in this type, the settings are saved for the record and never read back: thinc's
`deserialize_attr`, its extension point for a type of attr, keeps the config's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

import srsly
from thinc.api import Model
from thinc.model import deserialize_attr, serialize_attr

from ...elmo.nn.run_options import AUTO

RUN_SETTINGS = "run_settings"  # the layer's attr that holds them


@dataclass(frozen=True)
class RunSettings:
    stateful: bool
    max_batch_tokens: int
    fast_mode: Optional[str]
    tf32: bool
    # Set by a head's own biLM (ElmoTok2Vec.v1); the `elmo` component keeps `frozen` itself and never
    # asks a frozen biLM for gradients.
    frozen: bool = False
    warm_start: bool = False
    time_loop: str = AUTO


@serialize_attr.register(RunSettings)
def _serialize(_: RunSettings, value: RunSettings, name: str, model: Model) -> bytes:
    return srsly.msgpack_dumps(asdict(value))


@deserialize_attr.register(RunSettings)
def _keep_the_configs(configured: RunSettings, saved: bytes, name: str, model: Model) -> RunSettings:
    return configured
