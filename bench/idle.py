"""What an idle Loom costs: `loom up` with nothing to do, each process's CPU over a window once the
worker has loaded its model. An idle worker waits for the doorbell (`workers.doorbell`) instead
of polling Redis; before it, each of its 26 queues was fetched every 100 ms.

    .venv/bin/python bench/idle.py [--settle 20] [--seconds 60]

Prints one JSON line on stdout: the window and each process's CPU seconds in it.
"""

from __future__ import annotations

import argparse
import json
import time

from cpu import CpuMeter
from harness import Loom


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settle", type=float, default=20, help="seconds after start before measuring")
    parser.add_argument("--seconds", type=float, default=60, help="the measured window")
    args = parser.parse_args()
    with Loom() as loom:
        time.sleep(args.settle)  # the worker's model loads in the background after it starts
        meter = CpuMeter(loom)
        meter.start()
        time.sleep(args.seconds)
        result = meter.stop()
    result["cores_used"] = {k: round(v / result["window_s"], 3) for k, v in result["cpu_s"].items()}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
