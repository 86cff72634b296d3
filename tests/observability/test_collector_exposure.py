"""The collector's exposure (issue 15): no authentication even on 0.0.0.0, no header/body/idle timeouts
(1,200 idle connections were all held). Real sockets against the real uvicorn server on 127.0.0.1."""

from __future__ import annotations

import socket
import time

import orjson
import pytest
import requests
from typer.testing import CliRunner

from memory_engine.errors import ConfigError
from memory_engine.observability.collector import CollectorServer, is_loopback
from memory_engine.service import ApiKeys

pytestmark = pytest.mark.integration
JS = {"Content-Type": "application/json"}
BODY = orjson.dumps({"resourceSpans": []})


def test_binding_beyond_loopback_needs_keys(wh, tmp_path):
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    with pytest.raises(ConfigError, match="without API keys"):
        CollectorServer(wh, host="0.0.0.0", port=0)
    CollectorServer(wh, host="0.0.0.0", port=0, api_keys=ApiKeys({"k" * 24: "ingest"}))  # allowed with keys
    from memory_engine.cli import load_commands

    r = CliRunner().invoke(load_commands(), ["collect", "--host", "0.0.0.0", "--port", "0", "-w", str(tmp_path)])
    assert r.exit_code == 2 and "refusing to listen" in r.output


def test_api_keys_are_required_when_given(wh):
    srv = CollectorServer(wh, port=0, api_keys=ApiKeys({"s3cret-key-123": "ingest"})).start()
    try:
        url = srv.url + "/v1/traces"
        assert requests.post(url, data=BODY, headers=JS, timeout=10).status_code == 401
        bad = {**JS, "Authorization": "Bearer nope"}
        assert requests.post(url, data=BODY, headers=bad, timeout=10).status_code == 401
        ok = {**JS, "Authorization": "Bearer s3cret-key-123"}
        assert requests.post(url, data=BODY, headers=ok, timeout=10).status_code == 200
        assert requests.post(url, data=BODY, headers={**JS, "X-API-Key": "s3cret-key-123"}, timeout=10).status_code == 200
        assert requests.post(srv.url + "/v1/logs", data=BODY, headers=JS, timeout=10).status_code == 401
        assert requests.get(srv.url + "/health", timeout=10).status_code == 200
        assert srv.counters.snapshot()["unauthorized"] == 3
    finally:
        srv.stop()


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """True when the server closes ``sock`` (recv returns b'' or resets) within ``seconds``."""
    sock.settimeout(seconds)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except TimeoutError:
        return False
    except ConnectionError:
        return True


def test_idle_and_slow_header_connections_are_cut(wh):
    srv = CollectorServer(wh, port=0, header_timeout_s=0.5, idle_timeout_s=1).start()
    try:
        idle = [socket.create_connection((srv.host, srv.port)) for _ in range(60)]
        slow = socket.create_connection((srv.host, srv.port))
        slow.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n")
        t0 = time.monotonic()
        cut = False
        for _ in range(20):  # trickle a header byte every 0.15 s: each byte used to reset uvicorn's timer
            try:
                slow.sendall(b"X")
            except (BrokenPipeError, ConnectionResetError):
                cut = True
                break
            time.sleep(0.15)
        assert (cut or _closed_within(slow, 2.0)) and time.monotonic() - t0 < 2.5
        assert all(_closed_within(s, 2.0) for s in idle)  # 60 idle connections: none held
        for s in idle + [slow]:
            s.close()
        # a normal request still works, and keep-alive connections close when idle
        assert requests.post(srv.url + "/v1/traces", data=BODY, headers=JS, timeout=10).status_code == 200
    finally:
        srv.stop()


def test_a_body_that_never_arrives_gets_408(wh):
    srv = CollectorServer(wh, port=0, body_timeout_s=0.5, header_timeout_s=5).start()
    try:
        s = socket.create_connection((srv.host, srv.port))
        s.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        s.settimeout(5)
        head = s.recv(4096)
        assert head.startswith(b"HTTP/1.1 408"), head[:80]
        s.close()
    finally:
        srv.stop()
