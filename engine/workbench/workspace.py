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
import hashlib
import json
import re
import shutil
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..catalog import Catalog, builtin_catalog_path, catalog_file, load_scorers
from ..catalog.source import position
from ..errors import CatalogErrors, ConfigError

#: What a catalog's prompt and schema folders hold that the workbench copies into a draft.
TEXT_SUFFIXES = {".yaml", ".yml", ".j2", ".jinja", ".json", ".txt", ".md"}
#: What the workbench may write: templates under the catalog's prompt folder, schemas under
#: its schema folder (and the catalog file itself); no other file of the folder.
TEMPLATE_SUFFIXES = {".j2", ".jinja", ".jinja2", ".txt", ".md"}
SCHEMA_SUFFIXES = {".yaml", ".yml", ".json"}

NEW_CATALOG = "prompts: prompts\nschemas: schemas\nscorers: {}\n"

#: How the page names the built-in catalog file, which it shows read-only.
BUILTIN_CATALOG = "built-in:scorers.yaml"

#: Drafts kept besides those a run uses: checks and previews in flight read the last ones.
KEPT_DRAFTS = 16
#: Compiled drafts kept for the requests that follow a keystroke (fewer than the drafts kept).
KEPT_COMPILED = 3


class OutsideCatalog(ConfigError):
    """A write aimed outside the catalog's folder (or into the installed package)."""


def version_of(text: str | None) -> str | None:
    """A short digest of a file's saved text (None: no such file): what a page edits from."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] if text is not None else None


@dataclass(frozen=True)
class Conflict:
    """A file saved by someone else (another tab, another person) since the page began editing
    it: the page's text, what is saved now, and what both started from (None: no file)."""

    path: str
    shown: str
    yours: str
    theirs: str | None
    base: str | None
    #: The text both began from: the base, or for a file not in the catalog yet the built-in one.
    began_from: str

    def as_json(self) -> dict[str, Any]:
        def diff(after: str | None, name: str) -> str:
            lines = difflib.unified_diff(self.began_from.splitlines(keepends=True), (after or "").splitlines(keepends=True), fromfile="base", tofile=name)
            return "".join(lines)

        return {
            "path": self.path, "shown": self.shown, "yours": self.yours, "theirs": self.theirs, "base": self.base, "began_from": self.began_from,
            "theirs_version": version_of(self.theirs), "yours_diff": diff(self.yours, "yours"), "theirs_diff": diff(self.theirs, "theirs"),
        }


class SaveConflict(ConfigError):
    """A save refused because files changed on disk since they were edited: nothing written."""

    def __init__(self, conflicts: list[Conflict]) -> None:
        self.conflicts = conflicts
        names = ", ".join(conflict.shown for conflict in conflicts)
        super().__init__(f"{names}: saved elsewhere since you began editing (another tab or person); nothing was written: choose which to keep")


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
    #: The file's text as saved in the catalog folder (None: no such file yet): a save of an
    #: edit is refused when the file on disk is no longer this.
    base: str | None = None
    read_only: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path, "role": self.role, "origin": self.origin, "shown_from": self.shown_from, "text": self.text,
            "language": self.language, "base": self.base, "version": version_of(self.base), "read_only": self.read_only,
        }


@dataclass(frozen=True)
class Problem:
    """One finding of `scorers check` in a draft, at a file the tuner can open: a file of the
    catalog folder (`path` relative to it), a built-in template or schema (`path` where an
    edit of it is saved), or the built-in catalog file (`BUILTIN_CATALOG`, read-only).
    `severity`: "error" (the catalog does not load), "warning" or "note"."""

    path: str | None
    line: int | None
    column: int | None
    message: str
    shown: str
    severity: str = "error"

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "column": self.column, "message": self.message, "shown": self.shown, "severity": self.severity}


def _role(path: str, folders: tuple[str, str]) -> str:
    return "schema" if path.startswith(folders[1].rstrip("/") + "/") else "template" if path.startswith(folders[0].rstrip("/") + "/") else "catalog"


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
        self._lock = threading.Lock()
        self._compiled: dict[str, tuple[Path, Catalog | ConfigError]] = {}
        #: Drafts a run renders from (templates import others while rendering): kept until released.
        self.pinned: set[Path] = set()

    @property
    def catalog_name(self) -> str:
        return self.catalog_file.name

    def close(self) -> None:
        shutil.rmtree(self._temporary, ignore_errors=True)

    # ------------------------------------------------------------------------- paths

    def target(self, relative: str) -> Path:
        """Where an edit of `relative` is written: the catalog file, a template under its prompt
        folder or a schema under its schema folder, inside the catalog folder; else refused."""
        if not relative or "\\" in relative or relative.startswith("/") or "\x00" in relative:
            raise OutsideCatalog(f"{relative!r}: the workbench writes only inside the catalog folder {self.folder}")
        path = (self.folder / relative).resolve()
        if any(self._inside(path, place) for place in self.protected):
            raise OutsideCatalog(f"{relative!r}: that is a file of the installed package; edits of built-in scorers go to the catalog folder")
        prompts, schemas = ((self.folder / folder).resolve() for folder in self.file_folders())
        own = (
            path == self.catalog_file
            or (prompts in path.parents and path.suffix in TEMPLATE_SUFFIXES)
            or (schemas in path.parents and path.suffix in SCHEMA_SUFFIXES)
        )
        if self.folder not in path.parents or not own:
            raise OutsideCatalog(
                f"{relative!r}: the workbench writes only the catalog's own files inside the catalog folder {self.folder}: "
                f"{self.catalog_name}, templates under {self.shown_folder(prompts)}/ and schemas under {self.shown_folder(schemas)}/"
            )
        return path

    def shown_folder(self, folder: Path) -> str:
        try:
            return folder.relative_to(self.folder).as_posix()
        except ValueError:
            return str(folder)

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
        with self._lock:  # requests run on threads: two drafts never share a number
            self._drafts += 1
            number = self._drafts
        root = self._temporary / f"draft-{number}"
        self._forget_drafts_before(number - KEPT_DRAFTS)
        files = {self.catalog_name: NEW_CATALOG, **self.saved_files(), **edits}
        for relative, text in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return root / self.catalog_name

    def _forget_drafts_before(self, number: int) -> None:
        """Remove older drafts (a check, a preview in progress uses one of the last few),
        except those a run still renders from and those compiled for the next requests."""
        with self._lock:
            kept = set(self.pinned) | {draft for draft, _ in self._compiled.values()}
        for old in self._temporary.glob("draft-*"):
            if int(old.name.removeprefix("draft-")) < number and old / self.catalog_name not in kept:
                shutil.rmtree(old, ignore_errors=True)

    def load(self, draft: Path) -> Catalog:
        return load_scorers(draft)

    def compiled(self, edits: Mapping[str, str]) -> tuple[Path, Catalog | ConfigError]:
        """The draft of `edits` and the catalog compiled from it (or why it does not load). A
        keystroke's check and the preview after it ask for the same draft: it is compiled once
        (the last few are kept, keyed by the edits and the files as saved)."""
        key = hashlib.sha256(json.dumps([sorted(edits.items()), sorted(self.saved_files().items())]).encode()).hexdigest()
        with self._lock:
            found = self._compiled.get(key)
        if found is not None:
            return found
        draft = self.draft(edits)
        try:
            result: tuple[Path, Catalog | ConfigError] = (draft, self.load(draft))
        except ConfigError as exc:
            result = (draft, exc)
        with self._lock:
            self._compiled[key] = result
            while len(self._compiled) > KEPT_COMPILED:
                del self._compiled[next(iter(self._compiled))]
        return result

    def problems(self, edits: Mapping[str, str]) -> list[Problem]:
        """Every finding of `scorers check` for the draft of `edits` (the same checker, the same
        words): its problems, else its warnings and notes."""
        draft, catalog = self.compiled(edits)
        if isinstance(catalog, CatalogErrors):
            return [self._problem(problem, draft.parent, "error") for problem in catalog.problems]
        if isinstance(catalog, ConfigError):
            return [self._problem(catalog, draft.parent, "error")]
        return [
            *(self._problem(warning, draft.parent, "warning") for warning in catalog.warnings),
            *(self._problem(note, draft.parent, "note") for note in catalog.bound_notes),
        ]

    def _problem(self, problem: ConfigError, root: Path, severity: str) -> Problem:
        """A finding shown as `scorers check` prints it (a warning or a note says so, a warning
        ends with the code that silences it), at a place the tuner can open."""
        relative, shown_path = self.place(problem.path, root) if problem.path is not None else (None, None)
        message = self.words(problem.message)
        code = getattr(problem, "code", None)
        said = ("" if severity == "error" else f"{severity}: ") + message + (f" [{code}]" if code else "")
        return Problem(relative, problem.line, problem.column, message, str(ConfigError(said, shown_path, problem.line, problem.column)), severity)

    def place(self, where: str, root: Path) -> tuple[str | None, str]:
        """A file named by the checker (in a draft under `root`, or built in) as the page opens
        it (its path, or None when it cannot) and as the tuner reads it: never a temporary
        draft folder nor the installed package's own path."""
        path = Path(where).resolve()
        if path.is_relative_to(root.resolve()):
            relative = path.relative_to(root.resolve()).as_posix()
            return relative, self.shown(self.folder / relative)
        if path == builtin_catalog_path().resolve():
            return BUILTIN_CATALOG, "built-in scorers.yaml"
        for own, builtin in zip(self.file_folders(), ("prompts", "schemas")):
            if path.is_relative_to(self.builtin_folder / builtin):
                inside = path.relative_to(self.builtin_folder / builtin).as_posix()
                return f"{own.rstrip('/')}/{inside}", f"built-in {builtin}/{inside}"
        return None, self.words(str(path))

    def words(self, text: str) -> str:
        """`text` with every path of a temporary draft written as the catalog folder's, and every
        path of the installed package as "built-in ...": what the tuner can find."""
        folder = self.shown(self.folder)
        for temporary in {str(self._temporary), str(self._temporary.resolve())}:
            text = re.sub(re.escape(temporary) + r"/draft-\d+", lambda _: folder, text)
        text = text.replace(str(builtin_catalog_path().resolve()), "built-in scorers.yaml")
        for builtin in ("prompts", "schemas"):
            text = text.replace(str(self.builtin_folder / builtin), f"built-in {builtin}")
        return text

    def file(self, relative: str) -> EditorFile:
        """A file to open at a problem: one of the catalog's (as saved, else the built-in one it
        would shadow), or the built-in catalog file (read-only)."""
        if relative == BUILTIN_CATALOG:
            path = builtin_catalog_path()
            return EditorFile(BUILTIN_CATALOG, "catalog", "built-in", "built-in scorers.yaml (read-only)", path.read_text(encoding="utf-8"), "yaml", None, True)
        target = self.target(relative)
        saved = self.saved_files().get(relative)
        if saved is not None:
            return EditorFile(relative, _role(relative, self.file_folders()), "yours", self.shown(target), saved, _language(relative), saved)
        builtin = self.builtin_counterpart(relative)
        if builtin is None:
            raise ConfigError(f"{relative}: no such file in the catalog folder {self.folder}, nor a built-in one")
        return EditorFile(relative, _role(relative, self.file_folders()), "built-in", f"built-in {builtin.relative_to(self.builtin_folder).as_posix()}", builtin.read_text(encoding="utf-8"), _language(relative))

    # ------------------------------------------------------------------------ a scorer

    def scorer_files(self, catalog: Catalog, draft: Path, scorer_id: str) -> list[EditorFile]:
        """The files a scorer is made of, as this catalog (a draft) finds them: the catalog
        file, then each template and schema once. A built-in file is shown with the path
        in the catalog folder where an edit of it is written."""
        root = draft.parent.resolve()
        prompts, schemas = self.file_folders()
        builtin_prompts, builtin_schemas = self.builtin_folder / "prompts", self.builtin_folder / "schemas"
        saved = self.saved_files()
        catalog_text = draft.read_text(encoding="utf-8")
        files = [EditorFile(self.catalog_name, "catalog", "yours", self.shown(self.catalog_file), catalog_text, "yaml", saved.get(self.catalog_name))]
        seen = {self.catalog_name}
        for role, where in catalog.files(scorer_id)[1:]:
            found = Path(where.removesuffix(" (missing)")).resolve()
            if found.is_relative_to(root):
                relative, origin, shown_from = found.relative_to(root).as_posix(), "yours", self.shown(self.folder / found.relative_to(root))
            elif found.is_relative_to(builtin_prompts):
                relative, origin, shown_from = f"{prompts}/{found.relative_to(builtin_prompts).as_posix()}", "built-in", self.words(str(found))
            elif found.is_relative_to(builtin_schemas):
                relative, origin, shown_from = f"{schemas}/{found.relative_to(builtin_schemas).as_posix()}", "built-in", self.words(str(found))
            else:
                continue
            if relative in seen or not found.is_file():
                continue
            seen.add(relative)
            kind = "schema" if role.endswith("schema") else "template"
            files.append(EditorFile(relative, kind, origin, shown_from, found.read_text(encoding="utf-8"), _language(relative), saved.get(relative)))
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
            shown = self.shown(self.folder / path.relative_to(root)) if path.is_relative_to(root) else self.words(str(path))
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
            builtin = self.builtin_counterpart(relative) if before is None else None
            source = f"a/{relative}" if before is not None else self.words(str(builtin)) if builtin is not None else "/dev/null"
            original = before if before is not None else builtin.read_text(encoding="utf-8") if builtin is not None else ""
            lines = difflib.unified_diff(original.splitlines(keepends=True), text.splitlines(keepends=True), fromfile=source, tofile=f"b/{relative}")
            changes.append({"path": relative, "shown": self.shown(self.folder / relative), "new": "yes" if before is None else "no", "diff": "".join(lines)})
        return changes

    def builtin_counterpart(self, relative: str) -> Path | None:
        """The built-in template or schema a new file of the catalog folder shadows."""
        for own, builtin in zip(self.file_folders(), ("prompts", "schemas")):
            if relative.startswith(own.rstrip("/") + "/"):
                path = self.builtin_folder / builtin / relative[len(own.rstrip("/")) + 1 :]
                if path.is_file():
                    return path
        return None

    def changed_since(self, versions: Mapping[str, str | None]) -> list[str]:
        """The files (of `versions`: path -> the version a page holds) saved since."""
        saved = self.saved_files()
        return sorted(relative for relative, version in versions.items() if version_of(saved.get(relative)) != version)

    def _began_from(self, relative: str, base: str | None) -> str:
        if base is not None:
            return base
        builtin = self.builtin_counterpart(relative)
        return builtin.read_text(encoding="utf-8") if builtin is not None else ""

    def save(self, edits: Mapping[str, str], bases: Mapping[str, str | None]) -> dict[str, str]:
        """Write the edited files that differ from what is saved, each only if what is saved is
        still the text it was edited from (`bases`: path -> that text, None for no file);
        otherwise nothing is written and the conflicts are raised. Returns the files written
        (path -> text)."""
        edits = self._with_catalog_file(edits)
        targets = {relative: self.target(relative) for relative in edits}
        saved = self.saved_files()
        changed = {relative: text for relative, text in edits.items() if saved.get(relative) != text}
        missing = [relative for relative in changed if relative not in bases and not (relative == self.catalog_name and relative not in saved)]
        if missing:
            raise ConfigError(f"{', '.join(missing)}: the save does not say which version it was edited from; reload the page")
        conflicts = [
            Conflict(relative, self.shown(targets[relative]), text, saved.get(relative), bases.get(relative), self._began_from(relative, bases.get(relative)))
            for relative, text in changed.items()
            if relative in bases and saved.get(relative) != bases[relative]
        ]
        if conflicts:
            raise SaveConflict(conflicts)
        for relative, text in changed.items():
            path = targets[relative]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return changed
