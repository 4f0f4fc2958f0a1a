"""``python -m deltaport.server --config FILE [--host H] [--port P]``: an entry point, imported
by nothing, so its use of ``listeners`` (which imports the server) closes no loop."""

from __future__ import annotations

import argparse
import sys

from deltaport.config.model import ConfigError
from deltaport.listeners import run
from deltaport.listeners.startup import start_up_errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="deltaport-server", description="Serve Delta Sharing.")
    parser.add_argument("--config", "-c", required=True, help="server configuration (YAML)")
    parser.add_argument("--host", help="address to bind (overrides the config)")
    parser.add_argument("--port", type=int, help="port to bind (overrides the config)")
    args = parser.parse_args(argv)
    try:
        run(args.config, args.host, args.port)
    except ConfigError as exc:
        print(f"deltaport: invalid configuration: {exc}", file=sys.stderr)
        return 2
    except start_up_errors() as exc:
        print(f"deltaport: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
