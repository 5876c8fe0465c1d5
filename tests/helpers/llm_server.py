#!/usr/bin/env python3
"""llm_server.py: a loopback test server that speaks the LLM APIs geak uses.

OpenAI chat completions (POST /v1/chat/completions or /chat/completions,
also Azure's /openai/deployments/NAME/chat/completions?api-version=V) and
Anthropic Messages (POST /v1/messages), streamed (SSE) or not, over real HTTP/1.1.

It listens on 127.0.0.1, port 0 unless --port is given, and prints the port
on its first line of stdout (and into --port-file).

Replies: the first line of --script (JSON Lines) whose "match" text occurs
in the request's messages (a line without "match" matches all) gives
"text" and/or "fault"; else --reply; else a small fenced Python answer.
In a text, {count} becomes the request's number, {sample_hint} the
first 12 hex digits of the request's SHA-256 and {model} the model asked.

Faults are chosen by a marker in the prompt, [[llm-test:NAME]], or by a
script line's "fault".  A fault ending in "-once" happens on the first
request with that body only, so a retry then succeeds:
  429, 429-once          429 with Retry-After: 1
  429-ms-once            429 with retry-after-ms: 300
  429-date-once          429 with Retry-After as an HTTP date 1 s ahead
  408-once, 409-once, 500, 500-once, 503-once, 529-once (Anthropic's overload)
  400, 401, 403, 404, 422  refused, with a JSON error body
  stall, stall-once      send the headers and a little, then go silent
  comments               keep the stream open with SSE comments (": keep-alive")
                         every 0.2 s for --stall-seconds, with no answer
  cut, cut-once          end the stream cleanly without [DONE]/message_stop
  drop, drop-once        close the connection mid-stream
  malformed              200 with a body (or event) that is not JSON
  empty                  an empty answer
  huge                   a 2 MiB answer (huge:N for N bytes)
  error-event-once       an overloaded error event before any text
  error-event-late       an error event after some text

Every request must carry the key given by --key (Bearer, api-key or
x-api-key by API family), else 401; --models limits the accepted models
(else 404) and is what GET /v1/models lists (test-model without it;
--no-list answers that with 404).  --latency S delays each reply, and an
entry's "delay" (seconds) the replies it gives.  --log FILE appends one JSON
line per request (path, model, body, whether auth matched, how many requests
were being answered at once; never the key).

--echo-key plays a proxy that sends the credential back: every error
message, the request id (x-request-id) and the model list carry the
credential header the request came with, and {auth} in a text becomes it.
"""
import argparse
import email.utils
import hashlib
import json
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MARKER = re.compile(r"\[\[llm-test:([A-Za-z0-9:_-]+)\]\]")


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.count = 0
        self.inflight = 0
        self.seen = {}
        self.script = []
        if args.script:
            with open(args.script, encoding="utf-8") as f:
                for line in f:
                    if line.strip():
                        self.script.append(json.loads(line))

    def next_count(self):
        with self.lock:
            self.count += 1
            return self.count

    def enter(self, delta):
        """Count requests being answered; returns the count after."""
        with self.lock:
            self.inflight += delta
            return self.inflight

    def first_time(self, fault, digest):
        """1 the first time this fault meets this request body."""
        with self.lock:
            key = (fault, digest)
            n = self.seen.get(key, 0)
            self.seen[key] = n + 1
            return n == 0

    def log(self, entry):
        if not self.args.log:
            return
        with self.lock, open(self.args.log, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def prompt_text(body):
    parts = []
    for m in body.get("messages") or []:
        c = m.get("content")
        if isinstance(c, str):
            parts.append(c)
        elif isinstance(c, list):
            parts.extend(b.get("text", "") for b in c if isinstance(b, dict))
    if isinstance(body.get("system"), str):
        parts.append(body["system"])
    return "\n".join(parts)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "llm-test/1"

    def log_message(self, fmt, *args):  # keep stderr quiet
        if self.server.state.args.verbose:
            sys.stderr.write("llm_server: " + (fmt % args) + "\n")

    # --- plumbing -------------------------------------------------------
    def credential(self):
        """What the request carried as its key (--echo-key), else ""."""
        if not self.server.state.args.echo_key:
            return ""
        for h in ("x-api-key", "api-key", "Authorization"):
            if self.headers.get(h):
                return self.headers.get(h)
        return ""

    def send_json(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-request-id", "req_test_%d%s" % (self.count, self.credential()))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def send_raw(self, status, data, ctype="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, etype, message, headers=None):
        if self.credential():
            message += " (you sent: %s)" % self.credential()
        self.send_json(status, {"error": {"type": etype, "message": message}}, headers)

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("x-request-id", "req_test_%d" % self.count)
        self.end_headers()

    def chunk(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_chunks(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # --- requests -------------------------------------------------------
    def do_GET(self):
        """The model list, as OpenAI's GET /v1/models and Anthropic's
        GET /v1/models give it: --models, else test-model; --no-list: 404.
        Not logged: the log is of chat requests."""
        st = self.server.state
        self.count = 0
        path = self.path.split("?")[0]
        family = "anthropic" if self.headers.get("anthropic-version") else "openai"
        if path not in ("/v1/models", "/models") or st.args.no_list:
            self.error(404, "not_found_error", "no such path: %s" % path)
            return
        if not self.check_auth(family):
            self.error(401, "authentication_error", "invalid API key")
            return
        names = st.args.models.split(",") if st.args.models else ["test-model"]
        if self.credential():
            names.append(self.credential())
        self.send_json(200, {"object": "list", "data": [
            {"id": n, "object": "model", "type": "model"} for n in names]})

    def do_POST(self):
        self.server.state.enter(1)
        try:
            self.answer()
        finally:
            self.server.state.enter(-1)

    def answer(self):
        st = self.server.state
        self.count = st.next_count()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        digest = hashlib.sha256(raw).hexdigest()
        path = self.path.split("?")[0]
        if path == "/v1/messages":
            family = "anthropic"
        elif re.fullmatch(r"/openai/deployments/[^/]+/chat/completions", path):
            family = "azure"
        elif path in ("/v1/chat/completions", "/chat/completions"):
            family = "openai"
        else:
            self.error(404, "not_found_error", "no such path: %s" % path)
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self.error(400, "invalid_request_error", "body is not JSON")
            return
        auth_ok = self.check_auth(family)
        model = body.get("model")
        if family == "azure":
            model = path.split("/openai/deployments/")[1].split("/")[0]
        st.log({"n": self.count, "path": self.path, "family": family, "model": model,
                "auth_ok": auth_ok, "body": body, "inflight": st.enter(0),
                "anthropic_version": self.headers.get("anthropic-version")})
        if not auth_ok:
            self.error(401, "authentication_error", "invalid API key")
            return
        if st.args.models and model not in st.args.models.split(","):
            self.error(404, "not_found_error", "model '%s' does not exist" % model)
            return
        if family == "anthropic" and "max_tokens" not in body:
            self.error(400, "invalid_request_error", "max_tokens: field required")
            return
        text, fault, delay = self.choose(body, digest)
        if st.args.latency or delay:
            time.sleep(st.args.latency + delay)
        if fault and self.refuse(fault, digest):
            return
        if body.get("stream"):
            self.stream(family, body, text, fault, digest)
        else:
            self.whole(family, body, text, fault)

    def check_auth(self, family):
        want = self.server.state.args.key
        if want is None:
            return True
        if family == "anthropic":
            got = self.headers.get("x-api-key")
        elif family == "azure":
            got = self.headers.get("api-key")
        else:
            got = self.headers.get("Authorization", "")
            got = got[7:] if got.startswith("Bearer ") else None
        return got == want

    def choose(self, body, digest):
        st = self.server.state
        prompt = prompt_text(body)
        text, fault, delay = None, None, 0.0
        for entry in st.script:
            if "match" not in entry or entry["match"] in prompt:
                text, fault = entry.get("text"), entry.get("fault")
                delay = float(entry.get("delay", 0))
                break
        m = MARKER.search(prompt)
        if m:
            fault = m.group(1)
        if text is None:
            text = st.args.reply
        if text is None:
            text = ("Here is the kernel.\n```python\nimport triton\n"
                    "# answer {sample_hint}\ndef kernel():\n    return {count}\n```\n")
        text = text.replace("{count}", str(self.count)).replace("{sample_hint}", digest[:12])
        text = text.replace("{model}", str(body.get("model")))
        text = text.replace("{auth}", self.credential())
        if fault == "empty":
            text = ""
        elif fault and fault.startswith("huge"):
            n = int(fault.split(":")[1]) if ":" in fault else 2 << 20
            line = "x = 1  # padding padding padding padding padding padding\n"
            text = "```python\n" + (line * (n // len(line) + 1))[:n] + "```\n"
        return text, fault, delay

    def refuse(self, fault, digest):
        """Answer with an HTTP error when the fault says so; 1 if it did."""
        once = fault.endswith("-once")
        base = fault[:-5] if once else fault
        codes = {"408": "timeout_error", "409": "conflict_error",
                 "400": "invalid_request_error", "401": "authentication_error",
                 "403": "permission_error", "404": "not_found_error",
                 "422": "invalid_request_error", "500": "api_error", "503": "api_error",
                 "529": "overloaded_error", "429": "rate_limit_error"}
        if base not in codes and base not in ("429-ms", "429-date"):
            return 0
        if once and not self.server.state.first_time(fault, digest):
            return 0
        if base in codes:
            headers = {"Retry-After": "1"} if base == "429" else {}
            self.error(int(base), codes[base], "test fault %s" % base, headers)
            return 1
        if base == "429-ms":
            self.error(429, "rate_limit_error", "slow down", {"retry-after-ms": "300"})
            return 1
        if base == "429-date":
            when = email.utils.formatdate(time.time() + 1, usegmt=True)
            self.error(429, "rate_limit_error", "slow down", {"Retry-After": when})
            return 1
        return 0

    def usage(self, body, text):
        return max(1, len(prompt_text(body)) // 4), len(text) // 4

    def whole(self, family, body, text, fault):
        if fault == "malformed":
            self.send_raw(200, b'{"choices": [ {"message": ')
            return
        if fault == "stall":
            time.sleep(self.server.state.args.stall_seconds)
        tin, tout = self.usage(body, text)
        if family == "anthropic":
            self.send_json(200, {
                "id": "msg_test_%d" % self.count, "type": "message", "role": "assistant",
                "model": body.get("model"), "stop_reason": "end_turn",
                "content": [{"type": "text", "text": text}],
                "usage": {"input_tokens": tin, "output_tokens": tout}})
        else:
            self.send_json(200, {
                "id": "chatcmpl-test-%d" % self.count, "object": "chat.completion",
                "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": tin, "completion_tokens": tout,
                          "total_tokens": tin + tout}})

    def stream(self, family, body, text, fault, digest):
        once = fault and fault.endswith("-once")
        base = fault[:-5] if once else fault
        if once and base in ("stall", "cut", "drop", "error-event") and \
                not self.server.state.first_time(fault, digest):
            base = None
        step = max(40, len(text) // 64)  # a huge answer in a few large pieces
        pieces = [text[i:i + step] for i in range(0, len(text), step)] or [""]
        tin, tout = self.usage(body, text)
        self.start_stream()
        send = self.anthropic_events if family == "anthropic" else self.openai_events
        send(body, pieces, tin, tout, base)

    def event(self, name, obj):
        data = obj if isinstance(obj, str) else json.dumps(obj)
        self.chunk(("event: %s\n" % name if name else "") + "data: %s\n\n" % data)

    def fault_midway(self, base, i, n):
        """Apply a mid-stream fault at piece i of n; 1 when the stream ends."""
        if i != n // 2:
            return 0
        if base == "stall":
            time.sleep(self.server.state.args.stall_seconds)
            return 1
        if base == "cut":
            self.end_chunks()
            return 1
        if base == "drop":
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return 1
        return 0

    def keep_alive(self):
        """Comments only, which keep a reader from seeing a stall."""
        end = time.time() + self.server.state.args.stall_seconds
        try:
            while time.time() < end:
                self.chunk(": keep-alive\n\n")
                time.sleep(0.2)
            self.end_chunks()
        except OSError:
            pass

    def openai_events(self, body, pieces, tin, tout, base):
        cid = "chatcmpl-test-%d" % self.count
        if base == "comments":
            self.keep_alive()
            return
        if base == "error-event":
            self.event(None, {"error": {"type": "overloaded_error", "message": "Overloaded"}})
            self.end_chunks()
            return
        if base == "malformed":
            self.chunk("data: {not json\n\n")
            self.end_chunks()
            return
        self.chunk(": keep-alive\n\n")
        for i, p in enumerate(pieces):
            if self.fault_midway(base, i, len(pieces)):
                return
            if base == "error-event-late" and i == 1:
                self.event(None, {"error": {"type": "server_error", "message": "boom"}})
                self.end_chunks()
                return
            self.event(None, {"id": cid, "object": "chat.completion.chunk",
                              "choices": [{"index": 0, "delta": {"content": p},
                                           "finish_reason": None}]})
        self.event(None, {"id": cid, "choices": [{"index": 0, "delta": {},
                                                  "finish_reason": "stop"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            self.event(None, {"id": cid, "choices": [],
                              "usage": {"prompt_tokens": tin, "completion_tokens": tout,
                                        "total_tokens": tin + tout}})
        self.chunk("data: [DONE]\n\n")
        self.end_chunks()

    def anthropic_events(self, body, pieces, tin, tout, base):
        mid = "msg_test_%d" % self.count
        self.event("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "content": [],
            "model": body.get("model"), "usage": {"input_tokens": tin, "output_tokens": 1}}})
        if base == "error-event":
            self.event("error", {"type": "error", "error": {
                "type": "overloaded_error", "message": "Overloaded"}})
            self.end_chunks()
            return
        if base == "malformed":
            self.chunk("event: content_block_delta\ndata: {oops\n\n")
            self.end_chunks()
            return
        if base == "comments":
            self.keep_alive()
            return
        self.event("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "text", "text": ""}})
        self.event("ping", {"type": "ping"})
        for i, p in enumerate(pieces):
            if self.fault_midway(base, i, len(pieces)):
                return
            if base == "error-event-late" and i == 1:
                self.event("error", {"type": "error", "error": {
                    "type": "api_error", "message": "boom"}})
                self.end_chunks()
                return
            self.event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "text_delta", "text": p}})
        self.event("content_block_stop", {"type": "content_block_stop", "index": 0})
        self.event("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": "end_turn"},
                                     "usage": {"output_tokens": tout}})
        self.event("message_stop", {"type": "message_stop"})
        self.end_chunks()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--key", help="the API key requests must carry")
    ap.add_argument("--models", help="comma-separated models that exist")
    ap.add_argument("--script", help="JSON Lines of {match?, text?, fault?}")
    ap.add_argument("--reply", help="the answer text when no script line matches")
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--no-list", action="store_true", help="no GET /v1/models")
    ap.add_argument("--stall-seconds", type=float, default=30.0)
    ap.add_argument("--echo-key", action="store_true",
                    help="send the request's credential back in what it answers")
    ap.add_argument("--log")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.state = State(args)
    port = srv.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        import os
        os.rename(args.port_file + ".tmp", args.port_file)
    print(port, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
