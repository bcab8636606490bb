#!/usr/bin/env python3
"""Hand a transcript file to a Loom on another host: ``conversation.ingest`` over HTTP with
``LOOM_URL`` and ``LOOM_TOKEN``, for the capture scripts on a machine without Loom. Standard
library only, Python 3.9+. It takes the options of ``loom ingest-transcript`` that the scripts use
and ends with the same exit codes, so a script calls either the same way:

    loom_ingest.py --namespace NS --file FILE [--thread-id ID] [--agent NAME] [--first-line N]

0: handed over (or handed over before); 2: Loom refused this file (one line says why); 75: Loom
cannot be reached or failed, try again later; 77: the namespace does not record conversations.
Without ``--thread-id`` the thread is named after the file's base name."""

import argparse
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request

OK, REFUSED, TRY_LATER, RECORDING_OFF = 0, 2, 75, 77
TIMEOUT_SECONDS = 30


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="loom_ingest.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--namespace")
    parser.add_argument("--file", required=True)
    parser.add_argument("--thread-id")
    parser.add_argument("--agent", default="default")
    parser.add_argument("--first-line", type=int, default=1)
    args = parser.parse_args(argv)
    url, token = os.environ.get("LOOM_URL", "").rstrip("/"), os.environ.get("LOOM_TOKEN", "")
    if not url or not token:
        return fail("LOOM_URL and LOOM_TOKEN must both be set to send over HTTP", REFUSED)
    try:
        with open(args.file, encoding="utf-8") as fh:
            transcript = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        return fail(f"cannot read {args.file}: {exc}", REFUSED)
    name = os.path.basename(args.file)
    body = {
        "agent": args.agent,
        "thread_id": args.thread_id or "transcript-" + hashlib.sha256(name.encode()).hexdigest()[:16],
        "transcript": transcript,
        "source": name[:256],
        "first_line": args.first_line,
    }
    if args.namespace:
        body["namespace"] = args.namespace
    request = urllib.request.Request(
        f"{url}/v1/conversation.ingest",
        json.dumps(body).encode(),
        {"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            reason = json.loads(exc.read()).get("error", "")
        except ValueError:
            reason = ""
        code = TRY_LATER if exc.code >= 500 or exc.code in (401, 403, 429) else REFUSED
        hint = " (check LOOM_TOKEN)" if exc.code in (401, 403) else ""
        return fail(f"HTTP {exc.code} from {url}{hint}: {reason}", code)
    except (OSError, ValueError) as exc:
        return fail(f"cannot reach {url}: {getattr(exc, 'reason', None) or exc}", TRY_LATER)
    if answer.get("reason") == "logging_disabled":
        return fail(f"namespace {answer.get('namespace')!r} does not record conversations", RECORDING_OFF)
    print(f"thread {answer.get('thread_id')}: handed over" + (" before" if answer.get("reason") else ""))
    return OK


def fail(reason: str, code: int) -> int:
    print(f"loom_ingest.py: {reason}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
