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

from support import EngramServer, FakeLlm, binary_from_env  # noqa: E402


class Served:
    def __init__(self, server: EngramServer, keys: Dict[str, str]) -> None:
        self.server = server
        self.url = server.url
        self.keys = keys


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = EngramServer(binary_from_env("openapi_contract"), str(tmp_path_factory.mktemp("contract-home")))
    keys = {role: server.create_key("acme", role) for role in ("read", "write", "admin", "operator")}
    with server:
        yield Served(server, keys)


@pytest.fixture(scope="session")
def served_with_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with FakeLlm(["You live ", "in Lisbon."]) as llm:
        env = {
            "ENGRAM_LLM_BASE_URL": llm.url + "/v1",
            "ENGRAM_LLM_MODEL": "fake-model",
            "ENGRAM_LLM_API_KEY": "fake-llm-key",
        }
        server = EngramServer(binary_from_env("openapi_contract"),
                              str(tmp_path_factory.mktemp("contract-chat-home")), env=env, args=("--no-worker",))
        keys = {"write": server.create_key("acme", "write")}
        with server:
            yield Served(server, keys)
