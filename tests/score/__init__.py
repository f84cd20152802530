"""Tests of cmax.score."""
