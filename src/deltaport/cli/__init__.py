"""``deltaport ...``: the command line, one module per command group, each thin (parse,
call a service, print). ``main`` builds the parser and dispatches; ``serve`` hands the
process to ``listeners``. The entry point stays ``deltaport.cli:main``."""

from deltaport.cli.main import main

__all__ = ["main"]
