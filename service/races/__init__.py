"""Races: players racing on one deck, their store and standings."""
