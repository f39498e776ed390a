"""`pack`: a tokenized corpus into compressed token-id shards, to carry it where only a few MiB may
travel (a time-limited GPU run's upload); `pretrain` and `evaluate` read the shards as they read text."""

from pathlib import Path
from typing import List

import typer
from wasabi import msg

from .app import app


@app.command("pack")
def pack_command(
    corpus: List[str] = typer.Argument(
        ..., help="Text files, directories or glob patterns; one sentence per line, tokens separated by whitespace."
    ),
    output: Path = typer.Option(
        ..., "--output", "-o", file_okay=False, help="New or empty folder for the lexicon and the shards."
    ),
    shard_tokens: int = typer.Option(1_000_000, "--shard-tokens", min=1, help="Tokens per shard, about."),
    prefix: str = typer.Option("train", "--prefix", help="Shards are named PREFIX.NNN.ids.xz."),
) -> None:
    """Pack the corpus into shards and one lexicon: `--paths.train DIR` trains on them."""
    from ..elmo.pretrain.corpus import expand_paths
    from ..elmo.pretrain.shards import pack_corpus

    shards = pack_corpus(expand_paths(corpus), output, prefix, shard_tokens)
    tokens, size = sum(s.n_tokens for s in shards), sum(s.n_bytes for s in shards)
    msg.good(f"packed {tokens:,} tokens into {len(shards)} shards in {output} ({size:,} bytes, lexicon beside them)")
