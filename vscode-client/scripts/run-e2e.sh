#!/bin/bash
# One end-to-end run of the extension in a real VS Code (code-server 4.100.3 = VS Code 1.100.3):
# fresh profile, the built .vsix installed, pallas-ls.interpreter = the repo's .venv python,
# a temp copy of e2e/workspace/ opened, e2e/test.mjs driving Debian's Chromium.
# Needs scripts/setup-e2e.sh to have run. Builds the .vsix when it is missing or stale.
# Exit status: 0 pass, 1 test failure, 2 set-up problem. Env: PALLAS_LS_PYTHON, E2E_RUN_DIR,
# E2E_TIMEOUT_MS (per wait in the browser), E2E_KEEP=1 (keep the run dir).
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
REPO=$(cd "$HERE/.." && pwd)
CACHE=${PALLAS_LS_E2E_CACHE:-$HERE/.e2e}
CS=$CACHE/code-server/node_modules/.bin/code-server
PYTHON=${PALLAS_LS_PYTHON:-$REPO/.venv/bin/python}
VERSION=$(node -p "require('$HERE/package.json').version")
VSIX=$HERE/pallas-ls-$VERSION.vsix
t0=$(date +%s.%N)

[ -x "$CS" ] || { echo "run-e2e: code-server missing; run vscode-client/scripts/setup-e2e.sh" >&2; exit 2; }
[ -f "$HERE/e2e/node_modules/playwright-core/package.json" ] \
  || { echo "run-e2e: playwright-core missing; run vscode-client/scripts/setup-e2e.sh" >&2; exit 2; }
[ -x "$PYTHON" ] || { echo "run-e2e: no interpreter at $PYTHON" >&2; exit 2; }
SERVER_EXE=$(dirname "$PYTHON")/pallas-ls   # for the pallas-ls.path check
[ -x "$SERVER_EXE" ] || { echo "run-e2e: no pallas-ls executable at $SERVER_EXE" >&2; exit 2; }

# (re)build the .vsix if any input is newer
if [ ! -f "$VSIX" ] || [ -n "$(find "$HERE/src" "$HERE/package.json" "$HERE/package-lock.json" "$HERE/tsconfig.json" \
      "$HERE/.vscodeignore" -newer "$VSIX" -print -quit)" ]; then
  echo "run-e2e: building $VSIX"
  bash "$HERE/scripts/build-vsix.sh" > "${TMPDIR:-/tmp}/pallas-ls-build-vsix.log" 2>&1 \
    || { cat "${TMPDIR:-/tmp}/pallas-ls-build-vsix.log" >&2; exit 2; }
fi

RUN=${E2E_RUN_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/pallas-ls-vscode-e2e.XXXXXX")}
rm -rf "$RUN" && mkdir -p "$RUN/data/User" "$RUN/exts" "$RUN/workspace" "$RUN/xdg" "$RUN/out"
# keep code-server (and anything it spawns) out of the real home directory
export XDG_CONFIG_HOME=$RUN/xdg/config XDG_DATA_HOME=$RUN/xdg/data XDG_CACHE_HOME=$RUN/xdg/cache
cp "$HERE"/e2e/workspace/*.py "$RUN/workspace/"
echo "run-e2e: run dir $RUN"

PYTHON_JSON=$(node -p 'JSON.stringify(process.argv[1])' "$PYTHON")
cat > "$RUN/data/User/settings.json" <<JSON
{
  "pallas-ls.interpreter": [$PYTHON_JSON],
  "pallas-ls.trace.server": "messages",
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.editor.enablePreview": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "files.autoSave": "off",
  "editor.hover.delay": 150,
  "chat.commandCenter.enabled": false
}
JSON
PORT=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$PORT" > "$RUN/config.yaml"
COMMON=(--config "$RUN/config.yaml" --user-data-dir "$RUN/data" --extensions-dir "$RUN/exts")

"$CS" "${COMMON[@]}" --install-extension "$VSIX" --force > "$RUN/install.log" 2>&1 \
  || { cat "$RUN/install.log" >&2; exit 2; }
"$CS" "${COMMON[@]}" --list-extensions --show-versions | grep -q '^pallas-ls.pallas-ls@' \
  || { echo "run-e2e: the extension is not installed" >&2; cat "$RUN/install.log" >&2; exit 2; }

setsid "$CS" "${COMMON[@]}" --disable-telemetry --disable-update-check --disable-workspace-trust \
  --disable-getting-started-override "$RUN/workspace" > "$RUN/code-server.log" 2>&1 &
CS_PID=$!
cleanup() {
  # code-server's own process group: the extension host, file watcher and pallas-ls server go too
  kill -TERM -- "-$CS_PID" 2>/dev/null || true
  for _ in $(seq 1 20); do kill -0 -- "-$CS_PID" 2>/dev/null || break; sleep 0.25; done
  kill -KILL -- "-$CS_PID" 2>/dev/null || true
  wait "$CS_PID" 2>/dev/null || true
  [ "${E2E_KEEP:-0}" = 1 ] || [ "${rc:-1}" != 0 ] || rm -rf "$RUN"
}
trap cleanup EXIT

healthy=0
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$PORT/healthz" > /dev/null 2>&1; then healthy=1; break; fi
  kill -0 "$CS_PID" 2>/dev/null || break
  sleep 0.5
done
if [ $healthy != 1 ]; then
  echo "run-e2e: code-server did not become healthy on port $PORT" >&2
  tail -30 "$RUN/code-server.log" >&2
  rc=2
  exit 2
fi
echo "run-e2e: code-server up on port $PORT after $(echo "$(date +%s.%N) - $t0" | bc) s"

rc=0
URL="http://127.0.0.1:$PORT/?folder=$RUN/workspace" WORKSPACE="$RUN/workspace" EXPECTED="$HERE/e2e/expected" \
  LOGS="$RUN/data/logs" OUT="$RUN/out" SETTINGS="$RUN/data/User/settings.json" SERVER_EXE="$SERVER_EXE" node "$HERE/e2e/test.mjs" || rc=$?

if [ $rc != 0 ]; then
  echo "--- pallas-ls output channel (last 60 lines):"
  find "$RUN/data/logs" -name '*pallas-ls*.log' -exec tail -60 {} \; 2>/dev/null || true
  echo "--- code-server.log (last 20 lines):"
  tail -20 "$RUN/code-server.log" || true
  echo "run-e2e: logs kept in $RUN"
fi
echo "run-e2e: total $(echo "$(date +%s.%N) - $t0" | bc) s, rc=$rc"
exit $rc
