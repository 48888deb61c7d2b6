"""Plain data shared by the engine, the CLI and the server.

Lines are 0-based; columns are 0-based offsets in Unicode code points. The CLI turns them
into 1-based numbers and the server into the client's position encoding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_options: object) -> Callable[[Any], Any]:
        return lambda decorator: decorator


_T = TypeVar("_T")


@overload
def immutable(cls: type[_T], /) -> type[_T]: ...
@overload
def immutable(*, eq: bool = True, order: bool = False) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(frozen_default=True)
def immutable(cls: Any = None, /, *, eq: bool = True, order: bool = False) -> Any:
    """A dataclass that type checkers hold frozen, without `frozen=True` at run time.

    A frozen dataclass sets each field through `object.__setattr__` in `__init__` and needs
    two more generated methods at import: the engine makes thousands of such records per
    file and defines most of its ~40 classes this way. `pallas-ls check` imports them in
    every worker: frozen, they cost the import ~53M of its ~340M instructions. mypy reports
    any assignment to a field, as for `frozen=True` (not `setattr` or `del`, as there);
    with `eq` the instances compare and hash by value, as frozen ones do."""

    def wrap(klass: type[_T]) -> type[_T]:
        return dataclass(eq=eq, order=order, unsafe_hash=eq)(klass)

    return wrap if cls is None else wrap(cls)


@immutable(order=True)
class Span:
    """A range of the source: 0-based lines and 0-based code-point columns."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    def contains(self, line: int, col: int) -> bool:
        return (self.start_line, self.start_col) <= (line, col) <= (self.end_line, self.end_col)

    def overlaps(self, other: Span) -> bool:
        return not (
            (self.end_line, self.end_col) < (other.start_line, other.start_col)
            or (other.end_line, other.end_col) < (self.start_line, self.start_col)
        )


@immutable
class Edit:
    """Replace the text of `span` with `new_text`."""

    span: Span
    new_text: str


@immutable
class Fix:
    """A quick fix: edits applied together; `preferred` marks the one to apply on its own."""

    title: str
    edits: tuple[Edit, ...]
    preferred: bool = False


@immutable
class Related:
    """A piece of evidence: where the kernel, mesh or value comes from."""

    message: str
    span: Span
    path: str | None = None  # None: the analysed file itself


@immutable
class Finding:
    """One diagnostic: a rule's code and message where it applies, with its fixes."""

    code: str
    message: str
    span: Span
    severity: str = "error"  # "error" | "warning" | "information" | "hint"
    fixes: tuple[Fix, ...] = ()
    related: tuple[Related, ...] = ()
    record_id: str | None = None

    @property
    def preferred_fix(self) -> Fix | None:
        for fix in self.fixes:
            if fix.preferred:
                return fix
        return self.fixes[0] if self.fixes else None


@immutable
class Config:
    """What to check: the rule codes selected and ignored, and the JAX version in use."""

    select: frozenset[str] = frozenset()  # empty: every rule
    ignore: frozenset[str] = frozenset()
    jax_version: tuple[int, ...] | None = None  # None: unknown, treated as the latest JAX

    def enabled(self, code: str) -> bool:
        if self.select and not any(code.startswith(s) for s in self.select):
            return False
        return not any(code.startswith(i) for i in self.ignore)


@immutable
class HoverInfo:
    """Hover text (Markdown) over `span`, and the rule codes it explains."""

    markdown: str
    span: Span
    codes: tuple[str, ...] = field(default=())


class AnalysisCancelled(Exception):
    """Raised inside analyse() when its `cancelled` callback says the result is no longer
    wanted (the document changed meanwhile). Caches are left as they were."""


def raise_if_cancelled(cancelled: Callable[[], bool] | None) -> None:
    """The poll every long step of an analysis makes."""
    if cancelled is not None and cancelled():
        raise AnalysisCancelled
