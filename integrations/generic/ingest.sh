#!/bin/sh
# Ingest an exported transcript (Markdown "# user" / "# assistant" sections, or a JSON array of
# {"role", "content"} objects) into Loom. See README.md beside this file.
#
#   usage: ingest.sh FILE [THREAD_ID]
#
# LOOM_NAMESPACE  namespace to record into (required)
# LOOM_AGENT      agent name stored with the turns (optional)
# LOOM_BIN        path of the loom command (default: loom on PATH)
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

loom=${LOOM_BIN:-loom}
command -v "$loom" >/dev/null 2>&1 || fail "cannot find '$loom' (install Loom or set LOOM_BIN)"

# The --opt=value form keeps a value that starts with "-" from being read as an option.
if [ $# -eq 2 ]; then
    [ -n "$2" ] || fail "THREAD_ID is empty"
    set -- "--thread-id=$2"
else
    set --
fi
if [ -n "${LOOM_AGENT:-}" ]; then
    set -- "$@" "--agent=$LOOM_AGENT"
fi

exec "$loom" ingest-transcript "--namespace=$LOOM_NAMESPACE" "--file=$file" "$@"
