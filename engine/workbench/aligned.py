"""Aligned variants of the catalog's scorers (`scorers align -o FOLDER` run with FOLDER in
the catalog folder): found as the subfolders holding an align.json, summarised from what
align wrote (its figures and diff are shown, never recomputed), and turned into edits of
the catalog's own files that the page saves through the usual Save (diff first, version
recorded)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import ConfigError
from ..runs.align.results import AlignResult
from .thresholds import set_threshold
from .workspace import TEXT_SUFFIXES, Workspace


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _read_result(folder: Path) -> AlignResult:
    path = folder / "align.json"
    try:
        return AlignResult.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"{path}: not an align.json written by `scorers align` ({first})") from None


def _aligned_diff(folder: Path) -> str:
    """The diff ALIGNED.md shows (its ```diff block)."""
    path = folder / "ALIGNED.md"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    found = re.search(r"^```diff\n(.*?)^```$", text, flags=re.S | re.M)
    return found.group(1).rstrip("\n") if found else ""


def variant_folders(workspace: Workspace) -> list[Path]:
    """The folders one or two levels below the catalog folder (`aligned/`, `variants/aligned/`)
    that hold an align.json and a scorers.yaml; not deeper, so a catalog folder that is a
    whole repository is not walked through."""
    found = [*workspace.folder.glob("*/align.json"), *workspace.folder.glob("*/*/align.json")]
    return sorted(path.parent.resolve() for path in found if (path.parent / "scorers.yaml").is_file())


def aligned_variants(workspace: Workspace, scorer_id: str) -> list[dict[str, Any]]:
    """Each aligned variant of `scorer_id` under the catalog folder, as align reported it."""
    found: list[dict[str, Any]] = []
    for folder in variant_folders(workspace):
        try:
            result = _read_result(folder)
        except ConfigError as exc:
            found.append({"folder": folder.relative_to(workspace.folder).as_posix(), "error": str(exc)})
            continue
        if result.scorer_id != scorer_id:
            continue
        entry = _variant_entry(folder, scorer_id)
        found.append({
            "folder": folder.relative_to(workspace.folder).as_posix(), "scorer": result.scorer_id, "verdict": result.verdict,
            "accepted": result.accepted, "metric": result.metric, "chosen": result.chosen, "threshold": result.threshold,
            "split": result.split.model_dump(), "test": result.test.model_dump(mode="json") if result.test is not None else None,
            "diff": _aligned_diff(folder), "from_builtin": isinstance(entry, dict) and _from_builtin(entry),
        })
    return found


def _variant_entry(folder: Path, scorer_id: str) -> Any:
    loaded = yaml.safe_load((folder / "scorers.yaml").read_text(encoding="utf-8")) or {}
    return (loaded.get("scorers") or {}).get(scorer_id) if isinstance(loaded, dict) else None


def _from_builtin(entry: dict[str, Any]) -> bool:
    """Whether align varied the built-in scorer (its entry only extends it and replaces steps)."""
    return set(entry) <= {"extends", "steps"}


def _entry_lines(entry: dict[str, Any], scorer_id: str, indent: int) -> list[str]:
    dumped = yaml.safe_dump({scorer_id: entry}, sort_keys=False, allow_unicode=True, width=120)
    return [f"{' ' * indent}{line}\n" for line in dumped.splitlines()]


def replace_entry(text: str, scorer_id: str, entry: dict[str, Any]) -> str:
    """`text` with the entry of `scorer_id` under `scorers:` replaced by `entry`; the rest of
    the file (its comments too) stays as written."""
    lines = text.splitlines(keepends=True)
    in_scorers = False
    for index, line in enumerate(lines):
        bare = line.rstrip("\n")
        if not bare.strip() or bare.lstrip().startswith("#"):
            continue
        if re.match(r"^scorers:\s*(#.*)?$", bare):
            in_scorers = True
            continue
        if not bare.startswith(" "):
            in_scorers = False
        if not in_scorers or not re.match(rf"^\s+{re.escape(scorer_id)}:\s*(#.*)?$", bare):
            continue
        end = index + 1
        for later in range(index + 1, len(lines)):
            inner = lines[later].rstrip("\n")
            if inner.strip() and _indent(inner) <= _indent(bare):  # the next entry, key or comment of the file
                break
            end = later + 1
        while end > index + 1 and not lines[end - 1].strip():
            end -= 1  # the blank lines after the entry stay
        return "".join([*lines[:index], *_entry_lines(entry, scorer_id, _indent(bare)), *lines[end:]])
    raise ConfigError(f"{scorer_id} is not written in this catalog file")


def accept_edits(workspace: Workspace, folder_name: str, scorer_id: str, catalog_text: str, with_variant_entry: str) -> dict[str, str]:
    """The edits that bring the aligned variant in `folder_name` into the catalog: its
    scorer entry in the catalog file (`catalog_text`, the file as the page has it; with
    `with_variant_entry` the same text with the scorer made this catalog's own, for a
    built-in one), its calibrated threshold, and its templates and schemas."""
    folder = (workspace.folder / folder_name).resolve()
    if folder not in variant_folders(workspace):
        raise ConfigError(f"{folder_name}: no aligned variant there (a folder of the catalog folder holding align.json and scorers.yaml)")
    result = _read_result(folder)
    if result.scorer_id != scorer_id:
        raise ConfigError(f"{folder_name}: an aligned variant of {result.scorer_id}, not of {scorer_id}")
    entry = _variant_entry(folder, scorer_id)
    if not isinstance(entry, dict):
        raise ConfigError(f"{folder / 'scorers.yaml'}: no entry for {scorer_id}")
    aligned_from_builtin = _from_builtin(entry)
    ours = scorer_id in workspace.written_ids()
    if ours and aligned_from_builtin:
        raise ConfigError(
            f"{folder_name}: aligned from the built-in {scorer_id}, but this catalog writes its own {scorer_id}; "
            f"accepting it would drop yours (align this catalog's scorer: scorers align ... --config {workspace.catalog_file})"
        )
    text = catalog_text if ours else with_variant_entry
    text = replace_entry(text, scorer_id, entry)
    if result.threshold is not None:
        text = set_threshold(text, scorer_id, result.threshold)
    edits = {workspace.catalog_name: text}
    prompts, schemas = workspace.file_folders()
    for kind, own in (("prompts", prompts), ("schemas", schemas)):
        root = folder / kind
        for path in sorted(root.rglob("*")) if root.is_dir() else []:
            if path.is_file() and path.suffix in TEXT_SUFFIXES:
                edits[f"{own.rstrip('/')}/{path.relative_to(root).as_posix()}"] = path.read_text(encoding="utf-8")
    return edits
