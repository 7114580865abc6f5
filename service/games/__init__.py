"""Games: the Games facade, the move use case, group commit, lessons."""
