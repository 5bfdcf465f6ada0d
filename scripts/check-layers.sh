#!/usr/bin/env bash
# Checks that the folders' includes point one way (docs/architecture.md): a folder may include
# only folders of a lower layer, never one of its own layer or above. Prints every include that
# breaks the rule and exits 1; run by the test suite (ctest's "layers").
set -euo pipefail
cd "$(dirname "$0")/.."
# folder:layer, bottom up. Folders of one layer do not see each other.
layers="base:0 ui:0 config:1 http:1 backends:2 frontdoor:3 store:4 memory:5 observe:6 check:7
scoreboard:7 api:8 daemon:9"
declare -A layer
for entry in $layers; do layer[${entry%%:*}]=${entry##*:}; done

bad=0
for folder in "${!layer[@]}"; do
  [ -d "$folder" ] || continue
  while IFS=: read -r file line target; do
    to=${target%%/*}
    [ "$to" = "$folder" ] && continue
    if [ -z "${layer[$to]+x}" ] || [ "${layer[$to]}" -ge "${layer[$folder]}" ]; then
      echo "$file:$line: $folder/ (layer ${layer[$folder]}) includes $target (layer ${layer[$to]:-unknown})"
      bad=1
    fi
  done < <(grep -rnoE '^#include "[a-z_]+/[^"]+"' "$folder" --include='*.h' --include='*.cpp' |
    sed -E 's/^([^:]+):([0-9]+):#include "(.*)"$/\1:\2:\3/')
done
[ "$bad" = 0 ] && echo "layers: every include points down"
exit "$bad"
