"""Tournaments, duplicate play: every entrant plays the same secret deals in the same order."""
