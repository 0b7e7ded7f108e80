"""Checks on a `--record` file from a run against the local llama-server (`just e2e-local`).

`--record FILE` writes each request the harness sent as one JSON line (our `ModelRequest`:
provider-neutral messages and tool specs). Two things are checked here:

  rendered   every tool result in a request reaches the model: the request, converted to the
             Chat Completions body the harness sends, is rendered by the server's own
             `POST /apply-template` (the prompt the model reads), and each tool message's text
             must be in that prompt (as is, or JSON-escaped where the template quotes it);
  arguments  no tool-call argument the harness received is HTML-escaped (`&#34;`, `&quot;`,
             `&amp;`): the old llama-cpp-python route rendered with autoescape, the model copied
             the entities and they compounded.

Usage: local_checks.py check RECORD SERVER_URL    (exit 1 and one line per failure)
       local_checks.py probe SERVER_URL MODEL     (a fixed conversation whose answer can only
                                                   come from its tool result)
"""

import json
import sys
import urllib.request

HTML_ENTITIES = ("&#34;", "&quot;", "&amp;")


def requests(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def chat_body(request):
    """The Chat Completions body, as crates/openai/src/client.rs `to_chat_request` builds it."""

    def message(m):
        role = m["role"]
        if role == "assistant":
            out = {"role": role, "content": m.get("content") or ""}
            if m.get("tool_calls"):
                out["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["arguments"]},
                    }
                    for c in m["tool_calls"]
                ]
            return out
        if role == "tool":
            return {"role": role, "tool_call_id": m["tool_call_id"], "content": m["content"]}
        return {"role": role, "content": m["content"]}

    body = {"messages": [message(m) for m in request["messages"]]}
    if request.get("tools"):
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t["description"],
                    "parameters": t["parameters"],
                },
            }
            for t in request["tools"]
        ]
        body["tool_choice"] = "auto"
    return body


def server_renderer(server):
    """Renders a body with the server's own template (llama-server's /apply-template)."""

    def render(body):
        req = urllib.request.Request(
            server.rstrip("/") + "/apply-template",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.loads(resp.read(8 << 20))["prompt"]

    return render


def forms(text):
    """The ways a template may put `text` in the prompt: as is, or inside a JSON string."""
    return (text, json.dumps(text, ensure_ascii=False)[1:-1], json.dumps(text)[1:-1])


def preview(text, n=60):
    flat = " ".join(text.split())
    return json.dumps(flat[:n] + ("…" if len(flat) > n else ""), ensure_ascii=False)


def check(path, render):
    """Failures (strings), and how many tool results and tool calls were checked."""
    failures = []
    results = 0
    calls = {}
    for n, request in enumerate(requests(path), 1):
        tool_messages = [m for m in request["messages"] if m["role"] == "tool"]
        if tool_messages:
            prompt = render(chat_body(request))
            for m in tool_messages:
                results += 1
                if not any(form in prompt for form in forms(m["content"])):
                    failures.append(
                        f"request {n}: the tool result {preview(m['content'])} "
                        f"({m['tool_call_id']}) is not in the prompt the model reads"
                    )
        # A call is repeated in every later request: check each one once, by id.
        for m in request["messages"]:
            for call in m.get("tool_calls", []):
                calls.setdefault(call["id"], call["arguments"])
    for call_id, arguments in calls.items():
        found = [e for e in HTML_ENTITIES if e in arguments]
        if found:
            failures.append(
                f"tool call {call_id}: HTML-escaped arguments ({', '.join(found)}): "
                f"{preview(arguments, 120)}"
            )
    return failures, results, len(calls)


# A fixed conversation: the name in the tool result appears nowhere else, so an answer that
# contains it shows the model read the result.
PROBE = {
    "messages": [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "What is the database called? Read notes.txt."},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "call_1", "name": "read_file", "arguments": '{"path":"notes.txt"}'}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "The database is named quokka."},
    ],
    "tools": [
        {
            "name": "read_file",
            "description": "Read a file in the workspace.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        }
    ],
}


def probe(server, model):
    """Failures of the fixed conversation: rendered with its result, answered from it."""
    body = chat_body(PROBE)
    failures = []
    if "The database is named quokka." not in server_renderer(server)(body):
        failures.append("the probe's tool result is not in the prompt the server renders")
    body.update(model=model, temperature=0, max_tokens=64)
    req = urllib.request.Request(
        server.rstrip("/") + "/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer local"},
    )
    with urllib.request.urlopen(req, timeout=120) as resp:
        answer = json.loads(resp.read(8 << 20))["choices"][0]["message"].get("content") or ""
    if "quokka" not in answer:
        failures.append(f"the answer does not use the tool result: {preview(answer, 120)}")
    return failures, answer


def main(argv):
    if len(argv) == 4 and argv[1] == "check":
        failures, results, calls = check(argv[2], server_renderer(argv[3]))
        for failure in failures:
            print(f"  {failure}", file=sys.stderr)
        print(f"{results} tool results checked in the rendered prompts, {calls} tool calls checked")
        return 1 if failures else 0
    if len(argv) == 4 and argv[1] == "probe":
        failures, answer = probe(argv[2], argv[3])
        for failure in failures:
            print(f"  {failure}", file=sys.stderr)
        print(f"answered {preview(answer, 80)}")
        return 1 if failures else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
