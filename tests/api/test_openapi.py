import json
from pathlib import Path

import httpx

from service.app import create_app
from service.settings import Settings

COMMITTED = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


def live_schema() -> dict:
    return create_app(Settings(database_url="postgresql://unused/none")).openapi_schema.to_schema()


def test_every_operation_has_an_id_a_summary_and_its_problems() -> None:
    schema = live_schema()
    seen = set()
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            assert operation.get("operationId"), (method, path)
            assert operation["operationId"] not in seen
            seen.add(operation["operationId"])
            assert operation.get("summary"), (method, path)
            statuses = {int(s) for s in operation["responses"] if s.isdigit()}
            if "{" in path or method == "post":
                assert any(400 <= s < 500 for s in statuses), (method, path, statuses)
            for status in statuses:
                if status >= 400:
                    content = operation["responses"][str(status)]["content"]
                    assert "application/problem+json" in content, (method, path, status)


def test_the_committed_openapi_document_is_the_live_one() -> None:
    committed = json.loads(COMMITTED.read_text())
    assert committed == json.loads(json.dumps(live_schema())), "run `make openapi` and commit openapi/openapi.json"


def test_the_server_serves_its_openapi_document(client: httpx.Client) -> None:
    response = client.get("/schema/openapi.json")
    assert response.status_code == 200
    assert response.json()["info"]["title"] == "Canfield Solitaire API"
