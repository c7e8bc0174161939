"""Lowering: IR ops -> SQL statements, one module per family of statements."""
