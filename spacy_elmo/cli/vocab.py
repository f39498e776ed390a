"""`vocab`: the training vocabulary of a corpus, in the original's format."""

from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from .app import app


@app.command("vocab")
def vocab_command(
    corpus: List[str] = typer.Argument(
        ..., help="Text files, directories or glob patterns; one sentence per line, tokens separated by whitespace."
    ),
    output: Path = typer.Option(..., "--output", "-o", dir_okay=False, help="Vocabulary file to write."),
    min_count: int = typer.Option(1, "--min-count", min=1, help="Leave out tokens seen fewer times."),
    max_size: Optional[int] = typer.Option(
        None, "--max-size", min=4, help="At most this many entries, the three special tokens included."
    ),
) -> None:
    """Write `<S>`, `</S>`, `<UNK>`, then the tokens by descending frequency, one per line."""
    from tqdm import tqdm

    from ..elmo.pretrain.corpus import expand_paths
    from ..elmo.pretrain.vocab import build_vocabulary, count_tokens

    paths = expand_paths(corpus)
    counts = count_tokens(tqdm(paths, unit="file", desc="counting", disable=len(paths) < 2))
    vocab = build_vocabulary(counts, min_count=min_count, max_size=max_size)
    vocab.to_file(output)
    total = sum(counts.values())
    covered = sum(counts[w] for w in vocab.words[3:])
    msg.good(
        f"wrote {len(vocab)} entries to {output}: {len(counts)} distinct tokens, {total} tokens, "
        f"{100 * covered / total:.2f}% of them in the vocabulary"
    )
