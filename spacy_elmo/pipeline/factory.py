"""The `elmo` factory: the component's settings as a config gives them, checked when the pipeline is
built (`spacy debug config`, `spacy train`), and the component (component.py) made from them. spaCy finds
it through the `spacy_factories` entry point."""

from __future__ import annotations

from typing import List, Union

from pydantic import SkipValidation
from spacy.language import Language
from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats3d
from typing_extensions import Annotated

from ..elmo.nn.pooling_weights import check_pooling, pooling_weights
from ..elmo.util.validation import must_be, validate_arguments
from .bilm_layer.thinc_bilm import declared_layers
from .component import ElmoComponent, Pooling
from .doc_data import layer_dtype
from .errors import said_by_spacy

# No model given: BiLM.v3's default, the bundled default model (spaCy fills it in from the signature).
DEFAULT_MODEL_CONFIG = {"@architectures": "spacy-elmo.BiLM.v3"}


# What every `elmo` component writes. spaCy keeps one `assigns` per factory, not per component, so
# `doc.tensor`, written only with `set_tensor = true`, is not declared: a declared attribute is always set.
@Language.factory(
    "elmo",
    assigns=["doc._.elmo", "doc.user_hooks", "doc.user_span_hooks", "doc.user_token_hooks"],
    default_config={
        "model": DEFAULT_MODEL_CONFIG,
        "pooling": "mean",
        "store_layers": "float16",
        "frozen": True,
        "set_tensor": False,
        "cache_mb": 1024,
    },
)
@said_by_spacy
@validate_arguments("the elmo component")
def make_elmo(
    nlp: Language,
    name: str,
    model: Model[List[Doc], List[Floats3d]],
    pooling: SkipValidation[Pooling],
    store_layers: Union[bool, str],
    frozen: bool,
    set_tensor: bool,
    cache_mb: Annotated[int, must_be("a whole number of MiB, 0 (no cache) or more", ge=0)],
) -> "ElmoComponent":
    """Create the `elmo` component: the shared biLM of a pipeline, whose layers later components read
    through `spacy-elmo.ElmoListener.v1`. A list of pooling weights is checked against the biLM's
    layers here, when the pipeline is built (`spacy debug config`, `spacy train`), not at the first doc.

    nlp (Language): the pipeline the component is added to.
    name (str): the component's name; listeners name it as their `upstream`.
    model (Model[List[Doc], List[Floats3d]]): the biLM layer (`spacy-elmo.BiLM.v3`); it gives every doc
        its `[L+1, n, 2P]` layers.
    pooling (Union[str, List[float], Model]): how the token vectors of `doc._.elmo["vectors"]` and
        `token.vector` are made from the layers: "mean", "top", one weight per layer, or any
        `List[Floats3d] -> List[Floats2d]` layer (`spacy-elmo.Pooling.v1`, a non-trainable ScalarMix).
    store_layers (Union[bool, str]): keep all layers in `doc._.elmo["layers"]`, where listeners read them
        at prediction: "float16" (half the bytes), True (float32); with False only the pooled vectors
        are kept and listeners run the biLM again.
    frozen (bool): the biLM gets no gradient (the paper's setting); False fine-tunes it through the
        listeners.
    set_tensor (bool): also write the pooled vectors to `doc.tensor`.
    cache_mb (int): the budget, in MiB, of the frozen biLM's layer cache while training; 0 turns it off.
    RETURNS (ElmoComponent): the component.
    """
    layer_dtype(store_layers)  # a bad value is refused when the pipeline is built
    if isinstance(pooling, list):
        check_pooling(pooling)
        n_layers = declared_layers(model)
        if n_layers is not None:
            pooling_weights(pooling, n_layers)
    return ElmoComponent(
        nlp.vocab,
        model,
        name,
        pooling=pooling,
        store_layers=store_layers,
        frozen=frozen,
        set_tensor=set_tensor,
        cache_mb=cache_mb,
    )
