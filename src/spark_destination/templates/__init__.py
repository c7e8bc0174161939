"""Jinja statement skeletons (``*.sql.j2``). Slots take already-quoted SQL fragments only."""
