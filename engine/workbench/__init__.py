"""The workbench: a local web app where a prompt tuner edits a scorer, sees the exact
prompts, runs it on labelled items and sees whether it agrees with people more than the
last saved version did. Starlette and uvicorn come with the `workbench` extra.

    serve(Path("my-catalog"), store="results.sqlite", data=Path("labelled.jsonl"))
"""

from __future__ import annotations

from .server import WorkbenchMissing, serve

__all__ = ["WorkbenchMissing", "serve"]
