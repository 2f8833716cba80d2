"""What the workbench says when something fails: one line, as the command line says it, but
ending with what to do in the workbench (never a Python keyword such as `(base_url=)`), and
with any secret masked."""

from __future__ import annotations

from ..errors import ScorerError
from ..scrub import scrub

#: How to give what an error is about, for someone who started `scorers workbench`.
ADVICE = {
    "model": " (start the workbench with --model provider/model, or set SCORERS_MODEL)",
}


def one_line(exc: BaseException) -> str:
    """An error as one line for the page."""
    if isinstance(exc, ScorerError):
        text = exc.described(ADVICE.get(exc.parameter or "", ""))
    else:
        text = str(exc) or type(exc).__name__
    return scrub(" ".join(text.split()))
