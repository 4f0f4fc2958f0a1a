"""The demo: sample tables served from local disk (``write_sample_tables`` alone gives a
provider tables to try a configuration on, as the README's provider quick start does)."""

from deltaport.demo.run import prepare_demo, run_demo
from deltaport.demo.samples import write_sample_tables

__all__ = ["prepare_demo", "run_demo", "write_sample_tables"]
