"""The error records, shipped unchanged as package data, and their loader.

Every user-facing word about an error (messages, hover text, fix titles, links) comes from
these records, so the loader checks the fields the rules and the server read.
"""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any

from pallas_ls.core.model import immutable

REQUIRED_TEXT = ("id", "slug", "errorMessage", "errorClass", "documentation", "githubUrl")
REQUIRED_LISTS = ("solutions", "preventionTips")


class RecordError(ValueError):
    """A shipped record lacks a field the rules rely on."""


@immutable
class Record:
    """One error record (JSON) of the knowledge base."""

    id: str
    slug: str
    error_message: str
    error_class: str
    documentation: str
    github_url: str
    solutions: tuple[str, ...]
    prevention_tips: tuple[str, ...]
    trigger_scenarios: str
    common_situations: str
    raw: dict[str, Any]

    @property
    def error_text(self) -> str:
        """JAX's own error text, as users see it in a traceback."""
        return f"{self.error_class}: {self.error_message}"


def parse_record(document: dict[str, Any], source: str = "<record>") -> Record:
    body = document.get("record")
    if not isinstance(body, dict):
        raise RecordError(f"{source}: no 'record' object")
    for key in REQUIRED_TEXT:
        if not isinstance(body.get(key), str) or not body[key].strip():
            raise RecordError(f"{source}: field {key!r} must be a non-empty string")
    for key in REQUIRED_LISTS:
        value = body.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RecordError(f"{source}: field {key!r} must be a list of strings")
    return Record(
        id=body["id"],
        slug=body["slug"],
        error_message=body["errorMessage"],
        error_class=body["errorClass"],
        documentation=body["documentation"],
        github_url=body["githubUrl"],
        solutions=tuple(body["solutions"]),
        prevention_tips=tuple(body["preventionTips"]),
        trigger_scenarios=str(body.get("triggerScenarios") or ""),
        common_situations=str(body.get("commonSituations") or ""),
        raw=body,
    )


@immutable
class RecordIndex:
    """The records, by id and by slug."""

    by_id: dict[str, Record]
    by_slug: dict[str, Record]

    def get(self, key: str) -> Record:
        record = self.by_id.get(key) or self.by_slug.get(key)
        if record is None:
            raise KeyError(key)
        return record


def _record_files() -> list[tuple[str, str]]:
    """(file name, text) of each shipped record, by name.

    Read from the package's folder when it is one (an installed wheel or a checkout);
    importlib.resources, which imports tempfile, shutil, bz2 and lzma (~0.8 MB held by the
    server for its whole life), only when the package is not on disk (a zip import).
    """
    folder = os.path.dirname(os.path.abspath(__file__))
    if os.path.isdir(folder):
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
        out = []
        for name in names:
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                out.append((name, handle.read()))
        return out
    from importlib import resources

    entries = sorted(resources.files(__name__).iterdir(), key=lambda p: p.name)
    return [(e.name, e.read_text(encoding="utf-8")) for e in entries if e.name.endswith(".json")]


@cache
def load_records() -> RecordIndex:
    by_id: dict[str, Record] = {}
    by_slug: dict[str, Record] = {}
    for name, text in _record_files():
        record = parse_record(json.loads(text), name)
        if record.id in by_id or record.slug in by_slug:
            raise RecordError(f"{name}: duplicate record {record.id}")
        by_id[record.id] = record
        by_slug[record.slug] = record
    return RecordIndex(by_id, by_slug)
