"""The operator key: generated once into the data directory, readable by Loom's user alone, and
taken by the API as the operator's bearer token (what `loom search` sends to a running API)."""

import stat

import pytest

from models.settings import get_settings
from ops.caller import by_token_hash, operator_key_hash, token_hash
from ops.errors import OpError
from services import keys


def operator_key() -> str:
    return keys.kept(get_settings().operator_key_file)


def test_the_key_is_generated_once_and_only_its_owner_reads_it():
    key = operator_key()
    mode = stat.S_IMODE(get_settings().operator_key_file.stat().st_mode)
    assert mode == 0o600, oct(mode)
    assert len(key) >= 40 and operator_key() == key


def test_a_key_file_left_empty_by_a_dead_writer_is_filled(tmp_path):
    path = tmp_path / "operator.key"
    path.write_text("")
    path.chmod(0o644)
    key = keys.kept(path)
    assert key and path.read_text().strip() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_api_takes_the_key_as_the_operator_and_refuses_a_near_miss(client):
    key = operator_key()
    listed = client.post("/v1/namespaces.list", json={}, headers={"Authorization": f"Bearer {key}"})
    assert listed.status_code == 200, listed.text
    for wrong in (key[:-1], key + "x", key.upper()):
        refused = client.post("/v1/namespaces.list", json={}, headers={"Authorization": f"Bearer {wrong}"})
        assert refused.status_code == 401, (wrong, refused.text)


def test_a_data_directory_that_cannot_hold_the_key_leaves_the_operator_key_off(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"  # LOOM_HOME naming a file: no directory, no key, no crash
    blocked.write_text("")
    monkeypatch.setenv("LOOM_HOME", str(blocked))
    get_settings.cache_clear()
    operator_key_hash.cache_clear()
    try:
        assert operator_key_hash() is None
        with pytest.raises(OpError) as refused:
            by_token_hash(token_hash(""))
        assert refused.value.status == 401
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
        operator_key_hash.cache_clear()
