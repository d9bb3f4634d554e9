// The web chat's loader (docs/channels/web.md): one script tag on the shop's page,
//   <script src="https://desk.example.com/chat.js" data-token="..." async></script>
// adds a button that opens the chat (the desk's /chat page) in a frame. Optional: data-title,
// data-label (the button's words), data-lang ("en" or "ja"; default: the browser's).
(function () {
  "use strict";
  const me = document.currentScript;
  if (!me) return;
  const origin = new URL(me.src).origin;
  const data = me.dataset;
  const fragment = new URLSearchParams({token: data.token || ""});
  if (data.title) fragment.set("title", data.title);
  if (data.lang) fragment.set("lang", data.lang);
  const frame = document.createElement("iframe");
  frame.src = origin + "/chat#" + fragment.toString();
  frame.title = data.title || "Help";
  frame.style.cssText = "position:fixed;right:16px;bottom:76px;width:min(380px,calc(100vw - 32px));"
    + "height:min(560px,calc(100vh - 110px));border:1px solid #e3e6eb;border-radius:12px;"
    + "box-shadow:0 8px 30px rgba(0,0,0,.15);background:#fff;display:none;z-index:2147483000";
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = data.label || "Help";
  button.setAttribute("aria-expanded", "false");
  button.style.cssText = "position:fixed;right:16px;bottom:16px;z-index:2147483000;border:0;"
    + "border-radius:999px;padding:12px 20px;background:#2857d6;color:#fff;cursor:pointer;"
    + "font:600 15px system-ui,sans-serif;box-shadow:0 4px 14px rgba(0,0,0,.2)";
  button.addEventListener("click", function () {
    const open = frame.style.display === "none";
    frame.style.display = open ? "block" : "none";
    button.setAttribute("aria-expanded", String(open));
  });
  document.body.append(frame, button);
})();
