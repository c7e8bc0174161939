"""Helpers and fixtures the test suites share (imported, never collected as tests)."""
