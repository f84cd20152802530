""""Did you mean ...?" for a key or id the user misspelt: the closest known spellings
(difflib's ratio, the measure Python's own NameError hints are built on), so an error says what
to write instead of only what was wrong."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.6


def did_you_mean(value: str, known: Iterable[str], *, n: int = 3) -> str | None:
    """``"did you mean 'a' or 'b'?"``, or None when nothing is close."""
    choices = sorted({str(k) for k in known})
    close = difflib.get_close_matches(value.strip().lower(), [c.lower() for c in choices],
                                      n=n, cutoff=CUTOFF)
    if not close:
        return None
    by_lower = {c.lower(): c for c in choices}
    return "did you mean " + " or ".join(repr(by_lower[c]) for c in close) + "?"
