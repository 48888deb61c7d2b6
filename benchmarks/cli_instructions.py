"""CLI cost in instructions: `pallas-ls check` against the parse floor, under valgrind.

Wall-clock times on a shared 2-core machine swing by a third between runs (see
benchmarks/README.md); a command's total instruction count does not. This runs the same
two commands as cli_throughput.py (`pallas-ls check TREE` and the floor: read and
`ast.parse` every file in as many worker processes) once each under `valgrind
--tool=cachegrind --cache-sim=no --trace-children=yes`, and prints the instructions of
every process and two paths:

- the critical path: the parent process plus its busiest worker (the workers run side by
  side), which is what the wall clock follows. It depends on which worker got which file,
  which changes from run to run (two runs of the same check: 4,475M and 5,041M);
- the balanced path: the parent plus the workers' mean, the critical path of a perfect
  share-out. The total does not depend on the share-out, so this is the figure to compare
  between versions.

Instructions are a proxy: the parser is C code and the analysis runs in the interpreter
loop, which executes more instructions per cycle, so the wall-clock ratio is usually a few
percent lower than this one. Under valgrind a run is ~40x slower (~20 s for the generated
tree). Hash randomisation is off (PYTHONHASHSEED=0) so that repeated runs count the same.
A command that exits with an unexpected code is reported as failed, not counted.

    python benchmarks/cli_instructions.py --tree OUT/tree [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_throughput import floor_command  # the same floor, word for word

_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions(
    argv: list[str], cwd: Path, ok: Callable[[subprocess.CompletedProcess[str]], bool]
) -> list[int]:
    """Instructions of each process of the command, the first one started first; empty
    when `ok` rejects how it ended (valgrind passes the exit code and output on)."""
    with tempfile.TemporaryDirectory() as logs:
        env = dict(os.environ, PYTHONHASHSEED="0")
        proc = subprocess.run(
            [
                "valgrind",
                "--tool=cachegrind",
                "--cache-sim=no",
                "--trace-children=yes",
                "--cachegrind-out-file=/dev/null",
                f"--log-file={logs}/%p.log",
                *argv,
            ],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if not ok(proc):
            tail = (proc.stderr or proc.stdout)[-400:]
            print(f"  failed (exit {proc.returncode}): {tail}", file=sys.stderr)
            return []
        counts: list[tuple[int, int]] = []
        for log in Path(logs).glob("*.log"):
            match = _REFS.search(log.read_text())
            if match:
                counts.append((int(log.stem), int(match.group(1).replace(",", ""))))
    return [n for _, n in sorted(counts)]


def _floor_ok(proc: subprocess.CompletedProcess[str]) -> bool:
    return proc.returncode == 0


def _check_ok(proc: subprocess.CompletedProcess[str]) -> bool:
    """`check` exits 1 when it reports findings (expected here), but so does a Python that
    fails to import it: its summary line tells the two apart."""
    return proc.returncode in (0, 1) and _SUMMARY.search(proc.stdout) is not None


_SUMMARY = re.compile(r"\bfiles? checked\b")


def critical_path(counts: list[int]) -> int:
    """The parent (started first) plus its busiest child."""
    return counts[0] + max(counts[1:], default=0)


def balanced_path(counts: list[int]) -> int:
    """The parent plus its children's mean: the critical path if the work were shared out
    perfectly. Unlike the busiest child, it does not depend on which worker got which file
    (the total is the same in every run), so it is what to compare between versions."""
    children = counts[1:]
    return counts[0] + (sum(children) // len(children) if children else 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--tree", required=True, help="directory of .py files to check")
    ap.add_argument("--python", default=sys.executable, help="interpreter of pallas-ls")
    ap.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="parallel floor's workers"
    )
    ap.add_argument("--label", default="", help="free text printed with the results")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("cli_instructions: no valgrind on PATH; skipped", file=sys.stderr)
        return 0
    tree = Path(args.tree).resolve()
    runs = {
        f"parse floor, {args.jobs} processes": floor_command(args.python, tree, args.jobs),
        "pallas-ls check": [args.python, "-m", "pallas_ls", "check", str(tree)],
    }
    print(f"CLI instructions (cachegrind, millions): {tree}")
    if args.label:
        print(f"  {args.label}")
    paths: dict[str, int] = {}
    balanced: dict[str, int] = {}
    for name, cmd in runs.items():
        # From the tree, as cli_throughput.py does (a checkout in the working directory
        # would shadow the pallas_ls on PYTHONPATH).
        counts = instructions(cmd, tree, _check_ok if name == "pallas-ls check" else _floor_ok)
        if not counts:
            print(f"  {name}: failed or not counted; no ratio")
            continue
        paths[name] = critical_path(counts)
        balanced[name] = balanced_path(counts)
        each = " + ".join(f"{n / 1e6:,.0f}" for n in counts)
        print(
            f"  {name}: processes {each}; critical path {paths[name] / 1e6:,.0f}, "
            f"balanced {balanced[name] / 1e6:,.0f}"
        )
    if len(paths) == 2:
        floor, check = paths.values()
        print(f"  check / parallel parse floor, critical paths: {check / floor:.2f}x")
        floor, check = balanced.values()
        print(f"  check / parallel parse floor, balanced paths: {check / floor:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
