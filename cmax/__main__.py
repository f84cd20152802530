"""``python -m cmax``: for users who also have SemiAnalysis' ClusterMAX ``cmax`` installed.

A stop signal while the CLI is still being imported (before :func:`cmax.cli.main` sets its
own handlers) prints one line and ends the process: nothing has started that needs cleaning
up, and Python's own SIGINT would print a KeyboardInterrupt traceback from inside an import.
Only when run as the program: a spawned pool worker imports this module too (as
``__mp_main__``), and is stopped by cmax without a word.
"""

import os
import signal

if __name__ == "__main__":
    def _stopped_while_starting(signum: int, frame: object) -> None:
        os.write(2, b"cmax: interrupted\n" if signum == signal.SIGINT
                 else b"cmax: stopped (SIGTERM)\n")
        os._exit(128 + signum)

    for _sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(_sig, _stopped_while_starting)

from cmax.cli import run

if __name__ == "__main__":
    run()
