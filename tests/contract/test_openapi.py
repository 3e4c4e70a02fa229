"""docs/openapi.yaml is a contract a generated client can rely on.

The document itself: strict YAML, every $ref resolves, operation ids are unique, path
parameters are declared, defaults lie within their bounds, examples match their schemas.

Against the real `engram serve`: every documented operation is called (a success and the
errors a client meets), each answer's status is one the operation documents (or its
`default`), its content type one it lists, and its JSON body valid against the documented
schema. The last test fails when an operation was never called, so a new route needs a case.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import urllib.parse
import uuid
from typing import Any, Dict, List, Optional, Set, Tuple

import jsonschema
import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC_PATH = os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "openapi.yaml")
METHODS = ("get", "put", "post", "patch", "delete")

with open(SPEC_PATH, encoding="utf-8") as f:
    SPEC: Dict[str, Any] = yaml.safe_load(f)


# --- the document ---------------------------------------------------------------------------


def operations() -> List[Tuple[str, str, Dict[str, Any]]]:
    return [(m.upper(), path, op) for path, item in SPEC["paths"].items() for m, op in item.items()
            if m in METHODS]


def resolve(node: Any) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/"), f"external $ref {ref}"
        target: Any = SPEC
        for part in ref[2:].split("/"):
            assert isinstance(target, dict) and part in target, f"$ref {ref} does not resolve"
            target = target[part]
        node = target
    return node


def walk(node: Any, where: str = "#"):
    yield where, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from walk(v, f"{where}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, f"{where}/{i}")


def to_json_schema(node: Any) -> Any:
    """OpenAPI 3.0's schema dialect as JSON Schema (draft 4): `nullable` becomes a null type,
    references point into `definitions`, annotations JSON Schema does not know are dropped."""
    if isinstance(node, list):
        return [to_json_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: to_json_schema(v) for k, v in node.items()
           if k not in ("example", "examples", "nullable", "readOnly", "writeOnly", "deprecated", "xml",
                        "externalDocs", "discriminator") and not k.startswith("x-")}
    if "$ref" in out:
        out["$ref"] = "#/definitions/" + out["$ref"].split("/")[-1]
    if node.get("nullable"):
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = list(out["enum"]) + [None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


DEFINITIONS = {name: to_json_schema(s) for name, s in SPEC["components"]["schemas"].items()}


def schema_errors(schema: Dict[str, Any], instance: Any) -> List[str]:
    full = dict(to_json_schema(schema))
    full["definitions"] = DEFINITIONS
    validator = jsonschema.Draft4Validator(full)
    return [f"/{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}"
            for e in sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))]


def test_every_reference_resolves_and_every_operation_is_complete():
    assert str(SPEC.get("openapi", "")).startswith("3.0"), "openapi: 3.0.x"
    for where, node in walk(SPEC):
        if isinstance(node, dict) and "$ref" in node:
            resolve(node)  # asserts
    seen: Dict[str, str] = {}
    for method, path, op in operations():
        name = f"{method} {path}"
        op_id = op.get("operationId")
        assert op_id, f"{name}: no operationId"
        assert op_id not in seen, f"{name}: operationId {op_id} is also {seen[op_id]}'s"
        seen[op_id] = name
        assert op.get("responses"), f"{name}: no responses"
        assert "x-engram-role" in op or op.get("security") == [], f"{name}: neither a role nor security: []"
        declared = {resolve(p)["name"] for p in op.get("parameters", []) + SPEC["paths"][path].get("parameters", [])
                    if resolve(p)["in"] == "path"}
        assert declared == set(re.findall(r"\{(\w+)\}", path)), f"{name}: path parameters {declared}"
        for code in op["responses"]:
            assert code == "default" or re.fullmatch(r"[1-5]\d\d", str(code)), f"{name}: response {code!r}"


def test_defaults_and_examples_match_their_schemas():
    problems = []
    for where, node in walk(SPEC):
        if not isinstance(node, dict) or "type" not in node:
            continue
        if "default" in node:
            for e in schema_errors(node, node["default"]):
                problems.append(f"{where}: default {node['default']!r}{e}")
        if "example" in node and not where.split("/")[-1] == "content":
            for e in schema_errors(node, node["example"]):
                problems.append(f"{where}: example{e}")
    for method, path, op in operations():
        content = (op.get("requestBody") or {}).get("content", {}).get("application/json")
        if not content or "schema" not in content:
            continue
        for name, ex in (content.get("examples") or {}).items():
            for e in schema_errors(content["schema"], ex.get("value")):
                problems.append(f"{method} {path}: example {name}{e}")
    assert not problems, "\n".join(problems)


# --- the server -----------------------------------------------------------------------------

CALLED: Set[Tuple[str, str]] = set()
PROBLEMS: List[str] = []


def template_of(method: str, path: str) -> str:
    """The documented path template a concrete path is served by."""
    path = path.split("?")[0]
    for m, tmpl, _ in operations():
        if m == method and re.fullmatch(re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(tmpl)), path):
            return tmpl
    raise AssertionError(f"{method} {path} is not a documented operation")


class Reply:
    def __init__(self, status: int, headers: Dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)


def call(served, method: str, path: str, *, key: Optional[str] = "write", body: Any = None,
         raw: Optional[bytes] = None, content_type: str = "application/json",
         params: Optional[Dict[str, Any]] = None, headers: Optional[Dict[str, str]] = None,
         auth_scheme: str = "Bearer") -> Reply:
    """One request, its answer checked against the operation's documented responses."""
    target = path + ("?" + urllib.parse.urlencode(params) if params else "")
    hdrs = dict(headers or {})
    if key:
        hdrs["Authorization"] = f"{auth_scheme} {served.keys[key]}"
    data = raw
    if body is not None:
        data = json.dumps(body).encode("utf-8")
    if data is not None:
        hdrs.setdefault("Content-Type", content_type)
    host, port = served.url.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request(method, target, body=data, headers=hdrs)
        r = conn.getresponse()
        reply = Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()
    tmpl = template_of(method, path)
    CALLED.add((method, tmpl))
    check(method, tmpl, reply)
    return reply


def check(method: str, tmpl: str, reply: Reply) -> None:
    name = f"{method} {tmpl} -> {reply.status}"
    op = SPEC["paths"][tmpl][method.lower()]
    documented = op["responses"].get(str(reply.status), op["responses"].get(reply.status))
    if documented is None:
        documented = op["responses"].get("default")
        if documented is None:
            PROBLEMS.append(f"{name}: the status is not documented ({reply.body[:200]!r})")
            return
    documented = resolve(documented)
    content = documented.get("content") or {}
    ctype = reply.headers.get("content-type", "").split(";")[0].strip()
    if not content:
        if reply.body and reply.status not in (302, 304):
            PROBLEMS.append(f"{name}: documented without content, answered {ctype} {reply.body[:120]!r}")
        return
    if ctype not in content:
        PROBLEMS.append(f"{name}: content type {ctype!r}, documented {sorted(content)}")
        return
    if ctype != "application/json":
        return
    schema = content[ctype].get("schema")
    try:
        body = json.loads(reply.body)
    except ValueError:
        PROBLEMS.append(f"{name}: the body is not JSON: {reply.body[:200]!r}")
        return
    if schema:
        for e in schema_errors(schema, body)[:5]:
            PROBLEMS.append(f"{name}: {e}")


def expect(reply: Reply, status: int) -> Reply:
    assert reply.status == status, f"expected {status}, got {reply.status}: {reply.body[:500]!r}"
    return reply


def new_user() -> str:
    return "u-" + uuid.uuid4().hex[:10]


def test_service_routes(served):
    expect(call(served, "GET", "/healthz", key=None), 200)
    expect(call(served, "GET", "/readyz", key=None), 200)
    expect(call(served, "GET", "/v1/version", key=None), 200)
    metrics = expect(call(served, "GET", "/metrics", key="operator"), 200)
    assert b"engram_" in metrics.body
    expect(call(served, "GET", "/metrics", key="read"), 403)
    expect(call(served, "GET", "/metrics", key=None), 401)
    whoami = expect(call(served, "GET", "/v1/whoami", key="operator"), 200).json()
    assert whoami["role"] == "operator"
    for role in ("read", "write", "admin"):
        assert expect(call(served, "GET", "/v1/whoami", key=role), 200).json()["role"] == role


def test_dialogue_routes(served):
    user = new_user()
    expect(call(served, "POST", "/v1/turns", body={"user": user, "user_text": "I moved to Lisbon in May.",
                                                    "assistant_text": "Nice! How do you like it?"}), 201)
    batch = {"user": user, "idempotency_key": "k-" + user, "turns": [
        {"user_text": "My sister Ana is an ICU nurse in Porto.", "assistant_text": "That is demanding work.",
         "time": "2025-06-01T10:00:00Z"},
        {"user_text": "I love sushi and I play the clarinet.", "assistant_text": "Great hobbies!",
         "time": "2025-06-01T10:05:00Z"}]}
    expect(call(served, "POST", "/v1/turns", body=batch), 201)
    assert expect(call(served, "POST", "/v1/turns", body=batch), 200).json()["replayed"] is True
    other = dict(batch, turns=batch["turns"][:1])
    expect(call(served, "POST", "/v1/turns", body=other), 409)
    expect(call(served, "POST", "/v1/turns", body={"user_text": "no user"}), 400)
    expect(call(served, "POST", "/v1/turns", raw=b"{not json"), 400)
    expect(call(served, "POST", "/v1/turns", body={"user": user, "user_text": "x"}, key="read"), 403)
    expect(call(served, "POST", "/v1/turns", body={"user": user, "user_text": "x"}, key=None), 401)
    expect(call(served, "GET", "/v1/turns", params={"user": user, "limit": 2}), 200)
    expect(call(served, "GET", "/v1/turns", params={"user": user, "limit": 0}), 400)
    expect(call(served, "GET", "/v1/turns", params={"user": user, "limit": 2}, key=None), 401)

    jsonl = (json.dumps({"user": "We adopted a dog named Biscuit.", "assistant": "Lovely!",
                         "time": "2025-06-02T09:00:00Z"}) + "\n").encode()
    imp = {"user": user, "format": "jsonl"}
    hdr = {"Idempotency-Key": "imp-" + user}
    expect(call(served, "POST", "/v1/import", raw=jsonl, content_type="application/x-ndjson", params=imp,
                headers=hdr), 201)
    expect(call(served, "POST", "/v1/import", raw=jsonl, content_type="application/x-ndjson", params=imp,
                headers=hdr), 200)
    memoryos = json.dumps([{"user_input": "I work as a project manager.", "agent_response": "Noted.",
                            "timestamp": "2025-06-03T09:00:00Z"}]).encode()
    expect(call(served, "POST", "/v1/import", raw=memoryos, params={"user": user, "format": "memoryos"}), 201)
    expect(call(served, "POST", "/v1/import", raw=b"[{]", params={"user": user}), 400)

    expect(call(served, "POST", "/v1/maintain", body={"user": user}), 200)
    expect(call(served, "POST", "/v1/maintain", body={"user": 7}), 400)
    retrieved = expect(call(served, "POST", "/v1/retrieve", body={"user": user, "query": "Where does my sister work?",
                                                                  "budget": 500, "explain": True}), 200).json()
    assert "Porto" in retrieved["context"]
    expect(call(served, "POST", "/v1/retrieve", body={"user": user, "query": "x", "budget": -1}), 400)
    expect(call(served, "POST", "/v1/retrieve", body={"user": user, "query": "x", "ranking": {"k1": "high"}}), 400)
    # No model configured on this server.
    expect(call(served, "POST", "/v1/chat", body={"user": user, "message": "Where do I live?"}), 409)

    export = expect(call(served, "GET", "/v1/export", params={"user": user}), 200)
    assert b"Biscuit" in export.body
    expect(call(served, "GET", "/v1/export", params={"user": ""}), 400)
    profile = expect(call(served, "GET", "/v1/profile", params={"user": user}), 200).json()
    assert profile["user"] == user
    expect(call(served, "GET", "/v1/profile", params={}), 400)
    expect(call(served, "GET", "/v1/stats", params={"user": user}), 200)
    expect(call(served, "GET", "/v1/stats"), 200)
    expect(call(served, "GET", "/v1/segments", params={"user": user}), 200)
    expect(call(served, "GET", "/v1/segments", params={"user": user, "archived": "maybe"}), 400)
    expect(call(served, "GET", "/v1/receipts", params={"user": user, "limit": 5}), 200)
    expect(call(served, "GET", "/v1/receipts", params={"user": user, "kind": "nonsense"}), 400)
    expect(call(served, "GET", "/v1/activity", params={"user": user, "days": 7}), 200)
    expect(call(served, "GET", "/v1/activity", params={"days": -3}), 400)
    expect(call(served, "GET", "/v1/health", params={"user": user}), 200)
    expect(call(served, "GET", "/v1/health", params={"user": user, "max_findings": "lots"}), 400)
    expect(call(served, "POST", "/v1/health/verify", body={"user": user}, key="admin"), 200)
    expect(call(served, "POST", "/v1/health/verify", body={"user": user}, key="write"), 403)
    expect(call(served, "GET", "/v1/jobs", params={"user": user}), 200)
    expect(call(served, "GET", "/v1/jobs", params={"status": "sleeping"}), 400)
    expect(call(served, "POST", "/v1/jobs/retry", body={"user": user}, key="admin"), 200)
    expect(call(served, "GET", "/v1/users", params={"limit": 5}), 200)
    expect(call(served, "GET", "/v1/users", params={"q": user}), 200)
    expect(call(served, "GET", "/v1/users", params={"limit": "all"}), 400)
    expect(call(served, "GET", "/v1/requests", params={"limit": 5}, key="admin"), 200)
    expect(call(served, "GET", "/v1/requests", key="read"), 403)
    expect(call(served, "POST", "/v1/canary", key="admin"), 200)
    expect(call(served, "POST", "/v1/canary", body={"user": user}, key="admin"), 400)

    gone = new_user()
    expect(call(served, "POST", "/v1/turns", body={"user": gone, "user_text": "Forget me."}), 201)
    expect(call(served, "POST", "/v1/forget", body={"user": gone}, key="write"), 403)
    expect(call(served, "POST", "/v1/forget", body={"user": gone}, key="admin"), 200)
    expect(call(served, "POST", "/v1/forget", body={}, key="admin"), 400)


def test_memory_routes(served):
    user = new_user()
    added = expect(call(served, "POST", "/v1/memories", body={"user": user, "text": "Priya is vegetarian",
                                                              "metadata": {"source": "contract"}}), 201).json()
    mid = added["results"][0]["id"]
    again = expect(call(served, "POST", "/v1/memories", body={"user": user, "text": "Priya is vegetarian"}), 201)
    assert again.json()["results"][0]["event"] == "NOOP"
    key = {"Idempotency-Key": "add-" + user}
    expect(call(served, "POST", "/v1/memories", body={"user": user, "text": "Priya runs"}, headers=key), 201)
    expect(call(served, "POST", "/v1/memories", body={"user": user, "text": "Priya runs"}, headers=key), 200)
    expect(call(served, "POST", "/v1/memories", body={"user": user, "messages": [
        {"role": "user", "content": "I live in Lisbon and I love hiking."}]}), 201)
    expect(call(served, "POST", "/v1/memories", body={"user": user, "text": ""}), 400)
    expect(call(served, "POST", "/v1/memories", body={"text": "no scope"}), 400)
    expect(call(served, "GET", "/v1/memories", params={"user": user, "limit": 1}), 200)
    expect(call(served, "GET", "/v1/memories", params={"user": user, "filters": "{"}), 400)
    found = expect(call(served, "POST", "/v1/memories/search",
                        body={"user": user, "query": "food preferences", "explain": True}), 200).json()
    assert any("vegetarian" in r["memory"] for r in found["results"]), found
    expect(call(served, "POST", "/v1/memories/search", body={"user": user, "query": "x", "top_k": 0}), 400)
    expect(call(served, "GET", f"/v1/memories/{mid}", params={"user": user}), 200)
    expect(call(served, "GET", "/v1/memories/m_0000000000000000", params={"user": user}), 404)
    expect(call(served, "PATCH", f"/v1/memories/{mid}", body={"user": user, "text": "Priya is vegan"}), 200)
    expect(call(served, "PATCH", f"/v1/memories/{mid}", body={"user": user}), 400)
    expect(call(served, "GET", f"/v1/memories/{mid}/history", params={"user": user}), 200)
    expect(call(served, "GET", f"/v1/memories/{mid}/receipts", params={"user": user}), 200)
    expect(call(served, "GET", "/v1/memories/m_0000000000000000/receipts", params={"user": user}), 404)
    expect(call(served, "DELETE", f"/v1/memories/{mid}", params={"user": user}), 200)
    expect(call(served, "DELETE", f"/v1/memories/{mid}", params={"user": user}, key="read"), 403)
    expect(call(served, "POST", f"/v1/memories/{mid}/purge", body={"user": user}, key="write"), 403)
    expect(call(served, "POST", f"/v1/memories/{mid}/purge", body={"user": user}, key="admin"), 200)
    expect(call(served, "DELETE", "/v1/memories", params={"user": user}), 200)
    expect(call(served, "DELETE", "/v1/memories", params={}), 400)
    expect(call(served, "POST", "/v1/memories/purge", body={"user": user}, key="admin"), 200)
    expect(call(served, "POST", "/v1/memories/purge", body={"user": user, "narrower": "yes"}, key="admin"), 400)


def test_inspector_routes(served):
    assert expect(call(served, "GET", "/", key=None), 302).headers["location"].endswith("/ui/")
    expect(call(served, "GET", "/ui", key=None), 302)
    index = expect(call(served, "GET", "/ui/", key=None), 200)
    tag = index.headers.get("etag")
    assert tag, "the inspector's page has an ETag"
    expect(call(served, "GET", "/ui/", key=None, headers={"If-None-Match": tag}), 304)
    for name in ("app.js", "app.css", "favicon.svg"):
        expect(call(served, "GET", f"/ui/{name}", key=None), 200)
    expect(call(served, "GET", "/ui/secrets.txt", key=None), 404)


def test_memory_proxy_routes(served, served_with_model):
    body = {"model": "fake-model", "user": new_user(), "messages": [{"role": "user", "content": "Where do I live?"}]}
    expect(call(served, "POST", "/v1/chat/completions", body=body), 409)
    expect(call(served, "GET", "/v1/models"), 409)
    answer = expect(call(served_with_model, "POST", "/v1/chat/completions", body=body), 200).json()
    assert answer["choices"][0]["message"]["content"] == "You live in Lisbon."
    streamed = expect(call(served_with_model, "POST", "/v1/chat/completions", body=dict(body, stream=True)), 200)
    assert streamed.headers["content-type"].startswith("text/event-stream")
    expect(call(served_with_model, "POST", "/v1/chat/completions", body={"model": "m", "messages": []}), 400)
    expect(call(served_with_model, "POST", "/v1/chat/completions", body=dict(body, stream="yes")), 400)
    expect(call(served_with_model, "GET", "/v1/models"), 200)
    asked = {"model": "fake-model", "user": new_user(), "input": "Where do I live?", "instructions": "Be brief."}
    expect(call(served, "POST", "/v1/responses", body=asked), 409)
    response = expect(call(served_with_model, "POST", "/v1/responses", body=asked), 200).json()
    assert response["output"][0]["content"][0]["text"] == "You live in Lisbon."
    streamed = expect(call(served_with_model, "POST", "/v1/responses", body=dict(asked, stream=True)), 200)
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert b"response.completed" in streamed.body
    expect(call(served_with_model, "POST", "/v1/responses", body=dict(asked, input=7)), 400)
    expect(call(served_with_model, "POST", "/v1/responses", body=dict(asked, instructions={"a": 1})), 400)
    user = new_user()
    chat = {"user": user, "message": "Where do I live?"}
    reply = expect(call(served_with_model, "POST", "/v1/chat", body=chat), 200).json()
    assert reply["answer"] == "You live in Lisbon."
    streamed = expect(call(served_with_model, "POST", "/v1/chat", body=dict(chat, stream=True)), 200)
    assert streamed.headers["content-type"].startswith("text/event-stream")
    expect(call(served_with_model, "POST", "/v1/chat", body={"user": user}), 400)


def test_mcp_route(served):
    user = new_user()
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "contract"}}}
    answer = expect(call(served, "POST", "/mcp", body=init, params={"user": user}), 200).json()
    assert answer["result"]["serverInfo"]["name"] == "engram"
    expect(call(served, "POST", "/mcp", body={"jsonrpc": "2.0", "method": "notifications/initialized"},
                params={"user": user}), 202)
    listed = expect(call(served, "POST", "/mcp", key="read", body={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                         headers={"X-Engram-User": user, "MCP-Protocol-Version": "2025-06-18"}), 200).json()
    assert "add_fact" not in [t["name"] for t in listed["result"]["tools"]]
    added = expect(call(served, "POST", "/mcp", params={"user": user}, body={
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "add_fact", "arguments": {"text": "Prefers window seats"}}}), 200).json()
    assert added["result"]["isError"] is False
    expect(call(served, "POST", "/mcp", raw=b"[]", params={"user": user}), 400)
    expect(call(served, "POST", "/mcp", body={"jsonrpc": "2.0", "id": 4, "method": "ping"}), 400)
    expect(call(served, "POST", "/mcp", body={"jsonrpc": "2.0", "id": 5, "method": "ping"}, params={"user": user},
                headers={"MCP-Protocol-Version": "1999-01-01"}), 400)
    expect(call(served, "POST", "/mcp", key=None, body={"jsonrpc": "2.0", "id": 6, "method": "ping"},
                params={"user": user}), 401)


def test_mem0_routes(served):
    user = new_user()
    kw = {"auth_scheme": "Token"}
    expect(call(served, "GET", "/mem0/v1/ping/", **kw), 200)
    added = expect(call(served, "POST", "/mem0/v3/memories/add/", body={
        "messages": [{"role": "user", "content": "I love ramen"}], "user_id": user, "infer": False}, **kw), 200).json()
    mid = added[0]["id"] if isinstance(added, list) else added["results"][0]["id"]
    expect(call(served, "POST", "/mem0/v3/memories/add/", body={"messages": "x", "user_id": user, "app_id": "a"},
                **kw), 400)
    expect(call(served, "POST", "/mem0/v3/memories/search/", body={"query": "food", "filters": {"user_id": user}},
                **kw), 200)
    expect(call(served, "POST", "/mem0/v3/memories/search/", body={"query": "food"}, **kw), 400)
    expect(call(served, "POST", "/mem0/v3/memories/", body={"filters": {"user_id": user}},
                params={"page": 1, "page_size": 10}, **kw), 200)
    expect(call(served, "POST", "/mem0/v3/memories/", body={"filters": {"user_id": user}},
                params={"page": 0}, **kw), 400)
    expect(call(served, "GET", f"/mem0/v1/memories/{mid}/", **kw), 200)
    expect(call(served, "GET", "/mem0/v1/memories/m_0000000000000000/", **kw), 404)
    expect(call(served, "PUT", f"/mem0/v1/memories/{mid}/", body={"text": "I love udon"}, **kw), 200)
    expect(call(served, "PUT", f"/mem0/v1/memories/{mid}/", body={"text": 5}, **kw), 400)
    expect(call(served, "GET", f"/mem0/v1/memories/{mid}/history/", **kw), 200)
    expect(call(served, "PUT", "/mem0/v1/batch/", body={"memories": [{"memory_id": mid, "text": "I love soba"}]},
                **kw), 200)
    expect(call(served, "PUT", "/mem0/v1/batch/", body={"memories": []}, **kw), 400)
    expect(call(served, "DELETE", "/mem0/v1/batch/", body={"memories": [{"memory_id": mid}]}, **kw), 200)
    expect(call(served, "DELETE", "/mem0/v1/batch/", body={"memories": [{"memory_id": mid}]}, **kw), 404)
    second = expect(call(served, "POST", "/mem0/v3/memories/add/", body={
        "messages": [{"role": "user", "content": "I play chess"}], "user_id": user, "infer": False}, **kw), 200).json()
    sid = second[0]["id"] if isinstance(second, list) else second["results"][0]["id"]
    expect(call(served, "DELETE", f"/mem0/v1/memories/{sid}/", **kw), 200)
    expect(call(served, "DELETE", f"/mem0/v1/memories/{sid}/", **kw), 404)
    expect(call(served, "GET", "/mem0/v1/entities/", params={"page": 1, "page_size": 10}, **kw), 200)
    expect(call(served, "DELETE", "/mem0/v1/memories/", params={"user_id": user}, **kw), 200)
    expect(call(served, "DELETE", "/mem0/v1/memories/", **kw), 400)
    expect(call(served, "DELETE", f"/mem0/v1/entities/user/{user}/", **kw), 200)
    expect(call(served, "DELETE", f"/mem0/v2/entities/user/{user}/", **kw), 200)
    expect(call(served, "DELETE", f"/mem0/v2/entities/planet/{user}/", **kw), 400)

    # The routes of Mem0's clients before /v3.
    earlier = new_user()
    events = expect(call(served, "POST", "/mem0/v1/memories/", body={
        "messages": [{"role": "user", "content": "I love sushi"}], "user_id": earlier, "infer": False}, **kw), 200)
    assert isinstance(events.json(), list) and events.json()[0]["event"] == "ADD"
    wrapped = expect(call(served, "POST", "/mem0/v1/memories/", body={
        "messages": "I play chess", "user_id": earlier, "infer": False, "output_format": "v1.1"}, **kw), 200)
    assert wrapped.json()["results"][0]["memory"] == "I play chess"
    expect(call(served, "POST", "/mem0/v1/memories/", body={"messages": []}, **kw), 400)
    hits = expect(call(served, "POST", "/mem0/v1/memories/search/", body={"query": "sushi", "user_id": earlier},
                       **kw), 200).json()
    assert hits and "sushi" in hits[0]["memory"]
    expect(call(served, "POST", "/mem0/v1/memories/search/", body={"query": "food"}, **kw), 400)
    expect(call(served, "POST", "/mem0/v2/memories/search/",
                body={"query": "food", "filters": {"user_id": earlier}, "output_format": "v1.1"}, **kw), 200)
    expect(call(served, "POST", "/mem0/v2/memories/search/", body={"query": 3, "filters": {"user_id": earlier}},
                **kw), 400)
    assert len(expect(call(served, "POST", "/mem0/v2/memories/", body={"filters": {"user_id": earlier}}, **kw),
                      200).json()) == 2
    paged = expect(call(served, "POST", "/mem0/v2/memories/", body={"user_id": earlier},
                        params={"page": 1, "page_size": 1}, **kw), 200).json()
    assert paged["count"] == 2 and len(paged["results"]) == 1
    expect(call(served, "POST", "/mem0/v2/memories/", body={"filters": {"OR": [{"user_id": earlier}]}}, **kw), 400)
    assert len(expect(call(served, "GET", "/mem0/v1/memories/", params={"user_id": earlier}, **kw), 200).json()) == 2
    expect(call(served, "GET", "/mem0/v1/memories/", params={"user_id": earlier, "page_size": 0}, **kw), 400)
    # A whole list is at most a page's size (1,000): beyond it, a 400 that says to page.
    many = new_user()
    lines = "".join(json.dumps({"type": "fact", "kind": "memory", "user_id": many, "text": f"memory number {i}"}) + "\n"
                    for i in range(1001))
    expect(call(served, "POST", "/v1/import", raw=lines.encode(), content_type="application/x-ndjson",
                params={"user": many}), 201)
    too_many = expect(call(served, "POST", "/mem0/v2/memories/", body={"filters": {"user_id": many}}, **kw), 400)
    assert "by page" in too_many.json()["error"]["message"]
    expect(call(served, "GET", "/mem0/v1/memories/", params={"user_id": many}, **kw), 400)
    last = expect(call(served, "GET", "/mem0/v1/memories/", params={"user_id": many, "page": 2, "page_size": 1000},
                       **kw), 200).json()
    assert last["count"] == 1001 and len(last["results"]) == 1 and last["next"] is None


def test_every_answer_was_as_documented_and_every_operation_was_called(request):
    # The operations are counted as the route tests call them: with some of
    # those left out of the run (pytest -k, one test by name), say so rather
    # than list every operation they would have called.
    route_tests = {name for name, f in globals().items() if name.startswith("test_") and callable(f)
                   and "served" in f.__code__.co_varnames[:f.__code__.co_argcount]}
    left_out = sorted(route_tests - {item.name for item in request.session.items})
    assert not left_out, ("this check counts what the route tests call; run them in the same session "
                          "(pytest tests/contract). Not selected: " + ", ".join(left_out))
    documented = {(m, p) for m, p, _ in operations()}
    missing = sorted(documented - CALLED)
    assert not missing, "operations no test called: " + ", ".join(f"{m} {p}" for m, p in missing)
    assert not PROBLEMS, "answers that differ from docs/openapi.yaml:\n" + "\n".join(PROBLEMS)
