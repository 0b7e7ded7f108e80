#!/usr/bin/env bash
# Makes the current folder a fresh copy of examples/workspace again: every chapter page starts
# with it, so a chapter runs as written whatever earlier chapters left (chapter 2 fixes the typo
# chapter 3 needs, chapter 9 leaves a memory that chapter 10 on would select from, ...).
#
# It empties the current folder first, so it refuses any folder that is not a copy of the
# example project (its README.md starts like the example's) and the example itself.
set -euo pipefail

src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../workspace" && pwd -P)"
here="$(pwd -P)"
if [ "$here" = "$src" ]; then
    echo "fresh.sh: this is examples/workspace itself; work in a copy (see the README)" >&2
    exit 1
fi
if ! [ -f README.md ] || [ "$(head -n 1 README.md)" != "$(head -n 1 "$src/README.md")" ]; then
    echo "fresh.sh: $here is not a copy of examples/workspace (its README.md differs); not emptying it" >&2
    exit 1
fi
find . -mindepth 1 -delete
cp -R "$src/." .
echo "fresh copy of examples/workspace in $here" >&2
