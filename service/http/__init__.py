"""HTTP: the app, its controllers, problems and wording, the OpenAPI additions, how it is served."""
