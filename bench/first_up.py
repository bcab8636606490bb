"""A person's first `make up` on a clean machine: a fresh clone, no .venv, pip's cache not used
(every package comes from the registry, as on a new machine), then `make up` until Loom answers a
first search. Reports the seconds to an installed .venv, to the API answering, and to a first
search (the embedder's ONNX builds made on the way), and the fresh .venv's size.

    python3 bench/first_up.py [--python python3.11]

Standard library only: it runs before any .venv exists. Prints one JSON line on stdout.
"""

import argparse
import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PORT = 7791


def size_mb(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) // 2**20


def answered(url: str, body: bytes | None = None, token: str | None = None) -> bytes | None:
    request = urllib.request.Request(url, data=body, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.read()
    except OSError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default="python3.11")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="loom-first-up-") as scratch:
        clone, home = Path(scratch) / "loom", Path(scratch) / "home"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        env = {
            "PATH": os.environ["PATH"],
            "HOME": os.environ["HOME"],
            "LOOM_HOME": str(home),
            "LOOM_PORT": str(PORT),
            "PIP_NO_CACHE_DIR": "1",
        }
        started = time.monotonic()
        up = subprocess.Popen(
            ["make", "up", f"PYTHON={args.python}"],
            cwd=clone,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            stamp = clone / ".venv" / ".installed"
            while not stamp.exists():
                time.sleep(0.5)
            installed = time.monotonic() - started
            base = f"http://127.0.0.1:{PORT}"
            while answered(f"{base}/healthz") is None:
                time.sleep(0.2)
            serving = time.monotonic() - started
            loom = [str(clone / ".venv" / "bin" / "loom"), "tokens", "create", "--namespace", "first"]
            token = subprocess.run(
                [*loom, "--role", "admin", "--recording"], env=env, capture_output=True, text=True, check=True
            ).stdout.strip()
            query = json.dumps({"query": "first search"}).encode()
            while answered(f"{base}/v1/conversation.search", query, token) is None:
                time.sleep(0.2)
            searched = time.monotonic() - started
            venv = size_mb(clone / ".venv")
        finally:
            os.killpg(up.pid, signal.SIGINT)
            up.wait(timeout=120)
    print(
        json.dumps(
            {
                "python": args.python,
                "venv_installed_s": round(installed, 1),
                "api_answering_s": round(serving, 1),
                "first_search_s": round(searched, 1),
                "venv_mb": venv,
            }
        )
    )


if __name__ == "__main__":
    main()
