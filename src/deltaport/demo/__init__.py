"""The demo: sample tables served from local disk."""

from deltaport.demo.run import prepare_demo, run_demo

__all__ = ["prepare_demo", "run_demo"]
