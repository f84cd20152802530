"""What the reference recipes fix about a run: the configuration columns it is compared on
(``columns``) and the steady-state window its steps are averaged over (``window``).
"""
