#!/usr/bin/env python3
"""Drives headless Chromium over the DevTools protocol for the report test.

Python's standard library only: Chromium is started with
--remote-debugging-pipe, which speaks the protocol as NUL-separated JSON on
file descriptors 3 (commands in) and 4 (events and replies out), so no
WebSocket client is needed.

Input (stdin, JSON): {"chromium": path, "url": file URL, "screenshot": path,
"width": px, "height": px, "dark": bool, "media": "print" or "", "steps": [{"eval": js} | {"click": css selector}]}.
An "eval" step's expression may return a promise; its value is the step's
result. A "click" step scrolls the first element matching the selector into
view and presses and releases the left mouse button at its centre, as a user
would; its result is the element's rectangle.

Output (stdout, JSON): {"load_ms", "errors" (console errors and uncaught
exceptions), "requests" (every URL the page asked for, the page included),
"results" (one per step)}. Exits non-zero, with the reason on stderr, when
Chromium cannot start or a step throws.
"""

import base64
import json
import os
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, chromium, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def wire_fds():
            # Chromium expects its command pipe on 3 and its reply pipe on 4;
            # copies first, so that neither end is overwritten by the other.
            command_in, reply_out = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(command_in, 3)
            os.dup2(reply_out, 4)

        self.process = subprocess.Popen(
            [
                chromium,
                "--headless",
                "--remote-debugging-pipe",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-extensions",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire_fds,
            # The descriptors are closed after preexec_fn unless kept.
            pass_fds=(3, 4),
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no message from Chromium in time")
            chunk = os.read(self.from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None, timeout=30.0):
        self.next_id += 1
        command = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            command["sessionId"] = session
        os.write(self.to_chrome, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            message = self.read_message(deadline)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method, timeout=30.0):
        deadline = time.monotonic() + timeout
        for index, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(index)
        while True:
            message = self.read_message(deadline)
            if message.get("method") == method:
                return message
            self.events.append(message)

    def close(self):
        try:
            self.send("Browser.close", timeout=5.0)
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def evaluate(browser, session, expression):
    result = browser.send(
        "Runtime.evaluate",
        {"expression": expression, "awaitPromise": True, "returnByValue": True},
        session,
    )
    if "exceptionDetails" in result:
        details = result["exceptionDetails"]
        text = details.get("exception", {}).get("description") or details.get("text")
        raise RuntimeError(f"step threw: {text}")
    return result["result"].get("value")


def click(browser, session, selector):
    rect = evaluate(
        browser,
        session,
        f"""(() => {{
            const el = document.querySelector({json.dumps(selector)});
            if (!el) throw new Error('nothing matches ' + {json.dumps(selector)});
            el.scrollIntoView({{block: 'center'}});
            const r = el.getBoundingClientRect();
            return {{x: r.x, y: r.y, width: r.width, height: r.height}};
        }})()""",
    )
    x = rect["x"] + rect["width"] / 2
    y = rect["y"] + rect["height"] / 2
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        browser.send(
            "Input.dispatchMouseEvent",
            {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
            session,
        )
    return rect


def errors_in(events):
    errors = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            errors.append(" ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            errors.append(details.get("exception", {}).get("description") or details.get("text"))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            errors.append(params["entry"].get("text"))
    return errors


def main():
    job = json.load(sys.stdin)
    with tempfile.TemporaryDirectory() as profile:
        browser = Browser(job["chromium"], profile)
        try:
            target = browser.send("Target.createTarget", {"url": "about:blank"}, timeout=60.0)
            session = browser.send(
                "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
            )["sessionId"]
            for domain in ("Page", "Runtime", "Network", "Log"):
                browser.send(f"{domain}.enable", session=session)
            browser.send(
                "Emulation.setDeviceMetricsOverride",
                {
                    "width": job.get("width", 1280),
                    "height": job.get("height", 900),
                    "deviceScaleFactor": 1,
                    "mobile": False,
                },
                session,
            )
            if job.get("media") or job.get("dark"):
                browser.send(
                    "Emulation.setEmulatedMedia",
                    {
                        "media": job.get("media", ""),
                        "features": [
                            {"name": "prefers-color-scheme", "value": "dark" if job.get("dark") else "light"}
                        ],
                    },
                    session,
                )
            start = time.monotonic()
            browser.send("Page.navigate", {"url": job["url"]}, session)
            browser.wait_for("Page.loadEventFired", timeout=60.0)
            load_ms = (time.monotonic() - start) * 1000.0
            results = []
            for step in job.get("steps", []):
                if "eval" in step:
                    results.append(evaluate(browser, session, step["eval"]))
                else:
                    results.append(click(browser, session, step["click"]))
            if job.get("screenshot"):
                shot = browser.send(
                    "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False},
                    session,
                )
                with open(job["screenshot"], "wb") as out:
                    out.write(base64.b64decode(shot["data"]))
            # Let late console messages and requests arrive.
            evaluate(browser, session, "new Promise(r => setTimeout(r, 200))")
            requests = [
                e["params"]["request"]["url"]
                for e in browser.events
                if e.get("method") == "Network.requestWillBeSent"
            ]
            json.dump(
                {
                    "load_ms": load_ms,
                    "errors": errors_in(browser.events),
                    "requests": requests,
                    "results": results,
                },
                sys.stdout,
            )
        finally:
            browser.close()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # one line, for the Rust test's message
        print(f"drive.py: {e}", file=sys.stderr)
        sys.exit(1)
