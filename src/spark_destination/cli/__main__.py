"""``python -m spark_destination.cli``: the command line."""

from spark_destination.cli.main import main

raise SystemExit(main())
