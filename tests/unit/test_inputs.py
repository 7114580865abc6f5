import pytest

from domain import (
    CODES,
    Draw,
    InvalidRequest,
    MoveCard,
    UnknownRuleset,
    check_seed,
    command_to_api,
    get_ruleset,
    parse_card,
    parse_command,
    parse_deck,
    shuffled_deck,
)


def test_card_codes_are_rank_then_suit() -> None:
    assert parse_card("TD") == CODES.index("TD")
    assert CODES[parse_card("QS")] == "QS"


@pytest.mark.parametrize("text", ["10D", "td", "T", "", "XS", "AS ", 7, None])
def test_a_bad_card_code_says_what_a_code_looks_like(text: object) -> None:
    with pytest.raises(InvalidRequest, match="card code"):
        parse_card(text)


def test_an_explicit_deck_must_have_52_cards() -> None:
    with pytest.raises(InvalidRequest, match="exactly 52 cards, not 51"):
        parse_deck(list(CODES[:51]))


def test_an_explicit_deck_names_a_duplicate_card() -> None:
    deck = list(CODES)
    deck[40] = "AS"
    with pytest.raises(InvalidRequest, match=r"deck\[40\]: AS is already at deck\[0\]"):
        parse_deck(deck)


def test_an_explicit_deck_names_a_bad_code_by_position() -> None:
    deck = list(CODES)
    deck[7] = "1S"
    with pytest.raises(InvalidRequest, match=r"deck\[7\]: '1S' is not a card code"):
        parse_deck(deck)


@pytest.mark.parametrize("deck", ["AS 2S", None, 52, {"a": 1}])
def test_an_explicit_deck_must_be_a_list(deck: object) -> None:
    with pytest.raises(InvalidRequest, match="a deck must be a list"):
        parse_deck(deck)


@pytest.mark.parametrize("seed", [-1, 2**53, 1.5, "7", True])
def test_seeds_are_integers_from_0_to_2_53_minus_1(seed: object) -> None:
    with pytest.raises(InvalidRequest, match="seed"):
        check_seed(seed)


def test_a_seed_always_gives_the_same_52_distinct_cards() -> None:
    assert shuffled_deck(2**53 - 1) == shuffled_deck(2**53 - 1)
    assert sorted(shuffled_deck(5)) == list(range(52))
    assert shuffled_deck(5) != shuffled_deck(6)


def test_moves_parse_from_the_api_form_and_back() -> None:
    move = parse_command({"type": "move", "card": "7H", "to": "tableau-3"})
    assert move == MoveCard(parse_card("7H"), "tableau-3")
    assert command_to_api(move) == {"type": "move", "card": "7H", "to": "tableau-3"}
    assert parse_command({"type": "draw"}) == Draw()


@pytest.mark.parametrize(
    ("move", "message"),
    [
        ({}, "'type' must be one of draw, recycle, move, undo, resign, not None"),
        ({"type": "fly"}, "'type' must be one of"),
        ({"type": "move", "to": "foundation"}, "a move needs 'card'"),
        ({"type": "move", "card": "7H"}, "a move needs 'to'"),
        ({"type": "move", "card": "7H", "to": "tableau-5"}, "'to' must be 'foundation' or 'tableau-1' .. 'tableau-4'"),
        ({"type": "move", "card": "7H", "to": "waste"}, "'to' must be"),
        ({"type": "move", "card": "7H", "to": "foundation", "from": "waste"}, "a move takes only"),
        ({"type": "draw", "count": 3}, "a draw takes no fields besides 'type'"),
    ],
)
def test_malformed_moves_say_what_is_wrong(move: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidRequest, match=message.replace("(", r"\(").replace(".", r"\.")):
        parse_command(move)


def test_rulesets_are_versioned_data() -> None:
    classic = get_ruleset("classic")
    assert (classic.key, classic.draw_count, classic.foundation_returns) == ("classic@1", 3, True)
    assert get_ruleset("draw-one", 1).draw_count == 1
    with pytest.raises(
        UnknownRuleset, match="unknown ruleset 'klondike': the hosted rulesets are classic, draw-one, open-runs"
    ):
        get_ruleset("klondike")
    with pytest.raises(UnknownRuleset, match="classic@9"):
        get_ruleset("classic", 9)
