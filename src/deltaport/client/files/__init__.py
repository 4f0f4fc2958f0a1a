"""Reading the files a server names by URL (url mode): downloads with URL refresh, file
batches, remote parquet files, scans into Arrow. Uses ``base``, ``remote`` and ``read``."""
