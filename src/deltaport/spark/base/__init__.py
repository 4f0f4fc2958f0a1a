"""What every part of the Spark source shares: its options, Spark types from Arrow, and the
connection to the sharing server. Uses ``client`` and ``protocol``."""
