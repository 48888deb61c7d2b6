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
#   BENCH_PEERS  peers to run on files under 10,000 lines [ruff,pylsp,jedi]
#   BENCH_PEERS_LARGE  peers on larger files [ruff,pylsp] (jedi-language-server takes ~25 s
#                a run there and no target compares with it; the whole run stays under ~15 min)
#   BENCH_TREE   files in the CLI throughput tree [40]
#   BENCH_OUT    where inputs and results go [benchmarks/out]
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
tree_files="${BENCH_TREE:-40}"
out="${BENCH_OUT:-$root/benchmarks/out}"
peers_venv="$root/benchmarks/.peers-venv"

# Peers live in their own venv so their dependencies never touch the project's.
if [[ -n "$peers" && ! -f "$peers_venv/.installed" ]]; then
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
"$py" benchmarks/gen_pallas.py --sizes "$sizes" --outdir "$out/inputs"
"$py" benchmarks/gen_pallas.py --sizes 5000 --no-jax --outdir "$out/inputs"
rm -rf "$out/tree"
"$py" benchmarks/gen_pallas.py --tree "$tree_files" --outdir "$out/tree"

common=(
    --server "pallas-ls=$py -m pallas_ls serve"
    --server "floor=$py benchmarks/floor_server.py"
    --peers-bin "$peers_venv/bin" --python "$py" -R "$runs" --warmup "$warmup"
)
small=() large=()
IFS=, read -ra size_list <<< "$sizes"
for n in "${size_list[@]}"; do
    if (( n < 10000 )); then small+=(--file "$out/inputs/pallas_$n.py"); else large+=(--file "$out/inputs/pallas_$n.py"); fi
done

# Tables go to stdout and to $out/*.txt; per-run progress goes to stderr.
if (( ${#small[@]} )); then
    "$py" benchmarks/lspbench.py "${common[@]}" --preset "$peers" "${small[@]}" -K "$edits" \
        --json "$out/lsp-small.json" | tee "$out/lsp-small.txt"
fi
if (( ${#large[@]} )); then
    "$py" benchmarks/lspbench.py "${common[@]}" --preset "$peers_large" "${large[@]}" \
        -K "$(( edits < 3 ? edits : 3 ))" \
        --timeout 120 --run-timeout 900 --json "$out/lsp-large.json" | tee "$out/lsp-large.txt"
fi
# a file without any jax import: pallas-ls beside the bare server only (it should cost about the same)
"$py" benchmarks/lspbench.py "${common[@]}" --file "$out/inputs/nojax_5000.py" -K "$edits" \
    --json "$out/lsp-nojax.json" | tee "$out/lsp-nojax.txt"
echo
"$py" benchmarks/cli_throughput.py --tree "$out/tree" --python "$py" -R "$runs" --warmup "$warmup" \
    --json "$out/cli.json" | tee "$out/cli.txt"
