# Shared set-up for the scripts: make sure uv exists; each script then installs what it runs
# (the demo: the package alone; the tests and the docs: the locked environment with the dev group).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! command -v uv >/dev/null 2>&1; then
    python3 -m pip install --quiet uv
    export PATH="$HOME/.local/bin:$PATH"
fi
