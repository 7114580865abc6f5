"""Stats and the daily leaderboard: projections of the event log."""
