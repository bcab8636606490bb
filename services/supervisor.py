"""``loom up``: run the API, a worker and the scheduler as child processes, restart a child that
dies, and stop them all on SIGINT/SIGTERM."""

import logging
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

CHILDREN = ("api", "worker", "scheduler")
RESTART_PAUSE_SECONDS = 1.0


class Supervisor:
    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.procs: dict[str, subprocess.Popen] = {}
        self.stopping = threading.Event()

    def _spawn(self, name: str) -> None:
        proc = subprocess.Popen([sys.executable, "-m", "cli", name])
        self.procs[name] = proc
        # Operators (and the kill test) find each child's pid here.
        (self.run_dir / f"{name}.pid").write_text(str(proc.pid))

    def run(self) -> int:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self.stopping.set())
        for name in CHILDREN:
            self._spawn(name)
        while not self.stopping.wait(0.5):
            for name, proc in list(self.procs.items()):
                if proc.poll() is not None and not self.stopping.is_set():
                    log.warning("%s exited with %s; restarting it", name, proc.returncode)
                    self._spawn(name)
                    self.stopping.wait(RESTART_PAUSE_SECONDS)  # a child that cannot start must not spin
        self._stop_all()
        return 0

    def _stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30
        for name, proc in self.procs.items():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("%s did not stop in time; killing it", name)
                proc.kill()
                proc.wait()
            (self.run_dir / f"{name}.pid").unlink(missing_ok=True)
