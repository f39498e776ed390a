"""The one formatter of settings errors: every file and config section is a pydantic model (options.json,
the catalogue, the pretraining config's sections), and a pydantic ValidationError becomes the package's
InputError here, with a message that names the file, the key path, the bad value and what it must be.

A field can say what it must be in words (`must_be(...)`), for limits a user reads better that way than
as pydantic's constraint text; an upper limit reads as a likely typo. Checks that span several keys raise
an InputError (a ValueError) inside a validator, which pydantic collects: their message is used as it is.
"""

from __future__ import annotations

import typing
from typing import Any, Iterator, List, Optional, Sequence, Type, TypeVar, Union

from pydantic import AliasPath, Field, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from ..errors import InputError

T = TypeVar("T")
MAX_PROBLEMS = 5


def must_be(text: str, **constraints: Any) -> Any:
    """A field whose error reads "KEY must be TEXT, got VALUE" (`constraints` as for pydantic.Field)."""
    return Field(json_schema_extra={"must_be": text}, **constraints)


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
    return f"{key} must be {text or message.removeprefix('Input should be ').lower()}, got {short_repr(value)}"


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
