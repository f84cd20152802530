"""File names for reports, made from provider and cluster names that a bundle controls.

A slug must be safe on every filesystem (no separators, no leading dot, no Windows device
names, bounded length) and unique within one ``cmax report`` run, and it must not depend on
the order the bundles were given in: a collision is broken by a hash of the names (or of the
whole scorecard when two bundles rate the same cluster), never by a running counter alone.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

from cmax.scorecard import Scorecard

MAX_LEN = 60
_WINDOWS_RESERVED = {
    "con", "prn", "aux", "nul",
    *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10)),
}


def slugify(text: str) -> str:
    """ASCII letters, digits and single hyphens; never empty, at most MAX_LEN long."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    slug = slug[:MAX_LEN].rstrip("-")
    if not slug:  # nothing Latin in the name (e.g. "日本クラウド"): keep names apart by hash
        slug = "provider-" + _digest(text)
    if slug in _WINDOWS_RESERVED:
        slug += "-x"
    return slug


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:8]


def base_slug(card: Scorecard) -> str:
    provider = slugify(card.provider)
    cluster = slugify(card.cluster)
    return provider if cluster == provider else f"{provider}-{cluster}"[: MAX_LEN * 2]


def report_slugs(cards: Sequence[Scorecard]) -> list[str]:
    """One unique slug per scorecard, in the order given."""
    slugs = [base_slug(c) for c in cards]
    counts = Counter(slugs)
    slugs = [
        f"{s}-{_digest(c.provider, c.cluster)}" if counts[s] > 1 else s
        for s, c in zip(slugs, cards, strict=True)
    ]
    counts = Counter(slugs)
    slugs = [
        f"{s}-{_digest(c.model_dump_json())}" if counts[s] > 1 else s
        for s, c in zip(slugs, cards, strict=True)
    ]
    # Only byte-identical scorecards are left colliding; their order does not matter.
    seen: Counter[str] = Counter()
    unique = []
    for s in slugs:
        seen[s] += 1
        unique.append(s if seen[s] == 1 else f"{s}-{seen[s]}")
    return unique
