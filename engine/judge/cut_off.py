"""What an answer cut off at the token limit tells: a judge that needed more room, or one
caught repeating itself, which more room would not mend."""

from __future__ import annotations

from .protocol import JudgeRequest


def cut_off_message(request: JudgeRequest, answer: str | None = None, max_tokens: int | None = None) -> str:
    """Why an answer stopped at the token limit (`max_tokens` as sent, else the step's): a
    judge repeating itself (`answer`, as far as it got, ends in the same piece again and
    again) would only repeat longer with more tokens; otherwise the answer needed more room."""
    sent = max_tokens if max_tokens is not None else request.sampling.max_tokens
    limit = f"at {sent} tokens" if sent else "at the model's token limit"
    piece = repeated_tail(answer or "")
    if piece is not None:
        shown = piece.strip() or piece
        return (
            f"the judge's answer was cut off {limit} while repeating itself ({shown[:40]!r} over and over): the judge was looping, "
            "and more max_tokens would only make it loop longer; bound the answer's strings and lists in the schema "
            "(maxLength, maxItems) or use a stronger judge model"
        )
    if sent is not None and request.sampling.max_tokens is not None and sent < request.sampling.max_tokens:
        return (
            f"the judge's answer was cut off {limit}, the most its bounds allow (the step's `bounds:` and the schema's "
            "maxItems and maxLength): the judge wrote past the answer's schema, which a server decoding under it does not; "
            "loosen the bounds in the scorer's YAML if a right answer needs more room"
        )
    return f"the judge's answer was cut off {limit}; raise max_tokens for this step (`judge: max_tokens:` of the scorer or of the step in the YAML)"


def repeated_tail(text: str, longest: int = 200, least: int = 120) -> str | None:
    """The piece `text` ends by repeating (at least three times, over `least` characters or
    more), or None: a model caught in a loop writes the same words until it is stopped."""
    for period in range(1, min(longest, len(text) // 3) + 1):
        piece = text[-period:]
        repeats = 1
        while text.endswith(piece * (repeats + 1)):
            repeats += 1
        if repeats >= 3 and repeats * period >= least:
            return piece
    return None
