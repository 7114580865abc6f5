"""Errors of the service layer (the domain has its own); each maps to one problem response."""

from __future__ import annotations


class ServiceError(Exception):
    status = 400
    code = "invalid_request"
    title = "Invalid request"

    def __init__(self, detail: str, code: str | None = None, *, headers: dict[str, str] | None = None) -> None:
        """``code``: the problem code when a class stands for several (a name refused as reserved or
        as invisible); else the class's own."""
        super().__init__(detail)
        self.detail = detail
        self.headers = headers or {}
        if code is not None:
            self.code = code


class BadRequest(ServiceError):
    pass


class CursorInvalid(BadRequest):
    """A list's cursor that is not one of that list's (another list's, another date's, changed)."""

    code = "cursor_invalid"


class NotFound(ServiceError):
    status = 404
    code = "not_found"
    title = "Not found"


class Unauthorized(ServiceError):
    status = 401
    code = "unauthorized"
    title = "Unauthorized"

    def __init__(self, detail: str) -> None:
        super().__init__(detail, headers={"WWW-Authenticate": 'Bearer realm="canfield"'})


class Forbidden(ServiceError):
    status = 403
    code = "forbidden"
    title = "Forbidden"


class VersionConflict(ServiceError):
    status = 412
    code = "version_conflict"
    title = "Version conflict"


class TryLater(ServiceError):
    """A refusal that a later retry may pass: ``Retry-After`` says when, in seconds (at least 1)."""

    def __init__(self, detail: str, retry_after: int = 1) -> None:
        super().__init__(detail, headers={"Retry-After": str(max(1, retry_after))})


class Unavailable(TryLater):
    status = 503
    code = "unavailable"
    title = "Service unavailable"


class UnsupportedMediaType(ServiceError):
    status = 415
    code = "unsupported_media_type"
    title = "Unsupported media type"


class RateLimited(TryLater):
    status = 429
    code = "rate_limited"
    title = "Too many requests"


class Conflict(ServiceError):
    """The resource is not in a state that allows this (a race that is full or has started)."""

    status = 409
    title = "Conflict"


class IdempotencyKeyReused(ServiceError):
    """An Idempotency-Key sent again with another request than the one it was first used for."""

    code = "idempotency_key_reused"
    title = "Idempotency key reused"


class RequestInProgress(TryLater):
    """The first request with this Idempotency-Key is still being served."""

    status = 409
    code = "request_in_progress"
    title = "Request in progress"


class RequestOutcomeUnknown(ServiceError):
    """The first request with this Idempotency-Key was cut off after it may have created something."""

    status = 409
    code = "request_outcome_unknown"
    title = "Request outcome unknown"


class IdempotencyKeyTooShort(ServiceError):
    """A ``POST /players`` Idempotency-Key too short to be a secret (its reply holds a token)."""

    code = "idempotency_key_too_short"
    title = "Idempotency key too short"


class ReplayForbidden(Forbidden):
    """A stored reply asked for by a token that may not have it: another player's key, or a token
    lacking a scope the token of the first request held."""

    code = "idempotency_key_forbidden"
    title = "Idempotency key forbidden"


class ScopeNotHeld(Forbidden):
    """A token asked to mint a token with a scope it does not hold itself."""

    code = "scope_not_held"
    title = "Scope not held"


class SolverBusy(Unavailable):
    """Too many solver hints are waiting for the solver's worker already."""

    code = "solver_busy"
    title = "Solver busy"


class RaceDealsBusy(Unavailable):
    """Too many race creations are waiting for their secret deal to be proven already."""

    code = "race_deals_busy"
    title = "Race deals busy"


class RaceDealPending(RateLimited):
    """The player already has as many race creations waiting for a secret deal as one may have."""

    code = "race_deal_pending"
    title = "Race deal pending"


class DailyDealsBusy(Unavailable):
    """Too many daily deals are being prepared in this process already."""

    code = "daily_deals_busy"
    title = "Daily deals busy"


class DailyAlreadyPlayed(Conflict):
    """A second game of a daily deal whose date is not over: a daily is one game per player then.
    ``game`` is the id of the player's game of it (None if it could not be found)."""

    def __init__(self, day: object, game: object | None) -> None:
        which = f"it is game {game} (GET /games/{game})" if game is not None else "it is in your list of games"
        super().__init__(
            f"you already have a game of the daily deal of {day}: {which}. A daily deal is one game per player "
            "until its date (UTC) is over; from then on it may be dealt again as practice, as often as you like",
            "daily_already_played",
        )
        self.game = None if game is None else str(game)


class NameRefused(BadRequest):
    """A name that may not be used: one holding invisible or text-direction characters
    (``name_invisible_characters``), or a reserved name or a look-alike of one (``name_reserved``)."""

    title = "Name refused"


class WatchRefused(BadRequest):
    """A watch (``GET``/``POST /watch``) asked for wrongly: ``watch_bad_id``, ``watch_too_many_ids``,
    ``watch_nothing_to_watch``, ``watch_bad_position`` or ``watch_bad_body``; nothing is opened."""

    title = "Watch refused"


class RatedRaceDeal(BadRequest):
    """A rated race asked for with a named deal (a seed, pool deal or deck): it needs a secret one."""

    code = "rated_race_needs_secret_deal"
    title = "Rated race needs a secret deal"


class ChallengeToSelf(BadRequest):
    """A challenge to the player who makes it."""

    code = "challenge_to_self"
    title = "Challenge to oneself"


class ChallengeRefused(Forbidden):
    """A challenge its recipient does not accept: from nobody, or from no bot."""

    code = "challenge_refused"
    title = "Challenge refused"


class NotRaceCreator(Forbidden):
    """A change only a race's creator may make (cancelling it), asked by another player."""

    code = "not_race_creator"
    title = "Not the race's creator"


class TournamentOutOfRange(BadRequest):
    """A tournament asked for out of range: ``tournament_deals_out_of_range``,
    ``tournament_minutes_out_of_range``, ``tournament_start_passed`` or ``tournament_start_too_far``."""

    title = "Tournament out of range"
