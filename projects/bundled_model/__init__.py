"""Repository tooling that measures nothing: training the bundled model, building corpora."""
