"""Read one ``[[nccl]] path``: a file, or a folder of network and node-health evidence.

A folder is how pairwise and split runs arrive (one nccl-tests output per node pair or subset,
plus a ``dcgmi diag -j`` result per node): every file in it, at any depth, whose content is
nccl-tests text, nccl-tests JSON or dcgmi diag JSON is read; other files (READMEs, scripts)
are skipped, and a folder with no nccl-tests output at all is an error. A single file must be
nccl-tests output (text or JSON).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from cmax.errors import CmaxError, EvidenceFormatError
from cmax.ingest.evidence import NCCL_SCHEMA, NODE_HEALTH_SCHEMA, conform, table_named
from cmax.ingest.formats import Format, NcclFormat, NodeHealthFormat, Probe, identify
from cmax.ingest.reader import BundleReader

#: the tables an ``[[nccl]]`` entry fills, and the roles of the formats that may fill them
#: (a file named directly must be a collective measurement; a folder may also hold per-node
#: health results), from the table declarations
_FILE_ROLES = frozenset(table_named("nccl").roles)
_FOLDER_ROLES = _FILE_ROLES | frozenset(table_named("node_health").roles)


def files_of(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*")
                      if p.is_file() and not any(part.startswith(".")
                                                 for part in p.relative_to(path).parts))
    return [path]


def _detect(path: Path, in_folder: bool) -> tuple[Format[Any], Probe] | None:
    try:
        return identify(path)
    except CmaxError:
        if in_folder:
            return None  # not evidence (a README, a launch script): skipped
        raise


def network_files(reader: BundleReader, i: int, relative: str,
                  key: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(nccl rows, node-health rows) for the ``i``-th ``[[nccl]]`` entry."""
    target = reader.bundle.resolve(relative, field=key)
    folder = target.is_dir()
    frames: list[pl.DataFrame] = []
    health: list[pl.DataFrame] = []
    for path in files_of(target):
        found = _detect(path, folder)
        if found is None or (folder and found[0].role not in _FOLDER_ROLES):
            continue
        plugin, probe = found
        fmt = plugin.id
        if plugin.role not in (_FOLDER_ROLES if folder else _FILE_ROLES):
            raise EvidenceFormatError(f"file holds {fmt}, not nccl-tests output", file=path,
                                      expected=table_named("nccl").what,
                                      fix="check the manifest points at the right file")
        # the format's own role methods give the rows (cmax.ingest.formats; FORMATS edit)
        parsed = plugin.parse(probe)
        rel = reader.record(path, fmt, plugin.facts(parsed),
                            line_count=plugin.line_count(parsed, probe))
        if isinstance(plugin, NcclFormat):
            frames.append(plugin.frame(parsed, run_id=f"nccl[{i}]", source_file=rel, path=path))
        if isinstance(plugin, NcclFormat | NodeHealthFormat):
            node_rows = plugin.node_health(parsed, source_file=rel)
            if node_rows is not None:
                health.append(node_rows)
    if not frames:
        raise EvidenceFormatError("folder holds no nccl-tests output" if folder
                                  else "no nccl-tests rows", file=target,
                                  expected="all_reduce_perf (etc.) output files, text or -J JSON")
    nccl_rows = pl.concat([conform(f, NCCL_SCHEMA) for f in frames], how="vertical")
    node_rows_all = (pl.concat([conform(h, NODE_HEALTH_SCHEMA) for h in health],
                               how="vertical") if health
                     else pl.DataFrame(schema=NODE_HEALTH_SCHEMA))
    return nccl_rows, node_rows_all
