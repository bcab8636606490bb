"""What the local embedder costs a process that starts (the worker and the API load it first): for
each precision, in a fresh process, the seconds from interpreter start to the first vector, the
peak resident memory, and whether PyTorch was imported; then the resident memory of `loom up`'s
worker and API once they have embedded (``VmRSS`` / ``VmHWM`` of ``/proc``). The ONNX builds are
made beforehand (once per virtualenv), so the figures are starts with the cache in place.

    .venv/bin/python bench/startup.py [--repeat 3]

Prints one JSON line on stdout: per precision the median seconds and peak RSS over the repeats.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from harness import Loom, warm_up

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import resource, sys, time
started = time.perf_counter()
from providers.minilm import LocalMiniLM
model = LocalMiniLM(sys.argv[1])
model.embed(["The nightly export moved to the new ledger."])
print(model.precision, time.perf_counter() - started,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "torch" in sys.modules)
"""


def probe(precision: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, precision],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    ran, seconds, rss_kb, torch = done.stdout.split()
    if ran != precision:
        raise RuntimeError(f"asked for {precision}, the embedder runs {ran}")
    return {"seconds": float(seconds), "rss_mb": int(rss_kb) / 1024, "torch_imported": torch == "True"}


def resident_mb(pid: int) -> dict:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return {name: round(int(fields[name].split()[0]) / 1024) for name in ("VmRSS", "VmHWM")}


def loom_processes(precision: str) -> dict:
    with Loom(env={"LOOM_EMBED_PRECISION": precision}) as loom:
        token = loom.token(["startup"])
        loom.logging_on("startup")
        warm_up(loom, token, "startup")  # the worker has embedded, the API has searched
        return {
            name: resident_mb(int((loom.home / "run" / f"{name}.pid").read_text()))
            for name in ("worker", "api")
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    probe("int8")  # makes the ONNX builds if they are not cached yet
    result = {}
    for precision in ("int8", "fp32"):
        runs = [probe(precision) for _ in range(args.repeat)]
        result[precision] = {
            "start_to_first_vector_s": round(statistics.median(r["seconds"] for r in runs), 2),
            "peak_rss_mb": round(statistics.median(r["rss_mb"] for r in runs)),
            "torch_imported": runs[0]["torch_imported"],
            "loom_up_rss_mb": loom_processes(precision),
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
