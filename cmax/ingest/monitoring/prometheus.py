"""Prometheus ``query_range`` answers: fetched from a live server, or saved in a bundle.

The answer is the HTTP API's JSON (prometheus/prometheus ``web/api/v1/api.go``, documented at
prometheus.io/docs/prometheus/latest/querying/api/#range-queries)::

    {"status": "success", "data": {"resultType": "matrix",
     "result": [{"metric": {"__name__": "up", "instance": "gpu-001:9100", ...},
                 "values": [[1730419200, "1"], [1730419260, "1"], ...]}]}}

and on failure ``{"status": "error", "errorType": "bad_data", "error": "..."}``. A saved answer
is that JSON as ``curl .../api/v1/query_range?...`` wrote it; a month at a one-minute step is
longer than the 11,000 points Prometheus returns per series and query (``api.go``:
``end.Sub(start)/step > 11000`` is refused), so the file may hold several answers, one per
line, which are joined. A live server is asked in windows of at most :data:`MAX_STEPS` steps.

Credentials come from the environment only (never the manifest, which travels with the
bundle): ``CMAX_PROMETHEUS_TOKEN`` (sent as ``Authorization: Bearer``) or
``CMAX_PROMETHEUS_USER`` with ``CMAX_PROMETHEUS_PASSWORD`` (HTTP basic). TLS certificates are
verified (the system's trust store, or ``SSL_CERT_FILE``), and credentials are sent over
plain HTTP only to a loopback address.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import math
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cmax.errors import MonitoringError

if TYPE_CHECKING:
    import ssl

MAX_STEPS = 10_000
"""Steps per request: under the 11,000 points per series Prometheus answers at most."""

TIMEOUT_S = 60.0

ANSWER_SHAPE = ('the JSON of Prometheus\'s /api/v1/query_range ({"status": "success", "data": '
                '{"resultType": "matrix", "result": [...]}}), one answer per line')


@dataclass(frozen=True)
class Series:
    """One series of a range answer: its labels and its (unix seconds, value) points."""

    labels: tuple[tuple[str, str], ...]
    points: tuple[tuple[float, float], ...]

    def label(self, name: str) -> str | None:
        return next((v for k, v in self.labels if k == name), None)


def parse_answers(text: str, *, where: str) -> list[Series]:
    """Every series of one or more ``query_range`` answers (one JSON document per line, or a
    single document over several lines); series with the same labels are joined."""
    text = text.strip()
    if not text:
        raise MonitoringError("empty Prometheus answer", file=where, expected=ANSWER_SHAPE,
                              fix="save the output of curl '<prometheus>/api/v1/query_range?"
                              "query=...&start=...&end=...&step=...'")
    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError:
        docs = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                docs.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise MonitoringError(f"not JSON ({exc.msg})", file=where, line=n,
                                      expected=ANSWER_SHAPE,
                                      fix="save each query_range answer whole, one per line"
                                      ) from None
    joined: dict[tuple[tuple[str, str], ...], dict[float, float]] = {}
    for n, doc in enumerate(docs, start=1):
        for labels, points in _matrix(doc, where=where, line=n if len(docs) > 1 else None):
            joined.setdefault(labels, {}).update(points)
    return [Series(labels, tuple(sorted(points.items()))) for labels, points in joined.items()]


def _matrix(doc: object, *, where: str, line: int | None
            ) -> list[tuple[tuple[tuple[str, str], ...], dict[float, float]]]:
    if not isinstance(doc, dict):
        raise MonitoringError("not a Prometheus answer", file=where, line=line,
                              expected=ANSWER_SHAPE)
    if doc.get("status") == "error":
        raise MonitoringError(
            f"Prometheus answered with an error: {doc.get('errorType', '?')}: "
            f"{doc.get('error', '(no message)')}", file=where, line=line,
            fix="correct the query ([monitoring] selectors) and ask again")
    data = doc.get("data")
    if doc.get("status") != "success" or not isinstance(data, dict):
        raise MonitoringError("not a Prometheus answer (no status \"success\" with data)",
                              file=where, line=line, expected=ANSWER_SHAPE)
    if data.get("resultType") != "matrix":
        raise MonitoringError(f"a {data.get('resultType')!r} answer, not a range query's",
                              file=where, line=line, expected='resultType "matrix" '
                              "(/api/v1/query_range, not /api/v1/query)")
    out = []
    for item in data.get("result") or []:
        metric, values = item.get("metric"), item.get("values")
        if not isinstance(metric, dict) or not isinstance(values, list):
            raise MonitoringError("a series without metric labels or values", file=where,
                                  line=line, expected=ANSWER_SHAPE)
        labels = tuple(sorted((str(k), str(v)) for k, v in metric.items()))
        points: dict[float, float] = {}
        for pair in values:
            try:
                t, v = float(pair[0]), float(pair[1])
            except (TypeError, ValueError, IndexError):
                raise MonitoringError(f"a sample that is not [time, \"value\"]: {pair!r:.60}",
                                      file=where, line=line, expected=ANSWER_SHAPE) from None
            if math.isfinite(t) and not math.isnan(v):
                points[t] = v
        out.append((labels, points))
    return out


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _auth(url: str, env: Mapping[str, str]) -> str | None:
    token = env.get("CMAX_PROMETHEUS_TOKEN")
    user, password = env.get("CMAX_PROMETHEUS_USER"), env.get("CMAX_PROMETHEUS_PASSWORD")
    if token:
        header = f"Bearer {token}"
    elif user:
        if password is None:
            raise MonitoringError("CMAX_PROMETHEUS_USER is set without CMAX_PROMETHEUS_PASSWORD",
                                  field="environment", fix="set both, or neither")
        header = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    else:
        return None
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "https" and not _loopback(parts.hostname or ""):
        raise MonitoringError(f"credentials would be sent in clear text to {parts.hostname}",
                              field="monitoring.prometheus", expected="an https:// URL",
                              fix="use the server's https:// address (or unset "
                              "CMAX_PROMETHEUS_TOKEN / CMAX_PROMETHEUS_USER)")
    return header


def fetch_range(url: str, query: str, start: float, end: float, step_s: float, *,
                env: Mapping[str, str] | None = None) -> tuple[list[Series], str]:
    """The series of ``query`` over ``[start, end)`` at ``step_s`` from a live server, and the
    SHA-256 of the answers read. Any failure is one :class:`MonitoringError`."""
    import ssl  # TLS and HTTP are imported by a live query only, not by every command

    env = os.environ if env is None else env
    header = _auth(url, env)
    base = url.rstrip("/") + "/api/v1/query_range"
    context = ssl.create_default_context()
    digest = hashlib.sha256()
    joined: dict[tuple[tuple[str, str], ...], dict[float, float]] = {}
    t0 = start
    while t0 < end:
        t1 = min(end - step_s, t0 + (MAX_STEPS - 1) * step_s)
        params = urllib.parse.urlencode({"query": query, "start": f"{t0:.3f}",
                                         "end": f"{max(t0, t1):.3f}", "step": f"{step_s:g}"})
        body = _get(f"{base}?{params}", header, context, url, query)
        digest.update(body)
        where = f"{url} (query {query})"
        try:
            doc = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise MonitoringError("the server's answer is not JSON", file=where,
                                  expected=ANSWER_SHAPE,
                                  fix="point [monitoring] prometheus at the Prometheus server "
                                  "(http://host:9090), not a dashboard or proxy page") from None
        for labels, points in _matrix(doc, where=where, line=None):
            joined.setdefault(labels, {}).update(points)
        t0 = max(t0, t1) + step_s
    series = [Series(labels, tuple(sorted(p.items()))) for labels, p in joined.items()]
    return series, digest.hexdigest()


def _get(full: str, header: str | None, context: ssl.SSLContext, url: str,
         query: str) -> bytes:
    import ssl
    import urllib.error
    import urllib.request

    request = urllib.request.Request(full, headers={"Accept": "application/json"})
    if header:
        request.add_header("Authorization", header)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S, context=context) as response:
            return bytes(response.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            doc = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            doc = None
        if isinstance(doc, dict) and doc.get("status") == "error":
            raise MonitoringError(
                f"Prometheus refused the query: {doc.get('errorType', '?')}: "
                f"{doc.get('error', '(no message)')}", file=url, field="monitoring",
                expected=f"a query Prometheus can answer ({query})",
                fix="correct the selector in [monitoring]") from None
        fix = ("set CMAX_PROMETHEUS_TOKEN, or CMAX_PROMETHEUS_USER and "
               "CMAX_PROMETHEUS_PASSWORD" if exc.code in (401, 403)
               else "check the URL points at the Prometheus server")
        raise MonitoringError(f"HTTP {exc.code} {exc.reason} from Prometheus", file=url,
                              field="monitoring.prometheus", fix=fix) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, ssl.SSLCertVerificationError):
            raise MonitoringError(f"TLS certificate not trusted: {reason.verify_message}",
                                  file=url, field="monitoring.prometheus",
                                  fix="install the server's CA in the trust store or set "
                                  "SSL_CERT_FILE to it; certificates are always verified"
                                  ) from None
        raise MonitoringError(f"Prometheus unreachable: {reason}", file=url,
                              field="monitoring.prometheus",
                              fix="check the address and that the server is running, or "
                              "bundle saved answers ([monitoring] up_answer = \"...\")"
                              ) from None
    except (TimeoutError, OSError) as exc:
        raise MonitoringError(f"Prometheus unreachable: {exc}", file=url,
                              field="monitoring.prometheus",
                              fix="check the address and that the server is running") from None
