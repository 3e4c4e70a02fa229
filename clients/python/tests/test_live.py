"""Every client method against the real engram server (fixtures in conftest.py)."""

from __future__ import annotations

import json
import socket
import uuid

import pytest

from engram_client import (
    AddTurnsResult,
    ChatReply,
    EngramClient,
    EngramError,
    MemoryItem,
    Retrieval,
    Turn,
)
from support import ForwardingProxy


# --- service ------------------------------------------------------------------------------


def test_healthz_readyz_and_version_need_no_key(live):
    anon = EngramClient(live.url, api_key=None)
    assert anon.healthz() == {"status": "ok"}
    assert anon.readyz() is True
    v = anon.version()
    assert v.api == "v1"
    assert v.version
    assert v.embedder  # present once the store is open
    assert v.raw["api"] == "v1" and v["version"] == v.version


def test_base_url_may_name_the_api_root(live):
    c = EngramClient(live.url + "/v1/", api_key=live.keys["acme_read"])
    assert c.base_url == live.url
    assert c.stats().tenant == "acme"


# --- turns -------------------------------------------------------------------------------


def test_add_turn_and_list_turns(client, user):
    r = client.add_turn(user, "I moved to Lisbon in May.", "Nice! How do you like it?",
                        time="2025-06-01T10:00:00Z", metadata={"channel": "web"}, source_ref="chat-1",
                        user_name="Alice", assistant_name="Bot")
    assert isinstance(r, AddTurnsResult)
    assert r.user == user and r.assistant == "assistant"
    assert r.replayed is False
    assert len(r.admitted) == 1 and r.admitted[0].seq == 1 and r.admitted[0].turn_id > 0
    assert r.raw["admitted"][0]["turn_id"] == r.turn_ids[0]

    page = client.list_turns(user)
    assert page.user == user and page.next_after is None
    assert len(page) == 1
    t = page.turns[0]
    assert isinstance(t, Turn)
    assert t.id == r.admitted[0].turn_id and t.seq == 1
    assert t.user_text == "I moved to Lisbon in May."
    assert t.assistant_text == "Nice! How do you like it?"
    assert t.event_time.startswith("2025-06-01T10:00:00")
    assert t.metadata == {"channel": "web"}
    assert t.source_ref == "chat-1"
    assert t.user_name == "Alice" and t.assistant_name == "Bot"
    assert t.tier == "stm" and t.page_id is None


def test_add_turns_batch_pagination_and_assistant_scope(client, user):
    turns = [{"user_text": f"message {i}", "assistant_text": f"reply {i}"} for i in range(5)]
    r = client.add_turns(user, turns, assistant="helper")
    assert r.assistant == "helper"
    assert [a.seq for a in r.admitted] == [1, 2, 3, 4, 5]

    first = client.list_turns(user, assistant="helper", limit=2)
    assert [t.seq for t in first] == [1, 2] and first.next_after == 2
    second = client.list_turns(user, assistant="helper", after=first.next_after, limit=2)
    assert [t.seq for t in second] == [3, 4]
    assert [t.user_text for t in client.iter_turns(user, assistant="helper", page_size=2)] == \
        [f"message {i}" for i in range(5)]
    # Another assistant is another scope.
    assert len(client.list_turns(user)) == 0


def test_same_idempotency_key_twice_admits_once(client, user):
    key = "pytest-" + uuid.uuid4().hex
    first = client.add_turn(user, "I booked a table at Lumen.", "Enjoy!", idempotency_key=key)
    again = client.add_turn(user, "I booked a table at Lumen.", "Enjoy!", idempotency_key=key)
    assert first.replayed is False and again.replayed is True
    assert again.turn_ids == first.turn_ids
    assert len(client.list_turns(user)) == 1
    # The same key with other turns is a conflict, and admits nothing.
    with pytest.raises(EngramError) as e:
        client.add_turn(user, "Something else entirely.", idempotency_key=key)
    assert e.value.status == 409 and e.value.code == "conflict"
    assert len(client.list_turns(user)) == 1


def test_each_call_gets_its_own_idempotency_key(client, user):
    client.add_turn(user, "Same words.", "Same reply.")
    client.add_turn(user, "Same words.", "Same reply.")
    assert len(client.list_turns(user)) == 2  # two calls, two admissions


def test_batch_idempotency(client, user):
    key = uuid.uuid4().hex
    turns = [{"user_text": "a"}, {"user_text": "b"}]
    first = client.add_turns(user, turns, idempotency_key=key)
    again = client.add_turns(user, turns, idempotency_key=key)
    assert again.replayed and again.turn_ids == first.turn_ids
    assert len(client.list_turns(user)) == 2


def _lose_first_answer(method: str, path: str, how: str):
    """A proxy behaviour: forward everything; for the first `method path`, let the server
    handle it but replace its answer with a 503 (or drop the connection)."""
    state = {"lost": 0}

    def interfere(rec, upstream):
        if rec.method == method and rec.path.split("?")[0] == path and state["lost"] == 0:
            state["lost"] += 1
            if how == "drop":
                return "drop"
            return (503, {"Retry-After": "0"}, {"error": {"code": "not_ready", "message": "lost", "request_id": "x"}})
        return upstream

    return interfere


@pytest.mark.parametrize("how", ["503", "drop"])
def test_lost_acknowledgement_is_retried_without_duplicate_turns(live, user, how):
    with ForwardingProxy(live.url, _lose_first_answer("POST", "/v1/turns", how)) as proxy:
        c = EngramClient(proxy.url, api_key=live.keys["acme_write"], backoff_base=0.01, timeout=30)
        r = c.add_turn(user, "I adopted a cat named Miso.", "Lovely!")
        posts = [q for q in proxy.requests if q.method == "POST"]
        assert len(posts) == 2  # the lost attempt and its retry
        keys = {q.headers.get("idempotency-key") for q in posts}
        assert len(keys) == 1 and None not in keys  # one key, reused by the retry
    assert r.replayed is True  # the first attempt had been admitted
    turns = live.client().list_turns(user)
    assert len(turns) == 1 and turns.turns[0].id == r.turn_ids[0]


@pytest.mark.parametrize("how", ["503", "drop"])
def test_lost_acknowledgement_is_retried_without_duplicate_memories(live, user, how):
    with ForwardingProxy(live.url, _lose_first_answer("POST", "/v1/memories", how)) as proxy:
        c = EngramClient(proxy.url, api_key=live.keys["acme_write"], backoff_base=0.01, timeout=30)
        r = c.add_memory("Miso the cat likes tuna", user=user, infer=False)
        posts = [q for q in proxy.requests if q.method == "POST"]
        assert len(posts) == 2
        assert posts[0].headers["idempotency-key"] == posts[1].headers["idempotency-key"]
    assert r.replayed is True
    assert [m.memory for m in live.client().list_memories(user=user)] == ["Miso the cat likes tuna"]


# --- retrieval, maintenance, inspection --------------------------------------------------


def test_retrieve(client, user):
    client.add_turn(user, "My sister Ana lives in Porto.", "Good to know!")
    client.add_turn(user, "I am training for the Lisbon marathon.", "Good luck!")
    r = client.retrieve(user, "Where does Ana live?", budget=600)
    assert isinstance(r, Retrieval)
    assert r.query == "Where does Ana live?" and r.budget == 600
    assert r.items and all(i.kind for i in r.items)
    assert any("Porto" in i.text for i in r.items)
    assert "Porto" in r.context
    assert r.context_tokens <= 600
    stm = [i for i in r.items if i.kind == "stm_turn"]
    assert stm and stm[0].tier == "stm" and stm[0].id > 0

    # The ranking's constants and the reasons of each item, per request.
    explained = client.retrieve(user, "Where does Ana live?", budget=600, explain=True,
                                ranking={"recent_hours": 0, "stm_share": 0.2})
    assert explained.items and all(i.raw["why"]["chosen"] for i in explained.items)
    assert any("ranked #1" in i.raw["why"]["chosen"] and "Porto" in i.text for i in explained.items)
    with pytest.raises(EngramError) as e:
        client.retrieve(user, "Where does Ana live?", ranking={"recent_hours": -1})
    assert e.value.status == 400 and "recent_hours" in str(e.value)


def test_maintain_profile_stats_health_jobs(client, user):
    client.add_turns(user, [{"user_text": f"I like hiking in the Alps, trip {i}.", "assistant_text": "Nice."}
                            for i in range(12)])
    report = client.maintain(user=user)
    assert report.promotions >= 0 and isinstance(report.degraded, bool)
    assert "pages_created" in report.raw

    p = client.profile(user)
    assert p.user == user and p.assistant == "assistant"
    assert isinstance(p.profile, list) and isinstance(p.user_facts, list)
    assert isinstance(p.profile_text, str)

    s = client.stats(user=user)
    assert s.tenant == "acme" and s.user == user and s.scopes == 1
    assert s.turns_admitted == 12
    assert s.stm_turns + 0 <= 12

    h = client.health(user=user, max_findings=5)
    assert h.overall in h.counts
    assert isinstance(h.green, bool)
    assert len(h.findings) <= 5
    assert all(sc.user == user for sc in h.scopes)

    jobs = client.jobs(user=user)
    assert jobs.pending >= 0 and jobs.failed >= 0
    assert len(jobs.jobs) == jobs.pending + jobs.failed


def test_export(client, user):
    client.add_turn(user, "I play the cello.", "How long have you played?")
    client.add_turn(user, "Since I was nine.", "Impressive!")
    records = client.export(user=user)
    assert records and all("type" in r for r in records)
    turns = [r for r in records if r["type"] == "turn"]
    assert [t["user_text"] for t in turns] == ["I play the cello.", "Since I was nine."]
    assert all(t["user"] == user and t["tenant"] == "acme" for t in turns)
    text = client.export_text(user=user)
    assert [json.loads(line) for line in text.splitlines() if line.strip()] == records
    assert client.export(user=user, assistant="nobody") == []


def test_import_is_idempotent(client, user):
    lines = [{"user": "I play the cello.", "assistant": "How long?", "time": "2025-05-02T10:00:00Z"},
             {"user": "Since I was nine.", "assistant": "Impressive!"}]
    data = "".join(json.dumps(line) + "\n" for line in lines)
    key = uuid.uuid4().hex
    imported = client.import_dialogues(user, data, format="jsonl", idempotency_key=key)
    assert imported.turns == 2
    assert imported.scopes[0].user == user and imported.scopes[0].replayed is False
    again = client.import_dialogues(user, data, format="jsonl", idempotency_key=key)
    assert again.scopes[0].replayed is True
    assert [t.user_text for t in client.iter_turns(user)] == ["I play the cello.", "Since I was nine."]


def test_import_memoryos_format(client, user):
    data = json.dumps([{"user_input": "I moved to Hanoi.", "agent_response": "Exciting!"}])
    r = client.import_dialogues(user, data, format="memoryos")
    assert r.turns == 1
    assert client.list_turns(user).turns[0].user_text == "I moved to Hanoi."


def test_forget_needs_admin(live, user):
    writer, admin = live.client("acme_write"), live.client("acme_admin")
    writer.add_turn(user, "Please remember my locker code.", "Noted.")
    with pytest.raises(EngramError) as e:
        writer.forget(user)
    assert e.value.status == 403 and e.value.code == "forbidden"
    r = admin.forget(user)
    assert r.user == user and r.turns_erased == 1
    assert len(writer.list_turns(user)) == 0


# --- chat --------------------------------------------------------------------------------


def test_chat_without_a_model_is_failed_precondition(client, user):
    with pytest.raises(EngramError) as e:
        client.chat(user, "Where do I live?")
    assert e.value.status == 409 and e.value.code == "failed_precondition"
    assert e.value.request_id
    with pytest.raises(EngramError) as e:
        list(client.chat_stream(user, "Where do I live?"))
    assert e.value.status == 409 and e.value.code == "failed_precondition"


def test_chat_with_a_model(chat_live, fake_llm, user):
    c = chat_live.client()
    c.add_turn(user, "I moved to Lisbon in May.", "Nice!")
    reply = c.chat(user, "Where do I live?", persona="a terse assistant", budget=800)
    assert isinstance(reply, ChatReply)
    assert reply.answer == "You live in Lisbon."
    assert reply.turn_id is not None and reply.run_id
    assert reply.model_calls >= 1
    assert any("Lisbon" in i.text for i in reply.used)
    assert [t.user_text for t in c.iter_turns(user)] == ["I moved to Lisbon in May.", "Where do I live?"]

    not_admitted = c.chat(user, "And where do I work?", admit=False)
    assert not_admitted.turn_id is None
    assert len(c.list_turns(user)) == 2


def test_chat_stream_with_a_model(chat_live, user):
    c = chat_live.client()
    events = list(c.chat_stream(user, "Where do I live?"))
    deltas = [e.text for e in events if e.event == "delta"]
    assert "".join(deltas) == "You live in Lisbon."
    assert events[-1].event == "done"
    assert events[-1].reply.answer == "You live in Lisbon."
    assert events[-1].reply.turn_id is not None


# --- fact memory --------------------------------------------------------------------------


def test_memory_lifecycle(client, user):
    added = client.add_memory("I prefer aisle seats", user=user, infer=False, metadata={"category": "travel"})
    assert added.replayed is False
    assert [r.event for r in added.results] == ["ADD"]
    mid = added.results[0].id
    assert mid and added.ids == [mid]
    client.add_memory(messages=[{"role": "user", "content": "I love ramen", "name": "Alice"}],
                      user=user, infer=False, metadata={"category": "food"})

    found = client.search_memories("seat preference on planes", user=user, top_k=5, explain=True)
    assert found.results and found.results[0].id == mid
    assert 0.0 <= found.results[0].score <= 1.0
    assert found.results[0].score_details is not None

    food = client.search_memories("ramen or aisle seats", user=user, filters={"category": "food"})
    assert [m.memory for m in food] == ["I love ramen"]

    page = client.list_memories(user=user)
    assert {m.memory for m in page} == {"I prefer aisle seats", "I love ramen"}
    assert page.next_cursor is None
    assert [m.memory for m in client.list_memories(user=user, filters={"category": "travel"})] == \
        ["I prefer aisle seats"]
    first = client.list_memories(user=user, limit=1)
    assert len(first) == 1 and first.next_cursor
    assert len(list(client.iter_memories(user=user, page_size=1))) == 2

    item = client.get_memory(mid, user=user)
    assert isinstance(item, MemoryItem)
    assert item.memory == "I prefer aisle seats" and item.version == 1 and item.status == "live"
    assert item.metadata == {"category": "travel"} and item.user_id == user

    updated = client.update_memory(mid, user=user, text="I prefer window seats", expires_at="2999-01-01T00:00:00Z")
    assert updated.id == mid and updated.version == 2 and updated.memory == "I prefer window seats"
    assert updated.expiration_date
    cleared = client.update_memory(mid, user=user, expires_at=None)
    assert cleared.expiration_date is None

    history = client.memory_history(mid, user=user)
    assert history.id == mid
    events = [e.event for e in history]
    assert events[0] == "ADD" and "UPDATE" in events
    assert any(e.old_memory == "I prefer aisle seats" and e.new_memory == "I prefer window seats" for e in history)

    d = client.delete_memory(mid, user=user)
    assert d.id == mid and d.deleted is True
    with pytest.raises(EngramError) as e:
        client.get_memory(mid, user=user)
    assert e.value.status == 404 and e.value.code == "not_found"
    assert client.memory_history(mid, user=user).results[-1].event == "DELETE"

    assert client.delete_all_memories(user=user).deleted == 1
    assert len(client.list_memories(user=user)) == 0


def test_memory_add_idempotency_and_duplicates(client, user):
    key = uuid.uuid4().hex
    first = client.add_memory("I am allergic to peanuts", user=user, infer=False, idempotency_key=key)
    again = client.add_memory("I am allergic to peanuts", user=user, infer=False, idempotency_key=key)
    assert again.replayed is True and again.ids == first.ids
    # Without the key the same text is a duplicate: NOOP, still one memory.
    dup = client.add_memory("I am allergic to peanuts", user=user, infer=False)
    assert dup.replayed is False and [r.event for r in dup.results] == ["NOOP"]
    assert len(client.list_memories(user=user)) == 1


def test_memory_inference_with_builtin_rules(client, user):
    r = client.add_memory("I moved to Berlin last year and I work as a nurse.", user=user)
    assert r.degraded is True  # no model: the built-in extractive rules
    assert all(ev.event in ("ADD", "UPDATE", "NOOP") for ev in r.results)


def test_agent_and_run_scopes(client, user):
    client.add_memory("prefers short answers", user=user, agent="planner", infer=False)
    client.add_memory("run-level note", user=user, agent="planner", run="r1", infer=False)
    assert len(client.list_memories(user=user)) == 0  # exactly the user scope
    assert len(client.list_memories(user=user, narrower=True)) == 2
    assert [m.memory for m in client.list_memories(agent="planner", user=user)] == ["prefers short answers"]
    assert client.delete_all_memories(user=user, narrower=True).deleted == 2


def test_purge_needs_admin(live, user):
    writer, admin = live.client("acme_write"), live.client("acme_admin")
    mid = writer.add_memory("my passport number is X123", user=user, infer=False).ids[0]
    writer.add_memory("another secret", user=user, infer=False)
    with pytest.raises(EngramError) as e:
        writer.purge_memory(mid, user=user)
    assert e.value.code == "forbidden"
    one = admin.purge_memory(mid, user=user)
    assert one.memories == 1 and one.versions >= 1
    history = admin.memory_history(mid, user=user)
    assert history.results[-1].event == "PURGE"
    assert all("X123" not in (ev.old_memory or "") + (ev.new_memory or "") for ev in history)
    rest = admin.purge_memories(user=user)
    assert rest.memories == 1


# --- errors -------------------------------------------------------------------------------


def test_bad_key_is_unauthorized(live, user):
    bad = EngramClient(live.url, api_key="engram_not_a_real_key")
    with pytest.raises(EngramError) as e:
        bad.list_turns(user)
    err = e.value
    assert err.status == 401 and err.code == "unauthorized"
    assert err.request_id and err.message
    assert "unauthorized" in str(err) and err.request_id in str(err)
    assert err.body["error"]["code"] == "unauthorized"

    with pytest.raises(EngramError) as e:
        EngramClient(live.url, api_key=None).stats()
    assert e.value.status == 401 and "missing API key" in e.value.message


def test_unknown_memory_id_is_not_found(client, user):
    with pytest.raises(EngramError) as e:
        client.get_memory("m_does_not_exist", user=user)
    assert e.value.status == 404 and e.value.code == "not_found" and e.value.request_id
    with pytest.raises(EngramError) as e:
        client.delete_memory("m_does_not_exist", user=user)
    assert e.value.code == "not_found"
    with pytest.raises(EngramError) as e:
        client.update_memory("m_does_not_exist", user=user, text="x")
    assert e.value.code == "not_found"


def test_invalid_argument_names_the_field(client, user):
    with pytest.raises(EngramError) as e:
        client.retrieve(user, "anything", budget=0)
    assert e.value.status == 400 and e.value.code == "invalid_argument" and e.value.field == "budget"
    with pytest.raises(EngramError) as e:
        client.list_memories()  # no scope
    assert e.value.status == 400 and e.value.field == "user"
    with pytest.raises(EngramError) as e:
        client.add_memory(user=user)  # neither text nor messages
    assert e.value.status == 400 and e.value.code == "invalid_argument"
    with pytest.raises(EngramError) as e:
        client.update_memory("m_x", user=user)  # nothing to update
    assert e.value.status == 400 and e.value.field == "text"


def test_roles_and_user_limits(live, user):
    with pytest.raises(EngramError) as e:
        live.client("acme_read").add_turn(user, "hello")
    assert e.value.status == 403 and e.value.code == "forbidden"
    assert live.client("acme_read").list_turns(user).turns == []

    limited = live.client("acme_alice_only")
    limited.add_turn("alice-only", "I am allowed.")
    with pytest.raises(EngramError) as e:
        limited.add_turn(user, "I am not.")
    assert e.value.status == 403 and e.value.field == "user"


def test_connection_refused_is_a_connection_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the call: nobody listens there
    c = EngramClient(f"http://127.0.0.1:{port}", api_key="k", max_retries=2, backoff_base=0.001)
    with pytest.raises(EngramError) as e:
        c.stats()
    assert e.value.code == "connection_error" and e.value.status is None
    assert e.value.is_connection_error and e.value.attempts == 3  # a read: retried, bounded


# --- tenants ------------------------------------------------------------------------------


def test_tenants_do_not_see_each_other(live):
    acme, globex = live.client("acme_write"), live.client("globex_write")
    shared = "shared-" + uuid.uuid4().hex[:8]
    acme.add_turn(shared, "Acme's secret roadmap is Project Falcon.", "Noted.")
    mid = acme.add_memory("Acme launches Falcon in June", user=shared, infer=False).ids[0]

    assert globex.list_turns(shared).turns == []
    assert len(globex.list_memories(user=shared)) == 0
    assert len(globex.search_memories("Falcon launch", user=shared)) == 0
    assert "Falcon" not in globex.retrieve(shared, "What is the roadmap?").context
    with pytest.raises(EngramError) as e:
        globex.get_memory(mid, user=shared)
    assert e.value.status == 404 and e.value.code == "not_found"
    with pytest.raises(EngramError) as e:
        globex.delete_memory(mid, user=shared)
    assert e.value.status == 404
    assert globex.export(user=shared) == []
    assert all("Falcon" not in json.dumps(r) for r in globex.export())
    s = globex.stats()
    assert s.tenant == "globex"
    assert globex.stats(user=shared).turns_admitted == 0

    # Globex writing the same user id makes its own scope; Acme's is untouched.
    globex.add_turn(shared, "Globex is unrelated.")
    assert [t.user_text for t in acme.iter_turns(shared)] == ["Acme's secret roadmap is Project Falcon."]
    assert acme.get_memory(mid, user=shared).memory == "Acme launches Falcon in June"


# --- configuration ------------------------------------------------------------------------


def test_url_and_key_from_the_environment(live, user, monkeypatch):
    monkeypatch.setenv("ENGRAM_URL", live.url)
    monkeypatch.setenv("ENGRAM_API_KEY", live.keys["acme_write"])
    c = EngramClient()
    assert c.base_url == live.url
    c.add_turn(user, "from the environment")
    assert len(c.list_turns(user)) == 1
    # Arguments win over the environment.
    monkeypatch.setenv("ENGRAM_API_KEY", "engram_wrong")
    with pytest.raises(EngramError) as e:
        EngramClient().stats()
    assert e.value.status == 401
    assert EngramClient(api_key=live.keys["acme_read"]).stats().tenant == "acme"


def test_with_options(live, user):
    c = live.client("acme_read")
    w = c.with_options(api_key=live.keys["acme_write"], timeout=5, max_retries=0)
    assert w.timeout == 5 and w.retry_policy.max_retries == 0 and c.retry_policy.max_retries == 3
    w.add_turn(user, "via with_options")
    assert len(c.list_turns(user)) == 1
