"""Adapters from the Canfield domain to the world: HTTP, the event store, settings, CLI."""
