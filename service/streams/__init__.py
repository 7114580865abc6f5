"""Live streams: Server-Sent Events of games and races, woken by one LISTEN/NOTIFY hub per process."""
