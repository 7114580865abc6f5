"""Following an account: its event stream, webhooks and their delivery, and the outbox's periodic job."""
