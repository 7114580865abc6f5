"""Deals: the verified deal pools, the daily deal, the solver's worker processes."""
