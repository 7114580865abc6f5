"""The tables, as SQLAlchemy metadata. Alembic migrations create them; a test checks they agree."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Date,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    false,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, DOUBLE_PRECISION, JSON, JSONB, UUID

metadata = MetaData()

players = Table(
    "players",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("name", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("bot", Boolean, nullable=False, server_default=false()),  # a bot account (migration 0019)
    # whom the player accepts challenges from: everyone, humans or nobody (migration 0020)
    Column("accept_challenges", Text, nullable=False, server_default=text("'everyone'")),
    CheckConstraint("accept_challenges IN ('everyone', 'humans', 'nobody')", name="players_accept_challenges_check"),
    # the number of the account's last event (service.following.outbox; migration 0021)
    Column("event_seq", BigInteger, nullable=False, server_default=text("0")),
)

tokens = Table(
    "tokens",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("player_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False),
    Column("name", Text, nullable=False),
    Column("token_hash", LargeBinary, nullable=False, unique=True),
    Column("scopes", ARRAY(Text), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("expires_at", DateTime(timezone=True), nullable=True),
    Column("revoked_at", DateTime(timezone=True), nullable=True),
    Index("tokens_player_id", "player_id"),
)

games = Table(
    "games",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("player_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False),
    Column("ruleset_id", Text, nullable=False),
    Column("ruleset_version", Integer, nullable=False),
    Column("deal", JSONB, nullable=False),
    Column("status", Text, nullable=False),
    Column("version", Integer, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    # The games list's figures (the state's, kept beside the snapshot that is written only now and then)
    Column("move_count", Integer, nullable=False, server_default=text("0")),
    Column("undo_count", Integer, nullable=False, server_default=text("0")),
    Column("assisted", Boolean, nullable=False, server_default=false()),
    # A player's entry for a date's daily deal (a daily game that is not practice): one at most.
    Index(
        "games_daily_entry_key", "player_id", text("(deal->>'daily')"), unique=True,
        postgresql_where=text("deal->>'source' = 'daily' AND deal->>'practice' = 'false'"),
    ),
    # A player's games by start (their list and export), those in progress alone, their daily games (0010)
    Index("games_player_started", "player_id", "started_at", "id"),
    Index("games_player_playing", "player_id", "started_at", "id", postgresql_where=text("finished_at IS NULL")),
    # The games in progress by their last move: the idle ones the abandon job ends (0010)
    Index("games_idle", "updated_at", postgresql_where=text("finished_at IS NULL")),
    Index(
        "games_player_daily", "player_id", text("(deal->>'daily')"), postgresql_where=text("deal->>'source' = 'daily'")
    ),
)

game_snapshots = Table(
    "game_snapshots",
    metadata,
    # One per game: its state at ``version`` (service.store.snapshots.SNAPSHOT_EVERY)
    Column("game_id", UUID(as_uuid=True), ForeignKey("games.id"), primary_key=True),
    Column("version", Integer, nullable=False),
    Column("snapshot", JSON, nullable=False),  # read and written whole, never queried into
)

game_checkpoints = Table(
    "game_checkpoints",
    metadata,
    # A game's state and whole undo stack at every multiple of CHECKPOINT_EVERY versions
    # (service.store.checkpoints, domain.codec.checkpoint_of): past states fold from the nearest (migration 0016)
    Column("game_id", UUID(as_uuid=True), ForeignKey("games.id"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("checkpoint", JSON, nullable=False),
    PrimaryKeyConstraint("game_id", "version", name="game_checkpoints_pkey"),
)

events = Table(
    "events",
    metadata,
    Column("position", BigInteger, Identity(always=True), primary_key=True),
    Column("game_id", UUID(as_uuid=True), ForeignKey("games.id"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("type", Text, nullable=False),
    Column("data", JSONB, nullable=False),
    Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    Column("recorded_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    UniqueConstraint("game_id", "version", name="events_game_id_version_key"),
)

idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("game_id", UUID(as_uuid=True), ForeignKey("games.id"), nullable=False),
    Column("key", Text, nullable=False),
    Column("request_hash", LargeBinary, nullable=False),
    Column("response", JSON, nullable=False),  # json, not jsonb: a replay is the same bytes
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("game_id", "key", name="idempotency_keys_pkey"),
    Index("idempotency_keys_created_at", "created_at"),  # expiry (service.store.request_keys.purge)
)

request_keys = Table(  # the creating POSTs' Idempotency-Keys (service.http.idempotency, migration 0007)
    "request_keys",
    metadata,
    Column("scope", Text, nullable=False),  # player:<id>, or address:<ip> for POST /players
    Column("key", Text, nullable=False),  # SHA-256 of the key, hex (never the key)
    Column("request_hash", LargeBinary, nullable=False),  # of the method, path and body
    Column("status", Integer, nullable=True),  # NULL: pending (the request is being served, or was cut off)
    Column("headers", JSON, nullable=True),  # the reply's Location, ETag, Content-Type
    Column("body", LargeBinary, nullable=True),  # the reply's bytes, sealed under the key (it may hold a token)
    Column("created_at", DateTime(timezone=True), nullable=False),
    # migration 0014: the reply's player (the token's, or the one POST /players registered), so
    # DELETE /players/me erases it; and the scopes the first request's token held (NULL, a row of
    # the release before: every scope), which a replay's token must hold
    Column("player_id", UUID(as_uuid=True), nullable=True),
    Column("scopes", ARRAY(Text), nullable=True),
    PrimaryKeyConstraint("scope", "key", name="request_keys_pkey"),
    Index("request_keys_created_at", "created_at"),
    Index("request_keys_player_id", "player_id", postgresql_where=text("player_id IS NOT NULL")),
)

# ---------------------------------------------------------------- projections (service/stats/projections.py)
# Read models kept in the transaction of the events that change them, and rebuilt from the event
# log alone by `canfield projections rebuild`. Win rates and averages are derived when read.

player_stats = Table(
    "player_stats",
    metadata,
    Column("player_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False),
    Column("ruleset_id", Text, nullable=False),
    Column("played", Integer, nullable=False),  # finished games: won, stalled or resigned
    Column("won", Integer, nullable=False),
    Column("current_streak", Integer, nullable=False),
    Column("best_streak", Integer, nullable=False),
    Column("fewest_moves", Integer, nullable=True),  # in an unassisted win
    Column("fastest_seconds", DOUBLE_PRECISION, nullable=True),  # in an unassisted win
    Column("undos", BigInteger, nullable=False),
    PrimaryKeyConstraint("player_id", "ruleset_id", name="player_stats_pkey"),
    Index("player_stats_current_streak", "ruleset_id", "current_streak"),  # GET /stats' longest (migration 0010)
    Index("player_stats_best_streak", "ruleset_id", "best_streak"),
)

source_stats = Table(
    "source_stats",
    metadata,
    Column("source", Text, nullable=False),  # seed, deck, pool or daily
    Column("ruleset_id", Text, nullable=False),
    Column("played", Integer, nullable=False),
    Column("won", Integer, nullable=False),
    Column("fewest_moves", Integer, nullable=True),
    Column("fastest_seconds", DOUBLE_PRECISION, nullable=True),
    Column("undos", BigInteger, nullable=False),
    PrimaryKeyConstraint("source", "ruleset_id", name="source_stats_pkey"),
)

ruleset_stats = Table(  # players per ruleset, for GET /stats (migration 0011)
    "ruleset_stats",
    metadata,
    Column("ruleset_id", Text, nullable=False),
    # player_stats rows of the ruleset, counted by the triggers on player_stats that migration 0011
    # makes, in the transaction that inserts (or deletes) them
    Column("players", Integer, nullable=False),
    PrimaryKeyConstraint("ruleset_id", name="ruleset_stats_pkey"),
)

deal_stats = Table(
    "deal_stats",
    metadata,
    Column("ruleset_id", Text, nullable=False),
    Column("pool_number", Integer, nullable=False),
    Column("plays", Integer, nullable=False),  # games started on this pool deal
    Column("wins", Integer, nullable=False),
    PrimaryKeyConstraint("ruleset_id", "pool_number", name="deal_stats_pkey"),
)

daily_stats = Table(
    "daily_stats",
    metadata,
    Column("day", Date, nullable=False),
    Column("plays", Integer, nullable=False),  # games started on that date's daily deal (practice too)
    Column("wins", Integer, nullable=False),
    PrimaryKeyConstraint("day", name="daily_stats_pkey"),
)

daily_leaderboard = Table(  # one row per player's finished entry (first game) of a date's deal
    "daily_leaderboard",
    metadata,
    Column("game_id", UUID(as_uuid=True), ForeignKey("games.id"), nullable=False),
    Column("day", Date, nullable=False),
    Column("player_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False),
    Column("moves", Integer, nullable=False),
    Column("seconds", DOUBLE_PRECISION, nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=False),
    Column("verified_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("status", Text, nullable=False),  # won, stalled or resigned
    Column("assisted", Boolean, nullable=False),
    Column("unranked", Text, nullable=True),  # why it has no rank (service.stats.projections.UNRANKED); NULL: ranked
    PrimaryKeyConstraint("game_id", name="daily_leaderboard_pkey"),
    UniqueConstraint("day", "player_id", name="daily_leaderboard_day_player_key"),
    # the board's two parts in their order, and a player's own entries (migration 0010)
    Index("daily_leaderboard_ranked", "day", "moves", "seconds", "finished_at", "game_id",
          postgresql_where=text("unranked IS NULL")),
    Index("daily_leaderboard_unranked", "day", "finished_at", "game_id", postgresql_where=text("unranked IS NOT NULL")),
    Index("daily_leaderboard_player", "player_id", "day"),
)

daily_deals = Table(  # a date's deal, stored by the first server process that proved it (service.deals.daily_deals)
    "daily_deals",
    metadata,
    Column("day", Date, nullable=False),
    Column("ruleset_id", Text, nullable=False),
    Column("ruleset_version", Integer, nullable=False),
    Column("candidate", Integer, nullable=False),  # which HMAC candidate of the date (0, 1, ...)
    Column("seed", BigInteger, nullable=False),  # derived from DAILY_SECRET; never shown
    Column("deck", JSONB, nullable=False),  # the 52 codes in deal order; never shown before the date is over
    # the solver's winning line (service.deals.deal_pools's encoding); never shown
    Column("line", Text, nullable=False),
    Column("line_length", Integer, nullable=False),
    Column("solver_states", Integer, nullable=False),
    Column("verified_at", DateTime(timezone=True), nullable=False),
    # the deck's canonical fingerprint (domain.fingerprint): the solver refuses its copies while the date is on (0013)
    Column("fingerprint", Text, nullable=True),
    PrimaryKeyConstraint("day", name="daily_deals_pkey"),
)

# ---------------------------------------------------------------- secrets the server made (migration 0008)

service_secrets = Table(  # by name; "deal-secret" keys daily and race deals without DAILY_SECRET
    "service_secrets",
    metadata,
    Column("name", Text, primary_key=True),
    Column("value", Text, nullable=False),  # never shown
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)

# ---------------------------------------------------------------- races (service/races/races.py, migration 0004)

races = Table(
    "races",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("creator_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False),
    Column("ruleset_id", Text, nullable=False),
    Column("ruleset_version", Integer, nullable=False),
    # the source asked for: {"source": "seed", "seed": 7}, ... (shown after the race)
    Column("deal", JSONB, nullable=False),
    Column("deck", JSONB, nullable=False),  # the 52 codes every entrant is dealt (never shown by the race)
    Column("max_entrants", Integer, nullable=False),
    Column("time_limit_seconds", Integer, nullable=True),
    Column("status", Text, nullable=False),  # open, running, finished, cancelled
    Column("version", Integer, nullable=False),  # +1 with every change of the race row or its entrants
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=True),
    Column("ends_at", DateTime(timezone=True), nullable=True),  # started_at + the time limit
    Column("finished_at", DateTime(timezone=True), nullable=True),
    # a secret deal's proof: {"candidate": n, "line": ..., "solverStates": k} (never shown); migration 0008
    Column("deal_proof", JSONB, nullable=True),
    # the deck's canonical fingerprint (domain.fingerprint): the solver refuses its copies while the race
    # runs, found by races_live_fingerprint (migration 0013)
    Column("fingerprint", Text, nullable=True),
    # a race whose creator left before anyone else entered is cancelled, with its reason (migration 0016)
    Column("cancelled_reason", Text, nullable=True),
    # the race changes its entrants' ratings when it finishes (service/ratings, migration 0019)
    Column("rated", Boolean, nullable=False, server_default=false()),
    CheckConstraint("status IN ('open', 'running', 'finished', 'cancelled')", name="races_status_check"),
    CheckConstraint("max_entrants BETWEEN 2 AND 8", name="races_max_entrants_check"),
    Index("races_open", "created_at", "id", postgresql_where=text("status = 'open'")),  # the lobby (migration 0010)
    Index("races_live_fingerprint", "fingerprint", postgresql_where=text("status = 'running'")),
    # running races by deadline: the periodic job finishes those whose time is up (migration 0021)
    Index("races_running_ends_at", "ends_at", postgresql_where=text("status = 'running'")),
)

race_entrants = Table(
    "race_entrants",
    metadata,
    Column("race_id", UUID(as_uuid=True), ForeignKey("races.id"), nullable=False),
    Column("player_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False),
    Column("seat", Integer, nullable=False),  # 1 for the creator, then in the order of joining
    Column("joined_at", DateTime(timezone=True), nullable=False),
    Column("game_id", UUID(as_uuid=True), ForeignKey("games.id"), nullable=True),  # dealt at the start
    Column("standing", JSONB, nullable=True),  # frozen when the race finished, from the replayed log
    Column("place", Integer, nullable=True),  # final; null when unranked (its log did not replay)
    PrimaryKeyConstraint("race_id", "player_id", name="race_entrants_pkey"),
    UniqueConstraint("race_id", "seat", name="race_entrants_race_id_seat_key"),
    UniqueConstraint("game_id", name="race_entrants_game_id_key"),
    Index("race_entrants_player", "player_id", "joined_at", "race_id"),  # a player's entries (migration 0010)
)

# ---------------------------------------------------------------- ratings (service/ratings, migration 0019)

rated_races = Table(  # the recorded order in which rated races finished (not a projection)
    "rated_races",
    metadata,
    Column("sequence", BigInteger, Identity(always=False), primary_key=True),
    Column("race_id", UUID(as_uuid=True), nullable=False),  # a race's id, or a tournament's (migration 0024)
    Column("ruleset_id", Text, nullable=False),
    Column("rated_at", DateTime(timezone=True), nullable=False),
    Column("tournament", Boolean, nullable=False, server_default=false()),  # race_id names a tournament
    UniqueConstraint("race_id", name="rated_races_race_id_key"),
)

player_ratings = Table(  # a projection: a player's rating in a ruleset
    "player_ratings",
    metadata,
    Column("player_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False),
    Column("ruleset_id", Text, nullable=False),
    Column("mu", DOUBLE_PRECISION, nullable=False),  # the model's figures (openskill's Plackett-Luce)
    Column("sigma", DOUBLE_PRECISION, nullable=False),
    Column("rating", Integer, nullable=False),  # the displayed figures: mu and sigma rounded
    Column("deviation", Integer, nullable=False),
    Column("races", Integer, nullable=False),  # rated races
    Column("updated_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("player_id", "ruleset_id", name="player_ratings_pkey"),
    Index("player_ratings_list", "ruleset_id", text("rating DESC"), text("player_id DESC")),  # the rating list
)

rating_changes = Table(  # a projection: each entrant's rating before and after each rated race
    "rating_changes",
    metadata,
    Column("race_id", UUID(as_uuid=True), nullable=False),  # the rated race's or tournament's id
    Column("player_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False),
    Column("ruleset_id", Text, nullable=False),
    Column("sequence", BigInteger, ForeignKey("rated_races.sequence"), nullable=False),
    Column("place", Integer, nullable=False),
    Column("entrants", Integer, nullable=False),  # the entrants rated in the race
    Column("mu_before", DOUBLE_PRECISION, nullable=False),
    Column("sigma_before", DOUBLE_PRECISION, nullable=False),
    Column("mu_after", DOUBLE_PRECISION, nullable=False),
    Column("sigma_after", DOUBLE_PRECISION, nullable=False),
    Column("rated_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("race_id", "player_id", name="rating_changes_pkey"),
    Index("rating_changes_history", "player_id", "ruleset_id", "sequence"),  # a player's history
)

# ---------------------------------------------------------------- tournaments (service/tournaments, migration 0023)

tournaments = Table(
    "tournaments",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),
    Column("creator_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False),
    Column("ruleset_id", Text, nullable=False),
    Column("ruleset_version", Integer, nullable=False),
    Column("deal_count", Integer, nullable=False),
    Column("starts_at", DateTime(timezone=True), nullable=False),
    Column("minutes", Integer, nullable=False),
    Column("ends_at", DateTime(timezone=True), nullable=False),  # starts_at + minutes
    Column("rated", Boolean, nullable=False),
    Column("version", Integer, nullable=False),  # +1 with every change (its stream's ids)
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("prepared_at", DateTime(timezone=True), nullable=True),  # every deal proven; null: preparing
    Column("finished_at", DateTime(timezone=True), nullable=True),
    CheckConstraint("deal_count BETWEEN 2 AND 12", name="tournaments_deal_count_check"),
    CheckConstraint("minutes BETWEEN 1 AND 1440", name="tournaments_minutes_check"),
    Index("tournaments_unfinished", "ends_at", postgresql_where=text("finished_at IS NULL")),
    Index("tournaments_created", "created_at", "id"),  # GET /tournaments, newest first (0026)
    Index("tournaments_unfinished_created", "created_at", "id", postgresql_where=text("finished_at IS NULL")),
)

tournament_deals = Table(  # the secret deals, in order (never shown while the tournament runs)
    "tournament_deals",
    metadata,
    Column("tournament_id", UUID(as_uuid=True), ForeignKey("tournaments.id"), nullable=False),
    Column("number", Integer, nullable=False),  # 1..deal_count
    Column("deck", JSONB, nullable=False),
    Column("fingerprint", Text, nullable=False),  # service.deals.live_decks
    Column("proof", JSONB, nullable=False),  # the solver's winning line (never shown)
    PrimaryKeyConstraint("tournament_id", "number", name="tournament_deals_pkey"),
    Index("tournament_deals_fingerprint", "fingerprint"),
)

tournament_entrants = Table(
    "tournament_entrants",
    metadata,
    Column("tournament_id", UUID(as_uuid=True), ForeignKey("tournaments.id"), nullable=False),
    Column("player_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False),
    Column("joined_at", DateTime(timezone=True), nullable=False),
    Column("standing", JSONB, nullable=True),  # frozen at the finish, from the replayed logs
    Column("place", Integer, nullable=True),  # final; null when unplaced
    PrimaryKeyConstraint("tournament_id", "player_id", name="tournament_entrants_pkey"),
)

tournament_games = Table(  # the game each entrant was dealt for each deal
    "tournament_games",
    metadata,
    Column("tournament_id", UUID(as_uuid=True), ForeignKey("tournaments.id"), nullable=False),
    Column("player_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False),
    Column("number", Integer, nullable=False),
    Column("game_id", UUID(as_uuid=True), ForeignKey("games.id"), nullable=False),
    PrimaryKeyConstraint("tournament_id", "player_id", "number", name="tournament_games_pkey"),
    UniqueConstraint("game_id", name="tournament_games_game_id_key"),
)

# ---------------------------------------------------------------- challenges (service/challenges, migration 0020)

challenges = Table(
    "challenges",
    metadata,
    Column("id", UUID(as_uuid=True), primary_key=True),  # the race an accepted challenge starts has this id
    Column("from_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False),
    Column("to_id", UUID(as_uuid=True), ForeignKey("players.id"), nullable=False),
    Column("ruleset_id", Text, nullable=False),
    Column("rated", Boolean, nullable=False),
    Column("time_limit_seconds", Integer, nullable=True),
    # pending, accepted, declined, cancelled, expired (0025; a pending one past expires_at reads as expired too)
    Column("status", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Column("ended_at", DateTime(timezone=True), nullable=True),
    Column("race_id", UUID(as_uuid=True), ForeignKey("races.id"), nullable=True),
    CheckConstraint("status IN ('pending', 'accepted', 'declined', 'cancelled', 'expired')",
                    name="challenges_status_check"),
    CheckConstraint("from_id <> to_id", name="challenges_not_oneself_check"),
    Index("challenges_pending_from", "from_id", "created_at", "id", postgresql_where=text("status = 'pending'")),
    Index("challenges_pending_to", "to_id", "created_at", "id", postgresql_where=text("status = 'pending'")),
    Index("challenges_pending_expiry", "expires_at", postgresql_where=text("status = 'pending'")),
)

# -------------------------------------------------------- game analysis (service/analysis, migrations 0009, 0015)

analysis_jobs = Table(  # the queue of analyses and their results, one row per game
    "analysis_jobs",
    metadata,
    Column("game_id", UUID(as_uuid=True), ForeignKey("games.id"), primary_key=True),
    Column("status", Text, nullable=False),  # queued, running, done, failed
    Column("version", Integer, nullable=False),  # the game's final version
    Column("done", Integer, nullable=False, server_default=text("0")),  # positions settled
    Column("total", Integer, nullable=False),  # positions
    Column("answers", JSONB, nullable=False, server_default=text("'[]'::jsonb")),  # the solver's, so far
    Column("result", JSONB, nullable=True),  # the verdicts and the turning point, once done
    Column("error", Text, nullable=True),  # why it failed (never shown)
    Column("attempt", Integer, nullable=False, server_default=text("0")),  # +1 each time a worker takes it
    Column("lease_until", DateTime(timezone=True), nullable=True),  # a running job's worker renews it
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("started_at", DateTime(timezone=True), nullable=True),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    Column("requester", Text, nullable=True),  # who asked: player:<uuid>; null from the releases before 0015
    Column("address", Text, nullable=True),  # the client address the request came from
    Column("claimed_at", DateTime(timezone=True), nullable=True),  # when a worker last took it (the round robin)
    CheckConstraint("status IN ('queued', 'running', 'done', 'failed')", name="analysis_jobs_status_check"),
    Index("analysis_jobs_waiting", "created_at", postgresql_where=text("status IN ('queued', 'running')")),
    Index("analysis_jobs_requester_waiting", "requester", postgresql_where=text("status IN ('queued', 'running')")),
    Index("analysis_jobs_address_waiting", "address", postgresql_where=text("status IN ('queued', 'running')")),
    Index("analysis_jobs_requester_claims", "requester", "claimed_at"),
)

analysis_verdicts = Table(  # the solver's verdicts on tables, kept across jobs (service/analysis/verdicts.py)
    "analysis_verdicts",
    metadata,
    Column("position_key", Text, primary_key=True),  # domain.analysis.position_key
    Column("rules", Text, primary_key=True),  # the solver's version of the rules (verdicts.RULES)
    Column("verdict", Text, nullable=False),  # won, lost (proven) or unknown
    Column("line", Text, nullable=True),  # won: the winning line, in the pools' encoding
    Column("budget_ms", Integer, nullable=True),  # unknown: the solver time the search had
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    CheckConstraint("verdict IN ('won', 'lost', 'unknown')", name="analysis_verdicts_verdict_check"),
    CheckConstraint("(verdict = 'won') = (line IS NOT NULL)", name="analysis_verdicts_line_check"),
    CheckConstraint("(verdict = 'unknown') = (budget_ms IS NOT NULL)", name="analysis_verdicts_budget_check"),
)

# ---------------------------------------------------------------- following an account (migrations 0021, 0022)

account_events = Table(  # the account outbox (service.following.outbox): events, numbered per account
    "account_events",
    metadata,
    Column("player_id", UUID(as_uuid=True), ForeignKey("players.id", ondelete="CASCADE"), nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("type", Text, nullable=False),
    Column("data", JSONB, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("player_id", "seq", name="account_events_pkey"),
    Index("account_events_created_at", "created_at"),  # the retention job
)

webhooks = Table(  # an account's hooks and where each one's delivery stands (service.following.webhooks)
    "webhooks",
    metadata,
    Column("id", UUID(as_uuid=True), nullable=False),
    Column("player_id", UUID(as_uuid=True), ForeignKey("players.id", ondelete="CASCADE"), nullable=False),
    Column("url", Text, nullable=False),
    Column("events", ARRAY(Text), nullable=False),
    Column("secret", Text, nullable=False),  # signs every delivery; shown once, at creation
    Column("api_version", Text, nullable=False),  # the payloads' shapes (service.http.versions)
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("cursor_seq", BigInteger, nullable=False),  # the owner's last event handled
    Column("attempt", Integer, nullable=False, server_default=text("0")),
    Column("next_attempt_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("failing_since", DateTime(timezone=True), nullable=True),
    Column("lease_until", DateTime(timezone=True), nullable=True),
    Column("disabled_at", DateTime(timezone=True), nullable=True),
    Column("disabled_reason", Text, nullable=True),
    PrimaryKeyConstraint("id", name="webhooks_pkey"),
    Index("webhooks_player", "player_id", "created_at", "id"),
    Index("webhooks_due", "next_attempt_at", postgresql_where=text("disabled_at IS NULL")),
)

webhook_deliveries = Table(  # one row per delivery attempt (GET /players/me/webhooks/{id}/deliveries)
    "webhook_deliveries",
    metadata,
    Column("id", BigInteger, Identity(always=False), nullable=False),
    Column("webhook_id", UUID(as_uuid=True), ForeignKey("webhooks.id", ondelete="CASCADE"), nullable=False),
    Column("message_id", Text, nullable=False),
    Column("event_type", Text, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("attempted_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("status", Integer, nullable=True),  # the receiver's HTTP status; NULL: no answer (error says why)
    Column("latency_ms", DOUBLE_PRECISION, nullable=False),
    Column("error", Text, nullable=True),
    PrimaryKeyConstraint("id", name="webhook_deliveries_pkey"),
    Index("webhook_deliveries_hook", "webhook_id", "id"),
    Index("webhook_deliveries_attempted_at", "attempted_at"),
)
