"""The monitoring read from files: saved Prometheus answers (captured from Debian's
prometheus), Slurm node events, Kubernetes events; and every way such input can be wrong."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest

from cmax.errors import ManifestError, MonitoringError
from cmax.ingest.monitoring.kube import read_kubernetes
from cmax.ingest.monitoring.prometheus import fetch_range, parse_answers
from cmax.ingest.monitoring.slurm_events import expand_hostlist, read_events, read_reasons
from cmax.ingest.monitoring.witness import span_hours
from cmax.pipeline import assess
from tests.fakes import manifest_text
from tests.paths import DATA

UTC = dt.UTC
MONITORING = DATA / "monitoring"
OCT, NOV = dt.datetime(2026, 10, 1, tzinfo=UTC), dt.datetime(2026, 11, 1, tzinfo=UTC)
LOG = ("start,end,node,gpu,category,planned,description\n"
       "2026-10-03T10:03:20Z,2026-10-03T22:33:20Z,gpu-001,,Host,false,kernel panic\n"
       "2026-10-28T02:00:00Z,2026-10-28T04:00:00Z,gpu-003,,Host Maintenance,true,"
       "scheduled firmware update\n")
SLA = "[sla]\nuptime_pct = 99.9\ncredits = [[99.9, 10], [99.0, 25], [95.0, 100]]\n"


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def bundle(root: Path, monitoring: str, files: Mapping[str, Path | str], *, log: str = LOG,
           extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "incidents.csv").write_text(log)
    for rel, src in files.items():
        if isinstance(src, Path):
            shutil.copy(src, root / rel)
        else:
            (root / rel).write_text(src)
    (root / "cmax.toml").write_text(manifest_text(
        '[reliability]\nincidents = "incidents.csv"\nperiod_start = 2026-10-01\n'
        f"period_end = 2026-10-31\ngpus_in_service = 32\n\n[monitoring]\n{monitoring}\n"
        f"{SLA}{extra}", nodes=4, date="2026-10-15"))
    return root


def saved(root: Path, **kw: str) -> Path:
    return bundle(root, 'up_answer = "up.json"\ngpus_answer = "gpus.json"\n'
                  'xid_answer = "xid.json"\n',
                  {f"{n}.json": MONITORING / f"prometheus_query_range_{n}.json"
                   for n in ("up", "gpus", "xid")}, **kw)


def test_saved_answers_give_the_same_accounting_offline(tmp_path: Path) -> None:
    """Answers captured at a one-hour step: each outage within one step of the truth."""
    card = assess(saved(tmp_path / "b"))
    sla = card.sla
    assert sla is not None and sla.witness == "both" and sla.monitoring_resolution_s == 3600
    assert sla.downtime_node_hours_monitoring == pytest.approx(12.5 + 42.0, abs=2.0)
    assert sla.nodes_in_breach == ["gpu-001", "gpu-004"]
    rules = {f.rule: f.message for f in card.findings}
    assert "gpu-004" in rules["reliability.outage-not-in-log"]
    assert "gpu-001" not in rules["reliability.outage-not-in-log"]
    assert "gpu-002 GPU 7 Xid 79" in rules["reliability.xid-not-in-log"]
    assert any("node-hours with fewer GPUs reporting" in n for n in sla.notes)


def test_a_saved_answer_that_is_not_one_is_one_error(tmp_path: Path) -> None:
    for text, match in (("<html>Grafana</html>", "not JSON"),
                        ('{"status":"error","errorType":"bad_data","error":"parse error"}',
                         "Prometheus answered with an error: bad_data: parse error"),
                        ('{"status":"success","data":{"resultType":"vector","result":[]}}',
                         "not a range query's")):
        root = bundle(tmp_path / str(len(text)), 'up_answer = "up.json"\n', {"up.json": text})
        with pytest.raises(MonitoringError, match=match) as err:
            assess(root)
        assert err.value.file == "up.json"


def test_answers_split_over_several_lines_are_joined() -> None:
    one = (MONITORING / "prometheus_query_range_up.json").read_text()
    series = parse_answers(one + "\n" + one, where="x")
    assert len(series) == 4 and len(series[0].points) == 744


def test_an_instance_the_regex_cannot_map_is_one_error(tmp_path: Path) -> None:
    root = saved(tmp_path / "b", extra="")
    text = (root / "cmax.toml").read_text().replace(
        'xid_answer = "xid.json"\n', 'xid_answer = "xid.json"\ninstance_regex = "^node-(\\\\d+)"\n')
    (root / "cmax.toml").write_text(text)
    with pytest.raises(MonitoringError, match="instance_regex") as err:
        assess(root)
    assert err.value.field == "monitoring.instance_regex"


@pytest.mark.parametrize(("section", "match"), [
    ('prometheus = "http://admin:secret@prom:9090"', "without user or password"),
    ('prometheus = "ftp://prom"', "http:// or https://"),
    ('prometheus = "http://prom:9090"\nup_answer = "up.json"', "not both"),
    ('up = "up"', "a source"),
])
def test_monitoring_sections_that_cannot_work_are_refused(tmp_path: Path, section: str,
                                                          match: str) -> None:
    root = bundle(tmp_path / "b", section, {})
    with pytest.raises(ManifestError, match=match):
        assess(root)


def test_credentials_are_never_sent_in_clear_text() -> None:
    with pytest.raises(MonitoringError, match=r"clear text to prom\.example"):
        fetch_range("http://prom.example:9090", "up", 0, 3600, 60,
                    env={"CMAX_PROMETHEUS_TOKEN": "t0ken"})


def test_sacctmgr_events_are_outages_per_node() -> None:
    nodes = {n.host: n for n in read_events(
        (MONITORING / "sacctmgr_show_event.txt").read_text(), where="e", start=OCT, end=NOV,
        zone="UTC")}
    assert sorted(nodes) == ["gpu-001", "gpu-003", "gpu-004", "gpu-006", "gpu-007"]
    assert nodes["gpu-001"].down == ((at("2026-10-03T10:03:20"), at("2026-10-03T22:33:20")),)
    assert nodes["gpu-006"].down == nodes["gpu-004"].down  # one event, a host list
    assert nodes["gpu-007"].down == ((at("2026-10-30T20:00:00"), NOV),)  # still open
    assert "MAINT" in nodes["gpu-003"].reasons[0][1]


def test_slurm_times_are_read_in_the_stated_zone() -> None:
    nodes = read_events((MONITORING / "sacctmgr_show_event.txt").read_text(), where="e",
                        start=OCT, end=NOV, zone="Europe/Paris")
    gpu1 = next(n for n in nodes if n.host == "gpu-001")
    assert gpu1.down[0][0] == at("2026-10-03T08:03:20")  # CEST is UTC+2


def test_sinfo_reasons_are_down_to_the_end_of_the_period() -> None:
    nodes = {n.host: n for n in read_reasons((MONITORING / "sinfo_R.txt").read_text(),
                                             where="r", start=OCT, end=NOV, zone="UTC")}
    assert sorted(nodes) == ["gpu-007", "gpu-010", "gpu-011"]
    assert span_hours(nodes["gpu-010"].down, OCT, NOV) == pytest.approx(
        (NOV - at("2026-10-31T22:15:09")).total_seconds() / 3600)


def test_kubernetes_node_events_pair_not_ready_with_ready() -> None:
    nodes = {n.host: n for n in read_kubernetes(
        (MONITORING / "kubectl_get_events.json").read_text(), where="k", start=OCT, end=NOV)}
    assert sorted(nodes) == ["gpu-001", "gpu-004"]  # the pod's event is not a node's
    assert nodes["gpu-001"].down == ((at("2026-10-03T10:04:01"), at("2026-10-03T22:34:12")),)
    assert nodes["gpu-004"].down == ((at("2026-10-12T01:10:41"), NOV),)


def test_slurm_and_kubernetes_witness_the_sla_beside_the_log(tmp_path: Path) -> None:
    card = assess(bundle(tmp_path / "b", 'slurm_events = "events.txt"\n'
                         'kubernetes = "events.json"\n',
                         {"events.txt": MONITORING / "sacctmgr_show_event.txt",
                          "events.json": MONITORING / "kubectl_get_events.json"}))
    sla = card.sla
    assert sla is not None and sla.witness == "both" and sla.monitoring_resolution_s is None
    # gpu-004 and gpu-006 42 h (Slurm), gpu-004 open from 01:10:41 (Kubernetes), gpu-007 open
    # from Oct 30 20:00; gpu-003's maintenance is the log's planned row: not counted
    assert sla.nodes_in_breach == ["gpu-001", "gpu-004", "gpu-006", "gpu-007"]
    unlogged = next(f for f in card.findings if f.rule == "reliability.outage-not-in-log")
    assert "gpu-004 2026-10-12 01:10 UTC" in unlogged.message


@pytest.mark.parametrize(("text", "match"), [
    ("Cluster|NodeName|State\naurora|gpu-001|DOWN\n", "no timestart column"),
    ("Cluster|NodeName|TimeStart|TimeEnd\naurora|gpu-001|yesterday|Unknown\n",
     "unreadable event"),
    ("Cluster|NodeName|TimeStart|TimeEnd\naurora|gpu-[a-c]|2026-10-01T00:00:00|Unknown\n",
     "host list range"),
])
def test_a_slurm_file_that_is_not_sacctmgr_output_is_one_error(text: str, match: str) -> None:
    with pytest.raises(MonitoringError, match=match) as err:
        read_events(text, where="events.txt", start=OCT, end=NOV, zone="UTC")
    assert err.value.file == "events.txt"


def test_host_lists() -> None:
    assert expand_hostlist("gpu[001-003,007],login1") == ["gpu001", "gpu002", "gpu003", "gpu007",
                                                          "login1"]
    assert expand_hostlist("node-9") == ["node-9"]


def test_the_monitoring_is_a_witness_of_the_incident_logs_nodes(tmp_path: Path) -> None:
    """With no other evidence naming hosts, the monitoring does: a log row on a node of
    another naming scheme is an incident of another cluster; the cluster's own rows are not."""
    files = {"events.txt": MONITORING / "sacctmgr_show_event.txt"}
    clean = assess(bundle(tmp_path / "a", 'slurm_events = "events.txt"\n', files))
    assert "reliability.nodes-outside-cluster" not in {f.rule for f in clean.findings}
    foreign = LOG + "2026-10-09T01:00:00Z,2026-10-09T02:00:00Z,eos0042,,Host,false,reboot\n"
    card = assess(bundle(tmp_path / "b", 'slurm_events = "events.txt"\n', files, log=foreign))
    found = next(f for f in card.findings if f.rule == "reliability.nodes-outside-cluster")
    assert "eos0042" in found.message
