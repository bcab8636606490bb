#!/bin/sh
# Cursor hook ("stop"): hand the conversation's transcript to `loom ingest-transcript`.
# See README.md beside this file.
#
# Cursor writes {"conversation_id", "transcript_path", ...} on stdin. A JSON-lines agent transcript
# is sent in pieces: only the lines after the last piece handed over (--first-line keeps their
# keys). Any other file (a chat export) is sent whole when it changed; Loom adds only new turns.
# Every piece goes through a spool directory first and leaves it once Loom took it (or refused it
# for good), so pieces made while Loom is not running are sent later, in order, exactly once.
#
# LOOM_NAMESPACE   namespace to record into (required)
# LOOM_AGENT       agent name stored with the turns (default: cursor)
# LOOM_URL, LOOM_TOKEN  a Loom on another host: pieces go over HTTP (conversation.ingest)
# LOOM_BIN         path of the loom command on the Loom host (default: loom on PATH)
# LOOM_PYTHON      a Python 3 to read the hook's JSON input, and to send over HTTP (default: python3)
# LOOM_HOOK_STATE_DIR  offsets, spool and set-aside pieces (default: ~/.cache/loom/cursor)
# LOOM_CAPTURE_CONVERSATIONS  false/0/no/off: do nothing
#
# A hook must never break the user's session: it always prints {} and exits 0; a problem is one
# line on stderr.
set -u

me=loom-cursor-hook
finish() {
    [ -n "${lock:-}" ] && rm -rf "$lock"
    echo '{}'
    exit 0
}
say() { echo "$me: $1" >&2; }

case $(printf '%s' "${LOOM_CAPTURE_CONVERSATIONS:-true}" | tr 'A-Z' 'a-z') in
false | 0 | no | off) finish ;;
esac
[ -n "${LOOM_NAMESPACE:-}" ] || { say "LOOM_NAMESPACE is not set (the namespace to record into)"; finish; }
loom=${LOOM_BIN:-loom}
python=${LOOM_PYTHON:-python3}
agent=${LOOM_AGENT:-cursor}
# The sender: over HTTP to a Loom on another host, else the local command as the operator. Both
# end with ingest-transcript's exit codes.
if [ -n "${LOOM_URL:-}" ]; then
    [ -n "${LOOM_TOKEN:-}" ] || { say "LOOM_TOKEN is not set (a writer token of the namespace, with LOOM_URL)"; finish; }
    send() { "$python" "$(dirname "$0")/../generic/loom_ingest.py" "$@"; }
else
    send() { "$loom" ingest-transcript "$@"; }
fi

fields=$("$python" -c '
import json, sys
try:
    data = json.load(sys.stdin)
    conversation = str(data["conversation_id"])
    path = data.get("transcript_path") or ""
except Exception:
    sys.exit(1)
print(conversation)
print(path)
' 2>/dev/null) || { say "hook input is not a JSON object with conversation_id"; finish; }
conversation=$(printf '%s\n' "$fields" | sed -n 1p)
transcript=$(printf '%s\n' "$fields" | sed -n 2p)
[ -n "$transcript" ] || transcript=${CURSOR_TRANSCRIPT_PATH:-}
[ -n "$transcript" ] || { say "Cursor gave no transcript_path (are transcripts turned off?)"; finish; }
[ -r "$transcript" ] || { say "cannot read transcript $transcript"; finish; }

# One directory per namespace; names of files keep to safe characters.
safe() { printf '%s' "$1" | tr -c 'A-Za-z0-9_-' '_' | cut -c1-100; }
dir=${LOOM_HOOK_STATE_DIR:-${HOME:-.}/.cache/loom/cursor}/ns-$(safe "$LOOM_NAMESPACE")
spool=$dir/spool
mkdir -p "$spool" "$dir/rejected" || { say "cannot write $dir"; finish; }
key=$(safe "$conversation")

# --- spool what is new ---------------------------------------------------------------------------
stamp() { "$python" -c 'import time; print("%020d" % time.time_ns())'; }
case $transcript in
*.jsonl)
    done_lines=$(cat "$dir/lines-$key" 2>/dev/null || echo 0)
    total=$(wc -l <"$transcript" | tr -d ' ') # complete lines: a half-written last one waits
    [ "$total" -ge "$done_lines" ] 2>/dev/null || done_lines=0 # replaced or truncated: start over
    if [ "$total" -gt "$done_lines" ]; then
        first=$((done_lines + 1))
        piece=$spool/$(stamp)--$key--$first.jsonl
        sed -n "${first},${total}p" "$transcript" >"$piece.part" && mv "$piece.part" "$piece" &&
            echo "$total" >"$dir/lines-$key.part" && mv "$dir/lines-$key.part" "$dir/lines-$key"
    fi
    ;;
*)
    sum=$(cksum <"$transcript")
    if [ "$sum" != "$(cat "$dir/sum-$key" 2>/dev/null)" ]; then
        base=${transcript##*/}
        case $base in *.*) ext=${base##*.} ;; *) ext=txt ;; esac
        piece=$spool/$(stamp)--$key--1.$ext
        cp "$transcript" "$piece.part" && mv "$piece.part" "$piece" &&
            echo "$sum" >"$dir/sum-$key.part" && mv "$dir/sum-$key.part" "$dir/sum-$key"
    fi
    ;;
esac

# --- send the spool, oldest first ----------------------------------------------------------------
# The lock is a directory holding its owner's pid: one left by a killed run (its pid gone) is taken
# over; one of a live run means that run sends the spool, in order.
lock=$spool/.lock
if ! mkdir "$lock" 2>/dev/null; then
    holder=$(cat "$lock/pid" 2>/dev/null)
    if [ -n "$holder" ] && kill -0 "$holder" 2>/dev/null; then
        lock=
        finish
    fi
    rm -rf "$lock"
    mkdir "$lock" 2>/dev/null || { lock=; finish; }
fi
echo $$ >"$lock/pid"
for piece in "$spool"/*--*--*; do
    [ -e "$piece" ] || continue
    case $piece in *.part) continue ;; esac
    # <stamp>--<conversation>--<first line>.<ext>: read from both ends, since the conversation's
    # name may hold "--" itself.
    name=${piece##*/}
    rest=${name#*--}
    first=${name##*--}
    first=${first%%.*}
    thread=${rest%--*}
    send "--namespace=$LOOM_NAMESPACE" "--file=$piece" "--thread-id=$thread" \
        "--agent=$agent" "--first-line=$first" >/dev/null 2>"$dir/last-error"
    case $? in
    0) rm -f "$piece" ;;
    1 | 75) # Loom is not running (75), or failed unexpectedly (1): keep the spool for the next run
        say "$(tail -n 1 "$dir/last-error") (kept for the next run)"
        break
        ;;
    77) # the namespace does not record: these lines are never sent, not even once it does
        rm -f "$spool"/*--*--*
        break
        ;;
    *) # refused (2: not a transcript, a setting Loom refuses): set aside, never sent again
        mv "$piece" "$dir/rejected/$name"
        say "$(tail -n 1 "$dir/last-error") (set aside in $dir/rejected/$name)"
        ;;
    esac
done
finish
