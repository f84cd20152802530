"""Read one ``[[nccl]] path``: a file, or a folder of network and node-health evidence.

A folder is how pairwise and split runs arrive (one nccl-tests output per node pair or subset,
plus a ``dcgmi diag -j`` result per node): every file in it, at any depth, whose content is
nccl-tests text, nccl-tests JSON or dcgmi diag JSON is read; other files (READMEs, scripts)
are skipped, and a folder with no nccl-tests output at all is an error. A single file must be
nccl-tests output (text or JSON).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from cmax.errors import CmaxError
from cmax.evidence import NCCL_SCHEMA, NODE_HEALTH_SCHEMA, conform
from cmax.ingest import dcgm, nccl, nccl_json
from cmax.ingest.detect import detect_format

if TYPE_CHECKING:
    from cmax.ingest.assemble import _Reader

NCCL_FORMATS = ("nccl-tests", "nccl-tests-json")
FOLDER_FORMATS = (*NCCL_FORMATS, "dcgm-diag")


def files_of(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*")
                      if p.is_file() and not any(part.startswith(".")
                                                 for part in p.relative_to(path).parts))
    return [path]


def _detect(path: Path, in_folder: bool) -> str | None:
    try:
        return detect_format(path)
    except CmaxError:
        if in_folder:
            return None  # not evidence (a README, a launch script): skipped
        raise


def network_files(reader: _Reader, i: int, relative: str,
                  key: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(nccl rows, node-health rows) for the ``i``-th ``[[nccl]]`` entry."""
    target = reader.bundle.resolve(relative, field=key)
    folder = target.is_dir()
    frames: list[pl.DataFrame] = []
    health: list[pl.DataFrame] = []
    for path in files_of(target):
        fmt = _detect(path, folder)
        if fmt is None or (folder and fmt not in FOLDER_FORMATS):
            continue
        if fmt not in (FOLDER_FORMATS if folder else NCCL_FORMATS):
            raise CmaxError(f"file holds {fmt}, not nccl-tests output", file=path,
                            expected=", ".join(NCCL_FORMATS),
                            fix="check the manifest points at the right file")
        run_id = f"nccl[{i}]"
        if fmt == "nccl-tests":
            tests = nccl.parse_nccl_tests(path)
            rel = reader.record(path, fmt, nccl.nccl_facts(tests))
            frames.append(nccl.nccl_frame(tests, run_id=run_id, source_file=rel, path=path))
        elif fmt == "nccl-tests-json":
            tests, node_rows = nccl_json.parse_nccl_json(path)
            rel = reader.record(path, fmt, nccl_json.json_facts(tests, path))
            frames.append(nccl.nccl_frame(tests, run_id=run_id, source_file=rel, path=path))
            health.append(node_rows.with_columns(pl.lit(rel).alias("source_file")))
        else:
            node_rows = dcgm.parse_dcgm(path)
            rel = reader.record(path, fmt)
            health.append(node_rows.with_columns(pl.lit(rel).alias("source_file")))
    if not frames:
        raise CmaxError("folder holds no nccl-tests output" if folder
                        else "no nccl-tests rows", file=target,
                        expected="all_reduce_perf (etc.) output files, text or -J JSON")
    nccl_rows = pl.concat([conform(f, NCCL_SCHEMA) for f in frames], how="vertical")
    node_rows_all = (pl.concat([conform(h, NODE_HEALTH_SCHEMA) for h in health],
                               how="vertical") if health
                     else pl.DataFrame(schema=NODE_HEALTH_SCHEMA))
    return nccl_rows, node_rows_all
