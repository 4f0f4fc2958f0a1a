"""Avro's binary encoding done column-wise with Arrow and numpy, and the object container
files of Iceberg manifests written from it (fastavro, one record at a time, is too slow for
manifests of 100,000 files; it still writes the small manifest lists and checks this
encoder in the tests). Uses only pyarrow and numpy."""
