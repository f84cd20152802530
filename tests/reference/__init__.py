"""Tests of cmax.reference."""
