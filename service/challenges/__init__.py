"""Challenges: one player invites another to a two-entrant race (docs/api.md, Challenges)."""
