"""The web chat (issue 53, point 5): the page and its loader as served (headers, the policy that
keeps them to themselves), the API's CORS for the shop's origins, a customer token speaking only
in its own conversations; and the page in a real browser (headless Chromium, as the eval
report's test runs it): type, read the answer, confirm a change with the button, reload and find
the conversation, ask for a person and see the hand-over."""

from __future__ import annotations

import html
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.responses import HTMLResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from agent_cli.errors import ConfigError
from agent_cli.runtime.converse import setup_for
from agent_cli.serve.app import make_app
from tests.contract.test_serve import _free_port, auth, start, token
from tests.contract.test_serve import say as say_over_http
from tests.helpers import CHROMIUM, chromium_dom

TODAY = "2026-10-13"
SHOP = "https://shop.example.com"


def _config(tmp_path: Path, origins: str = f'["{SHOP}"]') -> Path:
    path = tmp_path / "web.toml"
    path.write_text(f"[serve.web]\nallowed_origins = {origins}\n")
    return path


@pytest.fixture
def web(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(make_app(setup_for({"today": TODAY, "config": _config(tmp_path)}))) as made:
        yield made


def test_the_page_and_its_loader_are_served_to_keep_to_themselves(web: TestClient) -> None:
    page = web.get("/chat")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert f"frame-ancestors 'self' {SHOP}" in policy  # framed by the shop's site, no other
    assert "connect-src 'self'" in policy and "default-src 'none'" in policy
    script = re.search(r"<script>(.*?)</script>", page.text, re.S)
    assert script is not None and "'sha256-" in policy  # only its own script runs
    assert "innerHTML" not in script[1]  # words are put on the page as text, never as HTML
    loader = web.get("/chat.js")
    assert loader.headers["content-type"].startswith("text/javascript")
    assert '"/chat#"' in loader.text and "data.token" in loader.text
    assert page.headers["x-content-type-options"] == "nosniff"


def test_the_shops_origin_may_call_the_api_and_no_other(web: TestClient) -> None:
    asked = {"Origin": SHOP, "Access-Control-Request-Method": "POST"}
    asked["Access-Control-Request-Headers"] = "authorization,content-type"
    allowed = web.options("/v1/conversations", headers=asked)
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == SHOP
    other = web.options(
        "/v1/conversations", headers={**asked, "Origin": "https://evil.example.net"}
    )
    assert "access-control-allow-origin" not in other.headers
    made = web.post("/v1/conversations", headers={**auth(token()), "Origin": SHOP})
    assert made.status_code == 201 and made.headers["access-control-allow-origin"] == SHOP


def test_without_origins_no_cross_origin_call_is_allowed(tmp_path: Path) -> None:
    with TestClient(make_app(setup_for({"today": TODAY}))) as client:
        asked = {"Origin": SHOP, "Access-Control-Request-Method": "POST"}
        refused = client.options("/v1/conversations", headers=asked)
        assert "access-control-allow-origin" not in refused.headers
        page = client.get("/chat")
        assert page.headers["content-security-policy"].endswith("frame-ancestors 'self'")


def test_an_origin_with_a_path_is_refused_in_the_settings(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not an origin"):
        setup_for({"config": _config(tmp_path, f'["{SHOP}/shop"]')})


def test_a_customer_token_speaks_only_in_the_conversations_it_opened(web: TestClient) -> None:
    """The web chat's token is in the shop's page for anyone to read: with it, one opens
    conversations and speaks in them, never in another's."""
    widget, other = token("customer", name="web-chat"), token("customer", name="partner-bot")
    mine = start(web, widget)
    theirs = start(web, other)
    assert say_over_http(web, widget, mine, "m1", "hello").status_code == 200
    for refused in (
        say_over_http(web, widget, theirs, "m1", "hello"),
        web.get(f"/v1/conversations/{theirs}", headers=auth(widget)),
        web.post(f"/v1/conversations/{theirs}/close", headers=auth(widget)),
    ):
        assert refused.status_code == 404
    staff = token("staff")
    assert web.get(f"/v1/conversations/{theirs}", headers=auth(staff)).status_code == 200


# --- in a real browser ------------------------------------------------------------------------

HARNESS = """<!DOCTYPE html><html><body>
<iframe id="chat" src="/chat#token=TOKEN&lang=en" style="width:400px;height:640px"></iframe>
<script>
const sleep = ms => new Promise(done => setTimeout(done, ms));
const frame = document.getElementById("chat");
const doc = () => frame.contentDocument;
async function until(check, what) {
  for (let i = 0; i < 2400; i++) {
    try { const found = check(); if (found) return found; } catch (e) {}
    await sleep(50);
  }
  throw new Error("timed out waiting for " + what);
}
const bubbles = () => [...doc().querySelectorAll(".bubble")]
  .map(b => b.classList[1] + ": " + b.lastChild.textContent);
async function type(text) {
  const input = await until(() => !doc().getElementById("say").disabled
                                  && doc().getElementById("say"), "the input");
  input.value = text;
  doc().getElementById("form").requestSubmit();
}
async function run() {
  const out = {};
  await until(() => doc().readyState === "complete" && doc().getElementById("say"), "the page");
  await type("I want to cancel order B200, my email is kaito.yamamoto@example.com");
  const yes = await until(() => doc().querySelector(".choices button"), "the yes button");
  out.proposed = bubbles();
  out.buttons = [...doc().querySelectorAll(".choices button")].map(b => b.textContent);
  yes.click();
  await until(() => bubbles().length >= 4, "the answer to the yes");
  out.confirmed = bubbles();
  doc().body.dataset.before = "reload";
  frame.contentWindow.location.reload();
  await until(() => !doc().body.dataset.before && doc().querySelectorAll(".bubble").length >= 4,
              "the conversation after a reload");
  out.reloaded = bubbles();
  out.buttonsAfterReload = doc().querySelectorAll(".choices button").length;
  await type("I want to talk to a real person");
  out.handover = (await until(() => doc().querySelector(".notice[data-id=handover]"),
                              "the hand-over")).textContent;
  out.final = bubbles();
  await type("<img src=x onerror=alert(1)> still there?");
  await until(() => bubbles().length > out.final.length, "the message kept for the person");
  out.markup = {last: bubbles().at(-1), images: doc().querySelectorAll("#log img").length};
  return out;
}
function report(out) {
  document.body.insertAdjacentHTML("beforeend",
    "<pre id='result'>" + JSON.stringify(out).replace(/</g, "\\\\u003c") + "</pre>");
}
run().then(report, e => report({error: e.message, seen: (() => { try { return bubbles(); }
                                                              catch (x) { return []; } })()}));
</script></body></html>
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """`agent serve`'s app on loopback (uvicorn in a thread), with a harness page beside the
    chat (the same origin, so it may reach into the chat's frame)."""
    app = make_app(setup_for({"today": TODAY}))
    secret = token("customer", name="web-chat")
    page = HARNESS.replace("TOKEN", secret)

    async def harness(request: Any) -> HTMLResponse:
        return HTMLResponse(page)

    app.router.routes.append(Route("/harness", harness))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=60)


def _in_chromium(url: str, profile: Path) -> dict[str, Any]:
    dom = chromium_dom(url, profile, budget_ms=120_000)
    found = re.search(r"<pre id=\"result\">(.*?)</pre>", dom, re.S)
    assert found is not None, f"the harness did not report; Chromium printed: {dom[:800]}"
    return dict(json.loads(html.unescape(found.group(1))))


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (.ci/run installs it)")
def test_a_customer_chats_confirms_reloads_and_is_handed_over_in_chromium(
    served: str, tmp_path: Path
) -> None:
    base = served
    seen = _in_chromium(f"{base}/harness", tmp_path / "chromium-profile")
    assert "error" not in seen, seen
    proposed = seen["proposed"]
    assert proposed[0].startswith("customer: I want to cancel order B200")
    assert proposed[1].startswith("desk: ") and "B200" in proposed[1]
    assert seen["buttons"] == ["Yes", "No"]
    assert seen["confirmed"][2] == "customer: Yes"  # the button sent the words
    assert seen["reloaded"] == seen["confirmed"]  # the same conversation after a reload
    assert seen["buttonsAfterReload"] == 0  # the yes was given: nothing left to confirm
    assert seen["handover"] == "A person from the shop will answer here."
    # What anyone types is shown as text: no element is made of it.
    assert seen["markup"] == {
        "last": "customer: <img src=x onerror=alert(1)> still there?",
        "images": 0,
    }
    conversations = httpx.get(
        f"{base}/v1/approvals", headers=auth(token("staff")), timeout=30
    ).json()["approvals"]
    assert [a["tool"] for a in conversations] == ["cancel_pending_order"]  # the yes counted
