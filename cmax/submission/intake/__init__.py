"""Evidence as providers hand it over, turned into something cmax can rate.

A provider rarely writes ``cmax.toml``: what NVIDIA's Exemplar review receives is the archive
``llmb-run archive`` writes, and an llmb-run install folder holds the same experiments plus its
job database. The modules here read those shapes (never a rating decision: they only say what
the evidence states and refuse runs that were not meant for rating).
"""
