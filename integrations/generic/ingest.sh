#!/bin/sh
# Ingest an exported transcript (Markdown "# user" / "# assistant" sections, or a JSON array of
# {"role", "content"} objects) into Loom. See README.md beside this file.
#
#   usage: ingest.sh FILE [THREAD_ID]
#
# LOOM_NAMESPACE  namespace to record into (required)
# LOOM_AGENT      agent name stored with the turns (optional)
# LOOM_URL, LOOM_TOKEN  a Loom on another host, over HTTP (with Python 3: LOOM_PYTHON, default python3)
# LOOM_BIN        path of the loom command on the Loom host (default: loom on PATH)
set -eu

me=$(basename "$0")

fail() {
    echo "$me: $1" >&2
    exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || fail "usage: $me FILE [THREAD_ID]"
file=$1
[ -n "${LOOM_NAMESPACE:-}" ] || fail "LOOM_NAMESPACE is not set (the namespace to record into)"
[ -f "$file" ] || fail "no such file: $file"
[ -r "$file" ] || fail "cannot read file: $file"
thread=
if [ $# -eq 2 ]; then
    [ -n "$2" ] || fail "THREAD_ID is empty"
    thread=$2
fi

if [ -n "${LOOM_URL:-}" ]; then # a Loom on another host: conversation.ingest over HTTP
    [ -n "${LOOM_TOKEN:-}" ] || fail "LOOM_TOKEN is not set (a writer token of the namespace, with LOOM_URL)"
    python=${LOOM_PYTHON:-python3}
    command -v "$python" >/dev/null 2>&1 || fail "cannot find '$python' (needed with LOOM_URL; set LOOM_PYTHON)"
    set -- "$python" "$(dirname "$0")/loom_ingest.py"
else # the Loom host: the local command, as the operator
    loom=${LOOM_BIN:-loom}
    command -v "$loom" >/dev/null 2>&1 || fail "cannot find '$loom' (install Loom, set LOOM_BIN, or set LOOM_URL)"
    set -- "$loom" ingest-transcript
fi
# The --opt=value form keeps a value that starts with "-" from being read as an option.
set -- "$@" "--namespace=$LOOM_NAMESPACE" "--file=$file"
[ -z "$thread" ] || set -- "$@" "--thread-id=$thread"
[ -z "${LOOM_AGENT:-}" ] || set -- "$@" "--agent=$LOOM_AGENT"
exec "$@"
