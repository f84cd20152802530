"""GPU power telemetry from DCGM Exporter, as Prometheus returns it for a time range.

DCGM Exporter publishes ``DCGM_FI_DEV_POWER_USAGE`` (gauge, "Power draw (in W)",
NVIDIA/dcgm-exporter ``etc/default-counters.csv``) per GPU, labelled ``gpu`` (the index),
``UUID``, ``Hostname`` (and ``container``/``namespace``/``pod`` on Kubernetes); Prometheus adds
``instance`` (``host:port``) when it scrapes. Over a run the evidence is a range query's answer
(``/api/v1/query_range?query=DCGM_FI_DEV_POWER_USAGE&start=...&end=...&step=...``,
prometheus/prometheus ``docs/querying/api.md``): ``{"status": "success", "data": {"resultType":
"matrix", "result": [{"metric": {labels}, "values": [[<unix time>, "<watts>"], ...]}]}}`` —
times are UTC seconds, values strings (``"NaN"`` where the exporter had no reading). The host of
a series is its ``Hostname`` label, else its ``instance`` without the port.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from cmax.errors import EvidenceError
from cmax.ingest.facts import Fact
from cmax.ingest.formats._protocol import PowerFormat, Probe, register
from cmax.ingest.formats.nvidia_smi_power import power_frame

METRIC = "DCGM_FI_DEV_POWER_USAGE"

Series = list[tuple[str, int, list[tuple[float, float | None]]]]  # host, GPU, (time, watts)


def _looks_like(data: Any) -> bool:
    if not isinstance(data, dict) or data.get("status") != "success":
        return False
    body = data.get("data")
    if not isinstance(body, dict) or body.get("resultType") != "matrix":
        return False
    result = body.get("result")
    return (isinstance(result, list) and bool(result) and all(
        isinstance(r, dict) and isinstance(r.get("metric"), dict)
        and r["metric"].get("__name__") == METRIC for r in result))


def _series(data: dict[str, Any], probe: Probe) -> Series:
    out: Series = []
    for i, entry in enumerate(data["data"]["result"]):
        labels = entry["metric"]
        where = f"data.result[{i}]"
        host = str(labels.get("Hostname") or str(labels.get("instance") or "").rsplit(":", 1)[0])
        try:
            gpu = int(labels["gpu"])
            values = [(float(t), _watts(v)) for t, v in entry["values"]]
        except (KeyError, TypeError, ValueError, OverflowError):
            raise EvidenceError(f"{where}: a series without a GPU index or with a malformed "
                                "sample", file=probe.path,
                                expected='metric labels with "gpu" and "values": [[<unix '
                                'time>, "<watts>"], ...]',
                                fix="export the unmodified Prometheus range-query answer"
                                ) from None
        if not host:
            raise EvidenceError(f"{where}: the series names no host (no Hostname or instance "
                                "label)", file=probe.path,
                                fix="query DCGM_FI_DEV_POWER_USAGE with its Hostname label")
        out.append((host, gpu, values))
    return out


def _watts(value: Any) -> float | None:
    watts = float(value)
    if not math.isfinite(watts):
        return None
    if not 0 <= watts < 1e5:
        raise ValueError("power out of range")
    return watts


class DcgmExporterPower(PowerFormat[Series]):
    id = "dcgm-exporter-power"
    title = "GPU power telemetry (DCGM Exporter, Prometheus range query JSON)"
    tool = ("Prometheus /api/v1/query_range of DCGM Exporter's DCGM_FI_DEV_POWER_USAGE "
            "(NVIDIA/dcgm-exporter, prometheus/prometheus docs/querying/api.md)")
    sample = "ingest/power/dcgm_power_range.json"
    json_shape = staticmethod(_looks_like)

    def parse(self, probe: Probe) -> Series:
        data = probe.require_json("a Prometheus range-query answer for " + METRIC)
        return _series(data, probe)

    def summarise(self, parsed: Series, probe: Probe) -> dict[str, Any]:
        samples = [w for _, _, values in parsed for _, w in values]
        read = [w for w in samples if w is not None]
        return {"format": self.id, "hosts": len({h for h, _, _ in parsed}),
                "gpus": len({(h, g) for h, g, _ in parsed}), "samples": len(samples),
                "missing_readings": len(samples) - len(read),
                "mean_power_w": round(sum(read) / len(read), 3) if read else None}

    def facts(self, parsed: Series) -> tuple[Fact, ...]:
        return tuple(Fact("host", host, None, where="Hostname label")
                     for host in sorted({h for h, _, _ in parsed}))

    def frame(self, parsed: Series, *, source_file: str) -> pl.DataFrame:
        return power_frame([{"host": host, "gpu": gpu, "time_s": t, "power_w": w,
                             "source_file": source_file, "line": None}
                            for host, gpu, values in parsed for t, w in values])


register(DcgmExporterPower())
