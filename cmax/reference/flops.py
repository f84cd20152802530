"""Model FLOPs per token: cmax's architecture-true count and each publisher's convention.

Why two kinds: MFU is only comparable when both sides count FLOPs the same way, and the
publishers do not agree. NVIDIA's DGXC READMEs count attention as if it were not causal (for
Llama) and copied a wrong GQA group count into the Llama 3.1 405B constant; NeMo and
Megatron-Bridge count causal attention but pad the vocabulary; NVIDIA's Llama 4 formula
ignores the shared expert. cmax therefore keeps one architecture-true convention for its own
figures (``cmax``) and reproduces each source's convention by name, so a published MFU or
TFLOP/s can be checked against its own step time before it is used as a bar.

All functions return *training* FLOPs (forward + backward = 3 x forward) per token; one
multiply-add counts as 2 FLOPs. The conventions are documented in docs/reference.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from cmax.errors import NotInCatalogue, UsageError
from cmax.reference.architecture import Architecture

Task = Literal["pretrain", "sft", "lora"]

CONVENTIONS: dict[str, str] = {
    "cmax": "architecture-true: causal attention, routed + shared experts, unpadded "
            "vocabulary, MTP modules, Mamba-2 projections and chunked scan; norms, softmax "
            "and embeddings ignored",
    "nvidia-gpt": "seq*(72*L*h^2 + 12*L*h*seq + 6*V*h) per sample: MHA, 4h MLP, non-causal "
                  "attention (DGXC GPT-3 / PaxML READMEs; DGXC Nemotron-4 up to v25.04)",
    "nvidia-llama": "seq*(12*L*h^2*(1 + G/H + seq/h) + 18*L*F*h + 6*V*h) per sample: GQA + "
                    "SwiGLU, non-causal attention (DGXC Llama 3.1 and MaxText READMEs; NeMo 24.07)",
    "nvidia-llama-finetune": "seq*(12*L*h^2*(1 + G/H) + 18*L*F*h + 6*V*h) per sample: the DGXC "
                             "fine-tuning READMEs drop the attention-score term",
    "nvidia-llama-finetune-lora": "nvidia-llama-finetune x 2/3 (DGXC LoRA READMEs)",
    "nvidia-nemotron4": "seq*(12*L*h^2*(1 + G/H) + 12*L*h*seq + 12*L*h*F + 6*V*h) per sample: "
                        "GQA + non-gated MLP (DGXC nemotron/README.md from v25.04.01; NeMo 24.07)",
    "nvidia-grok1": "seq*(12*L*h^2*(1 + G/H + seq/h/2) + 18*L*F*h*topK + 6*V*h) per sample "
                    "(DGXC grok1 READMEs)",
    "nvidia-llama4": "12*seq*L*h^2*[(1 + G/H + 0.5*seq/h) + (F/h)*1.5*topK + V/(2*L*h)] per sample "
                     "(DGXC llama4/README.md)",
    "nvidia-nemotronh": "6*(mlp + attn + mamba + lm_head) per sample (DGXC nemotronh/README.md)",
    "nemo-deepseekv3": "NeMo FLOPs callback for DeepSeek-V3 (MLA, causal, 1 MTP module), the "
                       "TFLOPS_per_GPU printed by DGXC deepseek_v3 runs",
    "megatron-bridge": "megatron.bridge.training.utils.flop_utils.num_floating_point_operations "
                       "@ 4ab94dfad: causal attention, padded vocabulary, hybrid layer pattern",
    "nemo-packed-finetune": "NeMo 24.07 SFT/LoRA on packed SQuAD: depends on the packed data's "
                            "sequence statistics; not reproducible from the architecture",
    "megatron-bridge-packed-lora": "Megatron-Bridge LoRA on packed SQuAD: frozen-weight FLOPs "
                                   "x 2/3 plus attention over the packed data's real "
                                   "sub-sequences; not reproducible from the architecture",
    "source-implied": "no public architecture: FLOPs/token = the source's TFLOP/s / tokens/s",
}


@dataclass(frozen=True)
class FlopsBreakdown:
    """Forward FLOPs per token split into weight matmuls (linear) and the rest (core)."""

    linear: float
    core: float

    def training(self, task: Task = "pretrain") -> float:
        """Forward + backward. LoRA freezes the weights: their weight-gradient pass is skipped."""
        if task == "lora":
            return 2.0 * self.linear + 3.0 * self.core
        return 3.0 * (self.linear + self.core)


def _need_published(arch: Architecture) -> None:
    if not arch.published:
        raise NotInCatalogue(
            f"{arch.id}: no public architecture, so cmax cannot count its FLOPs",
            expected="a model with published layer shapes",
            fix="use the source's own TFLOP/s figures for this workload",
        )


def _causal_context(seq_len: int) -> float:
    """Average number of keys a query attends to under a causal mask."""
    return seq_len / 2.0


def _window_context(seq_len: int, window: int) -> float:
    """Average keys per query under a causal sliding window of ``window`` tokens."""
    if window >= seq_len:
        return _causal_context(seq_len)
    total = window * (window + 1) / 2.0 + (seq_len - window) * window
    return total / seq_len


def _gqa_attention(arch: Architecture, context: float) -> FlopsBreakdown:
    d = arch.dim_head
    q_dim = arch.heads * d
    kv_dim = arch.kv * d
    linear = 2.0 * (arch.hidden * (q_dim + 2 * kv_dim) + q_dim * arch.hidden)
    core = 2.0 * 2.0 * q_dim * context  # QK^T and AV, each 2 FLOPs per MAC
    return FlopsBreakdown(linear, core)


def _mla_attention(arch: Architecture, context: float) -> FlopsBreakdown:
    h, heads = arch.hidden, arch.heads
    qk = arch.qk_nope_dim + arch.qk_rope_dim
    if arch.q_lora_rank:
        q_params = h * arch.q_lora_rank + arch.q_lora_rank * heads * qk
    else:
        q_params = h * heads * qk
    kv_params = (h * (arch.kv_lora_rank + arch.qk_rope_dim)
                 + arch.kv_lora_rank * heads * (arch.qk_nope_dim + arch.v_head_dim))
    o_params = heads * arch.v_head_dim * h
    linear = 2.0 * (q_params + kv_params + o_params)
    core = 2.0 * heads * (qk + arch.v_head_dim) * context
    return FlopsBreakdown(linear, core)


def _mlp(hidden: int, width: int, gated: bool) -> float:
    return 2.0 * (3 if gated else 2) * hidden * width


def _moe(arch: Architecture) -> float:
    routed = _mlp(arch.hidden, arch.moe_ffn, arch.gated) * arch.top_k
    shared = _mlp(arch.hidden, arch.shared_ffn, arch.gated) if arch.shared_ffn else 0.0
    router = 2.0 * arch.hidden * arch.experts
    return routed + shared + router


def _mamba(arch: Architecture) -> FlopsBreakdown:
    h = arch.hidden
    d_inner = arch.mamba_heads * arch.mamba_head_dim
    gn = arch.mamba_groups * arch.mamba_state
    in_proj = 2.0 * h * (2 * d_inner + 2 * gn + arch.mamba_heads)
    out_proj = 2.0 * d_inner * h
    conv = 2.0 * 4 * (d_inner + 2 * gn)
    chunk = arch.mamba_chunk or 128
    scan = 2.0 * (d_inner * chunk + 2 * d_inner * arch.mamba_state + chunk * gn)
    return FlopsBreakdown(in_proj + out_proj, conv + scan)


def cmax_breakdown(arch: Architecture, seq_len: int) -> FlopsBreakdown:
    """Forward FLOPs per token under cmax's architecture-true convention."""
    _need_published(arch)
    if seq_len <= 0:
        raise UsageError(f"seq_len must be positive, got {seq_len}", field="seq_len")
    ctx = _causal_context(seq_len)
    h, L = arch.hidden, arch.layers
    linear = 2.0 * h * arch.vocab  # logits
    core = 0.0
    if arch.family == "hybrid-mamba":
        attn = _gqa_attention(arch, ctx)
        mamba = _mamba(arch)
        linear += arch.attention_layers * attn.linear + arch.mamba_layers * mamba.linear
        core += arch.attention_layers * attn.core + arch.mamba_layers * mamba.core
        linear += arch.mlp_layers * _mlp(h, arch.ffn, arch.gated)
        linear += arch.moe_layers * _moe(arch)
        return FlopsBreakdown(linear, core)
    mla = arch.family == "moe-mla"
    attn = _mla_attention(arch, ctx) if mla else _gqa_attention(arch, ctx)
    if arch.window and arch.window_layers:
        local = _gqa_attention(arch, _window_context(seq_len, arch.window))
        linear += L * attn.linear
        core += (L - arch.window_layers) * attn.core + arch.window_layers * local.core
    else:
        linear += L * attn.linear
        core += L * attn.core
    moe_layers = arch.moe_layers if arch.family in ("moe-gqa", "moe-mla") else 0
    linear += (L - moe_layers) * _mlp(h, arch.ffn, arch.gated) + moe_layers * _moe(arch)
    if arch.mtp_layers:
        # each MTP module: concat projection 2h -> h, one MoE transformer block, its own logits
        per_module = 2.0 * 2 * h * h + attn.linear + _moe(arch) + 2.0 * h * arch.vocab
        linear += arch.mtp_layers * per_module
        core += arch.mtp_layers * attn.core
    return FlopsBreakdown(linear, core)


def cmax_flops_per_token(arch: Architecture, seq_len: int, task: Task = "pretrain") -> float:
    """Training FLOPs per token (forward + backward) under cmax's own convention."""
    return cmax_breakdown(arch, seq_len).training(task)


# --- publishers' conventions -------------------------------------------------------------

#: FLOPs per token as a publisher counts them: (architecture, seq_len, tensor-parallel size)
#: -> FLOPs. One entry per convention of :data:`CONVENTIONS` computable from the architecture,
#: added by :func:`_counts` beside each formula, so a new convention is one decorated function.
_COUNTERS: dict[str, Callable[[Architecture, int, int], float]] = {
    "cmax": lambda a, s, tp: cmax_flops_per_token(a, s),
}

_Formula = Callable[[Architecture, int], float]


def _counts(convention: str, *, factor: float = 1.0) -> Callable[[_Formula], _Formula]:
    """Register a per-token formula (seq_len only) as ``convention``, scaled by ``factor``."""
    def register(formula: _Formula) -> _Formula:
        _COUNTERS[convention] = lambda a, s, tp: formula(a, s) * factor
        return formula
    return register



@_counts("nvidia-gpt")
def _nvidia_gpt(a: Architecture, s: int) -> float:
    L, h = a.layers, a.hidden
    return 72.0 * L * h * h + 12.0 * L * h * s + 6.0 * a.vocab * h


@_counts("nvidia-llama")
def _nvidia_llama(a: Architecture, s: int) -> float:
    L, h = a.layers, a.hidden
    return (12.0 * L * h * h * (1 + a.kv / a.heads + s / h)
            + 18.0 * L * a.ffn * h + 6.0 * a.vocab * h)


@_counts("nvidia-llama-finetune")
@_counts("nvidia-llama-finetune-lora", factor=2.0 / 3.0)  # DGXC LoRA READMEs
def _nvidia_llama_finetune(a: Architecture, s: int) -> float:
    L, h = a.layers, a.hidden
    return 12.0 * L * h * h * (1 + a.kv / a.heads) + 18.0 * L * a.ffn * h + 6.0 * a.vocab * h


@_counts("nvidia-nemotron4")
def _nvidia_nemotron4(a: Architecture, s: int) -> float:
    L, h = a.layers, a.hidden
    return (12.0 * L * h * h * (1 + a.kv / a.heads) + 12.0 * L * h * s
            + 12.0 * L * h * a.ffn + 6.0 * a.vocab * h)


@_counts("nvidia-grok1")
def _nvidia_grok1(a: Architecture, s: int) -> float:
    L, h = a.layers, a.hidden
    return (12.0 * L * h * h * (1 + a.kv / a.heads + s / h / 2)
            + 18.0 * L * a.ffn * h * a.top_k + 6.0 * a.vocab * h)


@_counts("nvidia-llama4")
def _nvidia_llama4(a: Architecture, s: int) -> float:
    L, h = a.layers, a.hidden
    bracket = ((1 + a.kv / a.heads + 0.5 * s / h) + (a.ffn / h) * 1.5 * a.top_k
               + a.vocab / (2.0 * L * h))
    return 12.0 * L * h * h * bracket


@_counts("nvidia-nemotronh")
def _nvidia_nemotronh(a: Architecture, s: int) -> float:
    h, d = a.hidden, a.dim_head
    expand = (a.mamba_heads * a.mamba_head_dim) / h
    mlp = 2.0 * h * a.ffn * a.mlp_layers
    attn = (2.0 * h * a.heads * d + 2.0 * h * a.kv * d + 2.0 * s * h) * a.attention_layers
    nh, hd, g, n = a.mamba_heads, a.mamba_head_dim, a.mamba_groups, a.mamba_state
    chunk = a.mamba_chunk
    mamba = (h * (nh * hd * 3 + g * n * 2 + nh) + h * expand * chunk + 2.0 * h * expand * n
             + chunk * n * g) * a.mamba_layers
    lm_head = h * a.vocab
    return 6.0 * (mlp + attn + mamba + lm_head)


@_counts("nemo-deepseekv3")
def _nemo_deepseekv3(a: Architecture, s: int) -> float:
    h, heads = a.hidden, a.heads
    qk = a.qk_nope_dim + a.qk_rope_dim
    mtp = a.mtp_layers
    bmm = 0.5 * qk * heads * s + 0.5 * a.v_head_dim * heads * s  # per token
    attention = 6.0 * bmm * (a.layers + mtp)
    mla = (h * a.q_lora_rank + a.q_lora_rank * qk * heads + h * a.qk_rope_dim
           + h * a.kv_lora_rank + a.kv_lora_rank * (a.qk_nope_dim + a.v_head_dim) * heads
           + a.v_head_dim * heads * h)
    dense = h * a.ffn * 3
    moe = h * a.shared_ffn * 3 + h * a.moe_ffn * 3 * a.top_k
    ffn = (a.layers - a.moe_layers) * dense + (a.moe_layers + mtp) * moe
    linear = 6.0 * (mla * (a.layers + mtp) + ffn)
    vocab = 6.0 * a.vocab * h * (1 + mtp) + 6.0 * h * 2 * h * mtp
    return attention + linear + vocab


def padded_vocab(vocab: int, tp: int, divisible_by: int = 128) -> int:
    """Megatron pads the vocabulary to a multiple of divisible_by x TP."""
    multiple = divisible_by * max(tp, 1)
    return int(math.ceil(vocab / multiple) * multiple)


def _megatron_bridge(a: Architecture, s: int, tp: int) -> float:
    h = a.hidden
    vocab = padded_vocab(a.vocab, tp)
    if a.family == "hybrid-mamba":
        # hybrid_flops(): per-layer forward terms x 3; Mamba d_in = 2 x hidden.
        d_in = 2 * h
        p = (a.dim_head * a.heads / h) if a.head_dim else 1.0
        attn = 4.0 * h * p * (h + h * (a.kv / a.heads) + s / 2.0)
        scale = 1.5 if a.gated else 1.0
        mlp = 4.0 * (a.ffn / h) * scale * h * h
        moe = 4.0 * h * a.moe_ffn * a.top_k * scale + 4.0 * h * a.shared_ffn * scale
        mamba = (2.0 * h * (2 * d_in + 2 * a.mamba_groups * a.mamba_state + a.mamba_heads)
                 + 7.0 * d_in * a.mamba_state + 2.0 * d_in * h)
        fwd = (a.attention_layers * attn + a.mlp_layers * mlp + a.mamba_layers * mamba
               + a.moe_layers * moe + 2.0 * h * vocab * (1 + a.mtp_layers))
        return 3.0 * fwd
    expansion = 3 if a.gated else 2
    L = a.layers
    moe_layers = a.moe_layers if a.family in ("moe-gqa", "moe-mla") else 0
    dense_layers = L - moe_layers
    mtp = a.mtp_layers
    if mtp:  # MTP blocks follow the last layer's type (MoE in every published MTP model)
        moe_layers += mtp
    layers = L + mtp
    if a.family == "moe-mla":
        qk = a.qk_nope_dim + a.qk_rope_dim
        q_term = a.q_lora_rank * (h + a.heads * qk + 1) if a.q_lora_rank else h * a.heads * qk
        per_layer = (q_term
                     + a.kv_lora_rank * (h + a.heads * (a.qk_nope_dim + a.v_head_dim) + 1)
                     + h * a.qk_rope_dim + a.heads * a.v_head_dim * h
                     + s * a.heads * qk / 2.0 + s * a.heads * a.v_head_dim / 2.0)
        self_attn = 6.0 * layers * per_layer
    else:
        q = a.dim_head * a.heads
        kv = a.dim_head * a.kv
        proj = h * (q + 2 * kv) + q * h
        full_core = q * s / 2.0 * 2
        if a.window and a.window_layers:
            w = a.window
            swa_ctx = w - w * (w - 1) / (2.0 * s) if w < s else s / 2.0
            swa_core = q * swa_ctx * 2
            n_swa = a.window_layers
            self_attn = 6.0 * ((layers - n_swa) * (proj + full_core) + n_swa * (proj + swa_core))
        else:
            self_attn = 6.0 * layers * (proj + full_core)
    mlp = 6.0 * h * (a.ffn * expansion * dense_layers
                     + a.moe_ffn * a.top_k * expansion * moe_layers
                     + a.shared_ffn * expansion * moe_layers)
    mtp_extra = 6.0 * mtp * (3 * h + 2 * h * h)
    logits = 6.0 * h * vocab * (mtp + 1)
    return mlp + self_attn + mtp_extra + logits


_COUNTERS["megatron-bridge"] = _megatron_bridge


def source_flops_per_token(
    arch: Architecture, convention: str, seq_len: int, *, tp: int = 1,
) -> float:
    """Training FLOPs per token as the named publisher counts them (``arch`` may carry the
    publisher's own parameter overrides, see ``reference/conventions.toml``)."""
    _need_published(arch)
    counter = _COUNTERS.get(convention)
    if counter is not None:
        return counter(arch, seq_len, tp)
    raise NotInCatalogue(
        f"FLOPs convention {convention!r} cannot be computed from the architecture",
        field="flops_convention", expected=" / ".join(sorted(CONVENTIONS)),
    )
