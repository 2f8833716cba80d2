"""Host catalogs written for one test: copies of a built-in scorer, the built-in catalog with
one template edited, or a small catalog of its own (a polite scorer, its prompt and schema)."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Mapping
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


#: One judged scorer of a catalog's own; `{schema}` is its answer schema's file.
POLITE_CATALOG = """\
scorers:
  polite:
    name: Polite
    description: Whether the output is polite.
    direction: higher_is_better
    steps:
      - id: judge
        kind: llm
        prompt: polite.j2
        schema: {schema}
      - id: score
        kind: score
        score: "1 if judge.verdict == 'yes' else 0"
"""


def write_catalog(root: Path, files: Mapping[str, str]) -> Path:
    """The catalog folder `root` with these files (by path in it); its catalog.yaml."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root / "catalog.yaml"
