"""The torch ELMo library: the biLM (nn/), every published format (formats/, manylangs/), where models
come from (sources/), pretraining (pretrain/) and corpus embedding (embed/), over the base error and
file helpers (errors.py, util/). Nothing here imports spaCy or thinc; the spaCy plugin (../pipeline/), the
AllenNLP API (../allennlp/) and the command line (../cli/) are built on it."""

__version__ = "0.1.0"
