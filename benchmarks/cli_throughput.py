"""CLI throughput: `pallas-ls check` on a tree against the parse floor.

The floor is what any checker of these files must at least do: start Python, read every
``.py`` file and ``ast.parse`` it, once in a single process and once spread over the same
number of worker processes that ``pallas-ls check`` may use (the CPU count). All three are
timed as wall-clock time of a fresh process (interpreter start-up included), interleaved
over the runs; the table gives median [min-max] seconds and the ratios.

    python benchmarks/cli_throughput.py --tree OUT/tree [--runs 5] [--jobs N]
    python benchmarks/gen_pallas.py --tree 40 --outdir OUT/tree   # makes such a tree
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

# Run in a fresh interpreter: read + ast.parse every file, in `jobs` processes (1: no pool).
PARSE_FLOOR = """
import ast, sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

def parse(path):
    ast.parse(Path(path).read_bytes(), filename=path)
    return 1

paths = sorted(str(p) for p in Path(sys.argv[1]).rglob("*.py"))
jobs = int(sys.argv[2])
if jobs <= 1:
    done = sum(parse(p) for p in paths)
else:
    with ProcessPoolExecutor(jobs) as pool:
        done = sum(pool.map(parse, paths, chunksize=max(1, len(paths) // (4 * jobs))))
assert done == len(paths)
"""


def floor_command(python: str, tree: Path, jobs: int) -> list[str]:
    """The parse floor for `tree` in `jobs` processes (1: no pool)."""
    return [python, "-c", PARSE_FLOOR, str(tree), str(jobs)]


def timed(
    argv: list[str], ok_codes: tuple[int, ...] = (0,), cwd: Path | None = None
) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=cwd)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in ok_codes:
        tail = (proc.stderr or proc.stdout)[-800:]
        raise RuntimeError(f"{shlex.join(argv)} exited {proc.returncode}:\n{tail}")
    return elapsed, proc


def fmt(vals: list[float]) -> str:
    if not vals:
        return "-"
    return f"{statistics.median(vals):.2f} [{min(vals):.2f}-{max(vals):.2f}]"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--tree", required=True, help="directory of .py files to check")
    ap.add_argument("--python", default=sys.executable, help="interpreter of pallas-ls")
    ap.add_argument("--check", help="check command (default: PYTHON -m pallas_ls check)")
    ap.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="parallel floor's workers"
    )
    ap.add_argument("-R", "--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--label", default="", help="free text printed with the results")
    ap.add_argument("--json", help="write the raw times here")
    args = ap.parse_args(argv)

    tree = Path(args.tree).resolve()
    files = sorted(tree.rglob("*.py"))
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    check = shlex.split(args.check) if args.check else [args.python, "-m", "pallas_ls", "check"]
    commands = {
        "parse floor, 1 process": floor_command(args.python, tree, 1),
        f"parse floor, {args.jobs} processes": floor_command(args.python, tree, args.jobs),
        "pallas-ls check": [*check, str(tree)],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    notes: dict[str, str] = {}
    for r in range(args.warmup + args.runs):
        for name, cmd in commands.items():
            if name in notes and notes[name].startswith("failed"):
                continue
            # `check` exits 1 when it reports findings (expected here), > 1 on errors
            ok = (0, 1) if name == "pallas-ls check" else (0,)
            try:
                # Run from the tree: `python -m` puts the working directory first on sys.path,
                # and a checkout there would shadow the pallas_ls on PYTHONPATH (BENCH_REV).
                elapsed, proc = timed(cmd, ok, cwd=tree)
            except (RuntimeError, OSError) as exc:
                notes[name] = f"failed: {exc}"
                continue
            if name == "pallas-ls check":
                out = proc.stdout.strip().splitlines()
                notes[name] = f"exit {proc.returncode}, {len(out)} output lines" + (
                    f", last: {out[-1][:100]!r}" if out else ""
                )
            if r >= args.warmup:
                times[name].append(elapsed)
            print(f"[run {r}] {name}: {elapsed:.2f} s", file=sys.stderr, flush=True)

    print(
        f"CLI throughput: {len(files)} files, {lines} lines in {tree}; "
        f"{os.cpu_count()} CPUs; R={args.runs} (+{args.warmup} warm-up); seconds, wall clock"
    )
    if args.label:
        print(f"  {args.label}")
    width = max(len(n) for n in commands)
    for name in commands:
        print(f"  {name.ljust(width)}  {fmt(times[name])}")
        if name in notes:
            print(f"  {''.join(' ' for _ in range(width))}  ({notes[name]})")
    check_t = times["pallas-ls check"]
    par = times[f"parse floor, {args.jobs} processes"]
    single = times["parse floor, 1 process"]
    if check_t and par and single:
        c, p, s = statistics.median(check_t), statistics.median(par), statistics.median(single)
        # the floor is the faster way to just parse (a pool may not pay off on a busy 2-core box)
        floor = min(p, s)
        verdict = "meets" if c <= 1.3 * floor else "MISSES"
        print(f"  check / parallel parse floor: {c / p:.2f}x")
        print(f"  check / single-process parse floor: {c / s:.2f}x")
        print(f"  check / faster floor: {c / floor:.2f}x ({verdict} <= 1.3x)")
        print(f"  check throughput: {lines / c:,.0f} lines/s")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"files": len(files), "lines": lines, "times": times, "notes": notes}, indent=1
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
