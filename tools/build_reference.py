"""Build reference/baselines.csv from the research seed table.

Usage:  python tools/build_reference.py [SEED_CSV] [--out reference/]

The seed (reference/seed/dgxc_reference.csv) holds every published expected-performance
row with its original public source. This script gives each row cmax's canonical ids,
re-cites the original source (repo:path @ tag/commit), names the FLOPs convention the source
used, and flags source errata: known ones from the source's own history and any row whose
printed figures contradict each other (tokens/s vs step time, MFU or TFLOP/s vs step time under
the source's convention). Numbers are copied as printed, never corrected. It then rewrites
reference/SHA256SUMS. Run it again whenever the seed changes and bump reference/release.toml.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cmax.reference.architecture import Architecture, load_architectures  # noqa: E402
from cmax.reference.checksum import write_checksums  # noqa: E402
from cmax.reference.flops import source_flops_per_token  # noqa: E402

DEFAULT_SEED = ROOT / "reference" / "seed" / "dgxc_reference.csv"
TOLERANCE = 0.01  # a printed figure must follow from the others within 1 %

# CHANGELOG date of each DGXC release line (NVIDIA/dgxc-benchmarking:CHANGELOG). Point
# releases v25.05.01-.04 are not dated individually there: they take the v25.05 line date.
TAG_DATES = {
    "v24.11.1": "2024-12-13", "v25.01": "2025-02-11", "v25.01.1": "2025-02-13",
    "v25.02": "2025-03-17", "v25.02.01": "2025-03-17", "v25.02.02": "2025-03-17",
    "v25.03": "2025-04-18", "v25.04": "2025-04-30", "v25.04.01": "2025-04-30",
    "v25.04.02": "2025-04-30", "v25.05": "2025-06-10", "v25.05.01": "2025-06-10",
    "v25.05.02": "2025-06-10", "v25.05.03": "2025-06-10", "v25.05.04": "2025-06-10",
    "v25.05.05": "2025-10-22",
}

MODEL_IDS = {
    "DeepSeek-V3 671B": "deepseek-v3", "DeepSeekV3": "deepseek-v3",
    "DeepSeekV4 Flash": "deepseek-v4-flash", "GPT OSS 120B": "gpt-oss-120b",
    "GPT-3 175B": "gpt3-175b", "GPT3-175B": "gpt3-175b", "GPT-3 175B (PaxML)": "gpt3-175b",
    "GPT-3 5B (PaxML)": "gpt3-5b", "GPT3-5B": "gpt3-5b", "GPT3-20B": "gpt3-20b",
    "Grok-1 314B": "grok1-314b", "Kimi_K2": "kimi-k2",
    "LLAMA2-7B": "llama2-7b", "LLAMA2-13B": "llama2-13b", "LLAMA2-70B": "llama2-70b",
    "LLAMA2-7B SFT": "llama2-7b", "LLAMA2-13B SFT": "llama2-13b", "LLAMA2-70B SFT": "llama2-70b",
    "LLAMA2-7B LoRA": "llama2-7b", "LLAMA2-13B LoRA": "llama2-13b",
    "LLAMA2-70B LoRA": "llama2-70b", "Llama 2 70B (MaxText)": "llama2-70b",
    "LLAMA3-8B": "llama3.1-8b", "LLAMA3_8B": "llama3.1-8b", "Llama 3.1 8B": "llama3.1-8b",
    "Llama 3 8B SFT": "llama3.1-8b", "Llama 3 8B LoRA": "llama3.1-8b",
    "LLAMA3-70B": "llama3.1-70b", "LLAMA3_70B": "llama3.1-70b", "Llama 3.1 70B": "llama3.1-70b",
    "Llama 3 70B (MaxText)": "llama3.1-70b", "Llama 3 70B SFT": "llama3.1-70b",
    "Llama 3 70B LoRA": "llama3.1-70b",
    "LLAMA3.1_405B": "llama3.1-405b", "Llama 3.1 405B": "llama3.1-405b",
    "Llama 4 Maverick 400B": "llama4-maverick",
    "Nemotron-8B": "nemotron-8b", "Nemotron-22B": "nemotron-22b",
    "Nemotron-340B": "nemotron4-340b", "Nemotron-4 15B": "nemotron4-15b",
    "Nemotron-4 340B": "nemotron4-340b", "Nemotron-H 56B": "nemotronh-56b",
    "Nemotron_3_Nano": "nemotron3-nano", "Nemotron_3_Super": "nemotron3-super",
    "Nemotron_3_Ultra": "nemotron3-ultra", "Nemotron_3_5_Lightning": "nemotron3.5-lightning",
    "Qwen3_235B_a22B": "qwen3-235b-a22b", "Qwen3_30B_a3B": "qwen3-30b-a3b",
}

GPU_IDS = {"H100": "h100-sxm", "B200": "b200", "B300": "b300", "GB200": "gb200", "GB300": "gb300"}

PRECISIONS = {  # source label -> (canonical precision, recipe)
    "BF16": ("bf16", "bf16"), "FP8": ("fp8", "fp8"), "FP8-CS": ("fp8", "fp8-cs"),
    "FP8-MX": ("fp8", "mxfp8"), "MXFP8": ("fp8", "mxfp8"),
    "FP8-blockwise": ("fp8", "fp8-blockwise"), "NVFP4": ("nvfp4", "nvfp4"),
}

FRAMEWORKS = {
    "NeMo (NeMo-Launcher/Hydra)": "nemo1", "NeMo 2.0 (NeMo-Run)": "nemo2",
    "Megatron-Bridge (NeMo perf recipes)": "megatron-bridge",
    "NeMo (NeMo 24.07 perf summary)": "nemo1", "MaxText (JAX)": "maxtext",
    "PaxML (JAX)": "paxml",
}

PEAKS: dict[str, dict[str, float]] = {}

COLUMNS = [
    "baseline_id", "workload", "model", "task", "gpu", "precision", "precision_recipe",
    "alternate", "num_gpus", "seq_len", "gbs", "mbs", "tp", "pp", "cp", "ep", "vp", "layers",
    "proxy", "step_time_s", "tokens_per_s_per_gpu", "tokens_per_s_total_reported",
    "model_tflops_per_gpu", "mfu_pct", "framework", "framework_label", "container",
    "recipe_release", "recipe_release_last", "source", "source_repo", "source_path",
    "source_date", "flops_convention", "erratum", "notes", "source_model", "source_workload",
]


@dataclass
class Seed:
    line: int
    raw: dict[str, str]

    def get(self, key: str) -> str:
        return (self.raw.get(key) or "").strip()

    def num(self, key: str) -> float | None:
        text = self.get(key)
        return float(text) if text else None

    def int_(self, key: str) -> int | None:
        text = self.get(key)
        return int(text) if text else None


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text))


def parse_source(seed: Seed) -> dict[str, str]:
    """Split the seed's source_path into path, tags / commit and a one-line citation."""
    repo, text = seed.get("source_repo"), seed.get("source_path")
    path, _, ref = text.partition(" @ ")
    out = {"source_repo": repo, "source_path": path.strip(), "recipe_release": "",
           "recipe_release_last": ""}
    if ref.startswith("tag "):
        tags = ref[4:].strip()
        first, _, last = tags.partition("..")
        last = last or first
        out["recipe_release"], out["recipe_release_last"] = first, last
        out["source"] = f"{repo}:{path.strip()} @ {tags}"
        out["source_date"] = TAG_DATES[first]
    else:
        out["source"] = f"{repo}:{path.strip()} @ {ref.strip()}"
        container = seed.get("container_version").rsplit(":", 1)[-1]
        year, month = _version(container)[:2]
        out["source_date"] = f"20{year:02d}-{month:02d}-01"
    return out


def task_of(seed: Seed) -> str:
    workload = seed.get("workload")
    if "lora" in workload:
        return "lora"
    if "sft" in workload:
        return "sft"
    return "pretrain"


def convention_of(seed: Seed, model: str, task: str, arch: Architecture) -> str:
    repo, path = seed.get("source_repo"), seed.get("source_path")
    if not arch.published:
        return "source-implied"
    if repo == "NVIDIA-NeMo/Megatron-Bridge":
        return "megatron-bridge-packed-lora" if task == "lora" else "megatron-bridge"
    if repo == "NVIDIA/NeMo":
        if task != "pretrain":
            return "nemo-packed-finetune"
        if model.startswith("gpt3"):
            return "nvidia-gpt"
        if model.startswith("llama"):
            return "nvidia-llama"
        return "nvidia-nemotron4"
    if path.startswith(("nemo_megatron/", "paxml/")):
        return "nvidia-gpt"
    if path.startswith("ft_llama3"):
        return "nvidia-llama-finetune-lora" if task == "lora" else "nvidia-llama-finetune"
    if path.startswith(("llama3.1/", "maxtext/")):
        return "nvidia-llama"
    if path.startswith("nemotron/README_"):
        return "nvidia-gpt"
    if path.startswith("nemotron/"):
        return "nvidia-nemotron4"
    if path.startswith("grok1/"):
        return "nvidia-grok1"
    if path.startswith("llama4/"):
        return "nvidia-llama4"
    if path.startswith("nemotronh/"):
        return "nvidia-nemotronh"
    if path.startswith("deepseek_v3/"):
        return "nemo-deepseekv3"
    raise SystemExit(f"seed line {seed.line}: no FLOPs convention rule for {repo}:{path}")


def known_errata(
    seed: Seed, model: str, convention: str, conventions: dict[str, object],
) -> list[str]:
    """Errata the sources themselves document or that research found in them (dgxc.md §2.4)."""
    notes, path = seed.get("notes"), seed.get("source_path")
    found: list[str] = []
    overrides = conventions.get("overrides", {})
    assert isinstance(overrides, dict)
    over = overrides.get(convention, {}).get(model, {})
    if isinstance(over, dict) and "erratum" in over:
        found.append(str(over["erratum"]))
    if '"8.7  5"' in notes:
        found.append("step time printed as '8.7  5' in the source; read as 8.75, which matches "
                     "the printed tokens/s (8192 x 126 / 8.75)")
    if "VP=6" in notes:
        found.append("the v25.02 table titles say VP=12 while the v25.04 config table lists VP=6 "
                     "for the same numbers (and GBS '1204' for 1024 at 512 GPUs)")
    if path.startswith("ft_llama3/README_8b"):
        found.append("table titles print PP=41 (typo); the v25.04 config table says PP=1")
    return found


def _peak(gpu: str, precision: str) -> float | None:
    return PEAKS.get(gpu, {}).get(precision)


def consistency_errata(
    row: dict[str, str], arch: Architecture | None, convention: str, unverified: set[str],
) -> list[str]:
    """Printed figures that contradict each other by more than 1 %."""
    found: list[str] = []

    def f(key: str) -> float | None:
        return float(row[key]) if row[key] else None

    step, gbs, seq, n = f("step_time_s"), f("gbs"), f("seq_len"), f("num_gpus")
    total = f("tokens_per_s_total_reported")
    tok, tflops, mfu = f("tokens_per_s_per_gpu"), f("model_tflops_per_gpu"), f("mfu_pct")
    peak = _peak(row["gpu"], row["precision"])
    if step and gbs and seq and total:
        expected = seq * gbs / step
        if abs(total / expected - 1) > TOLERANCE:
            found.append(f"printed tokens/s {total:.0f} disagrees with seq x GBS / step time = "
                         f"{expected:.0f} ({100 * (total / expected - 1):+.1f}%)")
    if arch is None or not arch.published or convention not in {
        "nvidia-gpt", "nvidia-llama", "nvidia-llama-finetune", "nvidia-llama-finetune-lora",
        "nvidia-nemotron4", "nvidia-grok1", "nvidia-llama4", "nvidia-nemotronh",
        "nemo-deepseekv3", "megatron-bridge",
    }:
        return found
    tp = int(row["tp"]) if row["tp"] else 1
    fpt = source_flops_per_token(arch, convention, int(seq) if seq else 0, tp=tp) if seq else None
    if fpt and step and gbs and seq and n and mfu is not None and peak:
        calc = 100.0 * fpt * seq * gbs / step / n / (peak * 1e12)
        if abs(mfu / calc - 1) > TOLERANCE:
            text = (f"printed MFU {mfu}% does not follow from the printed step time under the "
                    f"source's FLOPs convention ({convention}: {calc:.2f}%)")
            fp8 = _peak(row["gpu"], "fp8")
            as_fp8 = calc * peak / fp8 if fp8 else 0.0
            if row["precision"] == "bf16" and as_fp8 and abs(mfu / as_fp8 - 1) < TOLERANCE:
                text += "; it matches the FP8 peak used as the denominator"
            found.append(text)
    if fpt and step and gbs and seq and n and tflops:
        calc_t = fpt * seq * gbs / step / n / 1e12
        if abs(tflops / calc_t - 1) > TOLERANCE:
            found.append(f"printed {tflops} TFLOP/s/GPU does not follow from the printed step "
                         f"time under {convention} ({calc_t:.1f})")
    if (fpt and tok and tflops and not step and convention == "megatron-bridge"
            and row["model"] not in unverified):
        implied = tflops * 1e12 / tok
        if abs(implied / fpt - 1) > TOLERANCE:
            found.append(f"printed {tflops:g} TFLOP/s/GPU and {tok:g} tokens/s/GPU imply "
                         f"{implied:.4g} FLOPs/token; Megatron-Bridge's formula gives "
                         f"{fpt:.4g} ({100 * (implied / fpt - 1):+.1f}%)")
    return found


def build(seed_path: Path, out_dir: Path) -> list[dict[str, str]]:
    archs = load_architectures(out_dir / "models.toml")
    conventions = tomllib.loads((out_dir / "conventions.toml").read_text(encoding="utf-8"))
    unverified = set(conventions.get("megatron_bridge", {}).get("unverified", []))
    gpus = tomllib.loads((out_dir / "gpus.toml").read_text(encoding="utf-8"))["gpus"]
    PEAKS.clear()
    PEAKS.update({gid: {k: float(v) for k, v in spec["peak_tflops"].items()}
                  for gid, spec in gpus.items()})
    with seed_path.open(newline="", encoding="utf-8") as fh:
        seeds = [Seed(i + 2, r) for i, r in enumerate(csv.DictReader(fh))]
    rows: list[dict[str, str]] = []
    for seed in seeds:
        label = seed.get("model")
        proxy_match = re.match(r"(.*) \(proxy, (\d+) layers\)$", label)
        base_label = proxy_match.group(1) if proxy_match else label
        model = MODEL_IDS[base_label]
        arch = archs[model]
        task = task_of(seed)
        layers = int(proxy_match.group(2)) if proxy_match else None
        precision, recipe = PRECISIONS[seed.get("precision")]
        src = parse_source(seed)
        convention = convention_of(seed, model, task, arch)
        notes = seed.get("notes")
        row = {
            "workload": model if task == "pretrain" else f"{model}-{task}",
            "model": model, "task": task, "gpu": GPU_IDS[seed.get("gpu")],
            "precision": precision, "precision_recipe": recipe,
            "alternate": str("parenthesised alternate value" in notes).lower(),
            "num_gpus": seed.get("num_gpus"), "seq_len": seed.get("seq_len"),
            "gbs": seed.get("gbs"), "mbs": seed.get("mbs"),
            "tp": seed.get("tp"), "pp": seed.get("pp"), "cp": seed.get("cp"),
            "ep": seed.get("ep"), "vp": seed.get("vp"),
            "layers": str(layers) if layers else "", "proxy": str(proxy_match is not None).lower(),
            "step_time_s": seed.get("step_time_s"),
            "tokens_per_s_per_gpu": seed.get("tokens_per_s_per_gpu"),
            "tokens_per_s_total_reported": seed.get("tokens_per_s_total_reported"),
            "model_tflops_per_gpu": seed.get("model_tflops_per_gpu"),
            "mfu_pct": seed.get("mfu"),
            "framework": FRAMEWORKS[seed.get("framework")],
            "framework_label": seed.get("framework"),
            "container": seed.get("container_version"),
            **src, "flops_convention": convention, "notes": notes,
            "source_model": label, "source_workload": seed.get("workload"),
        }
        src_arch = arch
        over = conventions.get("overrides", {}).get(convention, {}).get(model)
        if over:
            src_arch = src_arch.with_overrides(over)
        if layers:
            src_arch = src_arch.with_layers(layers)
        if "(w/o MTP)" in notes:  # the recipe ran DeepSeek-V3 without its MTP module
            src_arch = src_arch.with_overrides({"mtp_layers": 0})
        errata = known_errata(seed, model, convention, conventions)
        errata += consistency_errata(row, src_arch, convention, unverified)
        row["erratum"] = "; ".join(errata)
        rows.append(row)
    assign_ids(rows)
    rows.sort(key=lambda r: (r["workload"], r["gpu"], r["precision"], int(r["num_gpus"]),
                             r["source_date"], r["baseline_id"]))
    return rows


def assign_ids(rows: list[dict[str, str]]) -> None:
    """Stable, human-readable ids: source + release + workload + gpu + precision + scale."""
    seen: dict[str, int] = {}
    for row in rows:
        if row["recipe_release"]:
            origin = f"dgxc-{row['recipe_release']}"
        else:
            kind = "mbridge" if row["source_repo"] == "NVIDIA-NeMo/Megatron-Bridge" else "nemo"
            origin = f"{kind}-{row['container'].rsplit(':', 1)[-1]}"
        parts = [origin, row["workload"], row["gpu"], row["precision_recipe"], row["num_gpus"]]
        if row["proxy"] == "true":
            parts.append(f"proxy{row['layers']}l")
        if row["framework"] in ("maxtext", "paxml"):
            parts.append(row["framework"])
        if "strong scaling" in row["notes"]:
            parts.append("strong")
        if row["alternate"] == "true":
            parts.append("alt")
        base = "-".join(parts)
        seen[base] = seen.get(base, 0) + 1
        row["baseline_id"] = base if seen[base] == 1 else f"{base}-{seen[base]}"
    dupes = [b for b, c in seen.items() if c > 1]
    if dupes:
        print(f"note: {len(dupes)} ids needed a numeric suffix: {dupes[:5]}", file=sys.stderr)


def write(rows: list[dict[str, str]], out: Path) -> None:
    tmp = out.with_suffix(".tmp")
    with tmp.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row.get(k, "") for k in COLUMNS})
    tmp.replace(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("seed", nargs="?", type=Path, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=ROOT / "reference")
    args = parser.parse_args(argv)
    rows = build(args.seed, args.out)
    write(rows, args.out / "baselines.csv")
    flagged = sum(1 for r in rows if r["erratum"])
    print(f"wrote {len(rows)} baselines ({flagged} with errata) to {args.out / 'baselines.csv'}")
    write_checksums(args.out)
    print(f"rewrote {args.out / 'SHA256SUMS'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
