"""Drafting a ``cmax.toml`` for ``cmax init`` from a folder of evidence: what each file states,
read through ingest's format registry.
"""
