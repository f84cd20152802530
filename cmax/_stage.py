"""Sub-packages that are also callable: ``cmax.ingest`` is a package *and* the ingest stage.

The public API has always been ``cmax.ingest(bundle)``, ``cmax.validate(evidence, ref)``,
``cmax.score(...)`` and ``cmax.price(...)``, while ``cmax.ingest`` (...) is also a sub-package.
Binding the functions over the sub-packages in ``cmax/__init__`` broke ``import cmax.score as
s; s.Rubric`` (the name meant the function or the module depending on import order) and forced
``import cmax`` to load Polars. Instead each stage sub-package turns its own module object into
a :class:`StageModule` at the end of its ``__init__``: the attribute ``cmax.score`` is always
the module (``s.Rubric`` works), and calling the module calls the stage function of the same
name (``cmax.score(...)`` works). Because the sub-package does it itself, it holds however the
package was first imported (``import cmax.score``, ``from cmax.score.core import ...``,
``cmax.score`` through the lazy parent).

Type checkers see a module, not a function: typed code should import the function
(``from cmax.score import score``); the callable module is for scripts and notebooks.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import inspect


class StageModule(types.ModuleType):
    """A module whose call runs the function named like the module's last dotted part.

    Called with a bundle's path alone (``cmax.price("bundle/")``), it runs the whole pipeline
    up to that stage and returns its result: ``cmax.<stage>_bundle`` (a notebook user has a
    folder, not an Evidence, a Scorecard and a reference; the stage form raised TypeError).
    Its signature (``inspect.signature``, ``help``) is that path form's; the stage form
    (``cmax.price(evidence, scorecard, reference)``) is the function ``cmax.price.price``.
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = self.__name__.rpartition(".")[2]
        if len(args) == 1 and isinstance(args[0], str | os.PathLike):
            return _path_form(name)(*args, **kwargs)
        stage = getattr(self, name)
        return stage(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        import inspect  # here, not at the top: `import cmax` loads this module, never inspect

        return inspect.signature(_path_form(self.__name__.rpartition(".")[2]))


#: each stage's path form by stage name (``"price"``: ``cmax.price_bundle``). The top-level
#: package defines them (they run the pipeline, above every stage) and hands them down with
#: :func:`give_path_forms` when it is imported, which Python always does before any stage
#: sub-package; so this module, below every stage, never reaches up for them.
_PATH_FORMS: dict[str, Callable[..., Any]] = {}


def give_path_forms(**forms: Callable[..., Any]) -> None:
    """Record each stage's path form (``price=price_bundle``): called by ``cmax/__init__``."""
    _PATH_FORMS.update(forms)


def _path_form(stage: str) -> Callable[..., Any]:
    """``cmax.<stage>_bundle``, as the top-level package gave it."""
    return _PATH_FORMS[stage]


def make_callable(module_name: str) -> None:
    """Make the (already imported, still initialising) module ``module_name`` callable."""
    sys.modules[module_name].__class__ = StageModule


def lazy_names(module_name: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports each public name of ``module_name`` from its
    submodule (``homes``: name -> submodule) on first use, so that a light submodule can be
    imported without the package's heavy stage modules (NumPy, Polars)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{module_name}.{home}"), name)
        setattr(sys.modules[module_name], name, value)
        return value

    return __getattr__
