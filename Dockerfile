# The API as a container: installs the locked runtime versions and serves against DATABASE_URL.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
# requirements/run.lock: the runtime part of requirements/dev.lock (the versions `make test` ran), with hashes
COPY requirements/run.lock requirements/run.lock
RUN pip install --no-cache-dir --require-hashes -r requirements/run.lock
# setup.py builds the solver's optional C extension (domain/_sound.c); python:3.11-slim has no C
# compiler, so there the build is skipped (optional=True) and the solver runs its Python search:
# the same verdicts, about 40 times slower in the sound stage. Install gcc first to have it.
COPY pyproject.toml setup.py README.md ./
COPY domain ./domain
COPY service ./service
COPY migrations ./migrations
RUN pip install --no-cache-dir --no-deps --no-build-isolation .
EXPOSE 8000
ENV HOST=0.0.0.0 PORT=8000
HEALTHCHECK --interval=10s --timeout=3s --retries=5 \
  CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=2).status == 200 else 1)"
CMD ["canfield", "serve"]
