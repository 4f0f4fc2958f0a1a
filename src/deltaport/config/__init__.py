"""A deltaport process's configuration: the YAML file's model and loader (``model``), and
the addresses derived from it (``urls``). Uses ``catalog``, ``storage`` and ``protocol``;
the listeners, the admin API and the console read it."""

from deltaport.config.loading import load_config
from deltaport.config.model import ConfigError, ServerConfig

__all__ = ["ConfigError", "ServerConfig", "load_config"]
