#!/usr/bin/env bash
# Runs `swapd check` over every *.yaml / *.yml in DIR and prints a markdown table:
# file | models | warnings | errors | verdict (ok / rejected).
#
#   tests/compat/run-corpus.sh DIR [SWAPD]      SWAPD defaults to build/bin/swapd, then PATH
#   CORPUS_VERBOSE=1 ...                        also print each file's diagnostics after the table
#
# Every ${env.NAME} a file mentions (found by grep, so also in comments) gets the placeholder
# value /placeholder/NAME unless NAME is already set. The exit status is non-zero only when the
# script itself cannot run (no DIR, no swapd); whether a verdict is the expected one is judged
# elsewhere. A swapd that dies or exits with another code gets the verdict "failed (exit N)".
set -euo pipefail

usage() {
  echo "usage: $0 DIR [SWAPD]" >&2
  exit 2
}
[[ $# -ge 1 && $# -le 2 ]] || usage
dir=$1
[[ -d $dir ]] || { echo "$0: $dir is not a directory" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/../.." && pwd)
swapd=${2:-}
if [[ -z $swapd ]]; then
  if [[ -x $repo/build/bin/swapd ]]; then
    swapd=$repo/build/bin/swapd
  else
    swapd=$(command -v swapd || true)
  fi
fi
[[ -n $swapd && -x $swapd ]] || { echo "$0: no swapd binary (build it, or pass SWAPD)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

files=()
while IFS= read -r -d '' f; do files+=("$f"); done \
  < <(find "$dir" -maxdepth 1 -type f \( -name '*.yaml' -o -name '*.yml' \) -print0 | LC_ALL=C sort -z)

echo "| file | models | warnings | errors | verdict |"
echo "|---|---:|---:|---:|---|"
ok=0
rejected=0
failed=0
for f in "${files[@]}"; do
  name=$(basename "$f")
  assignments=()
  while IFS= read -r var; do
    [[ -z $var ]] && continue
    if [[ -z ${!var+set} ]]; then assignments+=("$var=/placeholder/$var"); fi
  done < <(grep -o '\${env\.[A-Za-z_][A-Za-z0-9_]*}' "$f" | sed 's/^\${env\.//; s/}$//' | sort -u)

  rc=0
  env ${assignments[@]+"${assignments[@]}"} "$swapd" check --config "$f" \
    >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
  warnings=$(grep -c -E ':[0-9]+:[0-9]+: warning: ' "$tmp/err" || true)
  errors=$(grep -c -E ':[0-9]+:[0-9]+: error: ' "$tmp/err" || true)
  models=-
  summary=$(tail -n 1 "$tmp/out")
  if [[ $summary =~ ^([0-9]+)\ models?, ]]; then models=${BASH_REMATCH[1]}; fi
  case $rc in
    0) verdict=ok; ok=$((ok + 1)) ;;
    1) verdict=rejected; rejected=$((rejected + 1)) ;;
    *) verdict="failed (exit $rc)"; failed=$((failed + 1)) ;;
  esac
  echo "| $name | $models | $warnings | $errors | $verdict |"
  if [[ ${CORPUS_VERBOSE:-} == 1 ]]; then
    { echo "### $name"; cat "$tmp/err"; echo; } >>"$tmp/details"
  fi
done
echo
echo "${#files[@]} files: $ok ok, $rejected rejected, $failed failed"
if [[ ${CORPUS_VERBOSE:-} == 1 && -f $tmp/details ]]; then
  echo
  cat "$tmp/details"
fi
