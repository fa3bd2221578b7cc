"""Headless chromium driven through the DevTools protocol over a pipe (`--remote-debugging-pipe`: JSON
messages ending in NUL on file descriptors 3 and 4), with nothing to install beyond the browser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_browser() -> Optional[str]:
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless browser process; `load(url)` opens a page and reports what happened."""

    def __init__(self, binary: str, timeout_s: float = 60.0) -> None:
        self.timeout_s = timeout_s
        self.profile = tempfile.mkdtemp(prefix="ccscope-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking", "--remote-debugging-pipe",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            close_fds=False, preexec_fn=_move_fds(to_browser_r, from_browser_w),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict] = []

    # --- protocol ---------------------------------------------------------------------------------

    def send(self, method: str, params: Optional[dict] = None, session: Optional[str] = None) -> dict:
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        want = self._next_id
        while True:
            m = self._read()
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def _read(self) -> dict:
        deadline = time.monotonic() + self.timeout_s
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("no reply from the browser")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise RuntimeError(f"the browser closed its pipe: {err[-2000:]}")
            self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        return json.loads(raw)

    def wait_event(self, method: str, session: str) -> dict:
        for i, m in enumerate(self.events):
            if m.get("method") == method and m.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            m = self._read()
            if m.get("method") == method and m.get("sessionId") == session:
                return m
            self.events.append(m)

    # --- a page -----------------------------------------------------------------------------------

    def load(self, url: str, expression: str) -> tuple[Any, list[str], list[str]]:
        """Open `url`, wait for its load event, evaluate `expression` (returning JSON-able data);
        returns (value, console and runtime errors, URLs the page requested other than `url`)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session)
        self.events.clear()
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session)
        value = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                          session=session)["result"].get("value")
        errors, requests = [], []
        for m in self.events:
            if m.get("sessionId") != session:
                continue
            p = m.get("params", {})
            method = m.get("method")
            if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                det = p.get("exceptionDetails", {})
                errors.append(f"exception: {det.get('text')} {det.get('exception', {}).get('description', '')}".strip())
            elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                errors.append("log: " + str(p["entry"].get("text")))
            elif method == "Network.requestWillBeSent" and p.get("request", {}).get("url") != url:
                requests.append(p["request"]["url"])
            elif method == "Network.loadingFailed":
                errors.append(f"network: {p.get('errorText')}")
        return value, errors, requests

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _move_fds(read_fd: int, write_fd: int):  # type: ignore[no-untyped-def]
    """In the child: the command pipe on fd 3, the reply pipe on fd 4 (what --remote-debugging-pipe uses)."""

    def move() -> None:
        r, w = os.dup(read_fd), os.dup(write_fd)  # out of the way of 3 and 4 first
        os.dup2(r, 3)
        os.dup2(w, 4)
        os.close(r)
        os.close(w)

    return move


def page_url(path: Path) -> str:
    return path.resolve().as_uri()
