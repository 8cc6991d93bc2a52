"""What relay detection costs where a transcript is read (Stop, PreCompact, SessionEnd,
``backfill``): every cached real transcript of ``capture_real.py`` parsed and run through
``extract_from_entries`` whole, with a fresh tool-text window, best of ``--runs``.

For an A/B against another tree, run it with that tree first on ``PYTHONPATH``:
``PYTHONPATH=/path/to/old .venv/bin/python benchmarks/relay_cost.py``.

Usage: ``.venv/bin/python benchmarks/relay_cost.py [--data DIR] [--runs N]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from memory_layer.capture.extract import extract_from_entries
from memory_layer.capture.provenance import ToolText
from memory_layer.capture.transcript import read_new_entries

DEFAULT_DATA = Path("~/.cache/memory-layer/real-transcripts").expanduser()
READ_BYTES = 8 * 1024 * 1024  # hooks.transcript_max_bytes' default: one engine read


def measure(path: Path, runs: int) -> tuple[float, int]:
    """Best wall time in ms of extracting the whole transcript, and its window's bytes."""
    best, window = float("inf"), 0
    entries, _ = read_new_entries(str(path), 0, max_bytes=READ_BYTES)
    for _ in range(runs):
        start = time.perf_counter()
        tools = ToolText()
        extract_from_entries(entries, tools)
        window = len(tools.window())
        best = min(best, time.perf_counter() - start)
    return best * 1000, window


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    paths = sorted(args.data.glob("*.jsonl"))
    if not paths:
        print(f"no transcripts in {args.data}: run benchmarks/capture_real.py --fetch first")
        return 1
    total = 0.0
    for path in paths:
        ms, window = measure(path, args.runs)
        total += ms
        size = path.stat().st_size / 1e6
        print(f"{path.stem:26} {size:5.2f} MB  extract {ms:7.1f} ms  window {window / 1e3:6.1f} KB")
    print(f"total {total:.1f} ms over {len(paths)} transcripts")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
