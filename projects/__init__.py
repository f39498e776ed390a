"""spaCy projects: multi-step experiments run with ``spacy project run`` (see each folder's README)."""
