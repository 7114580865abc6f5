"""Games: the Games facade, the move use case, group commit, what a client sees of a game, lessons."""
