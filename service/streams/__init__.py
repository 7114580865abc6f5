"""Live streams: Server-Sent Events of games and races over LISTEN/NOTIFY."""
