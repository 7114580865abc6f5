"""HTTP controllers: parse, call one application function, shape the reply."""
