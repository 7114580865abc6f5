"""PostgreSQL: the event store, the players, connections, the tables and migrations, the embedded server."""
