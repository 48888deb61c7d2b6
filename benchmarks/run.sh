#!/usr/bin/env bash
# `make bench`: LSP latency (pallas-ls beside ruff server, pylsp, jedi-language-server and a bare
# pygls server) and CLI throughput (`pallas-ls check` against the parse floor). Run from the repo
# root with the project venv at .venv (`make install-test` makes it). Peers are installed from
# PyPI into benchmarks/.peers-venv on first use; a peer that cannot be installed is skipped.
#
# Environment overrides (defaults in brackets):
#   BENCH_RUNS   measured runs per server and file [5] (plus BENCH_WARMUP [1] discarded)
#   BENCH_SIZES  input sizes in lines [500,5000,20000]
#   BENCH_EDITS  single edits per run on files under 10,000 lines [5]; larger ones get 3
#   BENCH_PEERS  peers on files of 1,000-9,999 lines [ruff,pylsp,jedi]
#   BENCH_PEERS_TINY   peers on files under 1,000 lines [ruff]
#   BENCH_PEERS_LARGE  peers on files of 10,000+ lines [ruff,pylsp] (jedi-language-server takes
#                ~40 s a run there and no target compares with it)
#   BENCH_TREE   files in the CLI throughput tree [40]
#   BENCH_JAX_TREE  a jax package directory for the CLI on a real tree [.venv-jax's jax]
#   BENCH_OUT    where inputs and results go [benchmarks/out]
#   BENCH_REV    measure pallas_ls/ as committed at this revision (e.g. HEAD) instead of the
#                working tree: a snapshot on PYTHONPATH, so edits during the run do not leak in
#   BENCH_BUILD  compiled: the build `make wheel` makes (the analysis core compiled by mypyc),
#                pure: the Python sources as they are [compiled]. The CLI throughput is also
#                measured on the other build, for comparison.
# Quick check: BENCH_RUNS=1 BENCH_WARMUP=0 BENCH_SIZES=500 bash benchmarks/run.sh
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
py="$root/.venv/bin/python"
[[ -x "$py" ]] || { echo "run.sh: no $py; run 'make install-test' first" >&2; exit 2; }

runs="${BENCH_RUNS:-5}"
warmup="${BENCH_WARMUP:-1}"
sizes="${BENCH_SIZES:-500,5000,20000}"
edits="${BENCH_EDITS:-5}"
peers="${BENCH_PEERS:-ruff,pylsp,jedi}"
peers_large="${BENCH_PEERS_LARGE:-ruff,pylsp}"
peers_tiny="${BENCH_PEERS_TINY:-ruff}"
tree_files="${BENCH_TREE:-40}"
out="${BENCH_OUT:-$root/benchmarks/out}"
peers_venv="$root/benchmarks/.peers-venv"

# Peers live in their own venv so their dependencies never touch the project's.
if [[ -n "$peers$peers_large$peers_tiny" && ! -f "$peers_venv/.installed" ]]; then
    echo "+ installing peer servers into $peers_venv" >&2
    base_python="$("$py" -c 'import sys; print(sys._base_executable)')"
    if "$base_python" -m venv "$peers_venv" \
        && "$peers_venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            ruff "python-lsp-server[pyflakes]" jedi-language-server; then
        touch "$peers_venv/.installed"
    else
        echo "run.sh: could not install the peers; running without those that are missing" >&2
    fi
fi

mkdir -p "$out/inputs"
build="${BENCH_BUILD:-compiled}"
[[ "$build" == compiled || "$build" == pure ]] || { echo "run.sh: BENCH_BUILD=compiled|pure" >&2; exit 2; }
# Which pallas-ls is measured: the working tree, or a snapshot of one revision; each as it is
# (pure) and as `make wheel` builds it (compiled), unpacked beside it.
rm -rf "$out/src" "$out/src-compiled" && mkdir -p "$out/src" "$out/src-compiled"
if [[ -n "${BENCH_REV:-}" ]]; then
    rev="$(git rev-parse --short "$BENCH_REV")"
    git archive "$rev" pallas_ls setup.py pyproject.toml README.md | tar -x -C "$out/src"
    label="pallas-ls at $rev"
else
    rev="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    dirty="$(git status --porcelain -- pallas_ls setup.py 2>/dev/null | head -1)"
    label="pallas-ls working tree at $rev${dirty:+ (with uncommitted changes)}"
    git ls-files -co --exclude-standard -- pallas_ls setup.py pyproject.toml README.md \
        | tar -cf - -T - | tar -x -C "$out/src"
fi
echo "+ compiling $label with mypyc (make wheel's build)" >&2
PALLAS_LS_COMPILE=1 "$py" -m pip wheel --quiet --no-deps --wheel-dir "$out/src-compiled/dist" \
    "$out/src"
"$py" -m zipfile -e "$out/src-compiled"/dist/*.whl "$out/src-compiled"
# Compile the measured source to bytecode first, as pip does when it installs a package (the
# servers' dependencies and the peers have theirs). Without it, and with
# PYTHONDONTWRITEBYTECODE=1 (set on this workplace's machines), every server start and
# every `pallas-ls check` would compile pallas_ls from source again (~25 ms).
"$py" -m compileall -q "$out/src/pallas_ls" "$out/src-compiled/pallas_ls"
if [[ "$build" == compiled ]]; then src="$out/src-compiled"; other=pure; other_src="$out/src"
else src="$out/src"; other=compiled; other_src="$out/src-compiled"; fi
export PYTHONPATH="$src${PYTHONPATH:+:$PYTHONPATH}"
# (From $out: the servers and the CLI run in their workspace, where no checkout shadows it.)
(cd "$out" && "$py" -c 'import pallas_ls, sys; sys.exit(pallas_ls.compiled() != (sys.argv[1] == "compiled"))' \
    "$build") || { echo "run.sh: PYTHONPATH does not give the $build build" >&2; exit 2; }
label="$label, $build build"
echo "+ measuring $label" >&2
"$py" benchmarks/gen_pallas.py --sizes "$sizes" --outdir "$out/inputs"
"$py" benchmarks/gen_pallas.py --sizes 5000 --no-jax --outdir "$out/inputs"
rm -rf "$out/tree"
"$py" benchmarks/gen_pallas.py --tree "$tree_files" --outdir "$out/tree"

common=(
    --server "pallas-ls=$py -m pallas_ls serve"
    --server "floor=$py benchmarks/floor_server.py"
    --peers-bin "$peers_venv/bin" --python "$py" -R "$runs" --warmup "$warmup" --label "$label"
)
# One run per size; the slow peers only where a target compares with them (each of their runs
# takes 10-40 s, and the whole bench has to stay around 15 minutes on 2 cores).
IFS=, read -ra size_list <<< "$sizes"
for n in "${size_list[@]}"; do
    if (( n < 1000 )); then
        set -- --preset "$peers_tiny" -K "$edits"
    elif (( n < 10000 )); then
        set -- --preset "$peers" -K "$edits"
    else
        set -- --preset "$peers_large" -K "$(( edits < 3 ? edits : 3 ))" --timeout 120 --run-timeout 900
    fi
    # tables to stdout and $out/lsp-<n>.txt; per-run progress to stderr
    "$py" benchmarks/lspbench.py "${common[@]}" "$@" --file "$out/inputs/pallas_$n.py" \
        --json "$out/lsp-$n.json" | tee "$out/lsp-$n.txt"
    echo
done

# a file without any jax import: pallas-ls beside the bare server only (it should cost about the same)
"$py" benchmarks/lspbench.py "${common[@]}" --file "$out/inputs/nojax_5000.py" -K "$edits" \
    --json "$out/lsp-nojax.json" | tee "$out/lsp-nojax.txt"
echo
"$py" benchmarks/cli_throughput.py --tree "$out/tree" --python "$py" -R "$runs" --warmup "$warmup" \
    --label "$label" --json "$out/cli.json" | tee "$out/cli.txt"
echo
PYTHONPATH="$other_src" "$py" benchmarks/cli_throughput.py --tree "$out/tree" --python "$py" \
    -R "$runs" --warmup "$warmup" --label "${label%, * build}, $other build" \
    --json "$out/cli-$other.json" | tee "$out/cli-$other.txt"
# The same two commands counted in instructions (deterministic, unlike the wall clock on a
# shared machine); needs valgrind, skipped without it.
if command -v valgrind >/dev/null; then
    echo
    "$py" benchmarks/cli_instructions.py --tree "$out/tree" --python "$py" --label "$label" \
        | tee "$out/cli-instructions.txt"
fi

# A real tree: JAX's own sources, from the oracle venv `make install-test` makes (617 files at
# jax 0.10.2; every `from jax._src import ...` there is an import of the workspace, so this is
# also where cross-module look-ups cost). Copied, so that the venv is not where it is checked.
jax_src="$(ls -d "$root"/.venv-jax/lib/python3*/site-packages/jax 2>/dev/null | head -1 || true)"
if [[ -n "${BENCH_JAX_TREE:-$jax_src}" && -d "${BENCH_JAX_TREE:-$jax_src}" ]]; then
    rm -rf "$out/jaxtree" && mkdir -p "$out/jaxtree"
    cp -r "${BENCH_JAX_TREE:-$jax_src}" "$out/jaxtree/jax"
    find "$out/jaxtree" -name __pycache__ -type d -prune -exec rm -rf {} +
    echo
    "$py" benchmarks/cli_throughput.py --tree "$out/jaxtree" --python "$py" -R "$runs" \
        --warmup "$warmup" --label "$label; JAX's own sources" --json "$out/cli-jax.json" \
        | tee "$out/cli-jax.txt"
else
    echo "run.sh: no .venv-jax (make install-test); the CLI on JAX's sources is skipped" >&2
fi
echo "+ bench done in $SECONDS s" >&2
