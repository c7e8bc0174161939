"""SQL targets: quoting, type mapping and the render entry point (pure, no I/O)."""
