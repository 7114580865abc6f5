"""The subcommands of the `canfield` command line (service/cli.py holds `main` and the command
table), one module per concept: common.py (the `Command` record, the one-line errors, the database
a command works on), serving.py (serve, migrate, openapi), deals.py (solve, pool), analysis.py
(analyse), data.py (projections, backup, restore).

Each module defines its subcommands as `Command` values; `service.cli.COMMANDS` names them.
"""
