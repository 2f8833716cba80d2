"""docs/api.md is what tools/make_api_reference.py makes of the code today: every name `engine`
exports, with its docstring, and the import path of every other name the docs use. A changed
docstring or export fails here until the page is made again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import engine

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "make_api_reference.py"


def test_the_api_reference_is_up_to_date() -> None:
    done = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, (
        "docs/api.md differs from what the code makes: run `python tools/make_api_reference.py` and commit docs/api.md\n" + done.stderr
    )


def test_every_export_has_its_entry_and_a_description() -> None:
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    for name in engine.__all__:
        assert f"### `{name}`" in page, name
    undescribed = [name for name in engine.__all__ if not callable(getattr(engine, name)) or not (getattr(engine, name).__doc__ or "").strip()]
    assert undescribed == ["AnyScorer"]  # a type alias: its entry shows what it stands for


def test_the_check_fails_when_the_page_is_stale(tmp_path: Path) -> None:
    """The check compares, it does not only run: a page one line off is refused, with the fix."""
    copy = tmp_path / "repo"
    (copy / "docs").mkdir(parents=True)
    (copy / "tools").mkdir()
    (copy / "tools" / TOOL.name).write_text(TOOL.read_text(encoding="utf-8"), encoding="utf-8")
    (copy / "README.md").write_text((ROOT / "README.md").read_text(encoding="utf-8"), encoding="utf-8")
    for page in (ROOT / "docs").glob("*.md"):
        (copy / "docs" / page.name).write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    stale = copy / "docs" / "api.md"
    stale.write_text(stale.read_text(encoding="utf-8").replace("The catalog shipped with the package", "The catalog", 1), encoding="utf-8")
    done = subprocess.run([sys.executable, str(copy / "tools" / TOOL.name), "--check"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1
    assert "run `python tools/make_api_reference.py`" in done.stderr
