"""Jinja statement skeletons (``*.sql.j2``), one folder per dialect plus ``common``. Every
slot takes a sqlglot tree, never text (``dialects/edge.py``); which skeletons a dialect
overrides or adds is declared in its module (``dialects/skeletons.py``)."""
