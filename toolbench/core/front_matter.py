"""The one YAML front-matter reader (and writer) of skills and memories: text in, data out.

SKILL.md files and memory notes are written by the model or planted in the workspace, so their
front matter is hostile input. What a YAML parser can be made to do with it, and the rule here:

- anchors and aliases (`&a`, `*a`): an alias shares a node, so nine levels of nine make a
  "billion laughs" that any consumer (`str()`, `json.dumps`) expands past all memory. Refused,
  anchors too: front matter is a few plain keys, it never needs them.
- nesting: libyaml's composer recurses in C and crashes the process (SIGSEGV) near 100,000
  levels; PyYAML's recurses in Python. At most `MAX_DEPTH` levels.
- size: the text is capped at `MAX_CHARS` characters before the parser sees it, so every
  linear cost is bounded.
- numbers: a base-60 integer (`1:2:3:...`) is built with big-integer arithmetic, quadratic in
  its length (64 KB takes half a second). A number scalar has at most `MAX_NUMBER_CHARS`.

Any of these, and any YAML error, raises `FrontMatterError` with a short reason (no position,
no text of the file); the caller names the file and picks its code. The guard is PyYAML's own
composer (`yaml.composer.Composer`, one check per node) over libyaml's event parser: about 1.6
times libyaml's whole-C time. A rebuild of the memory index parses every file, so a block that
provably has neither (no `&` or `*` character at all, and a nesting bound under `MAX_DEPTH`,
see `_shallow`) takes libyaml's C composer instead, with the same constructor: same result.

Splitting and writing are python-frontmatter's (a first line of three or more dashes, the next
such line ends the block; no closing line means no front matter); only its YAML load is replaced.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Final

MAX_CHARS: Final = 256 * 1024
MAX_DEPTH: Final = 64
MAX_NUMBER_CHARS: Final = 128
# Each line's indentation and compact block indicators (`- - x`, `- key: v`, `? k`), for `_shallow`.
_PREFIX: Final = re.compile(r"^ *(?:[-?:][ \t]+)*", re.MULTILINE)


class FrontMatterError(ValueError):
    """The front matter is refused; `reason` says why in a few words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """A parsed file: its `metadata` (empty when the block is not a mapping), the stripped `body`,
    and whether it had a front-matter block at all (`present`)."""

    metadata: dict[str, Any]
    body: str
    present: bool


def parse(text: str) -> FrontMatter:
    """Split `text` (a leading BOM is dropped) and load its front matter; FrontMatterError."""
    handler = _handler()
    text = text.lstrip("\ufeff").strip()
    if not handler.detect(text):
        return FrontMatter({}, text, False)
    try:
        block, body = handler.split(text)
    except ValueError:  # never closed: python-frontmatter reads it as a file without front matter
        return FrontMatter({}, text, False)
    data = load(block)
    return FrontMatter(data if isinstance(data, dict) else {}, body.strip(), True)


def load(block: str, *, max_chars: int = MAX_CHARS) -> Any:
    """The YAML of one front-matter block, with the limits above (`max_chars` for a whole YAML
    document such as a profile, which has a cap of its own); FrontMatterError."""
    if len(block) > max_chars:
        raise FrontMatterError(f"the YAML has {len(block)} characters; at most {max_chars} are read")
    import yaml  # type: ignore[import-untyped]  # here, not at the top: `import toolbench` stays free of yaml

    loader = _loader(fast="&" not in block and "*" not in block and _shallow(block))(block)
    try:
        return loader.get_single_data()
    except FrontMatterError:
        raise
    except RecursionError:  # only for a caller already deep in its own stack: the depth cap is far below
        raise FrontMatterError("the front matter nests too deep") from None
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"the front matter is not valid YAML ({_problem(exc)})") from None
    except (ValueError, TypeError, OverflowError) as exc:  # a constructor refusing a scalar (a date, an int)
        raise FrontMatterError(f"the front matter holds a value YAML cannot read ({type(exc).__name__})") from None
    finally:
        loader.dispose()


def render(metadata: dict[str, Any], body: str) -> str:
    """`metadata` as a YAML block (keys in order, long lines kept whole), a blank line, `body`."""
    import frontmatter

    post = frontmatter.Post(body, handler=_handler())
    post.metadata.update(metadata)
    text: str = frontmatter.dumps(post, handler=post.handler)
    return text


@functools.cache
def _handler() -> Any:
    """python-frontmatter's YAML handler (its delimiters and layout) with the guarded loader, and
    libyaml's dumper when it is there."""
    import yaml
    from frontmatter.default_handlers import YAMLHandler

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class GuardedYaml(YAMLHandler):
        def load(self, fm: str, **kwargs: object) -> Any:
            return load(fm)

        def export(self, metadata: dict[str, object], **kwargs: object) -> str:
            kwargs.setdefault("Dumper", dumper)
            kwargs.setdefault("sort_keys", False)
            kwargs.setdefault("width", 10_000)
            return super().export(metadata, **kwargs)

    return GuardedYaml()


def _problem(exc: Any) -> str:
    """The YAML error's problem words, without the marks that quote the file."""
    return str(getattr(exc, "problem", None) or getattr(exc, "context", None) or type(exc).__name__)[:120]


def _shallow(block: str) -> bool:
    """Whether `block` surely nests at most MAX_DEPTH nodes deep, from its characters alone.

    A flow level needs its own `[` or `{`. A block collection inside another starts further
    right, or (a sequence under a mapping key) at the same column, never twice running, so a
    chain of k block collections reaches column (k - 1) / 2, which its line's prefix of spaces
    and compact indicators (`- `, `? `, `: `) covers; one more level for the leaf scalar."""
    flow = block.count("[") + block.count("{")
    if flow >= MAX_DEPTH:
        return False
    widest = max((len(prefix) for prefix in _PREFIX.findall(block)), default=0)
    return 2 * widest + 2 + flow <= MAX_DEPTH


def _loader(*, fast: bool = False) -> type:
    return _make_loader(libyaml=True, fast=fast)


@functools.cache
def _make_loader(*, libyaml: bool, fast: bool = False) -> type:
    """A SafeLoader whose composer refuses anchors, aliases and deep nesting, and whose
    constructor refuses long numbers; on libyaml's event parser when asked and installed.
    `fast`: libyaml's own composer, for blocks `_shallow` cleared (it checks neither)."""
    import yaml  # its loader modules (composer, constructor, ...) come with it

    composer: Any = yaml.composer.Composer
    safe_constructor: Any = yaml.constructor.SafeConstructor
    resolver: Any = yaml.resolver.Resolver
    compose = composer.compose_node

    class GuardedComposer(composer):  # type: ignore[misc]
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            # Every node event has `anchor`: an alias's is the name it refers to, else the anchor set.
            if self.peek_event().anchor is not None:
                raise FrontMatterError("the front matter uses YAML anchors or aliases (& and *), which are "
                                       "not allowed")
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise FrontMatterError(f"the front matter nests deeper than {MAX_DEPTH} levels")
            try:
                return compose(self, parent, index)
            finally:
                self.depth -= 1

    class GuardedConstructor(safe_constructor):  # type: ignore[misc]
        def construct_yaml_int(self, node: Any) -> Any:
            _short_number(node)
            return super().construct_yaml_int(node)

        def construct_yaml_float(self, node: Any) -> Any:
            _short_number(node)
            return super().construct_yaml_float(node)

    GuardedConstructor.add_constructor("tag:yaml.org,2002:int", GuardedConstructor.construct_yaml_int)
    GuardedConstructor.add_constructor("tag:yaml.org,2002:float", GuardedConstructor.construct_yaml_float)

    c_parser: Any = getattr(getattr(yaml, "cyaml", None), "CParser", None)  # libyaml's events, when PyYAML has it
    if c_parser is not None and libyaml and fast:
        class FastLoader(c_parser, GuardedConstructor, resolver):  # type: ignore[misc]
            def __init__(self, stream: str) -> None:
                c_parser.__init__(self, stream)
                GuardedConstructor.__init__(self)
                resolver.__init__(self)
        return FastLoader
    if c_parser is not None and libyaml:
        class Loader(GuardedComposer, c_parser, GuardedConstructor, resolver):  # type: ignore[misc]
            def __init__(self, stream: str) -> None:
                c_parser.__init__(self, stream)
                GuardedConstructor.__init__(self)
                resolver.__init__(self)
                GuardedComposer.__init__(self)
        return Loader

    reader: Any = yaml.reader.Reader
    scanner: Any = yaml.scanner.Scanner
    parser: Any = yaml.parser.Parser

    class PyLoader(reader, scanner, parser, GuardedComposer, GuardedConstructor, resolver):  # type: ignore[misc]
        def __init__(self, stream: str) -> None:
            reader.__init__(self, stream)
            scanner.__init__(self)
            parser.__init__(self)
            GuardedComposer.__init__(self)
            GuardedConstructor.__init__(self)
            resolver.__init__(self)
    return PyLoader


def _short_number(node: Any) -> None:
    if len(node.value) > MAX_NUMBER_CHARS:
        raise FrontMatterError(f"the front matter holds a number of {len(node.value)} characters; at most "
                               f"{MAX_NUMBER_CHARS} are read")
