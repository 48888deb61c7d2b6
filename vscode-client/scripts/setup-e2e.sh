#!/bin/bash
# Idempotent set-up for the VS Code end-to-end test (run by `make test`, as root on Debian 12):
#   apt: chromium ripgrep build-essential libkrb5-dev
#   code-server (VS Code 1.100.3) from the npm registry into vscode-client/.e2e/code-server
#   playwright-core (pinned in e2e/package-lock.json) into vscode-client/e2e/node_modules
# A no-op in well under a second when everything is already there.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
CS_VERSION=${CODE_SERVER_VERSION:-4.100.3}
CACHE=${PALLAS_LS_E2E_CACHE:-$HERE/.e2e}
CS_DIR=$CACHE/code-server
CS_STAMP=$CS_DIR/.installed-$CS_VERSION
export npm_config_yes=true npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

# 1. apt packages (update the package lists at most once, and only when something is missing)
missing=()
for pkg in chromium ripgrep build-essential libkrb5-dev python3; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-e2e: installing apt packages: ${missing[*]}"
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}" \
    || { $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends "${missing[@]}"; }
fi

# 2. code-server from npm. Plain `npm install code-server` fails offline-from-GitHub: its ripgrep
#    postinstall downloads from GitHub and argon2/node-pty need source builds. So: install with
#    scripts off, link Debian's rg, rebuild the native modules, then do code-server's postinstall.
if [ ! -f "$CS_STAMP" ] || [ ! -x "$CS_DIR/node_modules/.bin/code-server" ]; then
  echo "setup-e2e: installing code-server $CS_VERSION into $CS_DIR"
  rm -rf "$CS_DIR" && mkdir -p "$CS_DIR"
  (
    set -x
    cd "$CS_DIR"
    echo '{"name":"pallas-ls-e2e-code-server","private":true}' > package.json
    npm install --ignore-scripts "code-server@$CS_VERSION"
    npm rebuild argon2 --foreground-scripts   # prebuilt download fails (GitHub); falls back to a source build
    cd node_modules/code-server/lib/vscode
    npm install --omit=dev --ignore-scripts
    mkdir -p node_modules/@vscode/ripgrep/bin
    ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
    npm rebuild --foreground-scripts           # spdlog, node-pty, native-watchdog, deviceid, kerberos
    rm -rf node_modules.asar && ln -s node_modules node_modules.asar
    (cd bin/remote-cli && ln -sf code-linux.sh code-server)
    (cd bin/helpers && ln -sf browser-linux.sh browser.sh)
    cd extensions && npm install --omit=dev
  ) > "$CACHE/install-code-server.log" 2>&1 || {
    echo "setup-e2e: code-server install failed; last lines of $CACHE/install-code-server.log:" >&2
    tail -40 "$CACHE/install-code-server.log" >&2
    exit 1
  }
  XDG_CONFIG_HOME=$CACHE/xdg XDG_DATA_HOME=$CACHE/xdg "$CS_DIR/node_modules/.bin/code-server" --version
  touch "$CS_STAMP"
fi

# 3. playwright-core for the browser driver (never `npx playwright install`: it downloads a browser)
want=$(node -p "require('$HERE/e2e/package.json').dependencies['playwright-core']")
have=$(node -p "try{require('$HERE/e2e/node_modules/playwright-core/package.json').version}catch(e){''}")
if [ "$have" != "$want" ]; then
  echo "setup-e2e: installing playwright-core $want"
  (cd "$HERE/e2e" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "setup-e2e: ready (code-server $CS_VERSION, playwright-core $want, $(chromium --version 2>/dev/null | head -1))"
