"""The catalog folder the workbench edits, and drafts of it.

Edits live in the page until they are saved. To check, preview or run them, the workbench
writes a draft: a copy of the catalog folder with the edited files in place, loaded by the
catalog exactly as `scorers check` loads a file (so the problems are the same). Saving
writes the edited files into the catalog folder, and nowhere else: a built-in scorer's
template or schema edited here is written at the same name in the catalog's own prompt or
schema folder, where it shadows the built-in one (a variant; the installed package is
never changed).
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..catalog import Catalog, builtin_catalog_path, catalog_file, load_scorers
from ..catalog.source import position
from ..errors import CatalogErrors, ConfigError

#: What a catalog folder holds that the workbench copies into a draft and may write.
TEXT_SUFFIXES = {".yaml", ".yml", ".j2", ".jinja", ".json", ".txt", ".md"}

NEW_CATALOG = "prompts: prompts\nschemas: schemas\nscorers: {}\n"

#: Drafts kept besides those a run uses: checks and previews in flight read the last ones.
KEPT_DRAFTS = 16


class OutsideCatalog(ConfigError):
    """A write aimed outside the catalog's folder (or into the installed package)."""


@dataclass(frozen=True)
class EditorFile:
    """One file of a scorer as the editor shows it: where an edit is written (`path`,
    relative to the catalog folder), where the text shown comes from, and its role."""

    path: str
    role: str
    origin: str  # "yours" or "built-in"
    shown_from: str
    text: str
    language: str

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "role": self.role, "origin": self.origin, "shown_from": self.shown_from, "text": self.text, "language": self.language}


@dataclass(frozen=True)
class Problem:
    """One problem of a draft, at the catalog file it will be saved to."""

    path: str | None
    line: int | None
    column: int | None
    message: str
    shown: str

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "column": self.column, "message": self.message, "shown": self.shown}


def _language(path: str) -> str:
    return "jinja" if path.endswith((".j2", ".jinja")) else "yaml" if path.endswith((".yaml", ".yml")) else "text"


class Workspace:
    """A catalog folder (`scorers.yaml` or `catalog.yaml` with its prompt and schema folders)
    and the drafts of its edits, under a temporary folder removed by `close`."""

    def __init__(self, catalog: Path, shown_relative_to: Path | None = None) -> None:
        builtin = builtin_catalog_path().resolve()
        if catalog.is_dir() or not catalog.suffix:
            folder = catalog
            try:
                self.catalog_file = catalog_file(catalog) if catalog.is_dir() else catalog / "scorers.yaml"
            except ConfigError:
                self.catalog_file = catalog / "scorers.yaml"  # created by the first save
        else:
            folder, self.catalog_file = catalog.parent, catalog
        self.folder = folder.resolve()
        self.catalog_file = self.catalog_file.resolve()
        self.builtin_folder = builtin.parent
        #: The installed package's own files: never written, whatever path an edit names.
        self.protected = [builtin, self.builtin_folder / "prompts", self.builtin_folder / "schemas", Path(__file__).resolve().parent.parent]
        if self.catalog_file == builtin or any(self._inside(self.folder, place) for place in self.protected):
            raise ConfigError(
                f"CATALOG {catalog}: that is the built-in catalog of the installed package; give a folder of your own "
                "(variants of built-in scorers are written there)"
            )
        self.shown_relative_to = (shown_relative_to or Path.cwd()).resolve()
        self._temporary = Path(tempfile.mkdtemp(prefix="scorers-workbench-"))
        self._drafts = 0
        #: Drafts a run renders from (templates import others while rendering): kept until released.
        self.pinned: set[Path] = set()

    @property
    def catalog_name(self) -> str:
        return self.catalog_file.name

    def close(self) -> None:
        shutil.rmtree(self._temporary, ignore_errors=True)

    # ------------------------------------------------------------------------- paths

    def target(self, relative: str) -> Path:
        """Where an edit of `relative` is written: inside the catalog folder, or refused."""
        if not relative or "\\" in relative or relative.startswith("/") or "\x00" in relative:
            raise OutsideCatalog(f"{relative!r}: the workbench writes only inside the catalog folder {self.folder}")
        path = (self.folder / relative).resolve()
        if self.folder not in path.parents or path.suffix not in TEXT_SUFFIXES:
            raise OutsideCatalog(f"{relative!r}: the workbench writes only catalog files inside the catalog folder {self.folder}")
        if any(self._inside(path, place) for place in self.protected):
            raise OutsideCatalog(f"{relative!r}: that is a file of the installed package; edits of built-in scorers go to the catalog folder")
        return path

    @staticmethod
    def _inside(path: Path, place: Path) -> bool:
        return path == place or place in path.parents

    def shown(self, path: Path) -> str:
        """A path as the CLI prints it: relative to where the workbench was started when below it."""
        try:
            return str(path.resolve().relative_to(self.shown_relative_to))
        except ValueError:
            return str(path)

    def file_folders(self) -> tuple[str, str]:
        """The catalog's prompt and schema folders, relative to it (as it names them)."""
        try:
            loaded = yaml.safe_load(self.catalog_file.read_text(encoding="utf-8")) if self.catalog_file.is_file() else {}
        except (OSError, yaml.YAMLError):
            loaded = {}
        loaded = loaded if isinstance(loaded, dict) else {}
        return str(loaded.get("prompts") or "prompts"), str(loaded.get("schemas") or "schemas")

    def written_ids(self) -> list[str]:
        """The scorer ids the saved catalog file names (read as plain YAML, so a catalog
        with problems still lists them)."""
        try:
            loaded = yaml.safe_load(self.catalog_file.read_text(encoding="utf-8")) if self.catalog_file.is_file() else {}
        except (OSError, yaml.YAMLError):
            return []
        scorers = loaded.get("scorers") if isinstance(loaded, dict) else None
        return [str(scorer_id) for scorer_id in scorers] if isinstance(scorers, dict) else []

    # ------------------------------------------------------------------------ drafts

    def saved_files(self) -> dict[str, str]:
        """Every text file of the catalog folder as saved, by path relative to it (the catalog
        file, its prompt and schema folders)."""
        files: dict[str, str] = {}
        if self.catalog_file.is_file():
            files[self.catalog_name] = self.catalog_file.read_text(encoding="utf-8")
        for folder in self.file_folders():
            root = self.folder / folder
            if not root.is_dir():
                continue
            for path in sorted(root.rglob("*")):
                if path.is_file() and path.suffix in TEXT_SUFFIXES:
                    files[path.relative_to(self.folder).as_posix()] = path.read_text(encoding="utf-8")
        return files

    def draft(self, edits: Mapping[str, str]) -> Path:
        """A new draft folder: the catalog folder as saved with `edits` (relative path ->
        text) written over it. Returns the draft's catalog file."""
        for relative in edits:
            self.target(relative)  # an edit aimed elsewhere is refused before anything is written
        self._drafts += 1
        root = self._temporary / f"draft-{self._drafts}"
        self._forget_drafts_before(self._drafts - KEPT_DRAFTS)
        files = {self.catalog_name: NEW_CATALOG, **self.saved_files(), **edits}
        for relative, text in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return root / self.catalog_name

    def _forget_drafts_before(self, number: int) -> None:
        """Remove older drafts (a check, a preview in progress uses one of the last few),
        except those a run still renders from."""
        for old in self._temporary.glob("draft-*"):
            if int(old.name.removeprefix("draft-")) < number and old / self.catalog_name not in self.pinned:
                shutil.rmtree(old, ignore_errors=True)

    def load(self, draft: Path) -> Catalog:
        return load_scorers(draft)

    def problems(self, draft: Path) -> list[Problem]:
        """Every problem of the draft, as `scorers check` reports it for the saved files."""
        return self.checked(draft)[0]

    def checked(self, draft: Path) -> tuple[list[Problem], list[Problem]]:
        """The draft's problems and, when it has none, its warnings (each `shown` as `scorers
        check` prints it, code included), at the saved files' places."""
        try:
            catalog = self.load(draft)
        except CatalogErrors as exc:
            return [self._problem(problem, draft.parent) for problem in exc.problems], []
        except ConfigError as exc:
            return [self._problem(exc, draft.parent)], []
        return [], [self._problem(warning, draft.parent) for warning in catalog.warnings]

    def _problem(self, problem: ConfigError, root: Path) -> Problem:
        relative: str | None = None
        shown_path = problem.path
        if problem.path is not None:
            path = Path(problem.path)
            try:
                relative = path.resolve().relative_to(root.resolve()).as_posix()
                shown_path = self.shown(self.folder / relative)
            except ValueError:
                relative = None
                shown_path = self.shown(path)
        message = problem.message.replace(str(root.resolve()), str(self.folder))
        code = getattr(problem, "code", None)
        shown = str(ConfigError(f"warning: {message} [{code}]" if code else message, shown_path, problem.line, problem.column))
        return Problem(relative, problem.line, problem.column, message, shown)

    # ------------------------------------------------------------------------ a scorer

    def scorer_files(self, catalog: Catalog, draft: Path, scorer_id: str) -> list[EditorFile]:
        """The files a scorer is made of, as this catalog (a draft) finds them: the catalog
        file, then each template and schema once. A built-in file is shown with the path
        in the catalog folder where an edit of it is written."""
        root = draft.parent.resolve()
        prompts, schemas = self.file_folders()
        builtin_prompts, builtin_schemas = self.builtin_folder / "prompts", self.builtin_folder / "schemas"
        files = [EditorFile(self.catalog_name, "catalog", "yours", self.shown(self.catalog_file), draft.read_text(encoding="utf-8"), "yaml")]
        seen = {self.catalog_name}
        for role, where in catalog.files(scorer_id)[1:]:
            found = Path(where.removesuffix(" (missing)")).resolve()
            if found.is_relative_to(root):
                relative, origin, shown_from = found.relative_to(root).as_posix(), "yours", self.shown(self.folder / found.relative_to(root))
            elif found.is_relative_to(builtin_prompts):
                relative, origin, shown_from = f"{prompts}/{found.relative_to(builtin_prompts).as_posix()}", "built-in", self.shown(found)
            elif found.is_relative_to(builtin_schemas):
                relative, origin, shown_from = f"{schemas}/{found.relative_to(builtin_schemas).as_posix()}", "built-in", self.shown(found)
            else:
                continue
            if relative in seen or not found.is_file():
                continue
            seen.add(relative)
            kind = "schema" if role.endswith("schema") else "template"
            files.append(EditorFile(relative, kind, origin, shown_from, found.read_text(encoding="utf-8"), _language(relative)))
        return files

    def origins(self, catalog: Catalog, draft: Path, scorer_id: str) -> list[dict[str, str]]:
        """Where each part of a scorer is written, `extends:` and defaults resolved: per
        top-level key and per step, the file and line."""
        raw = catalog.source.raw_definition(scorer_id)
        root = draft.parent.resolve()
        parts: list[dict[str, str]] = []

        def where(loc: list[Any]) -> str:
            place = position(raw, loc)
            if place is None or not place.file:
                return "-"
            path = Path(place.file).resolve()
            shown = self.shown(self.folder / path.relative_to(root)) if path.is_relative_to(root) else self.shown(path)
            origin = "yours" if path.is_relative_to(root) else "built-in"
            return f"{shown}:{place.line} ({origin})"

        for key in raw:
            if key == "steps":
                for index, step in enumerate(raw["steps"]):
                    step_id = step.get("id", index) if isinstance(step, Mapping) else index
                    parts.append({"part": f"step {step_id}", "from": where(["steps", index])})
                    for step_key in step if isinstance(step, Mapping) else []:
                        if step_key in ("prompt", "schema"):
                            parts.append({"part": f"step {step_id} {step_key}: {step[step_key]}", "from": where(["steps", index, step_key])})
            else:
                parts.append({"part": str(key), "from": where([key])})
        return parts

    def variant_entry(self, scorer_id: str) -> str:
        """The lines that make a built-in scorer one of this catalog's own: it extends the
        built-in one, and a key written below it replaces the built-in key."""
        return f"  {scorer_id}:\n    extends: {scorer_id}\n"

    # -------------------------------------------------------------------------- save

    def _with_catalog_file(self, edits: Mapping[str, str]) -> dict[str, str]:
        """The edits, with the catalog file a new catalog folder needs to load at all."""
        if self.catalog_file.is_file() or self.catalog_name in edits:
            return dict(edits)
        return {self.catalog_name: NEW_CATALOG, **edits}

    def diff(self, edits: Mapping[str, str]) -> list[dict[str, str]]:
        """Per edited file that differs from what is saved: a unified diff."""
        edits = self._with_catalog_file(edits)
        saved = self.saved_files()
        changes = []
        for relative, text in sorted(edits.items(), key=lambda pair: (pair[0] != self.catalog_name, pair[0])):
            self.target(relative)
            before = saved.get(relative)
            if before == text:
                continue
            builtin = self._builtin_counterpart(relative) if before is None else None
            source = f"a/{relative}" if before is not None else f"built-in {self.shown(builtin)}" if builtin is not None else "/dev/null"
            original = before if before is not None else builtin.read_text(encoding="utf-8") if builtin is not None else ""
            lines = difflib.unified_diff(original.splitlines(keepends=True), text.splitlines(keepends=True), fromfile=source, tofile=f"b/{relative}")
            changes.append({"path": relative, "shown": self.shown(self.folder / relative), "new": "yes" if before is None else "no", "diff": "".join(lines)})
        return changes

    def _builtin_counterpart(self, relative: str) -> Path | None:
        """The built-in template or schema a new file of the catalog folder shadows."""
        for own, builtin in zip(self.file_folders(), ("prompts", "schemas")):
            if relative.startswith(own.rstrip("/") + "/"):
                path = self.builtin_folder / builtin / relative[len(own.rstrip("/")) + 1 :]
                if path.is_file():
                    return path
        return None

    def save(self, edits: Mapping[str, str]) -> list[str]:
        """Write the edited files that differ from what is saved; the paths written."""
        edits = self._with_catalog_file(edits)
        targets = {relative: self.target(relative) for relative in edits}
        saved = self.saved_files()
        written = []
        for relative, text in edits.items():
            if saved.get(relative) == text:
                continue
            path = targets[relative]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            written.append(self.shown(path))
        return written
