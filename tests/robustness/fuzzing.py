"""Fuzz inputs and bookkeeping shared by the three fuzz targets (engine, CLI, server)."""

from __future__ import annotations

import functools
import json
import logging
import pathlib
import random
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

import hypothesmith
from hypothesis import HealthCheck, Phase, given, seed, settings
from robustness_support import mutate, seed_texts, vocabulary_from

SEED = 20240605
HERE = pathlib.Path(__file__).resolve().parent
PALLAS_HEADER = (
    "import jax\n"
    "from jax import lax\n"
    "from jax.experimental import pallas as pl\n"
    "from jax.experimental.pallas import tpu as pltpu\n"
)
KERNEL_PREFIX = PALLAS_HEADER + "\n\ndef kernel(x_ref, o_ref):\n"
KERNEL_SUFFIX = (
    "\n\ndef run(x):\n"
    "    return pl.pallas_call(kernel, out_shape=x,\n"
    "        compiler_params=pltpu.CompilerParams(opt_level=2))(x)\n"
)


def hypothesis_settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )


def pallas_variants(program: str) -> list[str]:
    """A generated program as is, after Pallas imports, and as a kernel's body."""
    body = "".join("    " + line for line in program.splitlines(keepends=True)) or "    pass\n"
    return [program, PALLAS_HEADER + program, KERNEL_PREFIX + body + KERNEL_SUFFIX]


def run_hypothesmith(
    strategy_name: str, deadline: float, on_program: Callable[[str], None], batch: int = 10
) -> None:
    """Feed hypothesmith programs to on_program until `deadline` (time.monotonic)."""
    strategy = (
        hypothesmith.from_grammar() if strategy_name == "grammar" else hypothesmith.from_node()
    )
    round_number = 0
    while time.monotonic() < deadline:

        @seed(SEED + round_number)
        @hypothesis_settings(batch)
        @given(strategy)
        def feed(program: str) -> None:
            if time.monotonic() < deadline:
                on_program(program)

        feed()
        round_number += 1


@functools.lru_cache(maxsize=1)
def hypothesmith_pool(size: int = 24) -> tuple[str, ...]:
    """A fixed pool of generated programs for the targets where generation is too slow.

    Generated in a fresh interpreter: Hypothesis mines constants from every local module
    loaded into the process, so in-process the pool (and every input drawn after it) would
    depend on which tests were collected and ran first, and a failure seen in a full run
    could not be replayed by running its test alone."""
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "from fuzzing import generate_pool\n"
        f"print(json.dumps(generate_pool({size})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=300
    )
    return tuple(json.loads(done.stdout))


def generate_pool(size: int) -> list[str]:
    programs: list[str] = []

    @seed(SEED)
    @hypothesis_settings(size)
    @given(hypothesmith.from_grammar())
    def collect(program: str) -> None:
        programs.append(program)

    collect()
    return programs


class MutationSource:
    """Mutated seed files, reproducible from SEED."""

    def __init__(self, salt: int = 0) -> None:
        self.rng = random.Random(SEED + salt)
        self.seeds = seed_texts()
        self.vocabulary = vocabulary_from(self.seeds)

    def next(self) -> str:
        return mutate(self.rng.choice(self.seeds), self.rng, self.vocabulary)


@dataclass
class Failure:
    kind: str
    detail: str
    text: str
    count: int = 1


@dataclass
class FuzzLog:
    """Distinct failures, keyed by kind and where they were raised, keeping the shortest input."""

    target: str
    inputs: int = 0
    failures: dict[tuple[str, str], Failure] = field(default_factory=dict)

    def add(self, kind: str, where: str, detail: str, text: str) -> None:
        key = (kind, where)
        old = self.failures.get(key)
        if old is None:
            self.failures[key] = Failure(kind, detail, text)
        else:
            old.count += 1
            if len(text) < len(old.text):
                old.text, old.detail = text, detail

    def add_exception(self, kind: str, exc: BaseException, text: str) -> None:
        frames = traceback.extract_tb(exc.__traceback__)
        last = frames[-1] if frames else None
        where = f"{type(exc).__name__} at {last.filename}:{last.lineno}" if last else kind
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-12:])
        self.add(kind, where, detail, text)

    def report(self, directory: pathlib.Path | None = None) -> str:
        lines = [f"{self.target}: {self.inputs} inputs, {len(self.failures)} distinct failures"]
        for i, failure in enumerate(self.failures.values()):
            saved = ""
            if directory is not None:
                path = directory / f"{self.target}-failure-{i}.py.txt"
                path.write_text(failure.text, encoding="utf-8", errors="surrogatepass")
                saved = f" (input saved to {path})"
            lines += [
                f"--- {failure.kind} x{failure.count}{saved}",
                f"shortest input ({len(failure.text)} chars): {failure.text[:800]!r}",
                failure.detail,
            ]
        return "\n".join(lines)


class ErrorLogCapture(logging.Handler):
    """Errors the engine logs instead of raising (a rule that failed is still a bug)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def __enter__(self) -> ErrorLogCapture:
        logging.getLogger("pallas_ls").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("pallas_ls").removeHandler(self)


def shrink(text: str, still_fails: Callable[[str], bool], seconds: float = 10.0) -> str:
    """Greedy delta debugging (lines, then characters), bounded in time."""
    end = time.monotonic() + seconds
    for unit in ("lines", "chars"):
        pieces = text.splitlines(keepends=True) if unit == "lines" else list(text)
        chunk = max(1, len(pieces) // 2)
        while chunk >= 1 and time.monotonic() < end:
            i = 0
            changed = False
            while i < len(pieces) and time.monotonic() < end:
                candidate = pieces[:i] + pieces[i + chunk :]
                if still_fails("".join(candidate)):
                    pieces = candidate
                    changed = True
                else:
                    i += chunk
            if not changed:
                chunk //= 2
        text = "".join(pieces)
    return text
