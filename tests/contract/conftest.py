"""Fixtures of the OpenAPI contract test: the real engram binary (ENGRAM_BINARY) serving a
temporary home with keys of every role, and a second server whose language model is a local
fake OpenAI-compatible endpoint (the chat routes and the memory proxy)."""

from __future__ import annotations

import os
import sys
from typing import Dict, Iterator

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "clients", "python", "tests"))  # support.py

from support import EngramServer, FakeLlm  # noqa: E402


class Served:
    def __init__(self, server: EngramServer, keys: Dict[str, str]) -> None:
        self.server = server
        self.url = server.url
        self.keys = keys


def _binary() -> str:
    path = os.environ.get("ENGRAM_BINARY", "")
    if not path:
        pytest.fail("ENGRAM_BINARY is not set: point it at the engram binary (ctest -R openapi_contract sets it)")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(f"ENGRAM_BINARY={path!r} is not an executable file")
    return path


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = EngramServer(_binary(), str(tmp_path_factory.mktemp("contract-home")))
    keys = {role: server.create_key("acme", role) for role in ("read", "write", "admin", "operator")}
    server.start()
    try:
        yield Served(server, keys)
    finally:
        code = server.stop()
        assert code == 0, f"engram serve exited {code}:\n{server.output()}"


@pytest.fixture(scope="session")
def served_with_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with FakeLlm(["You live ", "in Lisbon."]) as llm:
        env = {
            "ENGRAM_LLM_BASE_URL": llm.url + "/v1",
            "ENGRAM_LLM_MODEL": "fake-model",
            "ENGRAM_LLM_API_KEY": "fake-llm-key",
        }
        server = EngramServer(_binary(), str(tmp_path_factory.mktemp("contract-chat-home")), env=env,
                              args=("--no-worker",))
        keys = {"write": server.create_key("acme", "write")}
        server.start()
        try:
            yield Served(server, keys)
        finally:
            code = server.stop()
            assert code == 0, f"engram serve (model) exited {code}:\n{server.output()}"
