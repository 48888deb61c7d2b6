"""Client settings (`select`, `ignore`, `jaxVersion`) in whatever shape the client sends them.

Initialization options and `workspace/configuration` may hold the settings directly, under
"settings" or "pallas-ls", or as a one-item list (VS Code). Invalid values never raise: they
are dropped and described in `problems`, for one warning to the user.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pallas_ls.core.rules import expand_codes
from pallas_ls.server.jaxversion import parse_jax_version

SECTION = "pallas-ls"


@dataclass(frozen=True)
class Settings:
    select: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()
    # None: detect from the analysed environment (unknown means the latest JAX).
    jax_version: tuple[int, ...] | None = None


@dataclass
class ParsedSettings:
    settings: Settings
    problems: list[str] = field(default_factory=list)
    given: bool = False  # False when the client sent nothing usable


def unwrap(raw: Any) -> Any:
    """Peel the wrappers clients put around the settings object."""
    for _ in range(4):
        if isinstance(raw, (list, tuple)):
            raw = next((item for item in raw if isinstance(item, dict)), None)
        elif isinstance(raw, dict):
            inner = raw.get("settings", raw.get(SECTION))
            if isinstance(inner, (dict, list)) and not (
                {"select", "ignore", "jaxVersion"} & raw.keys()
            ):
                raw = inner
            else:
                return raw
        else:
            return raw
    return raw


def _codes(value: Any, key: str, problems: list[str]) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        items: list[Any] = value.split(",")
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        problems.append(f"`{key}` must be a list of rule codes, got {type(value).__name__}")
        return frozenset()
    if not all(isinstance(item, str) for item in items):
        problems.append(f"`{key}` must be a list of strings")
        return frozenset()
    known, unknown = expand_codes([item for item in items if item.strip()])
    if unknown:
        problems.append(f"`{key}`: unknown rule code(s) {', '.join(map(repr, unknown))}")
    return frozenset(known)


def parse_settings(raw: Any) -> ParsedSettings:
    if (
        isinstance(raw, (list, tuple))
        and not any(isinstance(item, dict) for item in raw)
        and any(item is not None for item in raw)
    ):
        # `[null]` is an unset configuration; a list of anything else is a mistake.
        return ParsedSettings(Settings(), ["settings must be an object, got a list"], True)
    body = unwrap(raw)
    if body is None:
        return ParsedSettings(Settings())
    if not isinstance(body, dict):
        return ParsedSettings(
            Settings(), [f"settings must be an object, got {type(body).__name__}"], True
        )
    problems: list[str] = []
    select = _codes(body.get("select"), "select", problems)
    ignore = _codes(body.get("ignore"), "ignore", problems)
    jax_version = None
    raw_version = body.get("jaxVersion")
    if raw_version not in (None, "", "auto"):
        if isinstance(raw_version, str):
            jax_version = parse_jax_version(raw_version)
        if jax_version is None:
            problems.append(
                f'`jaxVersion` must be a version such as "0.11.0" (or "auto"), got {raw_version!r}'
            )
    return ParsedSettings(Settings(select, ignore, jax_version), problems, True)


def warning_text(problems: list[str]) -> str:
    return "pallas-ls: invalid settings ignored (defaults used instead): " + "; ".join(problems)
