"""Which OCR engine: Tesseract (through tesserocr, in-process) or RapidOCR (ONNX models inside
its wheel), measured on pages of the bundled papers rendered to images.

For each page: render with pdfium at the given dpi, recognise, and compare with the page's own
text layer: character error rate (Levenshtein distance / reference length, whitespace
collapsed), seconds per page, and the engine process's peak memory. Each engine runs in its own
process so peak memory is its own.

    python -m benchmarks.ocr_engines [--pages 6] [--dpi 300]

RapidOCR is not a dependency of the product; to measure it, install it in a scratch venv
(`pip install rapidocr-onnxruntime`) and run this script with that interpreter.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

PAPERS = ["pasa.pdf", "explanations-molecular-prediction-models.pdf", "duplicate-media.pdf"]


def _papers_dir() -> Path:
    here = Path(__file__).resolve().parents[1]
    for p in (
        here.parent / "shared" / "data" / "papers",
        Path("/work/shared/data/papers"),
        here / "tests" / "fixtures" / "papers",
    ):
        if (p / PAPERS[0]).exists():
            return p
    raise SystemExit("bundled papers not found")


def _pages(n: int, dpi: int):
    import pypdfium2 as pdfium

    out = []
    d = _papers_dir()
    per = max(1, n // len(PAPERS))
    for name in PAPERS:
        doc = pdfium.PdfDocument(str(d / name))
        for i in range(min(per, len(doc))):
            page = doc[i]
            text = page.get_textpage().get_text_range()
            img = page.render(scale=dpi / 72).to_pil().convert("L")
            out.append((f"{name}:{i + 1}", " ".join(text.replace("\ufffe", "").split()), img))
    return out


def _cer(ref: str, hyp: str) -> float:
    from rapidfuzz.distance import Levenshtein

    return Levenshtein.distance(ref, hyp) / max(1, len(ref))


def run_engine(engine: str, n: int, dpi: int) -> dict:
    pages = _pages(n, dpi)
    if engine == "tesseract":
        import tesserocr

        api = tesserocr.PyTessBaseAPI(path="/usr/share/tesseract-ocr/5/tessdata", lang="eng", psm=tesserocr.PSM.AUTO)

        def ocr(img) -> str:
            api.SetImage(img)
            return api.GetUTF8Text()
    else:
        from rapidocr_onnxruntime import RapidOCR

        engine_ = RapidOCR()

        def ocr(img) -> str:
            import numpy as np

            result, _ = engine_(np.array(img.convert("RGB")))
            return " ".join(r[1] for r in (result or []))

    cers, secs = [], []
    for _name, ref, img in pages:
        t0 = time.perf_counter()
        hyp = ocr(img)
        secs.append(time.perf_counter() - t0)
        cers.append(_cer(ref, " ".join(hyp.split())))
    return {
        "engine": engine,
        "pages": len(pages),
        "cer_mean": sum(cers) / len(cers),
        "cer_median": sorted(cers)[len(cers) // 2],
        "s_per_page": sum(secs) / len(secs),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=6)
    ap.add_argument("--dpi", type=int, default=300)
    ap.add_argument("--engine", default="")
    args = ap.parse_args()
    if args.engine:
        print(json.dumps(run_engine(args.engine, args.pages, args.dpi)))
        return
    rows = []
    for engine in ("tesseract", "rapidocr"):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.ocr_engines",
                "--engine",
                engine,
                "--pages",
                str(args.pages),
                "--dpi",
                str(args.dpi),
            ],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        if proc.returncode:
            print(f"{engine}: not measured ({proc.stderr.strip().splitlines()[-1] if proc.stderr else 'failed'})")
            continue
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    print(f"{'engine':12}{'pages':>7}{'CER mean':>10}{'CER median':>12}{'s/page':>9}{'peak MB':>9}")
    for r in rows:
        print(
            f"{r['engine']:12}{r['pages']:>7}{r['cer_mean']:>10.3%}{r['cer_median']:>12.3%}"
            f"{r['s_per_page']:>9.2f}{r['peak_mb']:>9.0f}"
        )
    if len(rows) == 2:
        t, r = rows
        print(
            f"tesseract vs rapidocr: CER {t['cer_mean'] / max(r['cer_mean'], 1e-9):.2f}x, "
            f"speed {r['s_per_page'] / t['s_per_page']:.2f}x"
        )


if __name__ == "__main__":
    main()
