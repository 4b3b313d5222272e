#!/usr/bin/env bash
# Fails when the public API of a library product differs from its committed list in Scripts/api/<Module>.txt;
# `--update` rewrites the lists. Symbols behind `@_spi` are not public API and are not listed.
set -euo pipefail
cd "$(dirname "$0")/../.."
modules=(Mosaic MosaicKernel MosaicTesting MosaicWeb MosaicHummingbird MosaicCommands MosaicPostgres)

swift package dump-symbol-graph --skip-synthesized-members --minimum-access-level public >/dev/null
graphs="$(dirname "$(swift build --show-bin-path)")/symbolgraph"

status=0
for module in "${modules[@]}"; do
    list="Scripts/api/$module.txt"
    current="$(python3 Scripts/api/render.py "$graphs" "$module")"
    if [ "${1:-}" = "--update" ]; then
        printf '%s\n' "$current" >"$list"
        echo "$list: $(grep -vc ' | conforms to ' "$list") declarations"
    elif ! diff -u "$list" <(printf '%s\n' "$current") >/tmp/api-$module.diff; then
        echo "error: the public API of $module differs from $list:" >&2
        cat /tmp/api-$module.diff >&2
        status=1
    fi
done
if [ $status -ne 0 ]; then
    echo "If the change is meant, run Scripts/api/check.sh --update and commit the lists." >&2
fi
exit $status
