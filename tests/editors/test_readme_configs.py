"""editors/README.md shows the user configs exactly as shipped (and as the editor tests load them)."""

from __future__ import annotations

from editor_harness import HERE, REPO

README = (REPO / "editors" / "README.md").read_text(encoding="utf-8")


def _code(path: str) -> str:
    """The file without its comment lines: what the README shows."""
    lines = (REPO / "editors" / path).read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("--")) + "\n"


def test_readme_shows_the_shipped_neovim_configs() -> None:
    for path in ("nvim/pallas_ls.lua", "nvim/lsp/pallas_ls.lua"):
        assert f"```lua\n{_code(path)}```" in README, path
    assert "luafile /path/to/pallas-ls/editors/nvim/pallas_ls_legacy.lua" in README


def test_readme_emacs_init_is_what_the_test_runs() -> None:
    driver = (HERE / "emacs_driver.el").read_text(encoding="utf-8")
    for line in ("(require 'pallas-ls)", "(add-hook 'python-mode-hook #'eglot-ensure)"):
        assert line in README
        assert line in driver
    assert '(add-to-list \'load-path "/path/to/pallas-ls/editors/emacs")' in README
