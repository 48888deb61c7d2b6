#!/bin/bash
# Builds vscode-client/pallas-ls-<version>.vsix: npm ci, strict tsc, unit tests, vsce package.
# @vscode/vsce is pinned (3.7.x: the last line that runs on Node 20) in package.json/package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
version=$(node -p "require('./package.json').version")
out="pallas-ls-$version.vsix"
npm ci --loglevel=error
npx --no-install tsc -p .
node --test out/test/ > /dev/null || { node --test out/test/; exit 1; }
rm -f "$out"
npx --no-install vsce package --allow-missing-repository --skip-license -o "$out"
[ -f "$out" ] || { echo "build-vsix: $out was not produced" >&2; exit 1; }
echo "build-vsix: $(pwd)/$out"
