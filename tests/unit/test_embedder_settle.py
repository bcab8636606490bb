"""A process that loads the embedder in the background ends with ``providers.embedders.settle``:
it waits a short grace for the loading thread, and if that is still building, the process exits 0
there instead of shutting its interpreter down under ONNX Runtime (which aborts it)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def ended(loading_seconds: float) -> int:
    code = (
        "import threading, time\n"
        "from providers.embedders import settle\n"
        f"loading = threading.Thread(target=time.sleep, args=({loading_seconds},), daemon=True)\n"
        "loading.start()\n"
        "settle(loading, 0.5)\n"
        "raise SystemExit(3)  # settle returned: the process goes on to its own end\n"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60).returncode


def test_a_process_still_loading_the_embedder_exits_0_at_settle():
    assert ended(30) == 0


def test_a_process_whose_embedder_is_loaded_goes_on_past_settle():
    assert ended(0) == 3
