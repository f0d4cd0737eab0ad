#!/usr/bin/env bash
# The second real repository of bench/symbol_links.py: griffe 2.4.1 (ISC), a Python library whose
# docs carry about 350 mkdocstrings cross-references into a package that defines everything in
# private `_internal` modules and re-exports it from its top level.
#
#     bench/fetch_griffe.sh [ARCHIVE]      (default /work/corpora/griffe-2.4.1.tar.gz)
#
# Assembled as upstream lays it out, from the three source distributions published on PyPI for
# the release: the docs and project files (griffe), the library (griffelib) and the command line
# (griffecli) under packages/<name>/. Kept outside the project: third-party code, benchmark load only.
set -euo pipefail
archive=$(realpath -m "${1:-/work/corpora/griffe-2.4.1.tar.gz}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --no-binary :all: --dest "$work/sdists" \
    griffe==2.4.1 griffelib==2.4.1 griffecli==2.4.1 2> >(grep -v 'is ignored' >&2)
mkdir -p "$work/griffe/packages/griffelib" "$work/griffe/packages/griffecli"
tar xzf "$work/sdists/griffe-2.4.1.tar.gz" -C "$work/griffe" --strip-components=1
for package in griffelib griffecli; do
    tar xzf "$work/sdists/$package-2.4.1.tar.gz" -C "$work/griffe/packages/$package" --strip-components=1
done
find "$work/griffe" -name PKG-INFO -delete
mkdir -p "$(dirname "$archive")"
tar czf "$archive" -C "$work" griffe
echo "$archive"
