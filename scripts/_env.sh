# Shared set-up for the scripts: make sure uv exists and the locked environment is installed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! command -v uv >/dev/null 2>&1; then
    python3 -m pip install --quiet uv
    export PATH="$HOME/.local/bin:$PATH"
fi
uv sync --frozen --quiet
