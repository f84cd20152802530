"""The progress bar on a real terminal (a pseudo-terminal): its own control codes reach the
terminal as codes, while text from a bundle is still escaped (cmax.reading.safetext).

The output sanitiser wrapped stderr, so the bar's carriage return and cursor codes were printed
as the literal text ``\\u000d\\u001b[?25l``."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.paths import REPO, SAMPLES


def _on_a_terminal(argv: list[str]) -> tuple[int, str]:
    """Run ``python -m cmax ARGV`` with stdout and stderr on a pseudo-terminal; its exit code
    and everything the terminal received."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-m", "cmax", *argv], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, cwd=REPO, env=env)
    os.close(slave)
    received = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        received += chunk
    os.close(master)
    return proc.wait(timeout=120), received.decode("utf-8", "replace")


def test_the_report_progress_bar_draws_on_a_terminal(tmp_path: Path) -> None:
    code, screen = _on_a_terminal(["report", str(SAMPLES / "aurora-compute"), "-o",
                                   str(tmp_path / "out"), "--no-pdf"])
    assert code == 0, screen
    assert "\\u001b" not in screen and "\\u000d" not in screen  # no escaped codes shown
    assert "\x1b[?25l" in screen  # the bar hides the cursor while it draws ...
    assert "\r" in screen and "writing" in screen  # ... and redraws its line in place
    assert "scorecard.html" in screen


def test_text_from_a_bundle_is_still_escaped_on_a_terminal(tmp_path: Path) -> None:
    """The sanitiser still stands between a bundle and the terminal: a provider name with an
    escape sequence is shown as visible text."""
    bundle = tmp_path / "b"
    subprocess.run(["cp", "-r", str(SAMPLES / "aurora-compute"), str(bundle)], check=True)
    toml = bundle / "cmax.toml"
    toml.write_text(toml.read_text().replace('name = "Aurora Compute"',
                                             'name = "Aurora\\u001b[2JCompute"'))
    code, screen = _on_a_terminal(["score", str(bundle)])
    assert code == 0, screen
    assert "Aurora\\u001b[2JCompute" in screen and "\x1b[2J" not in screen
