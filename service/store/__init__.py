"""PostgreSQL: the event store, the tables, migrations, the embedded server."""
