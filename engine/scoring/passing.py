"""What a run does about the reasons of the scores that pass (the scorer's `PassLine`, as
the run set it, says which do: pass_line.py).

A reason is not part of a score: it explains one. `ReasonPolicy` is which scores get one
from the judge: every score (`always`), only those that do not pass (`failing`: a CI run
reads the reasons of what failed), only those its judge was unsure of (`unsure`: confidence
below UNSURE_BELOW, or none given), none (`never`), or none now and each when someone opens
the stored item (`on-demand`, see runs/stored/reasons.py). A reason not asked for costs no
call; one its step gives without asking (its `on_skip` text) is still given.
"""

from __future__ import annotations

from typing import Literal, get_args

from .pass_line import PassLine

ReasonPolicy = Literal["always", "failing", "unsure", "never", "on-demand"]
#: Below this confidence (the chance its pass/fail would be the same were the judge asked
#: again), an item counts as one its judge was unsure of: `--reasons unsure` explains it.
UNSURE_BELOW = 0.8
REASON_POLICIES: tuple[str, ...] = get_args(ReasonPolicy)


def reason_wanted(policy: ReasonPolicy, score: float, line: PassLine, confidence: float | None = None) -> str | None:
    """None when the judge is asked for the reason of `score` (given with `confidence`:
    None when the judge gave none, so it cannot be told sure); else why it is not."""
    if policy == "always":
        return None
    if policy == "failing":
        return "passing" if line.passes(score) else None
    if policy == "unsure":
        return "sure" if confidence is not None and confidence >= UNSURE_BELOW else None
    return policy  # "never", "on-demand"
