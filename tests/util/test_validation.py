"""The one formatter of settings errors (validation.py): each message names the key path, the value and
what it must be, for files (`'a.b[0]'`) and configs (`[section] key`)."""

from typing import List, Optional

import pytest
from pydantic import AliasPath, BaseModel, ConfigDict, Field

from spacy_elmo.errors import ElmoError
from spacy_elmo.util.validation import must_be, validate


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    size: int = Field(1, ge=1, le=64)
    width: int = Field(1, validation_alias=AliasPath("shape", "width"))
    clip: Optional[float] = must_be("a positive number or null", default=None, gt=0)


class Outer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    section: Inner
    names: List[str] = Field(default_factory=list, max_length=2)
    path: str = must_be("a file name")


@pytest.mark.parametrize(
    "data, message",
    [
        ({"section": {}}, "missing key 'path': it must be a file name"),
        ({"section": {"size": 1000}, "path": "p"}, "'section.size' is 1000, above the limit of 64; is it a typo?"),
        ({"section": {"clip": -1.0}, "path": "p"}, "'section.clip' must be a positive number or null, got -1.0"),
        ({"section": {"sise": 1}, "path": "p"}, "unknown key 'section.sise'; allowed: size, shape, clip"),
        ({"section": {}, "path": "p", "names": ["a"] * 3}, "'names' has 3 entries, above the limit of 2"),
        ({"section": {"size": "2"}, "path": "p"}, "'section.size' must be a valid integer, got '2'"),
    ],
)
def test_messages_name_the_key_the_value_and_the_fix(data, message):
    with pytest.raises(ElmoError) as caught:
        validate(Outer, data, ElmoError, "settings.json: ")
    assert str(caught.value) == f"settings.json: {message}"


def test_config_keys_read_as_sections():
    with pytest.raises(ElmoError, match=r"^\[section\] size is 1000, above the limit of 64; is it a typo\?$"):
        validate(Outer, {"section": {"size": 1000}, "path": "p"}, ElmoError, config=True)


def test_long_values_are_shortened():
    with pytest.raises(ElmoError) as caught:
        validate(Outer, {"section": {"size": "9" * 500}, "path": "p"}, ElmoError)
    assert len(str(caught.value)) < 200 and str(caught.value).endswith("...")
