"""The claims ledger: every claim a rating rests on, resolved once against the evidence.

A manifest *claims* a GPU, a scale, a model, a precision, a configuration and a software
release; the evidence files *state* them too (:mod:`cmax.ingest.facts`). A pass must be earned by
the
evidence, so each claim that decides a baseline or a verdict is resolved once, in the case
(:func:`cmax.resolve.case.resolve`), to one status:

``corroborated``
    the evidence states the claimed value (each supporting statement cited, file and line);
``declared``
    only cmax.toml says it: no evidence file states it either way;
``assumed``
    nobody says it: the value is the matched reference recipe's (NVIDIA's configuration);
``contradicted``
    the evidence states another value (both sides quoted);
``unstated``
    nobody says it and no recipe gives it.

The ledger is data, one :class:`Claim` per (subject, kind): a run's claims have the run id as
subject; other parts of a bundle (the cluster an audit names, the reliability period, the unit
of a price) add their own kinds to :data:`CLAIM_KINDS` and their own entries with
:meth:`Ledger.added`. Validation quotes contradicted claims as errors; scoring holds a run
whose model, scale or precision is not corroborated at ``unverified`` (:data:`EARNS_PASS`).

This module imports nothing heavy (no Polars): the scorecard and the report read it too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from cmax.ingest.facts import Fact, facts_of

ClaimStatus = Literal["corroborated", "declared", "assumed", "contradicted", "unstated"]

#: What each status means, in the words the reports use.
STATUSES: dict[str, str] = {
    "corroborated": "the evidence states it (cited)",
    "declared": "only cmax.toml says it; no evidence file states it",
    "assumed": "nobody states it; the matched reference recipe's value is used",
    "contradicted": "the evidence states something else (both sides quoted)",
    "unstated": "nobody states it and no recipe gives it",
}

#: The kinds of claim the ledger holds, and what each is. Other stages' claims (cluster
#: identity, reliability period, price unit) are added here as entries of their own.
CLAIM_KINDS: dict[str, str] = {
    "gpu": "the GPU model the run ran on",
    "gpu_count": "how many GPUs (and nodes) the run used",
    "model": "the model (workload) the run trained",
    "precision": "the training precision (bf16, fp8, ...)",
    "seq_len": "the sequence length",
    "gbs": "the global batch size",
    "parallel": "the parallel configuration (TP, PP, CP, EP, VP, MBS)",
    "software": "the framework / container release the run used",
    # the bundle's other claims (cmax/resolve/bundle_claims.py)
    "cluster_name": "the cluster the bundle rates ([provider] cluster vs the audit's name)",
    "nodes": "how many nodes the cluster has ([system] nodes vs the counts and hosts stated)",
    "hosts": "whether each evidence file's host names belong to the same cluster",
    "period": "the reliability period vs the incident log's own dates and coverage",
    "fleet": "the GPUs in service vs the GPUs the evidence supports",
    "price_unit": "the quote is per GPU-hour (vs the GPU's sourced market band)",
    # what a [[storage]] / [[inference]] entry declares where its file is silent
    # (cmax/resolve/entry_claims.py)
    "storage_accelerator": "the accelerator a storage benchmark emulated",
    "storage_round": "the MLPerf Storage round a result was run under",
    "storage_gpus": "the GPUs (or emulated accelerators) a storage result is counted over",
    "checkpoint_size": "the size of the checkpoint a log's saves wrote",
    "serving_load": "the concurrency a serving benchmark ran at",
    "mlperf_accelerator": "the accelerator an MLPerf result ran on (no official system JSON)",
}

#: A run's verdict can be ``pass`` only when each of these claims is corroborated: they pick
#: the reference number the run is compared with, and a declaration alone is not evidence.
EARNS_PASS: tuple[str, ...] = ("model", "gpu_count", "precision")

#: What evidence earns corroboration of each required claim, for the report.
HOW_TO_EARN: dict[str, str] = {
    "model": "an experiment or job name, a config dump or a Megatron arguments block naming "
             "the model (num_layers, hidden_size)",
    "gpu_count": "the world size the job prints (Megatron `using world size`, Lightning "
                 "`Initializing distributed ... MEMBER: i/N`, `world_size`, trainer "
                 "`num_nodes` / `devices`)",
    "precision": "the precision settings the job prints (`fp8: hybrid` / `fp8: None`, "
                 "`--fp8-format`, an experiment name with _fp8 / _bf16)",
}

_PARALLEL_KEYS: tuple[str, ...] = ("tp", "pp", "cp", "ep", "vp", "mbs")


@dataclass(frozen=True)
class Citation:
    """One statement an evidence file makes, as a claim quotes it."""

    file: str
    line: int | None
    text: str
    where: str | None = None

    @classmethod
    def of(cls, file: str, fact: Fact, text: str | None = None) -> Citation:
        return cls(file=file, line=fact.line, text=text or fact.value, where=fact.where)

    def cite(self) -> str:
        loc = f"{self.file}:{self.line}" if self.line is not None else self.file
        loc = f"{loc} ({self.where})" if self.where else loc
        return f"{loc}: {self.text!r}"

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "text": self.text, "where": self.where}


@dataclass(frozen=True)
class Claim:
    """One claim about one subject, resolved against the evidence."""

    subject: str
    kind: str
    value: str | None
    status: ClaimStatus
    source: str
    support: tuple[Citation, ...] = ()
    against: tuple[Citation, ...] = ()
    note: str = ""
    #: the one value the evidence states instead, when the statements against the claim agree
    #: on one (a log whose experiment name says fp8 against a declared bf16: "fp8"); None
    #: otherwise. What a report labels the run with beside the declaration it contradicts.
    stated: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"subject": self.subject, "kind": self.kind, "value": self.value,
                "status": self.status, "source": self.source,
                "support": [c.as_dict() for c in self.support],
                "against": [c.as_dict() for c in self.against], "note": self.note}

    def line(self) -> str:
        """One line of text: kind, value, status, where from, the first citation."""
        cite = self.against or self.support
        tail = f"  {cite[0].cite()}" if cite else ""
        extra = f" (+{len(cite) - 1} more)" if len(cite) > 1 else ""
        note = f"  [{self.note}]" if self.note else ""
        return (f"{self.kind:<10} {self.value or '-':<30} {self.status:<13} "
                f"{self.source}{tail}{extra}{note}")


@dataclass(frozen=True)
class Ledger:
    """Every resolved claim of a bundle, in subject then kind order of resolution."""

    claims: tuple[Claim, ...] = field(default_factory=tuple)

    def __iter__(self) -> Iterator[Claim]:
        return iter(self.claims)

    def __len__(self) -> int:
        return len(self.claims)

    def of(self, subject: str) -> tuple[Claim, ...]:
        return tuple(c for c in self.claims if c.subject == subject)

    def get(self, subject: str, kind: str) -> Claim | None:
        return next((c for c in self.claims if c.subject == subject and c.kind == kind), None)

    def added(self, *claims: Claim) -> Ledger:
        """This ledger with more claims (another stage's kinds), replacing same subject+kind."""
        keys = {(c.subject, c.kind) for c in claims}
        kept = tuple(c for c in self.claims if (c.subject, c.kind) not in keys)
        return replace(self, claims=kept + tuple(claims))

    def unearned(self, subject: str) -> list[Claim]:
        """The claims of :data:`EARNS_PASS` the evidence does not corroborate."""
        out = []
        for kind in EARNS_PASS:
            claim = self.get(subject, kind)
            if claim is not None and claim.status != "corroborated":
                out.append(claim)
        return out

    def as_json(self) -> list[dict[str, Any]]:
        return [c.as_dict() for c in self.claims]

    def text(self) -> str:
        """The ledger as text, one block per subject."""
        lines: list[str] = []
        for subject in dict.fromkeys(c.subject for c in self.claims):
            lines.append(f"  {subject}")
            lines.extend(f"    {c.line()}" for c in self.of(subject))
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# reading what a file states

_NAMED_PRECISION = re.compile(r"(?<![a-z0-9])(mxfp8|nvfp4|fp8|bf16|fp16)(?![a-z0-9])")
_OFF = {"", "none", "null", "false", "0", "off", "no", "disabled"}


def precision_family(value: str) -> str | None:
    """fp8 / bf16 / fp16 / fp4 for a precision name ('mxfp8' and 'fp8-cs' are fp8)."""
    text = value.strip().lower()
    if "fp4" in text:
        return "fp4"
    if "fp8" in text:
        return "fp8"
    if "bf16" in text:
        return "bf16"
    if "fp16" in text or text.startswith("16"):
        return "fp16"
    return None


def stated_precisions(facts: Iterable[Fact]) -> list[tuple[str, Fact]]:
    """(family, fact) for every conclusive precision statement in a log.

    ``fp8=<format>`` and ``fp8_format=<format>`` switch fp8 on unless the value is None/False;
    ``fp8=None`` says fp8 is off (``not-fp8``). ``bf16=True`` and ``precision=bf16-mixed``
    are printed by fp8 runs too (fp8 runs on top of bf16 autocast), so they prove nothing
    either way; a precision named in an experiment name is conclusive.
    """
    out: list[tuple[str, Fact]] = []
    for fact in facts_of(tuple(facts), "precision"):
        key, sep, value = fact.value.partition("=")
        key, value = key.strip().lower(), value.strip().lower()
        if not sep:
            named = _NAMED_PRECISION.search(key)
            if named:
                family = precision_family(named.group(1))
                if family:
                    out.append((family, fact))
            continue
        if key in ("fp8", "fp8_format"):
            out.append(("not-fp8" if value in _OFF else "fp8", fact))
        elif key in ("precision", "mixed_precision"):
            family = precision_family(value)
            if family in ("fp8", "fp4", "fp16"):
                out.append((family, fact))
    return out


def norm_name(text: str) -> str:
    """A model name with everything but letters and digits dropped ('Llama3.1_8B' -> ...)."""
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def named_workloads(text: str, known: Iterable[str]) -> list[str]:
    """The known workloads a printed name names ('pretrain_llama3.1_8b_fp8' -> llama3.1-8b).

    A name inside a longer one it is part of ('llama3.1-8b' inside 'llama3.1-80b'? no: the
    longest names are kept, the names they contain dropped).
    """
    flat = norm_name(text)
    hits = [w for w in known if norm_name(w) and norm_name(w) in flat]
    return [w for w in hits if not any(w != o and norm_name(w) in norm_name(o) for o in hits)]


def parallel_facts(facts: Iterable[Fact]) -> dict[str, list[Fact]]:
    """``parallel`` facts by key (``gbs=256`` under ``gbs``), in file order."""
    out: dict[str, list[Fact]] = {}
    for fact in facts_of(tuple(facts), "parallel"):
        key, sep, value = fact.value.partition("=")
        if sep and value.strip().isdigit():
            out.setdefault(key.strip().lower(), []).append(fact)
    return out


def fact_int(fact: Fact) -> int | None:
    """The number a ``gpu_count`` / ``node_count`` / ``parallel k=N`` fact states."""
    text = fact.value.rpartition("=")[2].strip()
    return int(text) if text.isdigit() and len(text) < 10 else None


def release_of(text: str | None) -> str | None:
    """The release a container or framework string names: 'nvcr.io#nvidia/nemo:25.04.01' ->
    '25.04.01' (the tag); 'nemo 2.1.0' -> '2.1.0'; None when it names none."""
    if not text:
        return None
    tag = text.rsplit(":", 1)[1] if ":" in text else text
    match = re.search(r"\d+\.\d+(?:\.\d+)?(?:[.-]?(?:rc|post|dev)\d*)?", tag)
    return match.group(0) if match else None


def status_of(support: Iterable[object], against: Iterable[object],
              declared: bool) -> ClaimStatus:
    """The status of a claim from what supports it, what contradicts it and who declared it."""
    if any(True for _ in against):
        return "contradicted"
    if any(True for _ in support):
        return "corroborated"
    return "declared" if declared else "unstated"
