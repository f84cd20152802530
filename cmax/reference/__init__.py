"""Reference data: what every rating is compared against, and the model-FLOPs engine.

``load_reference("latest")`` (or a pinned release id) returns a :class:`Reference`: the
published baseline results under canonical ids, the GPU catalogue, model architectures,
network / reliability / economics baselines, all checksum-verified and tagged with the release
id every Scorecard records. The data folder is ``cmax.resources.data_dir("reference")``; its
layout, sources, FLOPs conventions and the "latest" rule are described in docs/reference.md.

Only the names in ``__all__`` are API. The loader lives in the private ``_release`` module so
that the per-file readers it imports (``read_baselines``, ``load_gpus``, ...) do not leak into
this namespace; the sub-modules other stages read (``view`` for the look-ups every stage
shares, ``gpus`` for the GPU facts, ``mlperf``, ``calc``, ``checksum``, ``flops``) are
imported by their full name.

Every name is loaded on first use: a stage that reads only the GPU facts
(:mod:`cmax.reference.gpus`) or the recipe columns does not load the whole release (Polars,
every table's reader) by importing the package.
"""

from __future__ import annotations

import typing

from cmax.errors import CmaxError

if typing.TYPE_CHECKING:
    from cmax.reference._release import Reference, clear_cache, known_releases, load_reference
    from cmax.reference.architecture import Architecture
    from cmax.reference.catalog import GpuSpec, canonical_precision, normalize_precision

__all__ = [
    "Architecture",
    "CmaxError",
    "GpuSpec",
    "Reference",
    "canonical_precision",
    "clear_cache",
    "known_releases",
    "load_reference",
    "normalize_precision",
]

from cmax._stage import lazy_names as _lazy_names

# public name -> the module that defines it
__getattr__ = _lazy_names(__name__, {
    "Reference": "_release", "clear_cache": "_release", "known_releases": "_release",
    "load_reference": "_release", "Architecture": "architecture", "GpuSpec": "catalog",
    "canonical_precision": "catalog", "normalize_precision": "catalog"})
