"""The cmax-rating version: its one home (read by the build, ``cmax --version`` and
``cmax.__version__``). A module of its own, with a name ClusterMAX's ``cmax`` package does not
use, so the version stays right even when the two packages share one folder (cmax/cli/beside.py)."""

__version__ = "0.1.0"
