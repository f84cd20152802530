"""The buyer's own monitoring as a witness of node availability, beside the incident log.

An incident log is written by the provider; the buyer's Prometheus (node exporter ``up``,
DCGM exporter, kube-state-metrics), Slurm's node event history and Kubernetes node
conditions are not. This package reads them into one shape, :class:`~cmax.ingest.monitoring.witness.
Witness` (per node: the spans it was down, degraded or not witnessed, and its GPU Xid events),
at ingest, so every later stage reads the case and nothing opens a connection again:

* :mod:`cmax.ingest.monitoring.prometheus`: the HTTP API's ``query_range`` answers, live or saved;
* :mod:`cmax.ingest.monitoring.accounting`: the step-resolution accounting of a series;
* :mod:`cmax.ingest.monitoring.slurm_events`: ``sacctmgr show event -P`` and ``sinfo -R`` output;
* :mod:`cmax.ingest.monitoring.kube`: ``kubectl get nodes -o json`` and ``kubectl get events -o
json``;
* :mod:`cmax.ingest.monitoring.read`: the ``[monitoring]`` section read into witnesses.

How the witnesses and the incident log combine into the SLA is
:mod:`cmax.resolve.monitoring` (docs/scoring.md).
"""
