"""The packaged wheel to the Hugging Face Hub, through spacy-huggingface-hub's `spacy huggingface-hub push`,
when it can be: with that package installed (`pip install spacy-huggingface-hub`) and a token (HF_TOKEN, or
`huggingface-cli login`'s). Otherwise it says what is missing and exits 0, so that the `all` workflow
ends without an account.

    python -m scripts.push packages/NAME-VERSION/dist/NAME-VERSION-py3-none-any.whl"""

import importlib.util
import subprocess
import sys


def main(wheel: str) -> int:
    if importlib.util.find_spec("spacy_huggingface_hub") is None:
        print("push skipped: `pip install spacy-huggingface-hub` to push the pipeline to the Hugging Face Hub")
        return 0
    from huggingface_hub import get_token

    if not get_token():
        print("push skipped: no Hugging Face token (set HF_TOKEN or run `huggingface-cli login`)")
        return 0
    return subprocess.call([sys.executable, "-m", "spacy", "huggingface-hub", "push", wheel])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
