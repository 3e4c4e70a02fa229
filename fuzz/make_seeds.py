#!/usr/bin/env python3
"""Writes the hand-made seed corpora of the fuzz targets (fuzz/corpus/<target>/).
Run from anywhere; it rewrites only the seeds it names (regression inputs saved
from crashes live next to them as regress-*)."""
import json, os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
DEEP = "[" * 200 + "]" * 200
DEEP_OBJ = '{"a":' * 150 + "1" + "}" * 150

def seeds(target, items):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    for name, data in items.items():
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)

seeds("time", {
    "iso_date": "2025-06-01", "iso_minutes": "2025-06-01T10:00", "iso_z": "2025-06-01T10:00:00Z",
    "iso_space": "2025-06-01 10:00:00", "iso_frac": "2025-06-01T10:00:00.250Z",
    "iso_offset": "2025-06-01T10:00:00+02:00", "iso_offset_compact": "2025-06-01T23:59:59-0500",
    "locomo_pm": "1:56 pm on 8 May, 2023", "locomo_am": "10:04 am on 19 January, 2023",
    "day_month": "8 May 2023", "month_day": "May 8, 2023", "leap": "2024-02-29T12:00:00Z",
    "not_leap": "2023-02-29", "year_low": "1000-01-01T00:00:00+14:00", "year_high": "9999-12-31T23:59:59.999-12:00",
    "huge_number": "99999999999999999999-01-01", "frac_long": "2025-06-01T10:00:00.123456789123Z",
    "nul": b"2025-06-01\x00T10:00", "invalid_utf8": b"8 \xff\xfe 2023", "spaces": "   2025-06-01   ",
    "month_13": "2025-13-01", "hour_24": "2025-06-01T24:00:00Z", "offset_huge": "2025-06-01T10:00:00+99:99",
})

seeds("text", {
    "plain": "Caroline's friend uses gpt-4 and node.js; e-mail me at 3.5 pm. C++ and C# too!",
    "sentences": "Dr. Smith arrived. It was 3.5 hours late! Was it? Yes… 東京は大きい。本当に！ next line\nnew line.",
    "scripts": "Ελληνικά Кириллица ÀÉÎÕÜ 日本語テキスト 한국어 עברית العربية",
    "emoji": "I love 🍜 and 🇻🇳! 👩‍👩‍👧 zero\u200bwidth",
    "invalid": b"ok \xff\xfe \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xe2\x82 end",
    "nuls": b"a\x00b\x00\x00c",
    "long_token": "x" * 200 + " " + "é" * 60,
    "punct": "--- ... ''' ___ +++ ### a-b a.b a_b a'b c++ c# x+ 'quoted' \"double\"",
    "whitespace": " \t\r\n\f\v  \u00a0\u2003 ",
    "normalize": "  I LOVE  Hanoi!! ,,word,, (paren) ",
})

jsonl = open(os.path.join(os.path.dirname(ROOT), "..", "samples", "dialogue.jsonl"), "rb").read().split(b"\n")[:3]
seeds("import_jsonl", {
    "sample": b"\n".join(jsonl) + b"\n",
    "all_fields": json.dumps({"user": "hi", "assistant": "hello", "time": 1748772000000, "metadata": {"k": [1, 2]},
                              "source_ref": "r1", "user_name": "Ann", "assistant_name": "Bot",
                              "user_source_ref": "u1", "assistant_source_ref": "a1"}) + "\n",
    "export": "\n".join([
        json.dumps({"type": "header", "version": 1}),
        json.dumps({"type": "turn", "tenant": "t", "user": "alice", "assistant": "a", "user_text": "I moved to Lisbon",
                    "assistant_text": "Nice", "event_time": "2026-03-02T09:05:00Z", "metadata": "{\"s\":1}", "source_ref": "x"}),
        json.dumps({"type": "turn", "user": "bob", "user_text": "hi", "assistant_text": "", "event_time": 1748772000000}),
        json.dumps({"type": "fact", "kind": "memory", "tenant": "t", "user_id": "alice", "agent_id": "a", "run_id": "",
                    "text": "likes tea", "role": "user", "actor": "alice", "metadata": {"c": "food"},
                    "created_at": "2026-03-02T09:05:00Z", "expires_at": None}),
        json.dumps({"type": "fact", "kind": "procedural", "user_id": "alice", "agent_id": "a", "text": "step 1"}),
    ]) + "\n",
    "errors": '{"user": 7}\n{"user":"a","time":"not a time"}\n{"assistant":""}\n',
    "blank_lines_crlf": '\r\n{"user":"a","assistant":"b"}\r\n\r\n',
    "bom": b"\xef\xbb\xbf" + b'{"user":"a","assistant":"b"}\n',
    "deep": '{"user":"a","assistant":"b","metadata":' + DEEP_OBJ + "}\n",
    "deep_array": '{"user":"a","metadata":{"x":' + DEEP + "}}\n",
    "meta_string": '{"user":"a","metadata":"{\\"k\\":1}"}\n',
    "invalid_utf8": b'{"user":"a\xff","assistant":"b"}\n',
    "nul": b'{"user":"a\x00b","assistant":"b"}\n',
    "huge_time": '{"user":"a","time":1e308}\n{"user":"a","time":-9223372036854775809}\n{"user":"a","time":1.5}\n',
})

seeds("import_memoryos", {
    "sample": json.dumps([
        {"user_input": "I love Kyoto.", "agent_response": "Noted!", "timestamp": "2025-06-01 10:00:00"},
        {"user_input": "And Hanoi?", "agent_response": "Also noted.", "timestamp": 1748772000000}], indent=2),
    "no_timestamp": '[{"user_input":"a","agent_response":"b"}]',
    "empty": "[]", "not_array": '{"user_input":"a"}',
    "wrong_types": '[{"user_input":"a","agent_response":7},{"user_input":null}]',
    "bad_time": '[{"user_input":"a","agent_response":"b","timestamp":"2025-02-30"}]',
    "deep": '[{"user_input":"a","agent_response":"b","x":' + DEEP + "}]",
    "huge_number": '[{"user_input":"a","agent_response":"b","timestamp":1e400}]',
    "invalid_utf8": b'[{"user_input":"\xc3\x28","agent_response":"b"}]',
    "bom_nul": b'\xef\xbb\xbf[{"user_input":"a\\u0000","agent_response":"b"}]',
})

locomo = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_10_date_time": "9:00 am on 3 June, 2023",
        "session_10": [
            {"speaker": "Ann", "dia_id": "D10:1", "text": "Look!", "img_url": ["u"], "blip_caption": "a photo of a cat"},
            {"speaker": "Bob", "dia_id": "D10:2", "text": "Cute."}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "a1"}, {"speaker": "Bob", "dia_id": "D1:2", "text": "b2"},
            {"speaker": "Ann", "dia_id": "D1:3", "text": "a3"}, {"speaker": "Ann", "dia_id": "D1:4", "text": "a4"},
            {"speaker": "Bob", "dia_id": "D1:5", "text": "b5"}, {"speaker": "Bob", "dia_id": "D1:6", "text": "b6"}],
        "session_11_date_time": "10:04 am on 19 July, 2023"},
    "qa": [
        {"question": "Q1?", "answer": "yes", "evidence": ["D1:1"], "category": 4},
        {"question": "Q2?", "answer": 2022, "evidence": ["D1:2"], "category": 2},
        {"question": "Q3?", "adversarial_answer": "no", "evidence": [], "category": 5}]}]
seeds("import_locomo", {
    "sample": json.dumps(locomo, indent=1),
    "second": '[{"sample_id":"y","conversation":{"speaker_a":"C","speaker_b":"D","session_1_date_time":"8 May 2023",'
              '"session_1":[{"speaker":"D","dia_id":"D1:1","text":"hey"}]},"qa":[]}]',
    "stranger": '[{"sample_id":"z","conversation":{"speaker_a":"C","speaker_b":"D","session_1":[{"speaker":"E","dia_id":"D1:1","text":"x"}]}}]',
    "session_numbers": '[{"conversation":{"speaker_a":"a","speaker_b":"b","session_99999999999999999999":[],"session_-1":[],"session_0":[],"session_1_date_time":"x"}}]',
    "qa_types": '[{"conversation":{"speaker_a":"a","speaker_b":"b"},"qa":[{"question":1,"answer":1.5e300,"evidence":"D1","category":"x"},{"category":-7}]}]',
    "deep": '[{"sample_id":"s","conversation":' + DEEP_OBJ + "}]",
    "invalid_utf8": b'[{"sample_id":"\xf0\x28\x8c\xbc","conversation":{"speaker_a":"a","speaker_b":"b"}}]',
    "nul": b'[{"sample_id":"a\x00","conversation":{}}]',
})

seeds("model_reply", {
    "bare": b"\x00" + json.dumps({"pages": [{"continues": True, "summary": "s", "keywords": ["a", "b"]}]}).encode(),
    "fenced": b"\x03Here you go:\n```json\n{\"segments\": [{\"summary\": \"x\", \"pages\": [1, \"2\"]}]}\n```\nDone.",
    "prose": b"\x05Sure! {\"facts\": [{\"text\": \"likes tea\", \"continues\": \"yes\"}]} Hope this helps.",
    "array": b"\x07[{\"summary\": \"a\"}, {\"summary\": null}]",
    "chat_reply": b"\x01" + json.dumps({"choices": [{"message": {"content": "<think>hm</think>Hello"}, "finish_reason": "stop"}],
                                        "usage": {"prompt_tokens": 3, "completion_tokens": 2}}).encode(),
    "tool_calls": b"\x02" + json.dumps({"choices": [{"message": {"tool_calls": [{"id": "1"}]}, "finish_reason": "tool_calls"}]}).encode(),
    "embed_reply": b"\x04" + json.dumps({"data": [{"index": 1, "embedding": [0.5, 1]}, {"index": 0, "embedding": [1, 0]}],
                                         "usage": {"prompt_tokens": 4}}).encode(),
    "error_body": b"\x06" + json.dumps({"error": {"code": "model_not_found", "type": "invalid_request_error",
                                                  "message": "temperature is not supported"}}).encode(),
    "sse": b"\x02data: {\"choices\":[{\"delta\":{\"content\":\"<th\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"ink>x</think> Hi\"}}]}\n\n"
           b"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n",
    "sse_error": b"\x09data: {\"error\":{\"message\":\"boom\"}}\r\n\r\n: comment\r\ndata: [DONE]",
    "responses_reply": b"\x03" + json.dumps({"status": "completed", "output": [
        {"type": "reasoning", "summary": []},
        {"type": "message", "content": [{"type": "output_text", "text": "Hi"}, {"type": "refusal", "refusal": "no"}]},
        {"type": "function_call", "name": "f", "arguments": "{}"}], "usage": {"input_tokens": 3, "output_tokens": 1}}).encode(),
    "responses_sse": b"\x04event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"output\":[]}}\n\n"
                     b"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"<think>a</think>Hi\"}\n\n"
                     b"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"output\":[{\"type\":\"message\","
                     b"\"content\":[{\"type\":\"output_text\",\"text\":\"Hi\"}]}],\"usage\":{\"input_tokens\":2,\"output_tokens\":1}}}\n\n",
    "think_split": b"\x0f<think>\n\nreasoning</think>\n\n  Answer <thi",
    "deep": b"\x00" + DEEP.encode(),
    "deep_fenced": b"\x00```\n" + ("{\"a\":" * 120 + "1" + "}" * 120).encode() + b"\n```",
    "huge_numbers": b"\x00{\"pages\":[{\"pages\":[1e400, 99999999999999999999, \"99999999999999999999\", -0]}]}",
    "invalid_utf8": b"\x00{\"summary\": \"\xff\xfe\"}",
    "nul": b"\x00{\"summary\": \"a\x00b\"}",
})

seeds("config", {
    "full": """# engram.toml
timeout_s = 60
[llm]
base_url = "http://127.0.0.1:8000/v1/"
model = "qwen3-8b"
api_key = "sk-secret-llm-key-123"
timeout_s = 120.5
connect_timeout_s = 5
max_retries = 4
temperature = 0.2
max_tokens = 1024
[embed]
base_url = 'https://api.example.com/v1'
model = "text-embedding-3-small"
api_key = "sk-secret-embed-key-456"   # comment
""",
    "escapes": '[llm]\nmodel = "a\\"b\\\\c\\u00e9\\n"\napi_key = \'literal \\ key\'\n',
    "errors": "[[llm]]\n", "dup": "[llm]\nmodel = \"a\"\nmodel = \"b\"\n", "unknown": "[llm]\nfoo = 1\n",
    "bad_url": '[llm]\nbase_url = "ftp://x"\nmodel = "m"\napi_key = "sk-secret-key-in-error"\n',
    "ranges": "[llm]\ntemperature = 3\nmax_tokens = 1e99\nmax_retries = -1\ntimeout_s = nan\n",
    "crlf": "[embed]\r\nmodel = \"m\"\r\nbase_url = \"http://h/\"\r\n",
    "invalid_utf8": b'[llm]\nmodel = "\xff\xfe"\n',
    "nul": b'[llm]\nmodel = "a\x00b"\n',
    "huge_number": "timeout_s = 99999999999999999999999999999999999999\nmax_retries = 4.0000000001\n",
    "unterminated": '[llm\nmodel = "abc\n',
})

seeds("fact_filter", {
    "eq": '{"category": "food"}', "in": '{"category": {"in": ["food", "travel"]}}',
    "range": '{"rating": {"gte": 4, "lt": 9}}', "time": '{"when": {"lt": "2025-05-01T00:00:00Z"}}',
    "contains": '{"tags": {"contains": "a"}}', "icontains": '{"city": {"icontains": "HAN"}}',
    "exists": '{"owner": "*"}', "logic": '{"AND": [{"city": "Hanoi"}, {"OR": [{"rating": 5}, {"NOT": {"ok": false}}]}]}',
    "builtin": '{"kind": "memory", "created_at": {"gte": "2025-03-01"}, "version": {"ne": 2}}',
    "metadata_path": '{"metadata.nested.k": 1, "x.y": "dot"}', "nin_null": '{"rating": {"nin": [null, 1, true]}}',
    "identity": '{"user_id": "bob"}', "bad_op": '{"rating": {"between": [1, 2]}}',
    "not_array": '{"NOT": [{"a": 1}, {"b": 2}]}', "empty": "", "empty_obj": "{}",
    "deep": '{"NOT":' * 40 + '{"a":1}' + "}" * 40, "deep_json": '{"a":' + DEEP + "}",
    "huge_numbers": '{"rating": {"gt": 1e308, "lt": -1e400}, "version": 99999999999999999999}',
    "weird_keys": '{"": 1, "a..b": 2, "a\\"b": 3, "\\u0000": 4, "metadata.": 5}',
    "invalid_utf8": b'{"city": "\xff"}', "nul": b'{"city": "a\x00"}',
    "many": "{" + ",".join('"k%d": %d' % (i, i) for i in range(250)) + "}",
})

mcp_lines = os.path.join(os.path.dirname(ROOT), "..", "tests", "data", "mcp")
mcp = {}
for name in sorted(os.listdir(mcp_lines)):
    if name.endswith(".in.jsonl"):
        with open(os.path.join(mcp_lines, name), "rb") as f:
            mcp[name[:-len(".in.jsonl")]] = f.read()
init = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}'
mcp.update({
    "deep": '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add_memory","arguments":{"user_input":"x","meta_data":' + DEEP + "}}}\n",
    "ids": '{"jsonrpc":"2.0","id":1e400,"method":"ping"}\n{"jsonrpc":"2.0","id":[1],"method":"ping"}\n{"jsonrpc":"2.0","id":null,"method":"ping"}\n{"jsonrpc":"2.0","id":"x","method":"ping","params":[]}\n',
    "batch": "[" + init + "," + init + "]\n[]\n",
    "invalid_utf8": b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_memory","arguments":{"user_input":"\xff"}}}\n',
    "nul": b'{"jsonrpc":"2.0","id":3,"method":"ping\x00"}\n\x00\n',
    "facts": init + "\n" + "\n".join([
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_fact","arguments":{"text":"likes tea","metadata":{"c":"food"}}}}',
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_memories","arguments":{"query":"tea","filters":{"c":"food"},"top_k":1e9}}}',
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_memories","arguments":{"filters":{"AND":[{"c":{"in":[1,"x"]}}]},"limit":-1}}}',
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"update_memory","arguments":{"memory_id":"m_0","text":""}}}',
        '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"retrieve_memory","arguments":{"query":"tea","budget":99999999999}}}',
    ]) + "\n",
})
seeds("mcp", mcp)

def req(line, body="", headers=()):
    return line + "\n" + "".join(h + "\n" for h in headers) + ("\n" if headers else "") + body
turn = json.dumps({"user": "alice", "turns": [{"user_text": "I moved to Lisbon", "assistant_text": "Nice!", "event_time": "2026-03-02T09:05:00Z",
                                               "metadata": {"s": 1}}]})
seeds("rest", {
    "turns": req("POST /v1/turns", turn, ["Idempotency-Key: k1"]),
    "turns_list": req("GET /v1/turns?user=alice&after=0&limit=10"),
    "retrieve": req("POST /v1/retrieve", '{"user":"alice","query":"Where does she live?","budget":500,"explain":true}'),
    "chat": req("POST /v1/chat", '{"user":"alice","message":"hi"}'),
    "import": req("POST /v1/import?user=alice&format=jsonl", '{"user":"a","assistant":"b"}\n'),
    "export": req("GET /v1/export?user=alice"),
    "maintain": req("POST /v1/maintain", '{"user":"alice"}'),
    "forget": req("POST /v1/forget", '{"user":"alice"}'),
    "memories_add": req("POST /v1/memories", '{"user":"alice","messages":[{"role":"user","content":"I like tea"}],"infer":false,"metadata":{"c":"food"}}'),
    "memories_search": req("POST /v1/memories/search", '{"user":"alice","query":"tea","filters":{"c":"food"},"top_k":5,"threshold":0.1}'),
    "memories_list": req("GET /v1/memories?user=alice&limit=5&filters=%7B%22c%22%3A%22food%22%7D"),
    "memory_get": req("GET /v1/memories/m_0123?user=alice"),
    "memory_patch": req("PATCH /v1/memories/m_0123", '{"user":"alice","text":"likes coffee"}'),
    "memory_history": req("GET /v1/memories/m_0123/history?user=alice"),
    "memory_purge": req("POST /v1/memories/m_0123/purge", '{"user":"alice"}'),
    "profile": req("GET /v1/profile?user=alice"), "stats": req("GET /v1/stats"), "health": req("GET /v1/health?user=alice"),
    "jobs": req("GET /v1/jobs"), "metrics": req("GET /metrics"), "version": req("GET /v1/version"),
    "mem0_add": req("POST /mem0/v3/memories/add/", '{"messages":[{"role":"user","content":"I like tea"}],"user_id":"alice","infer":false}'),
    "mem0_search": req("POST /mem0/v3/memories/search/", '{"query":"tea","filters":{"AND":[{"user_id":"alice"}]}}'),
    "mem0_batch": req("PUT /mem0/v1/batch/", '{"memories":[{"memory_id":"m_1","text":"x"}]}'),
    "mem0_entity": req("DELETE /mem0/v2/entities/user/alice/"),
    "proxy": req("POST /v1/chat/completions", '{"model":"m","messages":[{"role":"user","content":"hi"}],"user":"alice"}'),
    "mcp_http": req("POST /mcp?user=alice&assistant=a",
                    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_fact","arguments":{"text":"x"}}}'),
    "proxy_responses": req("POST /v1/responses", '{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}],'
                                                 '"instructions":"be brief","user":"alice","stream":true}'),
    "query_dup": req("GET /v1/turns?user=a&user=b&limit=1e400&after=-1"),
    "query_pct": req("GET /v1/memories?user=%FF%00&narrower=maybe&limit=%31"),
    "no_route": req("GET /v1/nothing"), "wrong_method": req("DELETE /v1/turns"),
    "deep": req("POST /v1/retrieve", '{"user":"alice","query":' + DEEP + "}"),
    "not_object": req("POST /v1/turns", "[1,2,3]"),
    "huge_numbers": req("POST /v1/retrieve", '{"user":"alice","query":"x","budget":1e400,"top_k":-99999999999999999999}'),
    "invalid_utf8": req("POST /v1/turns", b'{"user":"alice","turns":[{"user_text":"\xff\xfe"}]}'.decode("utf-8", "surrogateescape")),
    "nul": req("POST /v1/memories", '{"user":"al\\u0000ice","messages":[{"role":"user","content":"a\\u0000b"}]}'),
    "headers": req("GET /v1/stats", "", ["X-Request-Id: abc", "Authorization: Bearer x", "Authorization: Bearer y"]),
})
