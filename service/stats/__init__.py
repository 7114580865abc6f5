"""Stats and the daily leaderboard: projections of the event log, their offline rebuild, their reads."""
