// Cards as the API writes them ("TD": rank then suit) and as people say them ("ten of diamonds").

const RANK_NAMES = {
  A: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
  8: "eight", 9: "nine", T: "ten", J: "jack", Q: "queen", K: "king",
};
const RANK_SHOWN = { T: "10" };
export const SUITS = ["S", "H", "D", "C"];
const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
const SUIT_SYMBOLS = { S: "♠", H: "♥", D: "♦", C: "♣" };

export const rankOf = (code) => code[0];
export const suitOf = (code) => code[1];
export const isRed = (code) => code[1] === "H" || code[1] === "D";

/** "seven of hearts" */
export function cardName(code) {
  return `${RANK_NAMES[rankOf(code)]} of ${SUIT_NAMES[suitOf(code)]}`;
}

/** "seven" */
export const rankName = (rank) => RANK_NAMES[rank];
/** "hearts" */
export const suitName = (suit) => SUIT_NAMES[suit];
/** "♥" */
export const suitSymbol = (suit) => SUIT_SYMBOLS[suit];
/** "10" for T, the letter or digit otherwise. */
export const rankShown = (rank) => RANK_SHOWN[rank] || rank;

/** "7♥" for compact text such as event lists. */
export function cardShort(code) {
  return `${rankShown(rankOf(code))}${suitSymbol(suitOf(code))}`;
}

/** Where a pile id of the API points, in words: "column 3", "the foundation", "the waste". */
export function pileName(pile) {
  const column = /^tableau-(\d)$/.exec(pile || "");
  if (column) return `column ${column[1]}`;
  if (pile?.startsWith("foundation")) return "the foundation";
  return `the ${pile}`;
}

/** A move of the API in words: "seven of hearts to column 3", "draw". */
export function moveText(move, drawCount = 3) {
  switch (move.type) {
    case "draw": return drawCount === 1 ? "draw a card" : "draw three cards";
    case "recycle": return "turn the waste back into the stock";
    case "undo": return "undo";
    case "resign": return "resign";
    case "abandon": return "the game was abandoned"; // the service's end of an idle game (an analysis names it)
    case "move": return `${cardName(move.card)} to ${pileName(move.to)}`;
    default: return move.type;
  }
}
