"""HTTP: the app, its controllers and wire schemas (per feature), problems and wording, the OpenAPI
additions, how it is served."""
