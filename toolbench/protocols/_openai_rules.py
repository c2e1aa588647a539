"""The name and list rules of OpenAI-shaped APIs, as values a provider is made with.

OpenAI's Chat Completions and Responses share them, and so do the many APIs that copy their
shape (Mistral, vLLM, llama.cpp, Ollama, gateways), each with its own limits: one
`OpenAIRules` base holds the check, the two providers hold the wire shapes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from ..core.errors import ToolbenchError
from ._base import BaseProvider
from ._openai_strict import check_strict
from ._shared import check_common, check_name, check_root
from .types import Problem, RenderableTool, RenderOptions

NAME_PATTERN: Final = r"[A-Za-z0-9_-]+"
NAME_CHARSET: Final = "A-Z a-z 0-9 _ -"
MAX_NAME_BYTES: Final = 64
MAX_TOOLS: Final = 128
DESCRIPTION_SOFT_LIMIT: Final = 1024


@dataclass(frozen=True)
class OpenAIRules(BaseProvider):
    """An OpenAI-shaped provider's rules; the defaults are OpenAI's.

    `name_pattern` must match a whole call name (as the docs' `^...$` does), `name_charset` says
    in a problem's message what it allows, and `max_name_bytes` bounds its UTF-8 length.
    `max_tools` is the most tools a request takes (`None`: no limit); past it the problem is
    fatal when `max_tools_fatal`. Past `description_limit` characters (`None`: no limit) a
    description gets a warning. Strict mode (`strict=True`) follows OpenAI's rules."""

    name: str
    name_pattern: str = NAME_PATTERN
    name_charset: str = NAME_CHARSET
    max_name_bytes: int = MAX_NAME_BYTES
    max_tools: int | None = MAX_TOOLS
    max_tools_fatal: bool = True
    description_limit: int | None = DESCRIPTION_SOFT_LIMIT
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            pattern = re.compile(self.name_pattern)
        except (re.error, TypeError) as exc:
            raise ToolbenchError("bench.misuse", f"name_pattern {self.name_pattern!r} is not a regex: {exc}") from None
        if self.max_name_bytes < 1:
            raise ToolbenchError("bench.misuse", f"max_name_bytes must be at least 1, not {self.max_name_bytes}")
        if self.max_tools is not None and self.max_tools < 1:
            raise ToolbenchError("bench.misuse", f"max_tools must be at least 1 or None, not {self.max_tools}")
        if self.description_limit is not None and self.description_limit < 0:
            raise ToolbenchError("bench.misuse", f"description_limit must be 0 or more, or None, not "
                                 f"{self.description_limit}")
        object.__setattr__(self, "_pattern", pattern)  # frozen: set once, here

    def check_tools(self, tools: Sequence[RenderableTool], options: RenderOptions) -> list[Problem]:
        protocol = self.name
        problems = check_common(protocol, (t.call_name for t in tools))
        if self.max_tools is not None and len(tools) > self.max_tools:
            problems.append(
                Problem(
                    protocol,
                    "",
                    "list.too_many_tools",
                    f"{len(tools)} tools; {protocol} takes at most {self.max_tools} per request",
                    self.max_tools_fatal,
                )
            )
        for tool in tools:
            name, schema = tool.call_name, tool.descriptor.input_schema
            problems += check_name(protocol, name, self._pattern, self.max_name_bytes, self.name_charset)
            problems += check_root(protocol, name, schema)
            size = len(tool.descriptor.description)
            if self.description_limit is not None and size > self.description_limit:
                problems.append(
                    Problem(
                        protocol,
                        name,
                        "description.length",
                        f"description has {size} characters; some OpenAI-shaped endpoints and "
                        f"gateways cut or refuse past {self.description_limit}",
                        False,
                    )
                )
            if options.strict:
                problems += check_strict(protocol, name, schema)
        return problems
