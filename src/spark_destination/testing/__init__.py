"""Fivetran-compatible test client: batch-file writer and protocol driver."""
