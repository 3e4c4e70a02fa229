"""Retries, backoff and error mapping against a local stub server (no engram needed)."""

from __future__ import annotations

import random
import time
from email.utils import formatdate

import pytest

from engram_client import EngramClient, EngramError, RetryPolicy, parse_retry_after
from support import StubServer, envelope

OK_STATS = (200, {"X-Request-Id": "r-ok"}, {"stm_turns": 3, "tenant": "acme", "scopes": 1})
NOT_READY = envelope("not_ready", "the store is still opening; retry shortly")
TURNS_OK = (201, {}, {"user": "alice", "assistant": "assistant", "replayed": False,
                      "admitted": [{"turn_id": 7, "seq": 1, "promotion_pending": False}]})


class Sleeps(list):
    """A sleep function that records instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def stub_client(stub: StubServer, **kwargs) -> EngramClient:
    kwargs.setdefault("api_key", "test-key")
    kwargs.setdefault("timeout", 10)
    return EngramClient(stub.url, **kwargs)


def test_503_with_retry_after_then_200_really_waits():
    with StubServer([(503, {"Retry-After": "1"}, NOT_READY), OK_STATS]) as stub:
        started = time.monotonic()
        s = stub_client(stub).stats()
        elapsed = time.monotonic() - started
    assert s.stm_turns == 3 and s.tenant == "acme"
    assert len(stub.requests) == 2
    assert elapsed >= 0.95  # honoured Retry-After: 1


def test_retry_after_is_honoured_exactly():
    sleeps = Sleeps()
    with StubServer([(503, {"Retry-After": "2"}, NOT_READY), (429, {"Retry-After": "0"}, envelope("x", "y")),
                     OK_STATS]) as stub:
        stub_client(stub, sleep=sleeps).stats()
    assert sleeps == [2.0, 0.0]


def test_exponential_backoff_with_jitter_without_retry_after():
    sleeps = Sleeps()
    script = [(429, {}, envelope("rate_limited", "slow down"))] * 3 + [OK_STATS]
    with StubServer(script) as stub:
        stub_client(stub, sleep=sleeps, backoff_base=0.1, max_retries=3).stats()
    assert len(sleeps) == 3
    for n, s in enumerate(sleeps):
        cap = 0.1 * 2 ** n
        assert cap / 2 <= s <= cap  # jitter within [cap/2, cap]


def test_backoff_is_capped_and_random():
    policy = RetryPolicy(backoff_base=1.0, backoff_max=4.0)
    rng = random.Random(1)
    waits = [policy.backoff(n, rng) for n in range(10)]
    assert all(w <= 4.0 for w in waits)
    assert waits[-1] >= 2.0
    assert len(set(waits)) > 1


def test_retries_are_bounded():
    sleeps = Sleeps()
    with StubServer(default=(503, {"X-Request-Id": "r-503"}, NOT_READY)) as stub:
        with pytest.raises(EngramError) as e:
            stub_client(stub, sleep=sleeps, max_retries=2, backoff_base=0.01).stats()
    assert len(stub.requests) == 3 and len(sleeps) == 2
    err = e.value
    assert err.code == "not_ready" and err.status == 503 and err.attempts == 3
    assert err.request_id == "stub-req-1"  # from the envelope


def test_max_retries_zero_disables_retrying():
    with StubServer(default=(503, {}, NOT_READY)) as stub:
        with pytest.raises(EngramError):
            stub_client(stub, max_retries=0).stats()
    assert len(stub.requests) == 1


def test_a_too_long_retry_after_fails_at_once():
    with StubServer(default=(503, {"Retry-After": "3600"}, NOT_READY)) as stub:
        with pytest.raises(EngramError) as e:
            stub_client(stub, retry_after_max=60).stats()
    assert len(stub.requests) == 1
    assert e.value.retry_after == 3600.0 and e.value.code == "not_ready"


def test_other_errors_are_not_retried():
    for status, code in ((500, "internal"), (409, "aborted"), (400, "invalid_argument"), (502, "model_unavailable")):
        with StubServer(default=(status, {}, envelope(code, "no"))) as stub:
            with pytest.raises(EngramError) as e:
                stub_client(stub).stats()
        assert len(stub.requests) == 1
        assert e.value.status == status and e.value.code == code


def test_admissions_reuse_one_idempotency_key_across_retries():
    sleeps = Sleeps()
    with StubServer([(503, {}, NOT_READY), (429, {}, envelope("rate_limited", "later")), TURNS_OK,
                     TURNS_OK, TURNS_OK]) as stub:
        c = stub_client(stub, sleep=sleeps)
        r = c.add_turn("alice", "hello", "hi")
        assert r.turn_ids == [7]
        keys = [q.headers.get("idempotency-key") for q in stub.requests]
        assert len(keys) == 3 and keys[0] and len(set(keys)) == 1
        # Another logical call gets another key; a caller's key is sent as given.
        c.add_turns("alice", [{"user_text": "x"}])
        c.add_turn("alice", "y", idempotency_key="my-key-1")
        assert stub.requests[3].headers["idempotency-key"] not in keys
        assert stub.requests[4].headers["idempotency-key"] == "my-key-1"
    bodies = [q.json() for q in stub.requests]
    assert bodies[0] == {"user": "alice", "user_text": "hello", "assistant_text": "hi"}
    assert bodies[3] == {"user": "alice", "turns": [{"user_text": "x"}]}


def test_memory_adds_and_imports_carry_an_idempotency_key():
    add_ok = (201, {}, {"results": [], "degraded": False, "model_calls": 0, "replayed": False})
    import_ok = (201, {}, {"scopes": [], "turns": 0, "memories_added": 0})
    with StubServer([(503, {}, NOT_READY), add_ok, import_ok]) as stub:
        c = stub_client(stub, sleep=Sleeps())
        c.add_memory("likes tea", user="alice", infer=False)
        c.import_dialogues("alice", '{"user": "hi", "assistant": "hello"}\n')
    add1, add2, imp = stub.requests
    assert add1.headers["idempotency-key"] == add2.headers["idempotency-key"]
    assert imp.headers["idempotency-key"] and imp.headers["idempotency-key"] != add1.headers["idempotency-key"]
    assert imp.path.startswith("/v1/import?") and "user=alice" in imp.path
    assert imp.body == b'{"user": "hi", "assistant": "hello"}\n'


def test_reads_are_not_sent_an_idempotency_key():
    with StubServer(default=OK_STATS) as stub:
        stub_client(stub).stats(user="alice")
    (q,) = stub.requests
    assert "idempotency-key" not in q.headers
    assert q.method == "GET" and q.path == "/v1/stats?user=alice"


def test_connection_failures_are_retried_only_when_safe():
    with StubServer(["drop", OK_STATS]) as stub:
        s = stub_client(stub, sleep=Sleeps()).stats()  # a read: safe
    assert s.stm_turns == 3 and len(stub.requests) == 2

    chat_ok = (200, {}, {"answer": "hi", "turn_id": 1, "run_id": "r", "prompt_tokens": 1, "completion_tokens": 1,
                         "model_calls": 1, "used": []})
    with StubServer(["drop", chat_ok]) as stub:
        with pytest.raises(EngramError) as e:
            stub_client(stub, sleep=Sleeps()).chat("alice", "hello")  # may have been admitted: not retried
    assert len(stub.requests) == 1
    assert e.value.code == "connection_error" and e.value.status is None

    with StubServer(["drop", TURNS_OK]) as stub:
        r = stub_client(stub, sleep=Sleeps()).add_turn("alice", "hello")  # idempotency key: safe
    assert r.turn_ids == [7] and len(stub.requests) == 2

    with StubServer(["drop", OK_STATS]) as stub:
        with pytest.raises(EngramError) as e:
            stub_client(stub, sleep=Sleeps(), retry_connection_errors=False).stats()
    assert len(stub.requests) == 1 and e.value.code == "connection_error"


def test_timeout_is_configurable_and_reported():
    def slow(_rec):
        time.sleep(1.5)
        return OK_STATS

    with StubServer(default=slow) as stub:
        started = time.monotonic()
        with pytest.raises(EngramError) as e:
            stub_client(stub, timeout=0.3, max_retries=0).stats()
        assert time.monotonic() - started < 1.4
    assert e.value.code == "timeout" and e.value.status is None


def test_an_error_without_the_envelope():
    with StubServer(default=(502, {"X-Request-Id": "proxy-1"}, "<html>Bad Gateway</html>")) as stub:
        with pytest.raises(EngramError) as e:
            stub_client(stub).stats()
    assert e.value.code == "http_error" and e.value.status == 502
    assert e.value.request_id == "proxy-1" and "Bad Gateway" in e.value.message


def test_a_redirect_is_not_followed():
    with StubServer(default=(307, {"Location": "http://example.invalid/steal"}, "")) as stub:
        with pytest.raises(EngramError) as e:
            stub_client(stub).stats()
    assert e.value.status == 307 and len(stub.requests) == 1


def test_request_headers():
    with StubServer(default=OK_STATS) as stub:
        stub_client(stub, api_key="secret-key", user_agent="my-app/1").stats()
        EngramClient(stub.url, api_key=None).healthz()
    auth, anon = stub.requests
    assert auth.headers["authorization"] == "Bearer secret-key"
    assert auth.headers["user-agent"] == "my-app/1"
    assert "authorization" not in anon.headers and anon.path == "/healthz"


def test_query_parameters_and_paths():
    item = (200, {}, {"id": "m/1 x", "memory": "m"})
    with StubServer(default=item) as stub:
        c = stub_client(stub)
        c.list_memories(user="alice", narrower=True, filters={"category": "food"}, limit=5)
        c.get_memory("m/1 x", user="alice")
        c.update_memory("m_1", user="alice", expires_at=None)
        c.delete_all_memories(agent="planner")
    lst, get, patch, delete = stub.requests
    assert lst.path == "/v1/memories?user=alice&narrower=true&limit=5&filters=%7B%22category%22%3A%22food%22%7D"
    assert get.path == "/v1/memories/m%2F1%20x?user=alice"
    assert patch.method == "PATCH" and patch.json() == {"user": "alice", "expires_at": None}
    assert delete.method == "DELETE" and delete.path == "/v1/memories?agent=planner"


def test_results_keep_fields_a_newer_server_adds():
    with StubServer(default=(200, {}, {"stm_turns": 1, "tenant": "t", "brand_new_counter": 42})) as stub:
        s = stub_client(stub).stats()
    assert s.stm_turns == 1 and s["brand_new_counter"] == 42 and s.raw["brand_new_counter"] == 42
    assert s.to_dict() == {"stm_turns": 1, "tenant": "t", "brand_new_counter": 42}


def test_a_non_json_success_is_an_invalid_response():
    with StubServer(default=(200, {}, "not json")) as stub:
        with pytest.raises(EngramError) as e:
            stub_client(stub).stats()
    assert e.value.code == "invalid_response"


def test_parse_retry_after():
    assert parse_retry_after("5") == 5.0
    assert parse_retry_after(" 0 ") == 0.0
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    now = time.time()
    assert 9.0 <= parse_retry_after(formatdate(now + 10, usegmt=True), now=now) <= 11.0
    assert parse_retry_after(formatdate(now - 100, usegmt=True), now=now) == 0.0


def test_configuration_errors():
    with pytest.raises(ValueError):
        EngramClient("localhost:8420")
    with pytest.raises(ValueError):
        EngramClient("http://127.0.0.1:1", timeout=0)
    with pytest.raises(ValueError):
        EngramClient("http://127.0.0.1:1", max_retries=-1)
