"""Pure planning: requests + current table state -> a Plan of typed operations (no I/O)."""
