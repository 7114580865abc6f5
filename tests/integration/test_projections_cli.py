import json
import os
import subprocess
import sys


def test_projections_rebuild_runs_from_the_command_line(clean_database: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "projections", "rebuild"],
        env={**os.environ, "DATABASE_URL": clean_database},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["games"] == 0
    assert summary["refused"] == 0
