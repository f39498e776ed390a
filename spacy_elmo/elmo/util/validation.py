"""The one formatter of settings errors: every file and config section is a pydantic model (options.json,
the catalogue, the pretraining config's sections), and a pydantic ValidationError becomes the package's
InputError here, with a message that names the file, the key path, the bad value and what it must be.

Builders of the config's registered functions check their arguments the same way (`validate_arguments`),
against their own type hints: confection's check lets a quoted number (`max_batch_tokens = "4096"`)
through, which then failed deep inside. Settings numbers must fit float32 (`Float32`), the rule that
weights files and alignments are held to (`non_finite_float32`): beyond it every vector is inf or NaN.

A field can say what it must be in words (`must_be(...)`), for limits a user reads better that way than
as pydantic's constraint text; an upper limit reads as a likely typo. Checks that span several keys raise
an InputError (a ValueError) inside a validator, which pydantic collects: their message is used as it is.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import typing
from typing import Any, Callable, Iterable, Iterator, List, Optional, Sequence, Type, TypeVar, Union, cast

import numpy as np
from pydantic import (
    AfterValidator,
    AliasPath,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    create_model,
    validate_call,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError
from typing_extensions import Annotated

from ..errors import InputError

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
MAX_PROBLEMS = 5
# A builder's arguments: nothing coerced ("4096" is no 4096, true no 1), numbers finite; objects (layers,
# the nlp) are checked to be of their hinted class.
_ARGUMENTS = ConfigDict(strict=True, allow_inf_nan=False, arbitrary_types_allowed=True)
_NUMBER_TYPES = ("int_type", "float_type", "int_parsing", "float_parsing")


def non_finite_float32(values: Any) -> int:
    """How many of `values` are NaN or infinite as float32, where anything beyond +-3.4e38 is inf."""
    with np.errstate(over="ignore"):
        return int(np.count_nonzero(~np.isfinite(np.asarray(values, dtype=np.float32))))


def _fits_float32(value: float) -> float:
    if non_finite_float32(value):
        raise PydanticCustomError("float32_range", "Input should be within float32's range")
    return value


def must_be(text: str, **constraints: Any) -> Any:
    """A field whose error reads "KEY must be TEXT, got VALUE" (`constraints` as for pydantic.Field)."""
    return Field(json_schema_extra={"must_be": text}, **constraints)


FLOAT32_RULE = "a finite number within float32's range (+-3.4e38)"
# A setting that becomes a float32 weight or scale (pooling weights, a mix's weights and gamma).
Float32 = Annotated[float, must_be(FLOAT32_RULE), AfterValidator(_fits_float32)]


def float32_values(values: Iterable[Any], key: str) -> List[float]:
    """`values` as floats under `Float32`'s rule, for weights given in code rather than a config (the
    AllenNLP face's `scalar_mix_parameters`): one NaN, infinite or beyond float32 makes every output NaN.
    Any real number is taken (NumPy's and torch's scalars too); an InputError names `key`, the index and
    the value."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InputError(f"{key} must be a list of numbers, one per layer, got {short_repr(values)}")
    floats = []
    for i, value in enumerate(values):
        if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
            value = value.item()
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or non_finite_float32(float(value)):
            raise InputError(f"{key}[{i}] must be {FLOAT32_RULE}, got {short_repr(value)}")
        floats.append(float(value))
    return floats


def validate_arguments(where: str) -> Callable[[F], F]:
    """The decorated builder checks its arguments against its type hints (`Annotated` ones with their
    limits) before it runs, with an InputError that starts with `where` (the registered name) and names
    each bad argument."""

    def decorate(function: F) -> F:
        checked: List[Callable] = []  # made at the first call, once the builder's module has every name

        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            if not checked:
                checked.append(validate_call(config=_ARGUMENTS)(function))
            try:
                return checked[0](*args, **kwargs)
            except ValidationError as err:
                if err.title != function.__name__:  # not the arguments: raised inside the builder
                    raise
                raise InputError(f"{where}: " + "; ".join(problems(err, _arguments_schema(function)))) from None

        # spaCy reads a factory's argument names from its signature, without following __wrapped__.
        call.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]
        return cast(F, call)

    return decorate


def _arguments_schema(function: Callable) -> type:
    """The builder's arguments as a model, for the `must_be` words of their fields."""
    hints = typing.get_type_hints(function, include_extras=True)
    hints.pop("return", None)
    fields: Any = {name: (hint, None) for name, hint in hints.items()}
    return create_model(function.__name__, __config__=_ARGUMENTS, **fields)


def validate(schema: Type[T], data: Any, error: Type[InputError], where: str = "", config: bool = False) -> T:
    """`data` as `schema` (a pydantic model or dataclass), or `error` saying what is wrong: `where`
    (the file, with its separator) starts the message; keys read `'a.b[0]'`, or `[section] key` in a
    `config` (whose first level is its sections)."""
    try:
        return TypeAdapter(schema).validate_python(data)
    except ValidationError as err:
        raise error(where + "; ".join(problems(err, schema, config))) from None


def problems(err: ValidationError, schema: type, config: bool = False) -> List[str]:
    """One sentence per error (the first few), each naming its key."""
    return [_problem(e, schema, config) for e in err.errors()[:MAX_PROBLEMS]]


def _path(loc: Sequence[Union[str, int]]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


def _problem(error: Any, schema: type, config: bool) -> str:
    loc, kind, value = tuple(error["loc"]), error["type"], error.get("input")
    key = f"'{_path(loc)}'" if not config or not loc else f"[{loc[0]}] {_path(loc[1:])}".rstrip()
    if kind == "value_error":
        return f"{key}: {error['ctx']['error']}" if loc else str(error["ctx"]["error"])
    owner, field = _field(schema, loc)
    text = _must_be_text(field) if field is not None and loc and isinstance(loc[-1], str) else None
    if kind == "missing":
        return f"missing key {key}" + (f": it must be {text}" if text else "")
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        return f"unknown key {key}; allowed: {', '.join(_keys(owner))}"
    if kind == "too_long":
        return f"{key} has {error['ctx']['actual_length']} entries, above the limit of {error['ctx']['max_length']}"
    if text is None and kind == "less_than_equal" and not isinstance(value, bool):
        return f"{key} is {value}, above the limit of {error['ctx']['le']}; is it a typo?"
    message = str(error["msg"])
    if text is None and not message.startswith("Input should be "):
        return f"{key}: {message[0].lower()}{message[1:]}, got {short_repr(value)}"
    hint = "; write the number without quotes" if kind in _NUMBER_TYPES and _is_number(value) else ""
    return f"{key} must be {text or message.removeprefix('Input should be ').lower()}, got {short_repr(value)}{hint}"


def _is_number(value: Any) -> bool:
    """Whether `value` is a number in quotes, as a .cfg gives `"4096"`."""
    try:
        return isinstance(value, str) and bool(float(value) == float(value))
    except ValueError:
        return False


def short_repr(value: Any, limit: int = 80) -> str:
    """`repr(value)`, cut to `limit` characters: an error message quotes what it got, never a whole corpus."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _must_be_text(field: FieldInfo) -> Optional[str]:
    """The field's `must_be` words, on the field or inside its type (`Optional[Annotated[...]]`)."""
    for info in (field, *_infos(field.annotation)):
        extra = info.json_schema_extra
        if isinstance(extra, dict) and "must_be" in extra:
            return str(extra["must_be"])
    return None


def _infos(annotation: Any) -> Iterator[FieldInfo]:
    for arg in typing.get_args(annotation):
        if isinstance(arg, FieldInfo):
            yield arg
        else:
            yield from _infos(arg)


def _fields(schema: Any) -> dict:
    return getattr(schema, "__pydantic_fields__", {})


def _keys(schema: Any) -> List[str]:
    """The keys a model takes, as they are written (an alias path's first part)."""
    keys = []
    for name, field in _fields(schema).items():
        alias = field.validation_alias
        keys.append(str(alias.path[0]) if isinstance(alias, AliasPath) else name)
    return keys


def _field(schema: Any, loc: Sequence[Union[str, int]]) -> "tuple[Any, Optional[FieldInfo]]":
    """The model that holds the last key of `loc`, and that key's field (None where it has none)."""
    owner, field = schema, None
    for i, part in enumerate(loc):
        if isinstance(part, int):
            continue
        by_key = dict(zip(_keys(owner), _fields(owner).values()))
        field = by_key.get(part)
        if field is None or i == len(loc) - 1:
            break
        owner = _model_in(field.annotation)
    return owner, field


def _model_in(annotation: Any) -> Any:
    """The pydantic model inside an annotation such as `List[ModelEntry]` or `Optional[LSTMOptions]`."""
    if _fields(annotation):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None
