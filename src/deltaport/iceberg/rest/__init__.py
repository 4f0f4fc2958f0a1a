"""The catalog's HTTP side: the REST routes (one catalog per share, asking the sharing
listener's catalog source) and the storage credentials its load-table answers carry."""
