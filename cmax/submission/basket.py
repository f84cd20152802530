"""The buyer's workload basket: ``workload:precision[=share]`` entries, comma-separated, the
shares being the buyer's share of trained tokens.

It is written in ``[pricing] workloads`` of ``cmax.toml`` (refused there with the manifest
line) and on the command line (``--workload``), and read by the price stage
(:mod:`cmax.price.tokens`). It imports nothing but the error tree, so the manifest model can
check it without importing the price stage.
"""

from __future__ import annotations

import math

from cmax.errors import UsageError


def basket_key(workload: str, precision: str) -> str:
    return f"{workload}:{precision}"


def parse_basket(text: str, *, field: str = "--workload") -> dict[str, float]:
    """``llama3.1-405b:bf16`` or ``llama3.1-405b:bf16=3,llama3.1-70b:fp8=1`` → key → share.

    Shares are token shares (normalised to sum to 1); a key without ``=`` weighs 1.
    """
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, _, weight = part.partition("=")
        workload, sep, precision = key.strip().partition(":")
        if not sep or not workload or not precision:
            raise UsageError(f"cannot read workload {part!r}", field=field,
                             expected="workload:precision[=share], e.g. llama3.1-405b:bf16=3",
                             fix="name each workload with its precision, comma-separated")
        try:
            share = float(weight) if weight else 1.0
        except ValueError:
            share = math.nan
        if not (math.isfinite(share) and share > 0):
            raise UsageError(f"share {weight!r} of {key.strip()} is not a positive number",
                             field=field, expected="a positive token share, e.g. =3")
        k = basket_key(workload.strip().lower(), precision.strip().lower())
        out[k] = out.get(k, 0.0) + share
    if not out:
        raise UsageError("no workload given", field=field,
                         expected="workload:precision[=share], e.g. llama3.1-405b:bf16")
    total = sum(out.values())
    return {k: v / total for k, v in out.items()}
