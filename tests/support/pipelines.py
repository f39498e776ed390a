"""Small pipelines the tests build again and again: the tiny bundled biLM with a listening tagger."""

from typing import Any, Callable, Dict

import spacy
from spacy.language import Language

TAGGER_ON_ELMO = {
    "model": {
        "@architectures": "spacy.Tagger.v2",
        "tok2vec": {
            "@architectures": "spacy-elmo.ElmoListener.v1",
            "upstream": "elmo",
            "mix": {"@layers": "spacy-elmo.ScalarMix.v2"},
        },
    }
}


# The layers in float32, as the biLM gives them (the default keeps them in float16): for the tests that
# compare `doc._.elmo["layers"]` with the biLM's own output at 1e-6.
EXACT_LAYERS = {"store_layers": True}

# Every registry entry of the package: (registry table, name).
REGISTERED = [
    ("architectures", "spacy-elmo.BiLM.v2"),
    ("architectures", "spacy-elmo.BiLM.v3"),
    ("architectures", "spacy-elmo.ElmoListener.v1"),
    ("architectures", "spacy-elmo.ElmoTok2Vec.v1"),
    ("layers", "spacy-elmo.ScalarMix.v2"),
    ("layers", "spacy-elmo.Pooling.v1"),
    ("layers", "spacy-elmo.AlignedPooling.v1"),
    ("misc", "spacy-elmo.sentence_windows.v1"),
    ("loggers", "spacy-elmo.MixLogger.v1"),
]

# The settings of spacy-elmo.BiLM.v2 that say where its weights come from.
V2_SOURCE_KEYS = ("name", "path", "options", "weights")


def elmo_config(**model: Any) -> Dict[str, Any]:
    """An `elmo` component's config whose biLM has the settings `model`: `spacy-elmo.BiLM.v3` (its `model`
    by default the bundled fixture-tiny), or `spacy-elmo.BiLM.v2` where they name its source settings."""
    if any(key in model for key in V2_SOURCE_KEYS):
        return {"model": {"@architectures": "spacy-elmo.BiLM.v2", **model}}
    return {"model": {"@architectures": "spacy-elmo.BiLM.v3", "model": "fixture-tiny", **model}}


def tiny_tagger_pipeline(frozen: bool) -> Language:
    """`elmo` (fixture-tiny) and a tagger listening to it, not yet initialized."""
    nlp = spacy.blank("en")
    nlp.add_pipe("elmo", config={**elmo_config(), "frozen": frozen})
    nlp.add_pipe("tagger", config=TAGGER_ON_ELMO)
    return nlp


def textcat_of(architecture: str, factory: str = "textcat") -> Callable[[Any], None]:
    """Make the textcat `factory` of a config from `spacy init config --optimize accuracy` (a
    TextCatEnsemble.v2) one of `architecture`, on the same tok2vec."""

    def change(config: Any) -> None:
        block = config["components"][factory]["model"]
        if architecture == block["@architectures"]:
            return
        settings: Dict[str, Any] = {"exclusive_classes": factory == "textcat", "nO": None}
        if architecture == "spacy.TextCatReduce.v1":
            settings.update({f"use_reduce_{how}": True for how in ("first", "last", "max", "mean")})
        config["components"][factory]["model"] = {
            "@architectures": architecture,
            "tok2vec": block["tok2vec"],
            **settings,
        }

    return change


def narrow_bilm() -> Any:
    """An untrained BiLM of fixture-tiny's options but 8-wide projections: 16-wide layers where
    fixture-tiny's are 32 (another model size, for the checks of widths)."""
    from spacy_elmo.elmo.nn.bilm import BiLM
    from spacy_elmo.elmo.nn.options import ElmoOptions, with_changes
    from spacy_elmo.elmo.sources import MODELS_DIR

    options = ElmoOptions.from_file(MODELS_DIR / "fixture-tiny" / "options.json")
    return BiLM(with_changes(options, {"lstm.projection_dim": 8})).eval()
