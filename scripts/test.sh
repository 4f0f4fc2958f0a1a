#!/usr/bin/env bash
# Run the whole test suite. Installs everything it needs (uv, the locked environment, the
# Azure emulator from npm, Debian's PostgreSQL and Chromium) on a fresh machine that has only
# Python 3.11+ and Java 17.
source "$(dirname "${BASH_SOURCE[0]}")/_env.sh"
uv sync --frozen --quiet
if ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
    else
        echo "npm is needed for the Azure emulator (azurite); install Node.js and npm" >&2
        exit 1
    fi
fi
# PostgreSQL for the catalog tests (a private cluster is started by the tests themselves)
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
    else
        echo "PostgreSQL is needed for the catalog tests; install Debian's postgresql" >&2
        exit 1
    fi
fi
# the console's browser tests drive Debian's Chromium (never a browser downloaded by Playwright)
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null
    else
        echo "chromium is needed for the console's browser tests; install chromium and chromium-driver" >&2
        exit 1
    fi
fi
if [ ! -x .cache/azurite/node_modules/.bin/azurite-blob ]; then
    npm install --silent --no-audit --no-fund --prefix .cache/azurite azurite >/dev/null
fi
uv run --frozen ruff check src tests benchmarks
uv run --frozen ruff format --check src tests benchmarks
uv run --frozen mypy
# not --quiet: it drops warnings before --strict counts them
NO_MKDOCS_2_WARNING=1 uv run --frozen mkdocs build --strict
uv run --frozen pytest "$@"
