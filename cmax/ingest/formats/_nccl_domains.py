"""Which NVLink domain (a GB200/GB300 NVL72 rack) each host of an nccl-tests run is in.

Inside one NVL72 rack NCCL runs over multi-node NVLink (MNNVL, with NVLS), several times the
bandwidth of the network between racks, so a result is only comparable with a bar of its own
kind. Two sources say where a host is:

* **NCCL's MNNVL line** (``NCCL_DEBUG=INFO``), printed per rank when NCCL reads the GPU's fabric
  info: ``<host>:<pid>:<tid> [<dev>] NCCL INFO MNNVL busId <id> fabric UUID <uuid> cliqueId
  <id> state <n> healthMask <mask>`` (as in NVIDIA/nccl issue #1769). The NVLink domain is the
  (cluster UUID, clique ID) pair: a clique ID alone is not unique (NVIDIA/nccl issue #1301).
* **A rack named in the host name** (``gb200-rack07-tray03``): a ``rack`` token with a number.

A run whose hosts all map to one domain stayed inside an NVLink domain; more than one means the
job was split across racks and its collectives cross the network.
"""

from __future__ import annotations

import re

MNNVL_KEY = "NCCL INFO MNNVL"
_MNNVL = re.compile(r"^(?P<host>[^\s:]+):\d+:\d+ \[\d+\] NCCL INFO MNNVL busId \S+ "
                    r"fabric UUID (?P<uuid>\S+) cliqueId (?P<clique>\S+)")
_RACK = re.compile(r"(?:^|[-_.])rack[-_]?(\d+)(?=$|[-_.])", re.I)


def mnnvl_domain(body: str) -> tuple[str, str] | None:
    """(host, domain) from an MNNVL line, else None."""
    m = _MNNVL.match(body)
    if m is None:
        return None
    return m.group("host"), f"fabric {m.group('uuid')} clique {m.group('clique')}"


def rack_of(host: str) -> str | None:
    m = _RACK.search(host)
    return f"rack {int(m.group(1))}" if m else None


def domains_of(hosts: set[str], mnnvl: dict[str, str]) -> tuple[int | None, str]:
    """How many NVLink domains ``hosts`` span (None when any host's is unknown), and how."""
    if not hosts:
        return None, ""
    if all(h in mnnvl for h in hosts):
        found = {mnnvl[h] for h in hosts}
        return len(found), "NCCL MNNVL lines: " + "; ".join(sorted(found))
    racks = {h: rack_of(h) for h in hosts}
    if all(racks.values()):
        found = {r for r in racks.values() if r}
        return len(found), "host names: " + ", ".join(sorted(found))
    return None, ""
