"""Game analysis: jobs in PostgreSQL (``queue``), run off the request path (``runner``: the solver in
worker processes, ``jobs``: one job), and what the API shows of them (``analyses``)."""
