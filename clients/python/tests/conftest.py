"""Fixtures: the real engram binary (ENGRAM_BINARY) serving a temporary home, with keys
made by `engram keys create`; a second server whose language model is a local fake."""

from __future__ import annotations

import os
import sys
import uuid
from typing import Dict, Iterator

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # support.py
sys.path.insert(0, os.path.dirname(HERE))  # engram_client from the source tree

from engram_client import EngramClient  # noqa: E402
from support import EngramServer, FakeLlm, binary_from_env  # noqa: E402


@pytest.fixture(scope="session")
def engram_binary() -> str:
    return binary_from_env("python_client")


class Live:
    """The running server, its URL and its API keys by name."""

    def __init__(self, server: EngramServer, keys: Dict[str, str]) -> None:
        self.server = server
        self.url = server.url
        self.keys = keys

    def client(self, key: str = "acme_write", **kwargs) -> EngramClient:
        kwargs.setdefault("timeout", 30.0)
        return EngramClient(self.url, api_key=self.keys[key] if key else None, **kwargs)


@pytest.fixture(scope="session")
def live(engram_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    home = str(tmp_path_factory.mktemp("engram-home"))
    server = EngramServer(engram_binary, home)
    keys = {
        "acme_admin": server.create_key("acme", "admin"),
        "acme_write": server.create_key("acme", "write"),
        "acme_read": server.create_key("acme", "read"),
        "acme_alice_only": server.create_key("acme", "write", users="alice-only"),
        "globex_write": server.create_key("globex", "write"),
    }
    server.start()
    try:
        yield Live(server, keys)
    finally:
        code = server.stop()
        if code != 0:
            print(server.output(), file=sys.stderr)
        assert code == 0, f"engram serve exited {code}"


@pytest.fixture(scope="session")
def fake_llm() -> Iterator[FakeLlm]:
    with FakeLlm(["You live ", "in Lisbon."]) as llm:
        yield llm


@pytest.fixture(scope="session")
def chat_live(engram_binary: str, fake_llm: FakeLlm, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """A server whose language model is the fake (no background maintenance, so the only
    model calls are the chats')."""
    home = str(tmp_path_factory.mktemp("engram-chat-home"))
    env = {
        "ENGRAM_LLM_BASE_URL": fake_llm.url + "/v1",
        "ENGRAM_LLM_MODEL": "fake-model",
        "ENGRAM_LLM_API_KEY": "fake-llm-key",
    }
    server = EngramServer(engram_binary, home, env=env, args=("--no-worker",))
    keys = {"acme_write": server.create_key("acme", "write")}
    server.start()
    try:
        yield Live(server, keys)
    finally:
        code = server.stop()
        assert code == 0, f"engram serve (chat) exited {code}:\n{server.output()}"


@pytest.fixture
def client(live: Live) -> EngramClient:
    return live.client("acme_write")


@pytest.fixture
def user() -> str:
    """A user of its own for each test, so that tests never see each other's data."""
    return "u-" + uuid.uuid4().hex[:12]
