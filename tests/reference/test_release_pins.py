"""A reference release id names one set of data: any change to reference/ needs a new id.

Each release id is pinned here to the digest of every data file under ``reference/``
(:func:`cmax.reference.checksum.release_digest`: the loaded tables, the rubric, the drift
policy and the seed). Changing a number without bumping ``reference/release.toml`` would give
two different ratings under one recorded release; this test fails instead.

To release new data: bump ``release`` in ``reference/release.toml``, run
``python -m cmax.reference.checksum --write`` (it prints the release digest) and add the new
id with that digest below. A pinned digest is never edited.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

from cmax.reference.checksum import release_digest
from cmax.resources import data_dir

RELEASE_DIGESTS = {
    "2026.11.5": "771b508b433ec99d4cd610b7e68d1f7121c7e49a2e73deebf44ba5e808b4e48b",
    "2026.11.6": "877810a01dbdb4b9d02fa02e1e7eec2350505bb8adf0d5f1b24593c73d4665a7",
    "2026.11.7": "65790914597c797585dad26ff0949dfe686332f6a08f2e53b198e6e90e354364",
    "2026.11.8": "31d19c9cae15971ed63f145c08799f9e5e1b213c21c892f3b92b79581b99bc46",
    "2026.11.9": "830e3489555750b82179791a66a3e432c66f4919a3056f910dd7f24e7fdf68bd",
    "2026.11.10": "54e8f6aa57a3746e59c6c62a47a731285f79d2ce547e12ba7cd258b41f050be0",
    "2026.11.11": "f89062e34356f096b33362f2be82c98ae3f1fb194a8b2fb9f1436c24187f657b",
    "2026.11.12": "555df950ad28a6700b47e5c2fe2d13f83a24a7adeb45dd386990bdaee4c3e5ad",
}


def _release_id() -> str:
    text = (data_dir("reference") / "release.toml").read_text(encoding="utf-8")
    release = tomllib.loads(text)["release"]
    assert isinstance(release, str)
    return release


def test_the_data_is_the_data_its_release_id_names() -> None:
    release, digest = _release_id(), release_digest(data_dir("reference"))
    assert release in RELEASE_DIGESTS, (
        f"reference/release.toml names release {release}, which is not pinned: add "
        f'"{release}": "{digest}" to RELEASE_DIGESTS in {__name__}')
    assert RELEASE_DIGESTS[release] == digest, (
        f"reference data changed but reference/release.toml still names {release}: bump the "
        f"release id, run `python -m cmax.reference.checksum --write` and pin the new id")


def test_each_digest_names_one_release() -> None:
    assert len(set(RELEASE_DIGESTS.values())) == len(RELEASE_DIGESTS)


def test_the_digest_sees_every_data_file(tmp_path: Path) -> None:
    """A changed byte in any data file, at any depth (the seed too), changes the digest."""
    copy = tmp_path / "reference"
    shutil.copytree(data_dir("reference"), copy)
    before = release_digest(copy)
    for name in ("rubric.toml", "seed/dgxc_reference.csv", "inference.csv"):
        path = copy / name
        original = path.read_bytes()
        path.write_bytes(original + b"\n")
        assert release_digest(copy) != before, name
        path.write_bytes(original)
    assert release_digest(copy) == before
