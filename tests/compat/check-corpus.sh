#!/usr/bin/env bash
# Runs run-corpus.sh over DIR and fails unless every file gets the verdict llama-swap gives it:
# the files named in expected-rejected.txt are rejected, every other file loads.
#   tests/compat/check-corpus.sh DIR [SWAPD]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
table=$("$here/run-corpus.sh" "$@")
echo "$table"
expected=$(grep -v '^#' "$here/expected-rejected.txt" | sed '/^$/d' | sort)
status=0
while IFS='|' read -r _ file _ _ _ verdict _; do
  file=$(echo "$file" | xargs)
  verdict=$(echo "$verdict" | xargs)
  [[ $file == file || $file == ---* || -z $file ]] && continue
  if grep -qxF "$file" <<<"$expected"; then want=rejected; else want=ok; fi
  if [[ $verdict != "$want" ]]; then
    echo "check-corpus: $file: verdict '$verdict', llama-swap's is '$want'" >&2
    status=1
  fi
done < <(grep '^| ' <<<"$table")
[[ $status -eq 0 ]] && echo "check-corpus: every verdict matches llama-swap's"
exit $status
