"""Trend reports: counting rules, escaping, charts, byte-identical HTML and PDF."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from cmax.history import AuditResult, run_audit
from cmax.history.drift import RunPoint
from cmax.history.trend import (
    incidents_per_month,
    render_trend_reports,
    report_stem,
    sla_periods,
)
from tests.history.history_fakes import fake_assess, write_run


def point(run_dir: str, **row: Any) -> RunPoint:
    base: dict[str, Any] = {"period_start": None, "period_end": None, "incident_dates": None,
                            "incident_counts": None, "sla_measured_pct": None,
                            "sla_worst_pct": None, "sla_node_months": None,
                            "sla_node_months_below": None}
    base.update(row)
    ts = dt.datetime.fromisoformat(run_dir).replace(tzinfo=dt.UTC)
    return RunPoint("c1", run_dir, ts, base)


def d(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def test_overlapping_periods_count_each_day_once_from_the_newest_run() -> None:
    # quarterly windows re-reported every month: Jan-Mar then Feb-Apr
    first = point("2026-04-01", period_start=d("2026-01-01"), period_end=d("2026-03-31"),
                  incident_dates=[d("2026-01-10"), d("2026-02-10"), d("2026-03-10")],
                  incident_counts=[1, 2, 3])
    second = point("2026-05-01", period_start=d("2026-02-01"), period_end=d("2026-04-30"),
                   incident_dates=[d("2026-02-10"), d("2026-04-02")],
                   incident_counts=[5, 1])
    # Jan only in the first run (1); Feb from the newer run (5, not 2+5); Mar covered by the
    # newer run, which saw nothing (0, not 3); Apr 1
    assert incidents_per_month([first, second]) == [
        ("2026-01", 1), ("2026-02", 5), ("2026-03", 0), ("2026-04", 1)]


def test_sla_periods_keep_the_newest_report_of_a_period() -> None:
    sla = {"sla_contracted_pct": 99.9, "sla_credit_pct": 0.0}
    runs = [
        point("2026-02-01", period_start=d("2026-01-01"), period_end=d("2026-01-31"),
              sla_measured_pct=99.0, sla_met=False, **sla),
        point("2026-02-15", period_start=d("2026-01-01"), period_end=d("2026-01-31"),
              sla_measured_pct=99.95, sla_met=True, **sla),
        point("2026-03-01", period_start=d("2026-02-01"), period_end=d("2026-02-28"),
              sla_measured_pct=99.5, sla_met=False, sla_worst_pct=97.0, sla_node_months=64,
              sla_node_months_below=8, **sla),
    ]
    periods = sla_periods(runs)
    assert [(p.label, p.measured, p.met, p.run) for p in periods] == [
        ("2026-01", 99.95, True, "2026-02-15"), ("2026-02", 99.5, False, "2026-03-01")]
    # 56 of 64 node-months met the SLA; without node-month detail it is all or nothing
    assert [p.compliance_pct for p in periods] == [100.0, 87.5]


def test_report_names_are_safe_and_distinct() -> None:
    assert report_stem("h100-east.a_1") == "cluster-h100-east.a_1.trend"
    odd = report_stem("../etc passwd")
    assert "/" not in odd and " " not in odd and odd.startswith("cluster-.._etc_passwd-")
    assert report_stem("a b") != report_stem("a_b")


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> AuditResult:
    root = tmp_path_factory.mktemp("runs")
    for month in range(1, 5):
        ratio = 0.90 if month == 4 else 1.00
        write_run(root, "east <b>", f"2026-{month:02d}-02",
                  provider="Evil <script>alert(1)</script>",
                  workloads=[["llama3.1-70b", "fp8", 512, ratio, ratio - 0.01, ratio + 0.01]],
                  tier="Gold" if month < 4 else "Silver", exemplar_pass=month == 1,
                  sla=[99.9, 99.95 if month != 3 else 99.5, month != 3, 0 if month != 3 else 10],
                  period=[f"2026-{month:02d}-01", f"2026-{month:02d}-28"],
                  incidents=[[f"2026-{month:02d}-05", month]])
        write_run(root, "west", f"2026-{month:02d}-03",
                  workloads=[["llama3.1-70b", "fp8", 512, 1.0, 0.99, 1.01]])
    return run_audit(root, assess=fake_assess)


def test_html_reports_escape_bundle_text_and_embed_svg(audited: AuditResult,
                                                       tmp_path: Path) -> None:
    files = render_trend_reports(audited, tmp_path, pdf=False)
    names = [f.name for f in files]
    assert names[0] == "fleet.trend.html" and len(names) == 3
    fleet = (tmp_path / "fleet.trend.html").read_text()
    cluster = (tmp_path / names[1]).read_text()
    assert "<script>alert" not in fleet + cluster
    assert "Evil &lt;script&gt;alert(1)&lt;/script&gt;" in cluster
    assert "east &lt;b&gt;" in fleet
    assert cluster.count('src="data:image/svg+xml;base64,') == 4  # ratio, tier, incidents, SLA
    assert "regression vs previous" in cluster and "tier down" in cluster
    assert "2026-03-01 – 2026-03-28" in cluster and "breached" in cluster
    assert 'href="' + names[1] + '"' in fleet
    assert "http://" not in fleet and "https://" not in fleet


def test_reports_are_byte_identical_and_pdfs_carry_the_drift(tmp_path: Path) -> None:
    from pypdf import PdfReader

    root = tmp_path / "runs"
    for month, ratio in ((1, 1.0), (2, 0.9)):
        write_run(root, "east <b>", f"2026-{month:02d}-02", tier="Gold" if month < 2 else "Bronze",
                  workloads=[["llama3.1-70b", "fp8", 512, ratio, ratio - 0.01, ratio + 0.01]])
    result = run_audit(root, assess=fake_assess)
    a = render_trend_reports(result, tmp_path / "a")
    b = render_trend_reports(result, tmp_path / "b")
    assert [f.name for f in a] == [f.name for f in b]
    for fa, fb in zip(a, b, strict=True):
        assert fa.read_bytes() == fb.read_bytes(), fa.name
    pdf = next(f for f in a if f.name.startswith("cluster-east") and f.suffix == ".pdf")
    reader = PdfReader(io.BytesIO(pdf.read_bytes()))
    text = "".join(page.extract_text() for page in reader.pages)
    assert "Audit trend" in text and "east <b>" in text
    drift = json.loads(reader.attachments["drift.json"][0])
    assert {i["kind"] for i in drift} >= {"regression_vs_previous", "tier_down"}


def test_the_trend_shows_only_ratios_that_count(tmp_path: Path) -> None:
    """The bf16 series of a cluster whose newest run is an fp8 log declared bf16 at 152.7 %:
    the table shows the honest 0.990 and its own row for the fp8 log, not counted."""
    root = tmp_path / "runs"
    bf16 = ["llama3.1-405b", "bf16", 512]
    write_run(root, "east", "2026-01-02", workloads=[[*bf16, 0.99, 0.98, 1.0]])
    write_run(root, "east", "2026-02-02", workloads=[[*bf16, 1.527, 1.52, 1.53]],
              withheld={0: {"precision": "fp8"}}, exemplar_pass=False)
    files = render_trend_reports(run_audit(root, assess=fake_assess), tmp_path / "out",
                                 pdf=False)
    page = next(f for f in files if f.name.startswith("cluster-east")).read_text()
    assert "1.527" in page  # named, as not counted
    rows = re.findall(r"<tr><td>(llama3\.1-405b[^<]*)(.*?)</tr>", page, flags=re.S)
    cells = {label: re.findall(r'<td class="num">([^<]*)</td>', rest) for label, rest in rows}
    assert cells["llama3.1-405b bf16 512 GPUs "][:4] == ["1", "0.990", "0.980–1.000", "0.990"]
    held = "llama3.1-405b bf16 512 GPUs (log states precision=fp8) "
    assert cells[held][:4] == ["0", "–", "–", "–"]
    assert "1 run not counted; newest, 2026-02-02: 1.527 withheld" in rows[1][1]
    # and the drift table names it as a problem to review, with why and since when
    drift = re.findall(r'<td class="problem">not counted</td><td>([^<]*)</td>(.*?)</tr>',
                       page, flags=re.S)
    assert [label for label, _ in drift] == [held.strip()]
    assert ("run 2026-02-02 is withheld (identity.precision, sanity.too-good-to-be-true): "
            "its ratio 1.527 does not count, so it was not compared; the last run whose ratio "
            "of llama3.1-405b bf16 512 GPUs counts is 2026-01-02 (ratio 0.990)") in drift[0][1]
