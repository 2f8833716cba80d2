"""Unsaved work, kept on disk as it is typed, so that neither a reload, a closed tab nor a
restart of the workbench loses it: per catalog folder, the edited files (each with the text it
was edited from, for the three-way view of a conflicting save), the scorer, the data set, the
sample size, the seed and the run last shown, per browser tab.

Drafts live in the user data directory (`platformdirs.user_data_dir("llm-scorers")/workbench`,
e.g. ~/.local/share/llm-scorers/workbench), in one file per catalog folder named by a digest
of its path: not in the catalog folder, where they would be committed with it by accident, and
not in a cache directory, which may be emptied to free space. A save of the files clears what
it wrote from the draft.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import ConfigError

#: Tabs whose drafts are kept per catalog (the most recently written).
KEPT_TABS = 8


def default_folder() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("llm-scorers")) / "workbench"


def _checked(draft: Any) -> dict[str, Any]:
    """A draft as the page sends it: a mapping with a mapping of files, each file's text (and
    the text it was edited from) as strings; refused otherwise."""
    if not isinstance(draft, dict):
        raise ConfigError("draft: expected an object")
    files = draft.get("files", {})
    if not isinstance(files, dict):
        raise ConfigError("draft.files: expected an object of paths")
    for path, file in files.items():
        if not isinstance(file, dict) or not isinstance(file.get("text"), str) or not isinstance(file.get("original"), str):
            raise ConfigError(f"draft.files[{path!r}]: expected its text and the text it was edited from")
        if file.get("base") is not None and not isinstance(file.get("base"), str):
            raise ConfigError(f"draft.files[{path!r}].base: expected the saved text it was edited from, or null")
    return {key: draft[key] for key in ("scorer", "data", "size", "seed", "run", "files") if key in draft}


class Drafts:
    """The drafts of one catalog folder, in one JSON file written whole (a crash leaves the
    previous file, never half of one)."""

    def __init__(self, folder: Path, catalog_file: Path, started: str) -> None:
        key = hashlib.sha256(str(catalog_file.resolve()).encode()).hexdigest()[:16]
        self.path = folder / f"{key}.json"
        self.catalog_file = catalog_file.resolve()
        #: Which start of the workbench wrote a draft: a draft of an earlier start yields its
        #: data set to the one given with --data at this start.
        self.started = started

    def _read(self) -> dict[str, Any]:
        try:
            loaded = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        tabs = loaded.get("tabs") if isinstance(loaded, dict) else None
        return tabs if isinstance(tabs, dict) else {}

    def get(self, tab: str | None) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The draft `tab` takes as its own, and one of another tab it may open on request.
        Its own: the draft of `tab`, else the one written last before this start of the
        workbench (a restart, a new browser: no tab of then is open now). A draft another tab
        wrote since this start is that tab's, which may still be open: a new tab is only told
        of it (the latest), never given it as its own, or two tabs would save one draft."""
        tabs = self._read()
        if tab and isinstance(tabs.get(tab), dict):
            return dict(tabs[tab]), None
        drafts = sorted(((name, draft) for name, draft in tabs.items() if isinstance(draft, dict)), key=lambda pair: str(pair[1].get("updated", "")), reverse=True)
        earlier = next((draft for _, draft in drafts if draft.get("started") != self.started), None)
        other = next(({**draft, "tab": name} for name, draft in drafts if draft.get("started") == self.started and draft.get("files")), None)
        return (dict(earlier) if earlier is not None else None), other

    def put(self, tab: str, draft: Any) -> None:
        if not tab or len(tab) > 100:
            raise ConfigError("tab: expected the page's tab id")
        tabs = self._read()
        tabs[tab] = {**_checked(draft), "updated": datetime.now(timezone.utc).isoformat(), "started": self.started}
        kept = sorted(tabs.items(), key=lambda pair: str(pair[1].get("updated", "")), reverse=True)[:KEPT_TABS]
        self._write({"catalog": str(self.catalog_file), "tabs": dict(kept)})

    def saved(self, written: dict[str, str]) -> None:
        """Files saved with this text are no longer a draft in any tab; a tab's edit that differs
        from what was saved stays (with its base, so its save shows the conflict)."""
        tabs = self._read()
        for draft in tabs.values():
            files = draft.get("files") if isinstance(draft, dict) else None
            if isinstance(files, dict):
                for path, text in written.items():
                    if isinstance(files.get(path), dict) and files[path].get("text") == text:
                        del files[path]
        if tabs:
            self._write({"catalog": str(self.catalog_file), "tabs": tabs})

    def _write(self, content: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=self.path.parent, prefix=".draft-", suffix=".json", delete=False) as handle:
            json.dump(content, handle, ensure_ascii=False)
        os.replace(handle.name, self.path)
