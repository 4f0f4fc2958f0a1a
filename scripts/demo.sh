#!/usr/bin/env bash
# Start the sharing server on generated sample tables (local disk) and print how to read them.
# Installs only the package (no extra, no dev group: about 350 MB instead of 1.9 GB), keeping
# whatever an existing environment holds besides.
source "$(dirname "${BASH_SOURCE[0]}")/_env.sh"
uv sync --frozen --quiet --no-dev --inexact
exec uv run --frozen --no-sync deltaport demo "$@"
