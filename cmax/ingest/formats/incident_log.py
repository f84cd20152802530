"""Incident logs (CSV or JSON): the provider's record of interruptions, for reliability.

A row names start, end, node, GPU, category and whether it was planned (research
reliability.md); the CSV is recognised by its header, the JSON by an array of such objects or
``{"incidents": [...]}``.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from cmax.facts import Fact
from cmax.ingest import incidents
from cmax.ingest.formats import IncidentFormat, Probe, register

Rows = list[dict[str, object]]


class _IncidentLog(IncidentFormat[Rows]):
    def summarise(self, parsed: Rows, probe: Probe) -> dict[str, Any]:
        return incidents.incidents_summary(parsed, self.id)

    def facts(self, parsed: Rows) -> tuple[Fact, ...]:
        return incidents.incident_facts(parsed)

    def frame(self, parsed: Rows, *, source_file: str) -> pl.DataFrame:
        return incidents.incidents_frame(parsed, source_file=source_file)


class IncidentsCsv(_IncidentLog):
    id = "incidents-csv"
    title = "Incident log (CSV)"
    tool = "the provider (header `start,end,node,gpu,category,planned[,description]`)"
    sample = "ingest/incidents.csv"
    priority = 40

    def sniff(self, probe: Probe) -> bool:
        return incidents.looks_like_incidents_csv(probe.first_line)

    def parse(self, probe: Probe) -> Rows:
        return incidents.parse_incidents_csv(probe.path)


class IncidentsJson(_IncidentLog):
    id = "incidents-json"
    title = "Incident log (JSON)"
    tool = 'the provider (`[{"start", "end", "node", ...}]` or `{"incidents": [...]}`)'
    sample = "ingest/incidents.json"
    priority = 60
    json_shape = staticmethod(incidents.looks_like_incidents_json)

    def parse(self, probe: Probe) -> Rows:
        data = probe.require_json("an incident log: a JSON array or {\"incidents\": [...]}")
        return incidents.incidents_from_json(probe.text, data, probe.path)


register(IncidentsCsv())
register(IncidentsJson())
