"""Tests of cmax.render."""
