"""``python -m deltaport.cli ...``: the same command line as ``deltaport ...``."""

import sys

from deltaport.cli.main import main

sys.exit(main())
