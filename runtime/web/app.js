// vibe chat page: no framework, no build step, no network but this server.
// Model output is never inserted as HTML: Markdown is rendered by escaping
// every character first and adding only a fixed set of tags; links keep
// http(s) and relative targets only.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const state = {
    key: sessionStorage.getItem("vibe.key") || "",
    conv: "",
    skills: [],
    passages: {}, // chunk_id -> passage, from this page's tool results
  };

  // ---------- HTTP ----------
  async function api(method, path, body) {
    const opt = { method, headers: { Authorization: "Bearer " + state.key } };
    if (body !== undefined) {
      opt.headers["Content-Type"] = "application/json";
      opt.body = JSON.stringify(body);
    }
    const r = await fetch(path, opt);
    if (r.status === 401) {
      signOut("Your key was refused: sign in again.");
      throw new Error("unauthorized");
    }
    const text = await r.text();
    let data = {};
    try { data = text ? JSON.parse(text) : {}; } catch (e) { data = { error: { message: text } }; }
    if (!r.ok) {
      throw new Error((data.error && data.error.message) || r.statusText);
    }
    return data;
  }

  // ---------- Markdown ----------
  function escapeHTML(s) {
    return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
  }
  function unescapeHTML(s) {
    return s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'").replace(/&amp;/g, "&");
  }
  function safeURL(escaped) {
    const raw = unescapeHTML(escaped).trim();
    if (/^https?:\/\//i.test(raw) || /^\/(?!\/)/.test(raw) || /^#/.test(raw)) {
      return escapeHTML(raw);
    }
    return "";
  }
  const CITE_ID = /^(?:c_[0-9a-f]{6,}|R\d{2,4}|[A-Za-z0-9_.:\/\-]+#\d+)$/;
  function inline(s) {
    // s is already escaped.
    const codes = [];
    s = s.replace(/`([^`]+)`/g, (_, c) => { codes.push(c); return "\u0000" + (codes.length - 1) + "\u0000"; });
    s = s.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
    s = s.replace(/(^|[^*])\*([^*\s][^*]*)\*/g, "$1<em>$2</em>");
    s = s.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (m, text, url) => {
      const href = safeURL(url);
      return href ? '<a href="' + href + '" target="_blank" rel="noopener noreferrer">' + text + "</a>" : text;
    });
    // [chunk-id] citations become buttons opening the source panel.
    // A bracket holding only citation ids: chunk ids (c_…, path#n) or rule
    // ids (R012), comma-separated.
    s = s.replace(/\[([^\[\]]+)\]/g, (m, inner) => {
      const ids = inner.split(/\s*[,，;；]\s*/);
      if (!ids.every((id) => CITE_ID.test(id))) return m;
      return ids.map((id) => '<button type="button" class="cite" data-cite="' + id + '">' + id + "</button>").join(" ");
    });
    s = s.replace(/\u0000(\d+)\u0000/g, (_, i) => "<code>" + codes[+i] + "</code>");
    return s;
  }
  function markdown(src) {
    const lines = escapeHTML(src).split("\n");
    const out = [];
    let list = "", code = false, para = [];
    const flush = () => {
      if (para.length) { out.push("<p>" + inline(para.join(" ")) + "</p>"); para = []; }
    };
    const endList = () => { if (list) { out.push("</" + list + ">"); list = ""; } };
    for (const line of lines) {
      if (/^```/.test(line)) {
        flush(); endList();
        out.push(code ? "</code></pre>" : "<pre><code>");
        code = !code;
        continue;
      }
      if (code) { out.push(line + "\n"); continue; }
      let m;
      if ((m = line.match(/^(#{1,4})\s+(.*)$/))) {
        flush(); endList();
        const n = m[1].length + 2;
        out.push("<h" + n + ">" + inline(m[2]) + "</h" + n + ">");
      } else if ((m = line.match(/^\s*[-*]\s+(.*)$/)) || (m = line.match(/^\s*\d+[.)]\s+(.*)$/))) {
        flush();
        const kind = /^\s*\d/.test(line) ? "ol" : "ul";
        if (list !== kind) { endList(); out.push("<" + kind + ">"); list = kind; }
        out.push("<li>" + inline(m[1]) + "</li>");
      } else if (line.trim() === "") {
        flush(); endList();
      } else {
        endList();
        para.push(line);
      }
    }
    if (code) out.push("</code></pre>");
    flush(); endList();
    return out.join("");
  }

  // ---------- DOM helpers ----------
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c);
    return e;
  }
  function scrollDown() { const m = $("messages"); m.scrollTop = m.scrollHeight; }
  function valueText(v) {
    if (v === null || v === undefined) return "";
    if (Array.isArray(v)) return v.map(valueText).join(", ");
    if (typeof v === "object") return JSON.stringify(v);
    return String(v);
  }
  function propsTable(props) {
    const t = el("table");
    for (const [k, v] of Object.entries(props || {})) {
      t.append(el("tr", {}, el("th", { text: k }), el("td", { text: valueText(v) })));
    }
    return t;
  }

  // ---------- Cards ----------
  // card_type -> component; anything else gets the generic table.
  const cards = {
    brew_card(props) {
      const c = el("div", { class: "card brew", "data-card-type": "brew_card" });
      c.append(el("h3", { text: "Brew: " + valueText(props.tea) }));
      const rows = [
        ["Leaves", props.grams !== undefined ? props.grams + " g" : ""],
        ["Water", props.water_temp_c !== undefined ? props.water_temp_c + " °C" : ""],
        ["Steeps", (props.steeps_s || []).map((s) => s + " s").join(" · ")],
        ["Vessel", props.vessel_ml !== undefined ? props.vessel_ml + " ml" : ""],
        ["Method", valueText(props.method)],
      ];
      const t = el("table");
      for (const [k, v] of rows) if (v) t.append(el("tr", {}, el("th", { text: k }), el("td", { text: v })));
      c.append(t);
      if (Array.isArray(props.citations) && props.citations.length) {
        const p = el("p", { class: "sources" }, "Sources: ");
        for (const id of props.citations) p.append(citeButton(String(id)), " ");
        c.append(p);
      }
      return c;
    },
    report(props) {
      const c = el("div", { class: "card report", "data-card-type": "report" });
      c.append(el("h3", { text: valueText(props.title) }));
      for (const s of props.sections || []) {
        c.append(el("h4", { text: valueText(s.heading) }));
        const body = el("div");
        body.innerHTML = markdown(valueText(s.body));
        c.append(body);
      }
      return c;
    },
    insight(props) {
      const level = ["info", "warning", "critical"].includes(props.level) ? props.level : "info";
      const c = el("div", { class: "card insight " + level, "data-card-type": "insight" });
      c.append(el("h3", { text: valueText(props.title) }), el("p", { text: valueText(props.content) }));
      return c;
    },
  };
  function renderCard(type, props) {
    if (Object.prototype.hasOwnProperty.call(cards, type)) return cards[type](props || {});
    const c = el("div", { class: "card generic", "data-card-type": type || "card" });
    c.append(el("h3", { text: type || "card" }), propsTable(props));
    return c;
  }

  // ---------- Forms (collect_info) ----------
  function renderForm(form) {
    const box = el("div", { class: "card form-card", "data-card-type": "form" });
    if (form.reason) box.append(el("p", { text: form.reason }));
    const f = el("form");
    for (const fd of form.fields || []) {
      const id = "f-" + Math.random().toString(36).slice(2);
      const label = el("label", { for: id, text: (fd.label || fd.name) + (fd.required ? " *" : "") });
      let input;
      if (Array.isArray(fd.enum) || Array.isArray(fd.options)) {
        input = el("select", { id });
        input.append(el("option", { value: "", text: "—" }));
        for (const o of fd.enum || fd.options) input.append(el("option", { value: String(o), text: String(o) }));
      } else {
        const types = { date: "date", datetime: "datetime-local", "date-time": "datetime-local", time: "time", number: "number", integer: "number", boolean: "checkbox", email: "email" };
        input = el("input", { id, type: types[fd.type] || "text" });
        if (fd.type === "integer") input.step = "1";
      }
      input.name = fd.name;
      input.dataset.type = fd.type || "string";
      if (fd.required && fd.type !== "boolean") input.required = true;
      f.append(label, input);
    }
    const submit = el("button", { type: "submit", text: "Submit" });
    f.append(el("div", { class: "actions" }, submit));
    f.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const values = {};
      for (const input of f.querySelectorAll("input, select")) {
        const t = input.dataset.type;
        if (t === "boolean") values[input.name] = input.checked;
        else if (input.value === "") continue;
        else if (t === "number" || t === "integer") values[input.name] = Number(input.value);
        else values[input.name] = input.value;
      }
      lockForm(box, values);
      addUser(formSummary(form, values));
      await send({ form_response: { values } });
    });
    box.append(f);
    return box;
  }
  // lockForm shows a form as answered: its inputs hold the values sent
  // and nothing can be changed or sent again.
  function lockForm(box, values) {
    for (const input of box.querySelectorAll("input, select")) {
      const v = values[input.name];
      if (input.dataset.type === "boolean") input.checked = v === true;
      else if (v !== undefined && v !== null) input.value = String(v);
      input.disabled = true;
    }
    for (const b of box.querySelectorAll("button")) b.disabled = true;
    box.classList.add("submitted");
  }
  // formSummary is the user's message for a form answer.
  function formSummary(form, values) {
    const labels = {};
    for (const fd of (form && form.fields) || []) labels[fd.name] = fd.label || fd.name;
    return "Form: " + Object.entries(values).map(([k, v]) => (labels[k] || k) + ": " + valueText(v)).join(", ");
  }
  // formAnswer returns the values of a stored form answer (the user
  // message of a form_response), null for any other message.
  function formAnswer(content) {
    if (!content.startsWith("[form_response] ")) return null;
    try {
      const v = JSON.parse(content.slice(16)).form_response;
      return v && typeof v === "object" ? v : null;
    } catch (e) { return null; }
  }

  // ---------- Citations and the side panel ----------
  function citeButton(id) {
    return el("button", { type: "button", class: "cite", "data-cite": id, text: id });
  }
  function openPanel(title, body) {
    $("panel-title").textContent = title;
    const b = $("panel-body");
    b.replaceChildren(...body);
    $("panel").hidden = false;
  }
  function openCitation(id, quote) {
    const p = state.passages[id];
    if (!p) {
      openPanel(id, [el("p", { text: "This source was not retrieved in this page's session." })]);
      return;
    }
    const body = [];
    if (p.rule) {
      body.push(el("p", { class: "path", text: "Rule " + id + (p.tier ? " (" + p.tier + ")" : "") }));
      body.push(el("p", { class: "passage", text: p.text }));
      if (p.quote && p.quote !== p.text) body.push(el("p", {}, "Evidence: ", el("mark", { text: p.quote })));
      if (p.chunk_id) body.push(el("p", {}, "Passage: ", citeButton(p.chunk_id), " ", (p.heading_path || []).join(" › ")));
    } else {
      body.push(el("p", { class: "path", text: (p.heading_path || []).join(" › ") }));
      body.push(el("p", { class: "path", text: p.source + (p.start !== undefined ? " · " + p.start + "–" + p.end : "") }));
      const text = p.text || "";
      const q = (quote || p.quote || "").trim();
      const para = el("p", { class: "passage" });
      const at = q ? text.indexOf(q) : -1;
      if (at >= 0) {
        para.append(text.slice(0, at), el("mark", { text: q }), text.slice(at + q.length));
      } else {
        para.append(el("mark", { text }));
      }
      body.push(para);
    }
    openPanel("Source " + id, body);
  }
  function remember(tool, result) {
    if (!result) return;
    if (Array.isArray(result.passages)) {
      for (const p of result.passages) if (p.chunk_id) state.passages[p.chunk_id] = p;
    }
    if (Array.isArray(result.rules)) {
      for (const r of result.rules) {
        if (r.id) state.passages[r.id] = { rule: true, tier: r.tier, text: [r.condition, r.action, r.conclusion].filter(Boolean).join(" → ") };
      }
    }
    if (Array.isArray(result.citations)) {
      for (const c of result.citations) {
        if (c.kind === "rule" && c.rule_id) {
          state.passages[c.rule_id] = Object.assign({ rule: true, text: c.quote }, state.passages[c.rule_id] || {}, { quote: c.quote, chunk_id: c.chunk_id, heading_path: c.heading_path, source: c.source });
        }
        if (c.chunk_id) {
          const p = Object.assign({}, state.passages[c.chunk_id] || {});
          for (const k of ["source", "doc", "heading_path", "start", "end"]) if (c[k] !== undefined && p[k] === undefined) p[k] = c[k];
          // Without the tool's result (a reloaded conversation), the text
          // is a citation's quote: the passage's own (its start) over a
          // rule's evidence.
          if (!p.text || (p.textFrom === "rule" && c.kind === "passage")) { p.text = c.quote; p.textFrom = c.kind; }
          if (c.kind === "rule" && c.quote) p.quote = c.quote;
          state.passages[c.chunk_id] = p;
        }
      }
    }
  }

  // ---------- Messages ----------
  function addUser(text) {
    const m = el("div", { class: "msg user", text });
    $("messages").append(m);
    scrollDown();
  }
  function newAssistant() {
    const m = el("div", { class: "msg assistant" });
    const tag = el("div", { class: "skill-tag" });
    const tools = el("div", { class: "tools" });
    const body = el("div", { class: "body" });
    const extra = el("div", { class: "extra" });
    m.append(tag, tools, body, extra);
    $("messages").append(m);
    return { m, tag, tools, body, extra, text: "", cites: [] };
  }
  function renderBody(a) {
    a.body.innerHTML = markdown(a.text);
  }
  function renderSources(a, citations) {
    const ids = [];
    for (const c of citations || []) {
      const id = c.kind === "rule" && c.rule_id ? c.rule_id : c.chunk_id;
      if (id && !ids.includes(id)) ids.push(id);
    }
    for (const b of a.body.querySelectorAll(".cite")) if (!ids.includes(b.dataset.cite)) ids.push(b.dataset.cite);
    if (!ids.length) return;
    const box = el("div", { class: "sources" }, "Sources:");
    const ol = el("ol");
    for (const id of ids) {
      const p = state.passages[id];
      const label = p && !p.rule ? (p.heading_path || []).join(" › ") || p.source : "";
      ol.append(el("li", {}, citeButton(id), " ", label || ""));
    }
    box.append(ol);
    a.extra.append(box);
  }

  async function send(body) {
    body.conversation_id = state.conv || undefined;
    const skill = $("skill").value;
    if (skill) body.skill = skill;
    const a = newAssistant();
    $("send").disabled = true;
    try {
      const r = await fetch("/api/chat", {
        method: "POST",
        headers: { Authorization: "Bearer " + state.key, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      if (!r.ok) {
        let msg = r.statusText;
        try { const d = await r.json(); msg = (d.error && d.error.message) || msg; } catch (e) { /* keep the status */ }
        if (r.status === 401) signOut("Your key was refused: sign in again.");
        throw new Error(msg);
      }
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          if (data) onEvent(a, JSON.parse(data));
        }
      }
    } catch (e) {
      a.extra.append(el("p", { class: "error", text: "Error: " + e.message }));
    } finally {
      $("send").disabled = false;
      scrollDown();
      loadConversations();
    }
  }

  function onEvent(a, ev) {
    switch (ev.type) {
      case "content":
        a.text += ev.content || "";
        renderBody(a);
        break;
      case "tool_call":
        a.tools.append(el("span", { class: "tool", "data-tool": ev.tool, text: "⚙ " + ev.tool + " " }));
        break;
      case "tool_result":
        if (!ev.is_error) remember(ev.tool, ev.result);
        break;
      case "card":
        a.extra.append(renderCard(ev.card_type, ev.props));
        break;
      case "form":
        a.extra.append(renderForm(ev.form || {}));
        break;
      case "citations":
        a.citations = ev.citations || [];
        remember("", { citations: a.citations });
        break;
      case "done":
        if (ev.conversation_id) state.conv = ev.conversation_id;
        if (ev.skill) a.tag.textContent = "skill: " + ev.skill;
        renderBody(a);
        renderSources(a, (a.citations || []).filter((c) => c.cited));
        break;
      case "error":
        a.extra.append(el("p", { class: "error", text: "Error: " + (ev.error || "unknown") }));
        break;
    }
    scrollDown();
  }

  // ---------- Conversations, skills, profile ----------
  async function loadConversations() {
    let data;
    try { data = await api("GET", "/api/conversations"); } catch (e) { return; }
    const ul = $("conversations");
    ul.replaceChildren();
    for (const c of data.conversations || []) {
      const b = el("button", { type: "button", "data-conversation": c.id, text: c.title || c.id });
      if (c.id === state.conv) b.className = "current";
      b.addEventListener("click", () => openConversation(c.id));
      ul.append(el("li", {}, b));
    }
  }
  // openConversation shows a stored conversation: each answer with the
  // cards, forms and sources it showed live, replayed from its stored
  // events through onEvent, the live path; a form the next message answered
  // shows the values sent, read-only (an unanswered one can still be sent).
  async function openConversation(id) {
    const data = await api("GET", "/api/conversations/" + encodeURIComponent(id));
    state.conv = id;
    $("messages").replaceChildren();
    let form = null; // the last answer's form: { def, box }
    for (const m of data.messages || []) {
      if (m.role === "user") {
        const values = formAnswer(m.content);
        if (values) {
          addUser(formSummary(form && form.def, values));
          if (form) lockForm(form.box, values);
        } else addUser(m.content.startsWith("[form_response] ") ? "Form: " + m.content.slice(16) : m.content);
        form = null;
      } else if (m.role === "assistant") {
        const a = newAssistant();
        a.text = m.content;
        renderBody(a);
        for (const ev of m.events || []) {
          onEvent(a, ev);
          if (ev.type === "form") {
            const boxes = a.extra.querySelectorAll(".form-card");
            form = { def: ev.form || {}, box: boxes[boxes.length - 1] };
          }
        }
        onEvent(a, { type: "done" });
      }
    }
    loadConversations();
  }
  async function loadSkills() {
    const data = await api("GET", "/api/skills");
    state.skills = data.skills || [];
    const sel = $("skill");
    sel.replaceChildren(el("option", { value: "", text: "automatic" }));
    for (const s of state.skills) sel.append(el("option", { value: s.name, text: s.display_name || s.name }));
  }
  async function showProfile() {
    const prof = await api("GET", "/api/profile");
    const rows = [];
    const walk = (prefix, v) => {
      if (v && typeof v === "object" && !Array.isArray(v)) {
        for (const [k, x] of Object.entries(v)) walk(prefix ? prefix + "." + k : k, x);
      } else rows.push([prefix, valueText(v)]);
    };
    walk("", prof.profile || {});
    const t = el("table", { id: "profile-table" });
    for (const [k, v] of rows) t.append(el("tr", {}, el("td", { text: k }), el("td", { text: v })));
    const clear = el("button", { type: "button", id: "profile-clear", text: "Clear everything stored about me" });
    clear.addEventListener("click", async () => {
      await api("DELETE", "/api/profile");
      showProfile();
    });
    openPanel("Your profile", rows.length ? [t, clear] : [el("p", { text: "Nothing is stored about you." })]);
  }

  // ---------- Sign in / out ----------
  async function signIn(key) {
    state.key = key;
    try {
      await loadSkills();
    } catch (e) {
      state.key = "";
      $("signin-error").textContent = e.message === "unauthorized" ? "That key was refused." : "Could not reach the server: " + e.message;
      return;
    }
    sessionStorage.setItem("vibe.key", key);
    $("signin").hidden = true;
    $("app").hidden = false;
    try {
      const ready = await fetch("/readyz").then((r) => r.json());
      if (ready.mode === "retrieval-only") $("mode").textContent = "retrieval-only mode: no model configured";
    } catch (e) { /* the mode note is optional */ }
    loadConversations();
    $("input").focus();
  }
  function signOut(msg) {
    sessionStorage.removeItem("vibe.key");
    state.key = "";
    state.conv = "";
    state.passages = {};
    $("messages").replaceChildren();
    $("conversations").replaceChildren();
    $("api-key").value = "";
    $("app").hidden = true;
    $("signin").hidden = false;
    $("signin-error").textContent = msg || "";
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("signin-form").addEventListener("submit", (ev) => { ev.preventDefault(); signIn($("api-key").value.trim()); });
    $("composer").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const text = $("input").value.trim();
      if (!text) return;
      $("input").value = "";
      addUser(text);
      send({ message: text });
    });
    $("input").addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); $("composer").requestSubmit(); }
    });
    $("new-chat").addEventListener("click", () => { state.conv = ""; $("messages").replaceChildren(); loadConversations(); });
    $("signout").addEventListener("click", () => signOut(""));
    $("profile-button").addEventListener("click", showProfile);
    $("panel-close").addEventListener("click", () => { $("panel").hidden = true; });
    for (const host of [$("messages"), $("panel")]) {
      host.addEventListener("click", (ev) => {
        const b = ev.target.closest(".cite");
        if (b) openCitation(b.dataset.cite, b.dataset.quote);
      });
    }
    if (state.key) signIn(state.key);
  });
})();
