"""Tests of cmax.validate."""
