"""Host catalogs written for one test: copies of a built-in scorer, or the built-in catalog with
one template edited."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def copy_catalog(tmp_path: Path, *ids: str) -> Path:
    """A host catalog whose scorers are copies of the built-in hallucination scorer."""
    body = "\n".join(f"  {scorer_id}:\n    extends: hallucination\n    name: {scorer_id}" for scorer_id in ids)
    path = tmp_path / "catalog.yaml"
    path.write_text(f"scorers:\n{body}\n", encoding="utf-8")
    return path


def catalog_with_edited(tmp_path: Path, template: str, extra_line: str) -> Path:
    """A host catalog that shadows one built-in template with an edited copy."""
    edited = tmp_path / "prompts" / template
    edited.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "prompts" / template, edited)
    edited.write_text(edited.read_text(encoding="utf-8") + "\n" + extra_line + "\n", encoding="utf-8")
    path = tmp_path / "scorers.yaml"
    path.write_text("scorers: {}\n", encoding="utf-8")
    return path
