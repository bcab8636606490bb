"""Every request's Host must be one Loom answers to (DNS rebinding: another site's name resolving to
127.0.0.1 must not read /metrics, /healthz or /openapi.json, nor make the dashboard's Origin check
compare with a Host of its choosing): the loopback names, and the names the operator lists in
LOOM_ALLOWED_HOSTS (required when Loom listens beyond the loopback)."""

import pytest
from fastapi.testclient import TestClient

from api.app import create_app

OPEN_PATHS = ("/healthz", "/metrics", "/openapi.json", "/ui/login", "/docs")


def app_at(base_url: str) -> TestClient:
    return TestClient(create_app(warm_embedder=False), base_url=base_url)


@pytest.mark.parametrize("host", ["127.0.0.1:7777", "localhost:7777", "[::1]:7777", "127.0.0.1"])
def test_the_loopback_names_are_answered(database, host):
    client = app_at(f"http://{host}")
    for path in OPEN_PATHS:
        assert client.get(path).status_code == 200, (host, path)


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:7777", "127.0.0.1.nip.io", "loom"])
def test_another_name_for_this_address_is_refused_on_every_path(database, host):
    client = app_at(f"http://{host}")
    for path in (*OPEN_PATHS, "/ui/conversations", "/api/threads"):
        refused = client.get(path)
        assert refused.status_code == 400 and "host" in refused.text.lower(), (host, path)
    sign_in = client.post("/ui/login", data={"token": "x"}, headers={"Origin": f"http://{host}"})
    assert sign_in.status_code == 400
    assert client.post("/v1/conversation.search", json={"query": "x"}).status_code == 400


def test_listening_beyond_the_loopback_answers_the_names_the_operator_lists(database, loom_env):
    loom_env(LOOM_HOST="0.0.0.0", LOOM_ALLOWED_HOSTS="loom.internal, 10.0.0.5,*.loom.example")
    for host in ("loom.internal", "10.0.0.5:7777", "a.loom.example", "127.0.0.1:7777"):
        assert app_at(f"http://{host}").get("/healthz").status_code == 200, host
    for host in ("attacker.example", "loom.example", "10.0.0.6"):
        assert app_at(f"http://{host}").get("/healthz").status_code == 400, host


def test_the_allowed_hosts_setting_refuses_a_malformed_name(loom_env):
    from pydantic import ValidationError

    from models.settings import Settings

    for bad in ("loom.*.example", "http://loom.internal", "loom internal", "a" * 300):
        loom_env(LOOM_ALLOWED_HOSTS=bad)
        with pytest.raises(ValidationError, match="allowed_hosts"):
            Settings()
