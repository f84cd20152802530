"""Who wrote each kind of evidence (cmax/judgement/witnesses.py)."""

from __future__ import annotations

from cmax.ingest.formats import all_formats
from cmax.judgement.witnesses import FORMAT_AUTHORS, author_of
from cmax.states import INDEPENDENT_AUTHORS


def test_every_format_has_its_author_declared() -> None:
    ids = {f.id for f in all_formats()}
    assert ids - set(FORMAT_AUTHORS) == set(), "declare the author of each new format"
    assert set(FORMAT_AUTHORS) - ids == set(), "an author declared for no format"


def test_only_the_schedulers_files_are_independent() -> None:
    """Of the files a bundle holds, only Slurm's accounting is not the provider's word; a
    ClusterMAX audit file names no auditor and its collector is an open CLI the provider can
    run (the buyer's monitoring is read at ingest, not a bundle format)."""
    independent = {k for k, a in FORMAT_AUTHORS.items() if a in INDEPENDENT_AUTHORS}
    assert independent == {"sacct-json", "sacct-parsable"}
    assert author_of("nemo2") == "provider" and author_of("no-such-format") == "provider"
