"""Where an open's time goes: the engine's stages on one file, in fresh processes.

Each run starts a new interpreter (as a server does for its first open) and times, with the
collector off as in the server: the line split, the parse in pieces (each piece's statements
visited as it is parsed), the scope build of a whole-file parse for comparison, kernel
discovery, and each rule. Prints median [min-max] ms over the runs.

    python benchmarks/stages.py FILE [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

# Runs in a fresh interpreter; prints one JSON object of stage -> ms.
ONE_RUN = r"""
import ast, gc, json, sys, time
gc.disable()
from pallas_ls.core import engine, resolve
from pallas_ls.core.kernels import KernelFinder
from pallas_ls.core.model import Config
from pallas_ls.core.rules.base import RuleContext
from pallas_ls.core.textedit import split_lines
from pallas_ls.core.values import Evaluator

T = time.perf_counter
path = sys.argv[1]
source = open(path, encoding="utf-8").read()
out = {}
t = T(); lines = split_lines(source); out["split lines"] = T() - t
t = T(); module = resolve.parse_module(source, path, None, lines)
out["parse + build (pieces)"] = T() - t
t = T(); tree = ast.parse(source); out["ast.parse, whole file"] = T() - t
t = T(); resolve.ModuleInfo(tree, source, path, None, lines); out["build alone"] = T() - t
evaluator = Evaluator(engine._resolver(None))
t = T(); finder = KernelFinder(module, evaluator); sites = finder.sites(None, None)
out[f"kernel sites ({len(sites)})"] = T() - t
ctx = RuleContext(module, evaluator, finder, sites, Config(), None, None)
for codes, check in engine.CHECKS:
    t = T(); found = list(check(ctx)); name = "/".join(sorted(codes))
    out[f"rule {name} ({len(found)} findings)"] = T() - t
print(json.dumps({k: v * 1000 for k, v in out.items()}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("-R", "--runs", type=int, default=5)
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args(argv)
    runs: list[dict[str, float]] = []
    for _ in range(args.runs):
        proc = subprocess.run(
            [args.python, "-c", ONE_RUN, args.file], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            print(proc.stderr[-2000:], file=sys.stderr)
            return 1
        runs.append(json.loads(proc.stdout))
    width = max(len(k) for k in runs[0])
    print(f"{args.file}: {args.runs} fresh processes, collector off; ms, median [min-max]")
    for key in runs[0]:
        vals = [r[key] for r in runs]
        print(f"  {key:<{width}}  {statistics.median(vals):7.1f} [{min(vals):.1f}-{max(vals):.1f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
