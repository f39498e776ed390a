"""The spaCy side: the `elmo` component, its registered architectures and layers, the Doc extensions and
vector hooks, and the checks and logging of `spacy train`. Everything here may import spaCy; the floors
below it (elmo/nn/, elmo/formats/, elmo/sources/, elmo/pretrain/) never do."""
