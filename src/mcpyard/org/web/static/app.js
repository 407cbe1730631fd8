// mcpyard console: makes the pages live. Every page works without this script (forms post and redirect).
"use strict";
(function () {
  const FETCH_MS = 15000; // a live part's fetch given up after this (then tried again)
  const RETRY_MS = 2000; // how soon a fetch that failed is tried again
  const csrf = () => (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  async function fetchPage(url, options) {
    const response = await fetch(url, Object.assign({ credentials: "same-origin", headers: { Accept: "text/html" } }, options));
    if (response.redirected && new URL(response.url).pathname === "/login") {
      window.location.assign(response.url);
      return null;
    }
    const text = await response.text();
    return { doc: new DOMParser().parseFromString(text, "text/html"), url: response.url, ok: response.ok };
  }

  // What a person typed or chose in a form field, named by its form's action, its name and (a box) its value.
  // Hidden fields (the CSRF token) are never a person's: left out.
  const fields = (root) =>
    root.querySelectorAll("input[name]:not([type=hidden]), textarea[name], select[name]:not([multiple])");
  const isBox = (field) => field.type === "checkbox" || field.type === "radio";
  const fieldKey = (field) =>
    [field.form ? field.form.getAttribute("action") : "", field.name, isBox(field) ? field.value : ""].join("\n");
  const changed = (field) => {
    if (isBox(field)) return field.checked !== field.defaultChecked;
    if (field.tagName === "SELECT") {
      const options = Array.from(field.options);
      const chosen = options.find((option) => option.defaultSelected) || options[0];
      return field.value !== (chosen ? chosen.value : "");
    }
    return field.value !== field.defaultValue;
  };

  // Whether a node of the page may stay as the fetched `next`: the same kind of node; for an element the same tag,
  // the same id, and without an id the same class; the same name, type, form action and address (a link that now
  // goes elsewhere is a new link, a field that is now another field a new field), and a box's or an option's value.
  const KEYS = ["id", "name", "type", "action", "href"];
  const keeps = (node, next) =>
    node.nodeType === next.nodeType &&
    node.nodeName === next.nodeName &&
    (node.nodeType !== Node.ELEMENT_NODE ||
      (KEYS.every((key) => node.getAttribute(key) === next.getAttribute(key)) &&
        (node.id || node.getAttribute("class") === next.getAttribute("class")) &&
        (!(isBox(node) || node.nodeName === "OPTION") || node.getAttribute("value") === next.getAttribute("value"))));

  // Makes `now` what `next` is, keeping in place every node that may stay (a button being pressed, a link being
  // clicked, a field being typed in): its attributes and text set from `next`, its children made the same way.
  // `ids`: the ids in the fetched part. An element is looked for further on (an item added before it leaves it in
  // place), never past one that stays; text only where it stands.
  function morph(now, next, ids) {
    if (now.nodeType !== Node.ELEMENT_NODE) {
      if (now.nodeValue !== next.nodeValue) now.nodeValue = next.nodeValue;
      return;
    }
    for (const { name } of Array.from(now.attributes)) if (!next.hasAttribute(name)) now.removeAttribute(name);
    for (const { name, value } of Array.from(next.attributes)) {
      if (now.getAttribute(name) !== value) now.setAttribute(name, value);
    }
    const stays = (node) => node.nodeType === Node.ELEMENT_NODE && node.id && ids.has(node.id);
    let at = now.firstChild;
    const drop = (until) => {
      while (at !== until) {
        const gone = at;
        at = at.nextSibling;
        gone.remove();
      }
    };
    for (const child of Array.from(next.childNodes)) {
      while (at && at.nodeType === Node.ELEMENT_NODE && at.id && !ids.has(at.id)) drop(at.nextSibling);
      let kept = at;
      if (child.nodeType !== Node.ELEMENT_NODE) {
        if (kept && !keeps(kept, child)) kept = null;
      } else {
        while (kept && !keeps(kept, child) && (child.id || !stays(kept))) kept = kept.nextSibling;
        if (kept && !keeps(kept, child)) kept = null;
      }
      if (!kept) {
        now.insertBefore(document.importNode(child, true), at);
        continue;
      }
      drop(kept);
      morph(kept, child, ids);
      at = kept.nextSibling;
    }
    drop(null);
  }

  // A field kept in place whose server now renders it disabled shows the server's value, not what was typed.
  const reset = (field) => {
    if (isBox(field)) field.checked = field.defaultChecked;
    else if (field.tagName === "SELECT") for (const option of field.options) option.selected = option.defaultSelected;
    else field.value = field.defaultValue;
  };

  // A live part fetched again: left as it is when nothing in it changed; otherwise made like the new one with every
  // node that may stay kept in place (a click, a selection, what was typed and the focus stay with it). What the
  // person had typed or chosen in a field made anew, and the focus (caret too), is carried to its new field.
  function swap(now, next) {
    if (now.innerHTML === next.innerHTML) return;
    const typed = new Map();
    for (const field of fields(now)) if (!field.matches(":disabled") && changed(field)) typed.set(fieldKey(field), field);
    const active = document.activeElement;
    const focused = active && active !== now && now.contains(active) && active.name ? fieldKey(active) : null;
    const caret = focused ? [active.selectionStart, active.selectionEnd] : null;
    morph(now, next, new Set(Array.from(next.querySelectorAll("[id]"), (el) => el.id)));
    for (const field of fields(now)) {
      if (field.matches(":disabled")) {
        if (typed.get(fieldKey(field)) === field) reset(field);
        continue;
      }
      const key = fieldKey(field);
      const before = typed.get(key);
      if (before && before !== field && isBox(field)) field.checked = before.checked;
      else if (before && before !== field) field.value = before.value;
      if (key !== focused || field === document.activeElement) continue;
      field.focus({ preventScroll: true });
      try {
        if (caret[0] !== null && caret[0] !== undefined) field.setSelectionRange(caret[0], caret[1]);
      } catch (error) {
        // a field without a caret (a number, an email): the focus is enough
      }
    }
  }

  // Background posts (the conversation's composer) under way, and how many began: a live fetch begun before one is
  // dropped, for the page the post brings back is newer.
  let posting = 0;
  let posts = 0;
  let later = () => {};

  // Live parts: elements with data-live="topic …" and an id are fetched again when a topic changes.
  const live = Array.from(document.querySelectorAll("[data-live][id]"));
  let source = null;
  if (live.length && window.EventSource) {
    const topics = Array.from(new Set(live.flatMap((el) => el.dataset.live.split(/\s+/)).filter(Boolean)));
    let pending = null;
    let fetching = false;
    const wanted = new Set();
    // One fetch at a time: an answer that took longer than a later one's would put back what the page showed before.
    later = (wait = 50) => {
      if (wanted.size && !pending && !fetching && !posting) pending = setTimeout(refresh, wait);
    };
    const refresh = async () => {
      pending = null;
      fetching = true;
      const ids = Array.from(wanted);
      wanted.clear();
      const begun = posts;
      let fetched = null;
      try {
        const here = window.location.pathname + window.location.search;
        fetched = await fetchPage(here, { signal: AbortSignal.timeout(FETCH_MS) });
        if (fetched && !fetched.ok) throw new Error("not answered");
      } catch (error) {
        // No answer, or an error page (the service restarting): fetched again a little later.
        for (const id of ids) wanted.add(id);
        fetching = false;
        later(RETRY_MS);
        return;
      }
      fetching = false;
      if (!fetched) return;
      if (begun !== posts) {
        for (const id of ids) wanted.add(id);  // a post began meanwhile: its page is newer than this one
        later();
        return;
      }
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
    posting++;
    posts++;
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
    } finally {
      posting--;
      later();  // the changes announced while it was posted
    }
  });
})();
