"""Peak memory of OCR per page size (issue 36.5): each PDF is read by `recognise_pages` in its
own process (tests/support/ocr_peak.py) and its peak RSS printed beside the baseline — the
pixels the page would have been rendered with before the budget (300 dpi, greyscale, one byte
a pixel: a lower bound of the old peak; the red team measured 4,072 MB for the giant page).

    python -m benchmarks.ocr_memory
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support import scans

CASES = {
    "A4 scan (595 × 842 pt)": lambda: scans.image_pdf([("pasa.pdf", 1)]),
    "poster (1700 × 1700 pt)": lambda: scans.giant_page_pdf(1_700, text_page=False),
    "giant (10000 × 10000 pt)": lambda: scans.giant_page_pdf(10_000, text_page=False),
}
SIDES = {
    "A4 scan (595 × 842 pt)": (595, 842),
    "poster (1700 × 1700 pt)": (1700, 1700),
    "giant (10000 × 10000 pt)": (10_000, 10_000),
}


def main() -> None:
    print(f"{'page':28} {'ours: peak RSS':>16} {'baseline: pixels at 300 dpi':>30}  outcome")
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in CASES.items():
            path = Path(tmp) / "page.pdf"
            path.write_bytes(make())
            out = subprocess.run(
                [sys.executable, "-m", "tests.support.ocr_peak", str(path)], capture_output=True, text=True, check=True
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            w, h = SIDES[name]
            baseline_mb = (w / 72 * 300) * (h / 72 * 300) / 2**20
            outcome = "read" if r["read"] else (r["unread"] or [r["error"]])[0][:60]
            print(f"{name:28} {r['peak_rss_mb']:>13.0f} MB {baseline_mb:>27.0f} MB  {outcome}")


if __name__ == "__main__":
    main()
