"""Tests of cmax.history."""
