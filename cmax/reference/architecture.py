"""Model architectures: the shapes from which every FLOPs figure is computed.

The catalogue lives in ``reference/models.toml``; each entry cites the released config or paper
it came from. Keeping shapes (not FLOPs constants) as the data means one engine serves every
convention: cmax's own architecture-true count and each publisher's formula, which differ in
what they count (causal attention, shared experts, padded vocabularies).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from cmax.errors import ReferenceDataError
from cmax.reference._files import read_reference_toml

FAMILIES = ("gpt", "dense-gqa", "moe-gqa", "moe-mla", "hybrid-mamba", "unpublished")

_INT_FIELDS = (
    "layers", "hidden", "ffn", "heads", "kv_heads", "head_dim", "vocab", "experts", "top_k",
    "moe_ffn", "shared_ffn", "moe_layers", "window", "window_layers", "attention_layers",
    "mamba_layers", "mlp_layers", "mamba_heads", "mamba_head_dim", "mamba_groups",
    "mamba_state", "mamba_chunk", "q_lora_rank", "kv_lora_rank", "qk_nope_dim", "qk_rope_dim",
    "v_head_dim", "mtp_layers",
)


@dataclass(frozen=True)
class Architecture:
    """One network's published shape (see ``reference/models.toml`` for field meanings)."""

    id: str
    name: str
    family: str
    source: str
    source_date: str
    aliases: tuple[str, ...] = ()
    params_b: float | None = None
    active_params_b: float | None = None
    layers: int = 0
    hidden: int = 0
    ffn: int = 0
    heads: int = 0
    kv_heads: int = 0
    head_dim: int = 0
    vocab: int = 0
    gated: bool = True
    experts: int = 0
    top_k: int = 0
    moe_ffn: int = 0
    shared_ffn: int = 0
    moe_layers: int = 0
    window: int = 0
    window_layers: int = 0
    attention_layers: int = 0
    mamba_layers: int = 0
    mlp_layers: int = 0
    mamba_heads: int = 0
    mamba_head_dim: int = 0
    mamba_groups: int = 0
    mamba_state: int = 0
    mamba_chunk: int = 0
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_dim: int = 0
    qk_rope_dim: int = 0
    v_head_dim: int = 0
    mtp_layers: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def published(self) -> bool:
        """False when the sources give no layer shapes (FLOPs then come from the source)."""
        return self.family != "unpublished"

    @property
    def kv(self) -> int:
        return self.kv_heads or self.heads

    @property
    def dim_head(self) -> int:
        return self.head_dim or (self.hidden // self.heads if self.heads else 0)

    def with_layers(self, layers: int) -> Architecture:
        """The same network cut to ``layers`` blocks (NVIDIA's reduced-layer proxy configs)."""
        if layers == self.layers or self.layers == 0:
            return self
        scale = layers / self.layers
        return replace(
            self,
            layers=layers,
            moe_layers=round(self.moe_layers * scale),
            window_layers=round(self.window_layers * scale),
            attention_layers=round(self.attention_layers * scale),
            mamba_layers=round(self.mamba_layers * scale),
            mlp_layers=round(self.mlp_layers * scale),
        )

    def with_overrides(self, overrides: dict[str, Any]) -> Architecture:
        """A copy with some shapes replaced, to reproduce a publisher's own parameters."""
        known = {f.name for f in fields(self)}
        clean = {k: v for k, v in overrides.items() if k in known}
        return replace(self, **clean)


def _parse_one(model_id: str, raw: dict[str, Any], path: Path) -> Architecture:
    where = f"models.{model_id}"
    for key in ("name", "family", "source", "source_date"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise ReferenceDataError(
                f"model {model_id!r} lacks {key!r}", file=path, field=f"{where}.{key}",
                expected="a non-empty string", fix="add it, citing the public source",
            )
    if raw["family"] not in FAMILIES:
        raise ReferenceDataError(
            f"model {model_id!r} has unknown family {raw['family']!r}", file=path,
            field=f"{where}.family", expected=" / ".join(FAMILIES),
        )
    kwargs: dict[str, Any] = {
        "id": model_id, "name": raw["name"], "family": raw["family"], "source": raw["source"],
        "source_date": raw["source_date"],
        "aliases": tuple(str(a).lower() for a in raw.get("aliases", [])),
        "gated": bool(raw.get("gated", True)),
    }
    for key in ("params_b", "active_params_b"):
        if key in raw:
            kwargs[key] = float(raw[key])
    for key in _INT_FIELDS:
        if key in raw:
            value = raw[key]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ReferenceDataError(
                    f"model {model_id!r}: {key} must be a non-negative integer, got {value!r}",
                    file=path, field=f"{where}.{key}",
                )
            kwargs[key] = value
    arch = Architecture(**kwargs)
    if arch.published and (arch.layers <= 0 or arch.hidden <= 0 or arch.vocab <= 0):
        raise ReferenceDataError(
            f"model {model_id!r} needs layers, hidden and vocab", file=path, field=where,
            fix="fill in the shapes or mark the family 'unpublished'",
        )
    return arch


def load_architectures(path: Path) -> dict[str, Architecture]:
    """Read and check ``models.toml``; ids and aliases must be unique."""
    data = read_reference_toml(path, what="model catalogue")
    models = data.get("models")
    if not isinstance(models, dict) or not models:
        raise ReferenceDataError("no [models.*] tables", file=path, expected="[models.<id>] tables")
    out: dict[str, Architecture] = {}
    seen: dict[str, str] = {}
    for model_id, raw in models.items():
        if not isinstance(raw, dict):
            raise ReferenceDataError(f"models.{model_id} is not a table", file=path)
        arch = _parse_one(str(model_id), raw, path)
        for name in (arch.id, *arch.aliases):
            if name in seen and seen[name] != arch.id:
                raise ReferenceDataError(
                    f"name {name!r} is used by both {seen[name]!r} and {arch.id!r}",
                    file=path, fix="make model ids and aliases unique",
                )
            seen[name] = arch.id
        out[arch.id] = arch
    return out
