"""The base of every profile section, and the read-only map the sections hold.

A section is a frozen value: snake_case or camelCase keys in, unknown keys refused, lists held as
tuples and maps as `FrozenMap`s, so nothing can change it in place, not even through a list or a
dict it holds. An invocation keeps the profile it was made with, and that profile stays the one the
bench checked. `edit(...)` (or `model_copy(update=...)`, which does the same) makes a validated,
changed copy.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Generic, NoReturn, Self, TypeVar, get_args

from pydantic import AliasChoices, BaseModel, ConfigDict, GetCoreSchemaHandler, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import core_schema

from .errors import ToolbenchError

K = TypeVar("K")
V = TypeVar("V")


class FrozenMap(Mapping[K, V], Generic[K, V]):
    """A read-only mapping: reads like a dict, compares equal to one, hashes when its values do.

    As a pydantic field type (`FrozenMap[str, int]`) it validates like `dict[str, int]` and
    serialises to a JSON object, exactly as the dict did."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        self._data: dict[K, V] = dict(data)

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # dict's own, not Mapping's Python-level fallbacks: prepare() looks up every allowed tool.
    def get(self, key: K, default: Any = None) -> Any:
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __reduce__(self) -> tuple[type[FrozenMap[K, V]], tuple[dict[K, V]]]:
        return type(self), (self._data,)  # every pickle protocol (slots and no dict otherwise)

    def __or__(self, other: Mapping[K, V]) -> FrozenMap[K, V]:
        return type(self)({**self._data, **other})

    def __repr__(self) -> str:
        # The dict's form: printed profiles (notebooks, errors) read as they did before.
        return repr(self._data)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        key, value = get_args(source) or (Any, Any)
        as_dict = handler.generate_schema(dict[key, value])  # type: ignore[valid-type]
        return core_schema.no_info_after_validator_function(
            cls, as_dict,
            serialization=core_schema.plain_serializer_function_ser_schema(dict, return_schema=as_dict))


class Section(BaseModel):
    """A frozen profile section: snake_case or camelCase keys, unknown keys refused.

    Setting or deleting a field raises `bench.misuse`; `edit(...)` makes a changed copy."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        self._refuse(name)

    def __delattr__(self, name: str) -> NoReturn:
        self._refuse(name)

    def _refuse(self, name: str) -> NoReturn:
        raise ToolbenchError("bench.misuse", f"profiles are frozen values; use profile.edit(...) to change `{name}` "
                                             f"(an invocation keeps the profile it was made with)")

    @classmethod
    def field_name(cls, key: str) -> str:
        """The field `key` names (its snake_case name or any of its aliases); unknown keys as given."""
        for name, info in cls.model_fields.items():
            choices = info.validation_alias.choices if isinstance(info.validation_alias, AliasChoices) else ()
            if key in (name, info.alias, info.validation_alias, *choices):
                return name
        return key

    def merged(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        """This section's values by field name with `changes` laid over them (keys in either
        spelling; one field named twice, `maxCallsPerRun` and `max_calls_per_run`, is refused)."""
        data = self.model_dump()
        given: dict[str, str] = {}
        for key, value in changes.items():
            name = self.field_name(key)
            if name in given:
                raise ToolbenchError("agent.profile_invalid", f"{type(self).__name__}: `{name}` is given twice "
                                     f"(`{given[name]}` and `{key}`)")
            given[name] = key
            data[name] = value
        return data

    def edit(self, **changes: Any) -> Self:
        """A new section with `changes` (snake_case or camelCase keys) validated; this one is unchanged.

        Raises `agent.profile_invalid` naming each unknown key or bad value."""
        return parse(type(self), self.merged(changes), source=type(self).__name__)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; with `update`, the same validated change as `edit(**update)` (pydantic's own
        `update` skips validation, which would let a section hold what it refuses)."""
        return self.edit(**update) if update else super().model_copy(deep=deep)


S = TypeVar("S", bound=Section)


def parse(cls: type[S], data: Any, *, source: str) -> S:
    """Validate `data` as `cls`; errors become one `agent.profile_invalid` naming each key."""
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise ToolbenchError("agent.profile_invalid", f"{source}: {describe(exc)}") from exc


def describe(exc: ValidationError) -> str:
    """One line per problem, each naming the key path."""
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown key `{loc}`")
        else:
            parts.append(f"`{loc}`: {err['msg']}")
    return "; ".join(parts)
