#!/usr/bin/env bash
# Build the documentation site (MkDocs + Material, API reference from the docstrings) and serve
# it on http://127.0.0.1:8000 with live reload. `bash scripts/docs.sh build` only builds it,
# strictly (a broken link, a missing page or an API reference that no longer matches the code
# is an error), into site/. Further arguments go to `mkdocs serve` / `mkdocs build`.
source "$(dirname "${BASH_SOURCE[0]}")/_env.sh"
uv sync --frozen --quiet
export NO_MKDOCS_2_WARNING=1
if [ "${1:-}" = build ]; then
    shift
    exec uv run --frozen mkdocs build --strict "$@"
fi
exec uv run --frozen mkdocs serve "$@"
