"""The Delta history differ (two-dot): the commits one copy has that another lacks, the common
base, file and schema changes, summaries and pages. Uses ``base``, ``delta`` and ``storage``."""
