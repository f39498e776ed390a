"""The NLPL vector repository's ELMo models: bilm-tf's files as `options.json` + `model.hdf5`, with the
repository's `meta.json` beside them. They load exactly as bilm-tf's; the format is told apart only so
that the catalogue and errors can name it, so it must be tried before bilm-tf."""

from __future__ import annotations

from typing import Dict, Mapping, Optional

from .bilm_tf import BilmTfFormat


class NlplFormat(BilmTfFormat):
    """bilm-tf's layout plus the repository's `meta.json`."""

    name = "nlpl"
    expects = "options.json, model.hdf5 and meta.json (NLPL)"

    def detect(self, files: Mapping[str, str]) -> Optional[Dict[str, str]]:
        return super().detect(files) if "meta.json" in files else None


NLPL = NlplFormat()
