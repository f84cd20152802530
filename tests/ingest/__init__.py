"""Tests of cmax.ingest."""
