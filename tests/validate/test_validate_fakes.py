"""The honest-bundle fixture is what real ingest reads from the files it writes.

Every rule test breaks one thing in :class:`HonestBundle`; if the fixture's tables drifted from
what ingest produces, a rule could pass its tests and still miss (or raise on) real evidence.
"""

from __future__ import annotations

from pathlib import Path

from polars.testing import assert_frame_equal

from cmax.ingest.assemble import ingest
from cmax.ingest.evidence import TABLES
from cmax.submission.bundle import Bundle
from tests.validate.validate_fakes import HonestBundle


def test_honest_bundle_is_what_ingest_reads(tmp_path: Path) -> None:
    built = HonestBundle().build(tmp_path)
    read = ingest(Bundle(source=tmp_path, root=tmp_path, manifest=built.manifest))
    for table in TABLES:
        assert_frame_equal(getattr(built, table.name), getattr(read, table.name))
    assert {f.path: f for f in built.files} == {f.path: f for f in read.files}
    assert built.audit_cluster == read.audit_cluster
    assert [s.runs for s in built.mlperf_sets] == [s.runs for s in read.mlperf_sets]


def test_every_declared_file_is_recognised(tmp_path: Path) -> None:
    built = HonestBundle().build(tmp_path)
    assert {f.kind for f in built.files} == {"nemo2", "nccl-tests", "mlperf",
                                              "mlperf-system-json", "clustermax-audit",
                                              "incidents-csv"}
    assert built.incidents.height == 4 and built.nccl.height == 30
