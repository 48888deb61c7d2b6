"""`pallas-ls check|explain|--version`: formats, exit codes, --fix, bad inputs."""

from __future__ import annotations

import ast
import builtins
import codecs
import gc
import json
import os
import pathlib
import shutil
import subprocess
import sys
from typing import Any

import pytest
from conftest import (
    CLEAN_SOURCE,
    OPT_LEVEL_LINE,
    OPT_LEVEL_SOURCE,
    OPT_LEVEL_TEXT,
    clean_env,
    code_point_span,
    expect_compiled,
    make_fake_venv,
)

from pallas_ls import __version__, cli
from pallas_ls.core.rules import RULES
from tests.core.expectations import FIXTURES

NEW_JAX = ["--jax-version", "0.11.0"]


@pytest.fixture
def run(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Any:
    """Run `pallas-ls ARGS` in-process with tmp_path as the working directory."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)

    def invoke(*args: str) -> tuple[int, str, str]:
        code = cli.main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


def write(path: pathlib.Path, text: str) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_version_via_python_m() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pallas_ls", "--version"],
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    assert proc.returncode == 0
    build = "yes" if expect_compiled() else "no"
    assert proc.stdout.strip() == f"pallas-ls {__version__} (compiled: {build})"


def test_clean_file_exits_0(run: Any, tmp_path: pathlib.Path) -> None:
    write(tmp_path / "ok.py", CLEAN_SOURCE)
    code, out, err = run("check", "ok.py", *NEW_JAX)
    assert code == 0, err
    assert "All checks passed" in out
    code, out, _ = run("check", "--format", "json", "ok.py", *NEW_JAX)
    assert code == 0
    assert json.loads(out) == []


def test_default_path_is_cwd(run: Any, tmp_path: pathlib.Path) -> None:
    write(tmp_path / "pkg" / "a.py", OPT_LEVEL_SOURCE)
    code, out, _ = run("check", *NEW_JAX)
    assert code == 1
    assert out.startswith(os.path.join(".", "pkg", "a.py") + ":")


def test_text_format_like_ruff(run: Any, tmp_path: pathlib.Path) -> None:
    write(tmp_path / "a.py", OPT_LEVEL_SOURCE)
    code, out, _ = run("check", "a.py", *NEW_JAX)
    assert code == 1
    start, _ = code_point_span(OPT_LEVEL_SOURCE, OPT_LEVEL_LINE, OPT_LEVEL_TEXT)
    first = out.splitlines()[0]
    # 1-based line, 1-based column in code points (the line has non-ASCII text before it).
    assert first.startswith(f"a.py:{OPT_LEVEL_LINE + 1}:{start + 1}: PAL001 ")
    assert "explicit opt_level is only supported for SparseCore kernels" in first
    assert "Found 1 error" in out


def test_json_format(run: Any, tmp_path: pathlib.Path) -> None:
    write(tmp_path / "sub" / "a.py", OPT_LEVEL_SOURCE)
    code, out, _ = run("check", "--format", "json", "./sub", *NEW_JAX)
    assert code == 1
    payload = json.loads(out)
    assert isinstance(payload, list) and len(payload) == 1
    item = payload[0]
    start, end = code_point_span(OPT_LEVEL_SOURCE, OPT_LEVEL_LINE, OPT_LEVEL_TEXT)
    assert item["path"] == os.path.join("./sub", "a.py")
    assert (item["line"], item["column"]) == (OPT_LEVEL_LINE + 1, start + 1)
    assert (item["end_line"], item["end_column"]) == (OPT_LEVEL_LINE + 1, end + 1)
    assert item["code"] == "PAL001"
    assert item["severity"] == "error"
    assert item["message"].startswith(
        "ValueError: explicit opt_level is only supported for SparseCore kernels"
    )
    assert item["fixes"], "PAL001 offers a fix"
    edit = item["fixes"][0]["edits"][0]
    assert set(edit) == {"line", "column", "end_line", "end_column", "new_text"}
    assert edit["line"] == OPT_LEVEL_LINE + 1


def test_select_and_ignore(run: Any, tmp_path: pathlib.Path) -> None:
    write(tmp_path / "a.py", OPT_LEVEL_SOURCE)
    assert run("check", "a.py", "--ignore", "PAL001", *NEW_JAX)[0] == 0
    assert run("check", "a.py", "--select", "PAL002,PAL003", *NEW_JAX)[0] == 0
    assert run("check", "a.py", "--select", "PAL001", *NEW_JAX)[0] == 1
    assert run("check", "a.py", "--select", "PAL", *NEW_JAX)[0] == 1
    code, _, err = run("check", "a.py", "--ignore", "PAL001,NOPE9", *NEW_JAX)
    assert code == 0
    assert "NOPE9" in err and "unknown" in err


def test_jax_version_flag_switches_to_pal004(run: Any, tmp_path: pathlib.Path) -> None:
    write(tmp_path / "a.py", OPT_LEVEL_SOURCE)
    code, out, _ = run("check", "--format", "json", "a.py", "--jax-version", "0.10.2")
    assert code == 1
    assert [f["code"] for f in json.loads(out)] == ["PAL004"]


def test_bad_jax_version_is_a_usage_error(run: Any, tmp_path: pathlib.Path) -> None:
    write(tmp_path / "a.py", CLEAN_SOURCE)
    code, _, err = run("check", "a.py", "--jax-version", "banana")
    assert code == 2
    assert "banana" in err


@pytest.mark.parametrize(("installed", "expected"), [("0.10.2", "PAL004"), (None, "PAL001")])
def test_jax_version_detected_from_project_venv(
    run: Any, tmp_path: pathlib.Path, installed: str | None, expected: str
) -> None:
    make_fake_venv(tmp_path / ".venv", installed)
    write(tmp_path / "a.py", OPT_LEVEL_SOURCE)
    code, out, _ = run("check", "--format", "json", "a.py")
    assert code == 1
    assert [f["code"] for f in json.loads(out)] == [expected]


def test_usage_errors_exit_2(run: Any) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["check", "--format", "xml"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        cli.main([])
    assert exc.value.code == 2


def test_fix_round_trip(run: Any, tmp_path: pathlib.Path) -> None:
    target = write(tmp_path / "a.py", OPT_LEVEL_SOURCE)
    code, out, _ = run("check", "--fix", "a.py", *NEW_JAX)
    assert code == 0, out
    fixed = target.read_text(encoding="utf-8")
    assert "opt_level" not in fixed
    ast.parse(fixed)
    # Only the argument went away; every other line is untouched.
    before, after = OPT_LEVEL_SOURCE.splitlines(), fixed.splitlines()
    assert len(before) == len(after)
    assert [b for b, a in zip(before, after, strict=True) if b != a] == [before[OPT_LEVEL_LINE]]
    assert after[OPT_LEVEL_LINE].startswith('    label = "π→✓ ünïcødé 🙂"; params = ')
    assert run("check", "a.py", *NEW_JAX)[0] == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".pallas-ls-")]


def test_fix_preserves_crlf_and_bom(run: Any, tmp_path: pathlib.Path) -> None:
    target = tmp_path / "a.py"
    target.write_bytes(codecs.BOM_UTF8 + OPT_LEVEL_SOURCE.replace("\n", "\r\n").encode("utf-8"))
    assert run("check", "--fix", "a.py", *NEW_JAX)[0] == 0
    data = target.read_bytes()
    assert data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8) :]
    assert body.count(b"\n") == body.count(b"\r\n") == OPT_LEVEL_SOURCE.count("\n")
    assert b"opt_level" not in body
    assert "π→✓ ünïcødé 🙂".encode() in body


def test_fix_preserves_coding_cookie(run: Any, tmp_path: pathlib.Path) -> None:
    source = "# -*- coding: latin-1 -*-\n# café\n" + OPT_LEVEL_SOURCE.replace(
        'label = "π→✓ ünïcødé 🙂"; ', 'label = "ünï"; '
    )
    target = tmp_path / "a.py"
    target.write_bytes(source.encode("latin-1"))
    assert run("check", "--fix", "a.py", *NEW_JAX)[0] == 0
    data = target.read_bytes()
    assert data.startswith(b"# -*- coding: latin-1 -*-\n# caf\xe9\n")
    text = data.decode("latin-1")
    assert "opt_level" not in text and 'label = "ünï"' in text


def test_fix_leaves_clean_files_alone(run: Any, tmp_path: pathlib.Path) -> None:
    target = write(tmp_path / "ok.py", CLEAN_SOURCE)
    before = os.stat(target)
    assert run("check", "--fix", "ok.py", *NEW_JAX)[0] == 0
    after = os.stat(target)
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


def test_fix_skips_a_file_changed_while_analysed(
    run: Any, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = write(tmp_path / "a.py", OPT_LEVEL_SOURCE)
    edited = OPT_LEVEL_SOURCE + "# typed in the editor meanwhile\n"
    real_analyse = cli.analyse

    def analyse_while_user_edits(*args: Any, **kwargs: Any) -> Any:
        if target.read_text(encoding="utf-8") != edited:
            target.write_text(edited, encoding="utf-8")
        return real_analyse(*args, **kwargs)

    monkeypatch.setattr(cli, "analyse", analyse_while_user_edits)
    code, _, err = run("check", "--fix", "a.py", *NEW_JAX)
    assert target.read_text(encoding="utf-8") == edited
    assert "a.py" in err and "changed on disk" in err
    assert code == 1  # the finding is still there


def _one_good_file(tmp_path: pathlib.Path) -> None:
    write(tmp_path / "good.py", OPT_LEVEL_SOURCE)


def test_binary_file(run: Any, tmp_path: pathlib.Path) -> None:
    _one_good_file(tmp_path)
    (tmp_path / "bin.py").write_bytes(b"import os\x00\x01\x02")
    code, out, err = run("check", ".", *NEW_JAX)
    assert code == 1  # the good file was still checked
    assert "bin.py" in err and "binary" in err
    assert "good.py" in out


def test_non_utf8_without_cookie(run: Any, tmp_path: pathlib.Path) -> None:
    _one_good_file(tmp_path)
    (tmp_path / "latin.py").write_bytes("x = 'café'\n".encode("latin-1"))
    code, out, err = run("check", ".", *NEW_JAX)
    assert code == 1
    assert "latin.py" in err and "decode" in err
    assert "good.py" in out


def test_huge_file(run: Any, tmp_path: pathlib.Path) -> None:
    _one_good_file(tmp_path)
    (tmp_path / "huge.py").write_text("x = 1\n" * 500_000, encoding="utf-8")
    code, out, err = run("check", ".", *NEW_JAX)
    assert code == 1
    assert "huge.py" in err and "too large" in err
    assert "good.py" in out


def test_unreadable_file(run: Any, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _one_good_file(tmp_path)
    locked = write(tmp_path / "locked.py", CLEAN_SOURCE)
    real_open = builtins.open

    def guarded_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if os.path.abspath(str(file)) == str(locked):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    code, out, err = run("check", ".", *NEW_JAX)
    assert code == 1
    assert "locked.py" in err and "Permission denied" in err
    assert "good.py" in out


def test_nothing_checkable_exits_2(run: Any, tmp_path: pathlib.Path) -> None:
    (tmp_path / "bin.py").write_bytes(b"\x00\x00")
    code, _, err = run("check", "bin.py")
    assert code == 2
    assert "bin.py" in err
    code, _, err = run("check", "missing.py")
    assert code == 2
    assert "missing.py" in err


def test_symlink_loop_and_skipped_dirs(run: Any, tmp_path: pathlib.Path) -> None:
    write(tmp_path / "src" / "a.py", OPT_LEVEL_SOURCE)
    (tmp_path / "src" / "loop").symlink_to(tmp_path / "src", target_is_directory=True)
    (tmp_path / "src" / "self.py").symlink_to(tmp_path / "src" / "self.py")
    for skipped in (".git", ".venv", "venv", "node_modules", "__pycache__"):
        write(tmp_path / "src" / skipped / "x.py", OPT_LEVEL_SOURCE)
    write(tmp_path / "src" / "env" / "pyvenv.cfg", "home = /usr\n")
    write(tmp_path / "src" / "env" / "lib" / "x.py", OPT_LEVEL_SOURCE)
    code, out, err = run("check", "--format", "json", "src", *NEW_JAX)
    assert code == 1
    assert [f["path"] for f in json.loads(out)] == [os.path.join("src", "a.py")]
    assert "loop" in err


def test_many_files_parallel_sorted(run: Any, tmp_path: pathlib.Path) -> None:
    names = [f"m{i:02d}.py" for i in range(cli.PARALLEL_MIN_FILES + 5)]
    for name in reversed(names):
        write(tmp_path / "tree" / name, OPT_LEVEL_SOURCE)
    code, out, _ = run("check", "--format", "json", "tree", *NEW_JAX)
    assert code == 1
    assert [f["path"] for f in json.loads(out)] == [os.path.join("tree", n) for n in names]


def test_batches_keep_neighbours_together_largest_first(tmp_path: pathlib.Path) -> None:
    """Each file in exactly one batch; a batch is a run of neighbouring files in path
    order; the batches come largest first, so the last work handed out is small. With 120
    files a batch holds 7 (1 worker), 3 (2) or 2 (3) files."""
    sizes = [(i * 37) % 101 + (900 if i % 29 == 0 else 0) for i in range(119)]
    jobs = []
    for i, size in enumerate(sizes):
        path = tmp_path / f"m{i:03d}.py"
        path.write_text("x" * size)
        jobs.append((str(path), cli.Config(), False))
    jobs.append((str(tmp_path / "gone.py"), cli.Config(), False))  # vanished: size 0
    for workers in (1, 2, 3):
        batches = cli._batches(jobs, workers)
        assert len(batches) >= 16 * workers
        assert max(len(batch) for batch in batches) > 1
        assert sorted(job for batch in batches for job in batch) == sorted(jobs)
        for batch in batches:
            first = jobs.index(batch[0])
            assert batch == jobs[first : first + len(batch)]
        totals = [sum(cli._size(path) for path, _, _ in batch) for batch in batches]
        assert totals == sorted(totals, reverse=True)
    # fewer than 32 files for 2 workers: one file per batch, the largest first
    assert cli._batches(jobs[:20], 2)[0][0][0].endswith("m000.py")


def test_many_files_of_different_sizes_report_in_path_order(
    run: Any, tmp_path: pathlib.Path
) -> None:
    """Batches handed out by size, not in path order: every file still reported, once,
    and in path order."""
    names = [f"m{i:02d}.py" for i in range(cli.PARALLEL_MIN_FILES + 5)]
    for i, name in enumerate(names):
        padding = "\n" * (200 * (i % 4))  # batches are handed out largest first
        write(tmp_path / "tree" / name, OPT_LEVEL_SOURCE + padding)
    code, out, _ = run("check", "--format", "json", "tree", *NEW_JAX)
    assert code == 1
    assert [f["path"] for f in json.loads(out)] == [os.path.join("tree", n) for n in names]


def test_relative_paths_resolve_other_modules_like_absolute_ones(
    run: Any, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each finding in xmod/kern.py needs a value or helper from a sibling module. The
    engine follows imports only for a file it can place; `check .`, `check pkg` and a
    pre-commit hook all pass relative paths (they once found nothing here)."""
    package = pathlib.Path(shutil.copytree(FIXTURES / "xmod", tmp_path / "xmod"))
    expected = [(10, "PAL002"), (14, "PAL002"), (18, "PAL001")]

    def found(*args: str) -> list[tuple[int, str]]:
        monkeypatch.setattr(cli, "_workspaces", {})  # cached per process and project root
        code, out, _ = run("check", "--format", "json", *args)
        assert code == 1, out
        found = json.loads(out)
        return [(f["line"], f["code"]) for f in found if f["path"].endswith("kern.py")]

    assert found("xmod") == expected
    assert found(os.path.join("xmod", "kern.py")) == expected
    assert found(str(package / "kern.py")) == expected
    monkeypatch.chdir(package)
    assert found("kern.py") == expected
    assert found(".") == expected


def test_a_project_checked_from_outside_follows_its_absolute_imports(
    run: Any, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`from mypkg.settings import PARAMS` leads into the project the file belongs to, found
    from its pyproject.toml, also when `check` runs from another folder."""
    project = tmp_path / "proj"
    write(project / "pyproject.toml", "[project]\nname = 'mypkg'\n")
    write(project / "mypkg" / "__init__.py", "")
    write(
        project / "mypkg" / "settings.py",
        "from jax.experimental.pallas import tpu as pltpu\n"
        "PARAMS = pltpu.CompilerParams(opt_level=2)\n",
    )
    kern = write(
        project / "mypkg" / "kernels" / "kern.py",
        "from jax.experimental import pallas as pl\n"
        "from mypkg.settings import PARAMS\n\n"
        "def k(x_ref, o_ref):\n"
        "    o_ref[...] = x_ref[...]\n\n"
        "def run(x):\n"
        "    return pl.pallas_call(k, out_shape=x, compiler_params=PARAMS)(x)\n",
    )
    write(project / "mypkg" / "kernels" / "__init__.py", "")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd, arg in [(project, os.path.relpath(kern, project)), (elsewhere, str(kern))]:
        monkeypatch.chdir(cwd)
        monkeypatch.setattr(cli, "_workspaces", {})
        code, out, _ = run("check", "--format", "json", arg)
        assert code == 1, (cwd, out)
        assert [(f["line"], f["code"]) for f in json.loads(out)] == [(8, "PAL001")], cwd


def test_explain(run: Any) -> None:
    code, out, _ = run("explain", "PAL001")
    assert code == 0
    record = RULES["PAL001"].record
    assert "PAL001" in out
    assert RULES["PAL001"].jax_versions in out
    assert record.error_message in out
    assert record.github_url in out
    for item in record.solutions + record.prevention_tips:
        assert item.strip() in out
    code, _, err = run("explain", "PAL999")
    assert code == 2
    assert "PAL999" in err


def test_explain_labels_a_shared_record_as_the_record(run: Any) -> None:
    """PAL003 reports "Unsupported conv precision", a later check in the function whose
    record is PAL002's: its explanation says whose record it shows."""
    code, out, _ = run("explain", "PAL003")
    assert code == 0
    record = RULES["PAL003"].record
    assert record is RULES["PAL002"].record
    assert f"## Error record: {record.slug} (also behind PAL002)" in out
    assert "Unsupported conv precision" in out  # the rule's own summary names its error
    code, out, _ = run("explain", "PAL001")
    assert "(also behind PAL004)" in out


def test_check_keeps_the_collector_off_within_a_budget(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dead parses are collected in one pass per GC_BUDGET_BYTES of source, the collector
    is off meanwhile, and its state is restored afterwards."""
    files = [str(write(tmp_path / f"m{i}.py", OPT_LEVEL_SOURCE)) for i in range(3)]
    passes: list[bool] = []
    real_collect = gc.collect

    def counting(*args: Any) -> int:
        passes.append(gc.isenabled())
        return real_collect(*args)

    monkeypatch.setattr(gc, "collect", counting)
    monkeypatch.setattr(cli, "GC_BUDGET_BYTES", 2 * len(OPT_LEVEL_SOURCE.encode()))
    monkeypatch.setattr(cli, "_since_collect", 0)
    assert gc.isenabled()
    results = cli.check_files(files, cli.Config(), fix=False)
    assert gc.isenabled()
    assert passes == [False]  # after the second file; the third is under budget
    assert [[f.code for f in r.findings] for r in results] == [["PAL001"]] * 3
