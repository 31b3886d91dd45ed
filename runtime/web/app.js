// vibe chat page: no framework, no build step, no network but this server.
// Model output is never inserted as HTML: Markdown is rendered by escaping
// every character first and adding only a fixed set of tags; links keep
// http(s) and relative targets only. A skill's card templates are filled
// with text nodes only.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const state = {
    key: sessionStorage.getItem("vibe.key") || "",
    conv: "",
    skills: [],
    passages: {}, // chunk_id -> passage, from this page's tool results
    lang: "en",
    offline: false, // the server answers in retrieval-only mode
    editing: false, // the composer holds an edit of the last question
    busy: false,
  };

  // ---------- Labels ----------
  // The page speaks the language of the skill chosen (of all the skills
  // when they share one): GET /api/skills gives each skill's.
  const LABELS = {
    en: {
      signinIntro: "Sign in with your API key. It is kept in this browser tab only.",
      insecureHint: "This server runs with --insecure-dev: any key signs you in (as the user dev).",
      apiKey: "API key", signIn: "Sign in", newChat: "+ New conversation", conversations: "Conversations",
      skill: "Skill", automatic: "automatic", profile: "Profile", signOut: "Sign out", ask: "Ask a question…", send: "Send",
      editing: "Editing your last message", cancel: "Cancel",
      welcome: "What would you like to know?", welcomeExamples: "Try one of these questions:",
      welcomeNoExamples: "Ask a question: answers cite the passages of the books they rest on.",
      mode: "retrieval-only mode: no model configured",
      sources: "Sources", copy: "Copy", copied: "Copied", regenerate: "Regenerate", edit: "Edit",
      up: "Helpful", down: "Not helpful", comment: "What was good, wrong or missing? (optional)",
      sendFeedback: "Send", thanks: "Thank you: your feedback is saved.",
      submit: "Submit", fillIn: "Please fill in:", formAnswer: "Form",
      notRetrieved: "This source was not retrieved in this page's session.",
      rule: "Rule", evidence: "Evidence", passage: "Passage", source: "Source",
      yourProfile: "Your profile", clearProfile: "Clear everything stored about me", nothingStored: "Nothing is stored about you.",
      error: "Error", refused: "Your key was refused: sign in again.", keyRefused: "That key was refused.", unreachable: "Could not reach the server: ",
    },
    zh: {
      signinIntro: "用 API 密钥登录。密钥只保存在这个浏览器标签页里。",
      insecureHint: "本服务以 --insecure-dev 运行：任意密钥都能登录（用户为 dev）。",
      apiKey: "API 密钥", signIn: "登录", newChat: "+ 新对话", conversations: "对话",
      skill: "技能", automatic: "自动", profile: "个人资料", signOut: "退出", ask: "输入你的问题…", send: "发送",
      editing: "正在修改上一条消息", cancel: "取消",
      welcome: "想了解什么？", welcomeExamples: "可以试试这些问题：",
      welcomeNoExamples: "请提问：回答会引用所依据的原文。",
      mode: "离线检索模式：未配置模型",
      sources: "来源", copy: "复制", copied: "已复制", regenerate: "重新生成", edit: "修改",
      up: "有帮助", down: "没帮助", comment: "哪里好、哪里错或缺了什么？（可不填）",
      sendFeedback: "提交", thanks: "谢谢，反馈已保存。",
      submit: "提交", fillIn: "请填写：", formAnswer: "表单",
      notRetrieved: "本页会话中没有检索到这条来源。",
      rule: "规则", evidence: "依据", passage: "原文", source: "来源",
      yourProfile: "我的资料", clearProfile: "清除关于我的全部资料", nothingStored: "没有保存关于你的任何资料。",
      error: "出错", refused: "密钥被拒绝，请重新登录。", keyRefused: "这个密钥被拒绝。", unreachable: "无法连接服务器：",
    },
  };
  function t(k) { return (LABELS[state.lang] || LABELS.en)[k] || LABELS.en[k] || k; }
  function pageLanguage() {
    const sel = $("skill").value;
    const langs = new Set();
    for (const s of state.skills) if (!sel || s.name === sel) if (s.language) langs.add(s.language);
    return langs.size === 1 ? [...langs][0] : "en";
  }
  function applyLabels() {
    document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
    for (const e of document.querySelectorAll("[data-i18n]")) e.textContent = t(e.dataset.i18n);
    for (const e of document.querySelectorAll("[data-i18n-placeholder]")) e.placeholder = t(e.dataset.i18nPlaceholder);
    const auto = $("skill").querySelector('option[value=""]');
    if (auto) auto.textContent = t("automatic");
    $("mode").textContent = state.offline ? t("mode") : "";
    $("mode").title = $("mode").textContent;
  }

  // ---------- HTTP ----------
  async function api(method, path, body) {
    const opt = { method, headers: { Authorization: "Bearer " + state.key } };
    if (body !== undefined) {
      opt.headers["Content-Type"] = "application/json";
      opt.body = JSON.stringify(body);
    }
    const r = await fetch(path, opt);
    if (r.status === 401) {
      signOut(t("refused"));
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
    // s is already escaped. Code spans and links are set aside first, so
    // no citation button is ever made inside them (a URL holding [R001]).
    const kept = [];
    const keep = (html) => { kept.push(html); return "\u0000" + (kept.length - 1) + "\u0000"; };
    s = s.replace(/`([^`]+)`/g, (_, c) => keep("<code>" + c + "</code>"));
    s = s.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (m, text, url) => {
      const href = safeURL(url);
      return href ? keep('<a href="' + href + '" target="_blank" rel="noopener noreferrer">' + text + "</a>") : text;
    });
    s = s.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
    s = s.replace(/(^|[^*])\*([^*\s][^*]*)\*/g, "$1<em>$2</em>");
    s = s.replace(/(^|[^\w])_([^_\s][^_]*)_(?!\w)/g, "$1<em>$2</em>");
    // [chunk-id] citations become buttons opening the source panel.
    // A bracket holding only citation ids: chunk ids (c_…, path#n) or rule
    // ids (R012), comma-separated.
    s = s.replace(/\[([^\[\]]+)\]/g, (m, inner) => {
      const ids = inner.split(/\s*[,，;；]\s*/);
      if (!ids.every((id) => CITE_ID.test(id))) return m;
      return ids.map((id) => '<button type="button" class="cite" data-cite="' + id + '">' + id + "</button>").join(" ");
    });
    s = s.replace(/\u0000(\d+)\u0000/g, (_, i) => kept[+i]);
    return s;
  }
  function tableRow(line) {
    return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
  }
  function markdown(src) {
    const lines = escapeHTML(src).split("\n");
    const out = [];
    let list = "", code = false, para = [], quote = [];
    const flush = () => {
      if (para.length) { out.push("<p>" + inline(para.join(" ")) + "</p>"); para = []; }
      if (quote.length) { out.push("<blockquote>" + inline(quote.join(" ")) + "</blockquote>"); quote = []; }
    };
    const endList = () => { if (list) { out.push("</" + list + ">"); list = ""; } };
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (/^```/.test(line)) {
        flush(); endList();
        out.push(code ? "</code></pre>" : "<pre><code>");
        code = !code;
        continue;
      }
      if (code) { out.push(line + "\n"); continue; }
      let m;
      if (/^\s*\|.*\|\s*$/.test(line) && i + 1 < lines.length && /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(lines[i + 1])) {
        flush(); endList();
        const head = tableRow(line);
        const rows = [];
        for (i += 2; i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i]); i++) rows.push(tableRow(lines[i]));
        i--;
        out.push("<table><thead><tr>" + head.map((c) => "<th>" + inline(c) + "</th>").join("") + "</tr></thead><tbody>" +
          rows.map((r) => "<tr>" + r.map((c) => "<td>" + inline(c) + "</td>").join("") + "</tr>").join("") + "</tbody></table>");
      } else if ((m = line.match(/^(#{1,6})\s+(.*)$/))) {
        flush(); endList();
        const n = Math.min(m[1].length + 2, 6);
        out.push("<h" + n + ">" + inline(m[2]) + "</h" + n + ">");
      } else if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
        flush(); endList();
        out.push("<hr>");
      } else if ((m = line.match(/^&gt;\s?(.*)$/))) {
        if (para.length) flush();
        endList();
        quote.push(m[1]);
      } else if ((m = line.match(/^\s*[-*]\s+(.*)$/)) || (m = line.match(/^\s*\d+[.)]\s+(.*)$/))) {
        flush();
        const kind = /^\s*\d/.test(line) ? "ol" : "ul";
        if (list !== kind) { endList(); out.push("<" + kind + ">"); list = kind; }
        out.push("<li>" + inline(m[1]) + "</li>");
      } else if (line.trim() === "") {
        flush(); endList();
      } else {
        endList();
        if (quote.length) flush();
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
  // The core tools' cards (show_report, show_insight) are built in; a
  // skill's own cards come with their template (skills.CardTemplate: a
  // title, a layout of table, list or stats, fields, sources, a note),
  // which is filled with text only; anything else gets the generic table.
  const cards = {
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
  function fieldText(f, v) {
    if (v === null || v === undefined || v === "" || (Array.isArray(v) && !v.length)) return "";
    const unit = f.unit ? " " + f.unit : "";
    if (Array.isArray(v)) return v.map((x) => valueText(x) + unit).join(f.join || ", ");
    return valueText(v) + unit;
  }
  function fieldValue(f, v) {
    if (f.format === "markdown") {
      const d = el("div", { class: "md" });
      d.innerHTML = markdown(valueText(v));
      return d;
    }
    if (f.format === "list" && Array.isArray(v)) {
      const ul = el("ul");
      for (const x of v) ul.append(el("li", { text: fieldText({ unit: f.unit }, x) }));
      return ul;
    }
    return document.createTextNode(fieldText(f, v));
  }
  function templateCard(type, props, tpl) {
    const layout = ["table", "list", "stats"].includes(tpl.layout) ? tpl.layout : "table";
    const c = el("div", { class: "card skill-card layout-" + layout, "data-card-type": type, "data-template": layout });
    if (tpl.title) {
      const title = tpl.title.replace(/\{([^{}]*)\}/g, (_, k) => fieldText({}, props[k]));
      c.append(el("h3", { text: title }));
    }
    const shown = (tpl.fields || []).filter((f) => fieldText(f, props[f.prop]) !== "");
    const block = (f) => f.format === "markdown" || f.format === "list";
    if (layout === "table") {
      const tb = el("table");
      for (const f of shown) tb.append(el("tr", {}, el("th", { text: f.label || f.prop }), el("td", {}, fieldValue(f, props[f.prop]))));
      c.append(tb);
    } else if (layout === "list") {
      const dl = el("dl");
      for (const f of shown) dl.append(el("dt", { text: f.label || f.prop }), el("dd", {}, fieldValue(f, props[f.prop])));
      c.append(dl);
    } else {
      const tiles = el("div", { class: "stats" });
      for (const f of shown.filter((f) => !block(f))) {
        tiles.append(el("div", { class: "stat" }, el("div", { class: "value", text: fieldText(f, props[f.prop]) }), el("div", { class: "label", text: f.label || f.prop })));
      }
      c.append(tiles);
      for (const f of shown.filter(block)) c.append(el("div", { class: "stat-block" }, el("div", { class: "label", text: f.label || f.prop }), fieldValue(f, props[f.prop])));
    }
    const ids = tpl.sources && Array.isArray(props[tpl.sources]) ? props[tpl.sources] : [];
    if (ids.length) {
      const p = el("p", { class: "card-sources" }, t("sources") + ": ");
      for (const id of ids) p.append(citeButton(String(id)), " ");
      c.append(p);
    }
    if (tpl.note) c.append(el("p", { class: "note", text: tpl.note }));
    return c;
  }
  function renderCard(type, props, tpl) {
    props = props || {};
    if (tpl && Array.isArray(tpl.fields)) return templateCard(type || "card", props, tpl);
    if (Object.prototype.hasOwnProperty.call(cards, type)) return cards[type](props);
    const c = el("div", { class: "card generic", "data-card-type": type || "card" });
    c.append(el("h3", { text: type || "card" }), propsTable(props));
    return c;
  }

  // ---------- Forms (collect_info) ----------
  function renderForm(form) {
    const box = el("div", { class: "card form-card", "data-card-type": "form" });
    // The form's own prompt (the model's reason or the tool's prompt),
    // never a tool description written for the model.
    box.append(el("p", { class: "form-prompt", text: form.reason || t("fillIn") }));
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
    const submit = el("button", { type: "submit", text: t("submit") });
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
    return t("formAnswer") + ": " + Object.entries(values).map(([k, v]) => (labels[k] || k) + ": " + valueText(v)).join(", ");
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
  // wholePassage makes sure the page holds the whole text of a passage:
  // one this session retrieved has it; one known from citations alone (a
  // reloaded conversation, a retrieval-only answer) holds only its start,
  // so it is read from GET /api/passage.
  async function wholePassage(id) {
    const p = state.passages[id];
    if (p && (p.rule || p.whole)) return;
    try {
      const d = await api("GET", "/api/passage?id=" + encodeURIComponent(id));
      state.passages[id] = Object.assign({}, p || {}, { text: d.text, heading_path: d.heading_path, source: d.source, doc: d.doc, start: d.start, end: d.end, whole: true });
    } catch (e) { /* keep what the citations gave */ }
  }
  async function openCitation(id, quote) {
    await wholePassage(id);
    const p = state.passages[id];
    if (!p) {
      openPanel(id, [el("p", { text: t("notRetrieved") })]);
      return;
    }
    const body = [];
    if (p.rule) {
      body.push(el("p", { class: "path", text: t("rule") + " " + id + (p.tier ? " (" + p.tier + ")" : "") }));
      body.push(el("p", { class: "passage", text: p.text }));
      if (p.quote && p.quote !== p.text) body.push(el("p", {}, t("evidence") + ": ", el("mark", { text: p.quote })));
      if (p.chunk_id) body.push(el("p", {}, t("passage") + ": ", citeButton(p.chunk_id), " ", (p.heading_path || []).join(" › ")));
    } else {
      body.push(el("p", { class: "path", text: (p.heading_path || []).join(" › ") }));
      body.push(el("p", { class: "path", text: p.source + (p.start !== undefined ? " · " + p.start + "–" + p.end : "") }));
      // The passage as text: its Markdown heading marks dropped.
      const text = (p.text || "").replace(/^#{1,6}\s+/gm, "");
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
    openPanel(t("source") + " " + id, body);
  }
  function remember(tool, result) {
    if (!result) return;
    if (Array.isArray(result.passages)) {
      for (const p of result.passages) if (p.chunk_id) state.passages[p.chunk_id] = Object.assign({ whole: true }, p);
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
  function addUser(text, typed) {
    clearWelcome();
    const m = el("div", { class: "msg user", text });
    // A typed question can be edited and its answer regenerated; a form
    // answer cannot be asked again as text.
    if (typed) m.dataset.question = text;
    $("messages").append(m);
    scrollDown();
    return m;
  }
  function newAssistant() {
    clearWelcome();
    const m = el("div", { class: "msg assistant" });
    const tag = el("div", { class: "skill-tag" });
    const tools = el("div", { class: "tools" });
    const body = el("div", { class: "body" });
    const extra = el("div", { class: "extra" });
    const actions = el("div", { class: "actions" });
    m.append(tag, tools, body, extra, actions);
    $("messages").append(m);
    const a = { m, tag, tools, body, extra, actions, text: "", cites: [], turn: 0, conv: state.conv, offline: false };
    m._answer = a;
    return a;
  }
  function renderBody(a) {
    a.body.innerHTML = markdown(a.text);
  }
  // isOffline reports a retrieval-only answer: it lists its rules and
  // passages itself, so the page adds no second source list.
  function isOffline(a) {
    return a.offline || /^_(Retrieval-only mode|离线检索模式)/.test(a.text);
  }
  function renderSources(a, citations) {
    for (const old of a.extra.querySelectorAll(".sources")) old.remove();
    if (isOffline(a)) return;
    const ids = [];
    for (const c of citations || []) {
      const id = c.kind === "rule" && c.rule_id ? c.rule_id : c.chunk_id;
      if (id && !ids.includes(id)) ids.push(id);
    }
    for (const b of a.body.querySelectorAll(".cite")) if (!ids.includes(b.dataset.cite)) ids.push(b.dataset.cite);
    if (!ids.length) return;
    const box = el("div", { class: "sources" }, t("sources") + ":");
    const ol = el("ol");
    for (const id of ids) {
      const p = state.passages[id];
      let label = "";
      if (p && p.rule) label = (p.text || "").length > 90 ? p.text.slice(0, 90) + "…" : p.text || "";
      else if (p) label = (p.heading_path || []).join(" › ") || p.source || "";
      ol.append(el("li", {}, citeButton(id), " ", label));
    }
    box.append(ol);
    a.extra.append(box);
  }

  // ---------- Actions: copy, regenerate, edit, feedback ----------
  async function copyText(text) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch (e) {
      const ta = el("textarea", { class: "offscreen" });
      ta.value = text;
      document.body.append(ta);
      ta.select();
      let ok = false;
      try { ok = document.execCommand("copy"); } catch (e2) { ok = false; }
      ta.remove();
      return ok;
    }
  }
  function renderActions(a) {
    a.actions.replaceChildren();
    const copy = el("button", { type: "button", class: "act copy", text: t("copy") });
    copy.addEventListener("click", async () => {
      const ok = await copyText(a.text);
      copy.textContent = ok ? t("copied") : t("copy");
      copy.dataset.copied = ok ? "1" : "";
    });
    a.actions.append(copy);
    if (a.turn && a.conv) {
      for (const [rating, icon] of [["up", "👍"], ["down", "👎"]]) {
        const b = el("button", { type: "button", class: "act thumb " + rating, "data-rating": rating, title: t(rating), "aria-label": t(rating), text: icon });
        b.addEventListener("click", () => giveFeedback(a, rating, ""));
        a.actions.append(b);
      }
      if (a.feedback) markFeedback(a, a.feedback.rating);
    }
    refreshLast();
  }
  function markFeedback(a, rating) {
    for (const b of a.actions.querySelectorAll(".thumb")) b.setAttribute("aria-pressed", b.dataset.rating === rating ? "true" : "false");
  }
  async function giveFeedback(a, rating, comment) {
    try {
      await api("POST", "/api/feedback", { conversation_id: a.conv, turn: a.turn, rating, comment: comment || undefined });
    } catch (e) {
      a.extra.append(el("p", { class: "error", text: t("error") + ": " + e.message }));
      return;
    }
    a.feedback = { rating, comment };
    markFeedback(a, rating);
    for (const old of a.m.querySelectorAll(".feedback-form, .feedback-done")) old.remove();
    if (comment) {
      a.m.append(el("p", { class: "feedback-done", text: t("thanks") }));
      return;
    }
    // The verdict is saved; a comment may follow.
    const f = el("form", { class: "feedback-form" });
    const ta = el("textarea", { rows: "2", placeholder: t("comment"), maxlength: "2000" });
    const send = el("button", { type: "submit", text: t("sendFeedback") });
    f.append(ta, send);
    f.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const c = ta.value.trim();
      if (c) giveFeedback(a, rating, c);
      else { f.remove(); a.m.append(el("p", { class: "feedback-done", text: t("thanks") })); }
    });
    a.m.append(f);
    ta.focus();
  }
  // refreshLast puts Regenerate on the last answer and Edit on the last
  // question, when it was typed, and nowhere else.
  function refreshLast() {
    for (const b of document.querySelectorAll("#messages .act.regenerate, #messages .act.edit")) b.remove();
    const msgs = [...$("messages").querySelectorAll(".msg")];
    const last = msgs[msgs.length - 1], prev = msgs[msgs.length - 2];
    if (state.busy || !last || !last.classList.contains("assistant") || !prev || !prev.dataset.question || !last._answer || !last._answer.conv) return;
    const a = last._answer;
    const regen = el("button", { type: "button", class: "act regenerate", text: t("regenerate") });
    regen.addEventListener("click", () => {
      const q = prev.dataset.question;
      last.remove();
      send({ message: q, replace_last: true });
    });
    a.actions.append(regen);
    const edit = el("button", { type: "button", class: "act edit", text: t("edit") });
    edit.addEventListener("click", () => {
      state.editing = true;
      $("editing").hidden = false;
      $("input").value = prev.dataset.question;
      $("input").focus();
    });
    prev.append(edit);
  }
  function cancelEdit() {
    state.editing = false;
    $("editing").hidden = true;
  }

  async function send(body) {
    body.conversation_id = state.conv || undefined;
    const skill = $("skill").value;
    if (skill) body.skill = skill;
    state.busy = true;
    refreshLast();
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
        if (r.status === 401) signOut(t("refused"));
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
      a.extra.append(el("p", { class: "error", text: t("error") + ": " + e.message }));
    } finally {
      state.busy = false;
      $("send").disabled = false;
      refreshLast();
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
        a.extra.append(renderCard(ev.card_type, ev.props, ev.template));
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
        a.conv = state.conv;
        if (ev.turn) a.turn = ev.turn;
        if (ev.reason === "offline") a.offline = true;
        if (ev.skill) a.tag.textContent = t("skill") + ": " + ev.skill;
        renderBody(a);
        renderSources(a, (a.citations || []).filter((c) => c.cited));
        renderActions(a);
        break;
      case "error":
        a.extra.append(el("p", { class: "error", text: t("error") + ": " + (ev.error || "unknown") }));
        break;
    }
    scrollDown();
  }

  // ---------- Welcome ----------
  function clearWelcome() {
    const w = $("messages").querySelector(".welcome");
    if (w) w.remove();
  }
  // renderWelcome greets an empty chat with the skill's own example
  // questions (all the skills' when none is chosen), in their languages.
  function renderWelcome() {
    if ($("messages").querySelector(".msg")) return;
    clearWelcome();
    const sel = $("skill").value;
    const skills = state.skills.filter((s) => !sel || s.name === sel);
    const w = el("div", { class: "welcome" });
    w.append(el("h2", { text: t("welcome") }));
    for (const s of skills.slice(0, 3)) {
      w.append(el("p", { class: "skill-intro" }, el("strong", { text: s.display_name || s.name }), " ", s.description || ""));
    }
    const examples = [];
    for (const s of skills) for (const q of s.examples || []) if (!examples.includes(q)) examples.push(q);
    if (examples.length) {
      w.append(el("p", { text: t("welcomeExamples") }));
      const ul = el("div", { class: "examples" });
      for (const q of examples.slice(0, 6)) {
        const b = el("button", { type: "button", class: "example", text: q });
        b.addEventListener("click", () => {
          $("input").value = q;
          $("composer").requestSubmit();
        });
        ul.append(b);
      }
      w.append(ul);
    } else {
      w.append(el("p", { text: t("welcomeNoExamples") }));
    }
    $("messages").append(w);
  }

  // ---------- Conversations, skills, profile ----------
  async function loadConversations() {
    let data;
    try { data = await api("GET", "/api/conversations"); } catch (e) { return; }
    const ul = $("conversations");
    ul.replaceChildren();
    for (const c of data.conversations || []) {
      const b = el("button", { type: "button", "data-conversation": c.id, text: c.title || c.id, title: c.title || c.id });
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
    cancelEdit();
    $("messages").replaceChildren();
    let form = null; // the last answer's form: { def, box }
    for (const m of data.messages || []) {
      if (m.role === "user") {
        const values = formAnswer(m.content);
        if (values) {
          addUser(formSummary(form && form.def, values));
          if (form) lockForm(form.box, values);
        } else if (m.content.startsWith("[form_response] ")) addUser(t("formAnswer") + ": " + m.content.slice(16));
        else addUser(m.content, true);
        form = null;
      } else if (m.role === "assistant") {
        const a = newAssistant();
        a.text = m.content;
        a.feedback = m.feedback || null;
        renderBody(a);
        for (const ev of m.events || []) {
          onEvent(a, ev);
          if (ev.type === "form") {
            const boxes = a.extra.querySelectorAll(".form-card");
            form = { def: ev.form || {}, box: boxes[boxes.length - 1] };
          }
        }
        onEvent(a, { type: "done", turn: m.turn });
      }
    }
    refreshLast();
    loadConversations();
  }
  async function loadSkills() {
    const data = await api("GET", "/api/skills");
    state.skills = data.skills || [];
    const sel = $("skill");
    sel.replaceChildren(el("option", { value: "", text: t("automatic") }));
    for (const s of state.skills) sel.append(el("option", { value: s.name, text: s.display_name || s.name }));
    state.lang = pageLanguage();
    applyLabels();
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
    const tb = el("table", { id: "profile-table" });
    for (const [k, v] of rows) tb.append(el("tr", {}, el("td", { text: k }), el("td", { text: v })));
    const clear = el("button", { type: "button", id: "profile-clear", text: t("clearProfile") });
    clear.addEventListener("click", async () => {
      await api("DELETE", "/api/profile");
      showProfile();
    });
    openPanel(t("yourProfile"), rows.length ? [tb, clear] : [el("p", { text: t("nothingStored") })]);
  }

  // ---------- Sign in / out ----------
  // readiness shows, before sign-in, whether any key works (/readyz says
  // so under --insecure-dev) and, once signed in, whether the server
  // answers in retrieval-only mode (GET /api/status).
  async function readiness() {
    try {
      const ready = await fetch("/readyz").then((r) => r.json());
      $("signin-hint").hidden = ready.auth !== "insecure-dev";
      if (state.key) state.offline = (await api("GET", "/api/status")).mode === "retrieval-only";
    } catch (e) { /* the notes are optional */ }
    applyLabels();
  }
  async function signIn(key) {
    state.key = key;
    try {
      await loadSkills();
    } catch (e) {
      state.key = "";
      $("signin-error").textContent = e.message === "unauthorized" ? t("keyRefused") : t("unreachable") + e.message;
      return;
    }
    sessionStorage.setItem("vibe.key", key);
    $("signin").hidden = true;
    $("app").hidden = false;
    await readiness();
    renderWelcome();
    loadConversations();
    $("input").focus();
  }
  function signOut(msg) {
    sessionStorage.removeItem("vibe.key");
    state.key = "";
    state.conv = "";
    state.passages = {};
    cancelEdit();
    $("messages").replaceChildren();
    $("conversations").replaceChildren();
    $("api-key").value = "";
    $("app").hidden = true;
    $("signin").hidden = false;
    $("signin-error").textContent = msg || "";
  }

  document.addEventListener("DOMContentLoaded", () => {
    readiness();
    $("signin-form").addEventListener("submit", (ev) => { ev.preventDefault(); signIn($("api-key").value.trim()); });
    $("composer").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const text = $("input").value.trim();
      if (!text || state.busy) return;
      $("input").value = "";
      if (state.editing) {
        // The edit replaces the last question and its answer.
        cancelEdit();
        const msgs = [...$("messages").querySelectorAll(".msg")];
        let i = msgs.length - 1;
        while (i >= 0 && !msgs[i].classList.contains("user")) i--;
        for (const m of msgs.slice(Math.max(i, 0))) m.remove();
        addUser(text, true);
        send({ message: text, replace_last: true });
        return;
      }
      addUser(text, true);
      send({ message: text });
    });
    $("input").addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); $("composer").requestSubmit(); }
    });
    $("edit-cancel").addEventListener("click", () => { cancelEdit(); $("input").value = ""; });
    $("new-chat").addEventListener("click", () => { state.conv = ""; cancelEdit(); $("messages").replaceChildren(); renderWelcome(); loadConversations(); });
    $("skill").addEventListener("change", () => { state.lang = pageLanguage(); applyLabels(); renderWelcome(); });
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
