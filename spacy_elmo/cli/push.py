"""`push`: a folder `export` wrote, uploaded to a model repository on the Hugging Face Hub (elmo/sources/hub/hf.py);
the token is huggingface_hub's (HF_TOKEN, or `hf auth login`), and so is the endpoint (HF_ENDPOINT)."""

from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from .app import app


@app.command("push")
def push_command(
    folder: Path = typer.Argument(..., exists=True, file_okay=False, help="The folder `export` wrote."),
    repo_id: str = typer.Argument(..., help="The model repository, ORG/REPO (created if missing)."),
    private: bool = typer.Option(False, "--private", help="Create the repository private."),
    message: Optional[str] = typer.Option(None, "--message", help="The commit message."),
) -> None:
    """Upload FOLDER to REPO_ID in one commit; it then loads as hf:REPO_ID."""
    from ..elmo.formats import model_layout
    from ..elmo.sources.hub.hf import push_folder

    model_layout(folder)  # a folder holding no model fails here, before anything is uploaded
    url = push_folder(folder, repo_id, private=private, message=message)
    msg.good(f"pushed {folder} to {repo_id}", f"{url}\nload it as hf:{repo_id}")
