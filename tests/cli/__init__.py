"""Tests of the command line (cmax.cli)."""
