"""An llmb-run package opened as a bundle: the manifest drafted from its evidence
(:mod:`cmax.submission.intake.draft`) stands in for the ``cmax.toml`` it does not have.

Called by :func:`cmax.submission.bundle.open_bundle` when a folder (or an unpacked archive) has no
``cmax.toml`` at its top. A ``cmax.toml`` there that holds only the commercial parts (no
``[[runs]]``, no ``[system]``) is the optional small manifest: its tables are kept and the rest
is drafted around them.

The llmb-run readers and the drafting are imported by the functions that read a package: a
bundle with its own complete ``cmax.toml`` (:func:`top_manifest`) needs neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cmax.reading.tomlfile import decode_toml, read_toml_bytes
from cmax.submission.manifest import MANIFEST_NAME, Manifest, check_sanity, parse_manifest

if TYPE_CHECKING:
    from cmax.submission.intake.draft import Commercial, Draft


@dataclass(frozen=True)
class Drafted:
    root: Path
    manifest: Manifest
    draft: Draft
    label: str


def _decoded(path: Path) -> dict[str, object]:
    return decode_toml(read_toml_bytes(path, what="manifest"), file=path, what="manifest")


def _adds_only(data: dict[str, object]) -> bool:
    return not data.get("runs") and "system" not in data


def small_manifest(path: Path) -> dict[str, object] | None:
    """A ``cmax.toml`` that only adds to a package (no runs, no system), or None."""
    if not path.is_file():
        return None
    data = _decoded(path)
    return data if _adds_only(data) else None


@dataclass(frozen=True)
class TopManifest:
    """A folder's own ``cmax.toml`` (at its top or in its one folder), decoded once: whether
    the folder is a bundle or an llmb-run package is decided from it, and a complete one is
    parsed from the same table (:func:`cmax.submission.bundle.open_bundle`)."""

    path: Path
    table: dict[str, object] | None
    """the decoded TOML; None for a linked file, left to the bundle's own checks (which
    refuse one that leaves the bundle) before anything reads it"""

    @property
    def full(self) -> bool:
        """A complete manifest (runs or a system), or a link: the folder is a bundle."""
        return self.table is None or not _adds_only(self.table)


def top_manifest(folder: Path) -> TopManifest | None:
    """The ``cmax.toml`` at the top of ``folder`` or in one of its folders, or None."""
    tops = [folder, *(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))]
    top = next((t / MANIFEST_NAME for t in tops if (t / MANIFEST_NAME).is_file()), None)
    if top is None:
        return None
    linked = top.is_symlink() or top.parent.is_symlink()
    return TopManifest(top, None if linked else _decoded(top))


def draft_for(folder: Path, *, label: str, commercial: Commercial | None = None,
              reference_release: str = "latest") -> Draft | None:
    """The drafted manifest of an llmb-run package folder, or None when it is not one."""
    root = package_root(folder)
    if root is None:
        return None
    return _draft(root, label=label, commercial=commercial, reference_release=reference_release)


def _kind(root: Path) -> str:
    from cmax.submission.intake.llmb import is_install

    return ("llmb-run install folder" if is_install(root) else
            "llmb-run archive" if root.name.startswith("llmb-archive") else
            "folder of llmb-run experiments")


def _draft(root: Path, *, label: str, commercial: Commercial | None,
           reference_release: str = "latest") -> Draft:
    from cmax.reference import load_reference
    from cmax.submission.intake.draft import Commercial, draft_manifest
    from cmax.submission.intake.llmb import read_package

    given = commercial or Commercial()
    small = small_manifest(root / MANIFEST_NAME)
    if small is not None and not given.manifest:
        given = Commercial(given.quote, given.term_months, small)
    units = unit_folders(root)
    package = read_package(root, kind=_kind(units[0] if units else root), units=units)
    return draft_manifest(package, load_reference(reference_release), source=label,
                          commercial=given)


def package_root(folder: Path) -> Path | None:
    """The package's top: the folder itself, or the one folder an archive unpacks to
    (``llmb-archive-<ts>/`` as ``llmb-run archive`` writes, or a packed install folder)."""
    from cmax.submission.intake.llmb import is_install, looks_like_package

    if is_install(folder):
        return folder
    children = [p for p in folder.iterdir() if not p.name.startswith(".")]
    if len(children) == 1 and children[0].is_dir() and (
            children[0].name.startswith("llmb-archive") or is_install(children[0])):
        return children[0]
    return folder if len(unit_folders(folder)) > 1 or looks_like_package(folder) else None


def unit_folders(root: Path) -> list[Path]:
    """The packages of a bundle that holds several, one per scalable unit handed over
    (NVIDIA's Requirements for AI Clouds v2.3.1 BM01: the Exemplar suite on every scalable
    unit): two or more archive tops (``llmb-archive-<ts>/``) or install folders side by side.
    Empty for a single package."""
    from cmax.submission.intake.llmb import is_install

    if is_install(root) or root.name.startswith("llmb-archive"):
        return []
    units = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()
                   and not p.name.startswith(".")
                   and (p.name.startswith("llmb-archive") or is_install(p)))
    return units if len(units) > 1 else []


def has_full_manifest(folder: Path) -> bool:
    """A bundle with its own complete ``cmax.toml`` (at the top or in its one folder)."""
    top = top_manifest(folder)
    return top is not None and top.full


def open_package(folder: Path, *, source: Path,
                 commercial: Commercial | None = None) -> Drafted | None:
    """The package as a bundle root and a validated manifest, or None if it is none (a
    folder with its own complete ``cmax.toml`` is none: the caller has found it first)."""
    import tomllib

    label = f"{source} ({MANIFEST_NAME} drafted from the llmb-run evidence)"
    root = package_root(folder)
    if root is None:
        return None
    draft = _draft(root, label=str(source), commercial=commercial)
    manifest = check_sanity(parse_manifest(tomllib.loads(draft.text), source=label),
                            source=label)
    return Drafted(root=root, manifest=manifest, draft=draft, label=label)
