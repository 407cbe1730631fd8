// mcpyard console: makes the pages live. Every page works without this script (forms post and redirect).
"use strict";
(function () {
  const csrf = () => (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  async function fetchPage(url, options) {
    const response = await fetch(url, Object.assign({ credentials: "same-origin", headers: { Accept: "text/html" } }, options));
    if (response.redirected && new URL(response.url).pathname === "/login") {
      window.location.assign(response.url);
      return null;
    }
    const text = await response.text();
    return { doc: new DOMParser().parseFromString(text, "text/html"), url: response.url };
  }

  // What a person typed or chose in a form field: its form's action, its name (and a box's value) name it.
  const fields = (root) => root.querySelectorAll("input[name], textarea[name], select[name]");
  const fieldKey = (field) =>
    [field.form ? field.form.getAttribute("action") : "", field.name, field.type === "checkbox" || field.type === "radio" ? field.value : ""].join("\n");
  const changed = (field) => {
    if (field.type === "checkbox" || field.type === "radio") return field.checked !== field.defaultChecked;
    if (field.tagName === "SELECT") return Array.from(field.options).some((option) => option.selected !== option.defaultSelected);
    return field.value !== field.defaultValue;
  };

  // A live part fetched again: left as it is when nothing in it changed (a click, a selection, the focus stay);
  // otherwise replaced, with what the person had typed or chosen in its fields, and the focus, carried over.
  function swap(now, next) {
    if (now.innerHTML === next.innerHTML) return;
    const typed = new Map();
    for (const field of fields(now)) if (changed(field)) typed.set(fieldKey(field), field);
    const active = document.activeElement;
    const focused = active && active !== now && now.contains(active) && active.name ? fieldKey(active) : null;
    now.innerHTML = next.innerHTML;
    for (const field of fields(now)) {
      if (field.disabled) continue;
      const key = fieldKey(field);
      const before = typed.get(key);
      if (before && (field.type === "checkbox" || field.type === "radio")) field.checked = before.checked;
      else if (before) field.value = before.value;
      if (key === focused) field.focus();
    }
  }

  // Live parts: elements with data-live="topic …" and an id are fetched again when a topic changes.
  const live = Array.from(document.querySelectorAll("[data-live][id]"));
  let source = null;
  if (live.length && window.EventSource) {
    const topics = Array.from(new Set(live.flatMap((el) => el.dataset.live.split(/\s+/)).filter(Boolean)));
    let pending = null;
    let fetching = false;
    const wanted = new Set();
    // One fetch at a time: an answer that took longer than a later one's would put back what the page showed before.
    const later = () => {
      if (wanted.size && !pending && !fetching) pending = setTimeout(refresh, 50);
    };
    const refresh = async () => {
      pending = null;
      fetching = true;
      const ids = Array.from(wanted);
      wanted.clear();
      let fetched = null;
      try {
        fetched = await fetchPage(window.location.pathname + window.location.search);
      } catch (error) {
        // No answer (the service restarting): fetched at the next change, or once the stream is back.
        for (const id of ids) wanted.add(id);
        return;
      } finally {
        fetching = false;
      }
      if (!fetched) return;
      for (const id of ids) {
        const now = document.getElementById(id);
        const next = fetched.doc.getElementById(id);
        if (now && next) swap(now, next);
      }
      document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
      later();  // what changed while this one was fetched
    };
    source = new EventSource("/events?topics=" + encodeURIComponent(topics.join(",")));
    source.addEventListener("change", (event) => {
      for (const el of document.querySelectorAll("[data-live][id]")) {
        if (el.dataset.live.split(/\s+/).includes(event.data)) wanted.add(el.id);
      }
      later();
    });
    let opened = 0;
    source.addEventListener("open", () => {
      // After a reconnection, changes made while it was away were never announced: fetch everything once.
      if (opened++ > 0) {
        for (const el of document.querySelectorAll("[data-live][id]")) wanted.add(el.id);
        later();
      }
      document.body.dataset.live = "open";
    });
    window.addEventListener("pagehide", () => { source.close(); });
  }

  // Forms with data-async="<id>": posted in the background; the message shows at once, then the page's answer.
  document.addEventListener("submit", async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.async || !window.fetch) return;
    event.preventDefault();
    const data = new FormData(form);
    const list = document.getElementById(form.dataset.async);
    const message = String(data.get("message") || "");
    if (list && message) {
      const article = document.createElement("article");
      article.className = "turn status-running";
      const you = document.createElement("p");
      you.className = "message you";
      const who = document.createElement("span");
      who.className = "who";
      who.textContent = "You";
      you.append(who, " ", message);
      const working = document.createElement("p");
      working.className = "muted working";
      working.textContent = "Working…";
      article.append(you, working);
      list.append(article);
    }
    for (const control of form.querySelectorAll("button, textarea")) control.disabled = true;
    try {
      const fetched = await fetchPage(form.action, {
        method: "POST",
        body: new URLSearchParams(data),
        headers: { Accept: "text/html", "X-CSRF-Token": csrf() },
      });
      if (!fetched) return;
      const main = fetched.doc.querySelector("main");
      if (main) document.querySelector("main").innerHTML = main.innerHTML;
      const field = document.querySelector("main textarea[name=message]:not([disabled])");
      if (field) field.focus();
    } catch (error) {
      // No answer (the network, a closed tab elsewhere): post it the plain way, its fields enabled again.
      for (const control of form.querySelectorAll("button, textarea")) control.disabled = false;
      form.submit();
    }
  });
})();
