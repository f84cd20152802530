"""The exit codes of every ``cmax`` command: one home, read by the CLI, its help and the README.

A pipeline needs to tell "the cluster has problems" from "the input is unusable" from "cmax
itself broke": each has its own code, so ``cmax score ... || handle $?`` can act on which.
The internal-error code is ``EX_SOFTWARE`` from BSD ``sysexits.h`` (a bug in the program);
the interrupt code is the shell's 128 + SIGINT.
"""

from __future__ import annotations

from typing import Final

OK: Final = 0
FINDINGS: Final = 1
BAD_INPUT: Final = 2
CONFLICT: Final = 3
INTERNAL: Final = 70
INTERRUPTED: Final = 130

# code -> what it means (the README's table and `cmax docs exit-codes` print these)
MEANING: Final[dict[int, str]] = {
    OK: "ok: nothing any --fail-on policy objects to",
    FINDINGS: "findings: a --fail-on policy tripped (default: an error finding; for audit, "
              "drift), or regressions found by audit",
    BAD_INPUT: "unusable input or usage: one line naming the file, line or option and the fix",
    CONFLICT: "cmax shares its Python environment (its `cmax` package folder) with "
              "SemiAnalysis' ClusterMAX; install each in its own environment",
    INTERNAL: "internal error: a bug in cmax, not in the input; one line on stderr and the "
              "traceback saved to a file it names",
    INTERRUPTED: "interrupted (Ctrl-C)",
}
