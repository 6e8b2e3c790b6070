#!/bin/sh
# Test-only fake compile command: writes OUT (the size of IN) and, when a
# third argument is given, OUT.side with that text. Exits 5 printing a
# message when IN is not a zip archive (.pt2).
set -e
[ "$(head -c 2 "$1")" = "PK" ] || { echo "fake: not a pt2" >&2; exit 5; }
printf 'fake %s\n' "$(wc -c < "$1" | tr -d ' ')" > "$2"
[ -z "$3" ] || printf '%s' "$3" > "$2.side"
