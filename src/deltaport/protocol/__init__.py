"""The wire contract, without I/O: schemas, actions, errors, predicates, profiles."""
