#!/usr/bin/env bash
# Start the sharing server on generated sample tables (local disk) and print how to read them.
source "$(dirname "${BASH_SOURCE[0]}")/_env.sh"
exec uv run --frozen deltaport demo "$@"
