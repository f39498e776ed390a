"""Pure PyTorch ELMo: no spaCy import here, so the model can be used and tested on its own."""

from .bilm import BiLM, BiLMOutput
from .char_encoder import CharEncoder
from .lstm import BiLSTMLayer, BiLSTMStack

__all__ = ["BiLM", "BiLMOutput", "CharEncoder", "BiLSTMLayer", "BiLSTMStack"]
