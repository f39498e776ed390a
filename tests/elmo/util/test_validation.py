"""The one formatter of settings errors (validation.py): each message names the key path, the value and
what it must be, for files (`'a.b[0]'`), configs (`[section] key`) and a builder's arguments; settings
numbers fit float32."""

from typing import List, Optional, Sequence

import numpy as np
import pytest
import torch
from pydantic import AliasPath, BaseModel, ConfigDict, Field
from typing_extensions import Annotated

from spacy_elmo.elmo.errors import ElmoError, InputError
from spacy_elmo.elmo.util.validation import (
    Float32,
    float32_values,
    must_be,
    non_finite_float32,
    validate,
    validate_arguments,
)


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
        (
            {"section": {"size": "2"}, "path": "p"},
            "'section.size' must be a valid integer, got '2'; write the number without quotes",
        ),
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
        validate(Outer, {"section": {"size": "x" * 500}, "path": "p"}, ElmoError)
    assert len(str(caught.value)) < 200 and str(caught.value).endswith("...")


@validate_arguments("test.builder.v1")
def builder(
    count: Annotated[int, must_be("an integer of at least 1", ge=1)] = 4,
    scale: Float32 = 1.0,
    weights: Optional[Sequence[Float32]] = None,
    flag: bool = False,
):
    return count, scale, weights


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"count": "4096"}, "'count' must be an integer of at least 1, got '4096'; write the number without quotes"),
        ({"count": True}, "'count' must be an integer of at least 1, got True"),
        ({"count": 0}, "'count' must be an integer of at least 1, got 0"),
        ({"scale": 1e39}, "'scale' must be a finite number within float32's range (+-3.4e38), got 1e+39"),
        ({"scale": float("nan")}, "'scale' must be a finite number within float32's range (+-3.4e38), got nan"),
        ({"scale": "0.5"}, "'scale' must be a finite number within float32's range (+-3.4e38), got '0.5'; write the"),
        ({"weights": [0.0, -1e39]}, "'weights[1]' must be within float32's range, got -1e+39"),
        ({"flag": "true"}, "'flag' must be a valid boolean, got 'true'"),
    ],
)
def test_a_builders_arguments_are_checked_strictly_naming_the_builder_and_the_argument(arguments, message):
    with pytest.raises(InputError) as caught:
        builder(**arguments)
    assert str(caught.value).startswith(f"test.builder.v1: {message}")


def test_good_arguments_pass_as_given():
    assert builder(3, 2, (1, 0.5)) == (3, 2.0, (1.0, 0.5))


def test_a_non_finite_float32_is_counted_as_the_cast_makes_it():
    assert non_finite_float32(np.array([0.0, 3.4e38, -1e39, np.inf, np.nan])) == 3
    assert non_finite_float32(1e30) == 0


def test_float32_values_take_any_real_number_within_float32():
    values = [0, -3.4e38, np.float32(0.5), np.int64(2), torch.tensor(1.5), np.array(-1.0)]
    assert float32_values(values, "w") == [0.0, -3.4e38, 0.5, 2.0, 1.5, -1.0]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 1e39, -1e39, np.float64("nan"), "1", None, True, 1j])
def test_float32_values_name_the_key_the_index_and_the_value(bad):
    with pytest.raises(InputError, match=r"^w\[1\] must be a finite number within float32's range \(\+-3.4e38\), got"):
        float32_values([0.0, bad], "w")


@pytest.mark.parametrize("bad", [0.5, "0.5", None])
def test_float32_values_need_a_list(bad):
    with pytest.raises(InputError, match="w must be a list of numbers"):
        float32_values(bad, "w")
