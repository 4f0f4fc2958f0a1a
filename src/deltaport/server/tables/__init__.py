"""The table service: a request -> a version -> the selected files (hints, partition filters),
change data, dir-mode credentials, the snapshot cache. Uses ``pages``, ``answers``, ``files``."""
