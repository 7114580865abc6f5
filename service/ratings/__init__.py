"""Ratings per ruleset from rated races (docs/ratings.md): the model, its store, the service and its rebuild."""
