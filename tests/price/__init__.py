"""Tests of cmax.price."""
