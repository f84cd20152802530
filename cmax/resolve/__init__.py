"""Resolve: one bundle's evidence turned into the case every later stage reads (``case``),
with each run resolved (``runs``) and the claims ledger (``claims``, ``run_claims``,
``bundle_claims``; hosts and incidents reviewed once).
"""
