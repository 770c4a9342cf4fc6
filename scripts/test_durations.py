"""Record how long each test file takes, for the suite's order (tests/support/ordering.py).

    make test PYTEST_ARGS=--durations=0 2>&1 | tee /tmp/test.log
    .venv/bin/python scripts/test_durations.py /tmp/test.log   # writes tests/durations.json

Record from a full run on the machine the suite is timed on: the figures only order the files
(longest first within a stage), so a few seconds either way change nothing that matters."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.ordering import DURATIONS, durations_from_report


def main(log: str) -> None:
    with open(log, encoding="utf-8", errors="replace") as fh:
        found = durations_from_report(fh)
    if not found:
        sys.exit(f"no --durations=0 lines in {log}")
    DURATIONS.write_text(json.dumps(found, indent=1) + "\n")
    print(f"{len(found)} files, {sum(found.values()):.0f} s in all -> {DURATIONS}")


if __name__ == "__main__":
    main(sys.argv[1])
