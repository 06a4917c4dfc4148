// skillassay review viewer. Every string from the workspace is untrusted: it reaches the page
// through textContent, or (markdown and highlighted code only) as HTML the server escaped with
// Pygments / markdown-it (raw HTML disabled). No inline handlers, no eval; the CSP forbids both.
(() => {
  "use strict";
  const boot = JSON.parse(document.getElementById("boot").textContent);
  const served = boot.mode === "served";
  const $ = (id) => document.getElementById(id);
  const state = {
    runs: [], pos: 0, feedback: {}, stamps: {}, status: "in_progress",
    cache: new Map(), timers: new Map(), showToken: 0, bench: null,
  };
  const IMAGE_SRC = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*$/;
  const DOWNLOAD_HREF = /^(data:application\/octet-stream;base64,|api\/file\?)/;

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === null || v === undefined) continue;
      if (k === "text") node.textContent = String(v);
      else if (k === "cls") node.className = v;
      else node.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }
  // Only for HTML produced by our own escaping renderers on the server side.
  function escapedHtml(cls, html) {
    const div = el("div", { cls });
    div.innerHTML = html;
    return div;
  }
  // wording.pct's rule: halves away from zero (toFixed), and never "-0%" (Number drops the sign of zero).
  const pct = (x) => (x === null || x === undefined ? "n/a" : `${Number((x * 100).toFixed(0))}%`);
  const num = (x, d = 2) => (x === null || x === undefined ? "n/a" : Number(x).toFixed(d));
  // Seconds keep three significant digits: a fast executor's 0.0004 s must not read as 0.00.
  const secs = (x) => (x === null || x === undefined ? "n/a" : Math.abs(x) >= 100 ? Number(x).toFixed(0) : Number(Number(x).toPrecision(3)).toString());
  // Dollars keep two significant digits below $1: a trial's $0.0042 must not read as $0.00.
  const usd = (x) => (x === null || x === undefined ? "n/a" : `${x < 0 ? "-" : ""}$${Math.abs(x) >= 1 || x === 0 ? Math.abs(x).toFixed(2) : Number(Math.abs(x).toPrecision(2)).toString()}`);
  const fmt = (kind, x) => (kind === "pass_rate" ? pct(x) : kind === "avg_tokens" ? num(x, 0) : kind.startsWith("cost") ? usd(x) : secs(x));
  const ival = (kind, iv) => (iv ? ` [${fmt(kind, iv[0])}, ${fmt(kind, iv[1])}]` : "");
  const sizeText = (n) => (n === null || n === undefined ? "" : n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`);

  async function getJSON(url) {
    const r = await fetch(url, { headers: { Accept: "application/json" } });
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
    return r.json();
  }

  // --- outputs tab ----------------------------------------------------------------------

  function renderFile(f) {
    const head = el("div", { cls: "file-head" }, el("span", { cls: "file-name", text: f.name }),
      el("span", { cls: "muted", text: `${f.kind} · ${sizeText(f.size)}` }));
    const box = el("div", { cls: `file file-${f.kind}`, "data-kind": f.kind }, head);
    if (f.note) box.append(el("div", { cls: "note", text: f.note }));
    if (f.kind === "markdown") box.append(escapedHtml("md", f.html));
    else if (f.kind === "code" || f.kind === "text") box.append(escapedHtml("code", f.html));
    else if (f.kind === "image" && IMAGE_SRC.test(f.src)) box.append(el("img", { src: f.src, alt: f.name }));
    else if (f.kind === "binary" && f.href && DOWNLOAD_HREF.test(f.href)) {
      const base = f.name.split("/").pop();
      box.append(el("a", { cls: "download", href: f.href, download: base, text: `Download ${f.name}` }));
    }
    return box;
  }

  function gradeLine(e) {
    const mark = e.passed === true ? "pass" : e.passed === false ? "fail" : "unknown";
    const label = e.passed === true ? "PASS" : e.passed === false ? "FAIL" : "UNGRADED";
    return el("div", { cls: "expectation" }, el("span", { cls: `badge ${mark}`, text: label }), " ",
      el("span", { cls: "expectation-text", text: e.text }), el("div", { cls: "evidence", text: e.evidence }));
  }

  // A multi-turn trial: each turn's message and answer with that turn's grades, then the grades
  // on the whole conversation (turn null). Every string goes in as text.
  function renderConversation(turns, g) {
    const box = el("section", { cls: "block conversation" }, el("h3", { text: `Conversation (${turns.length} turns)` }));
    const exps = (g || {}).expectations || [];
    for (const t of turns) {
      const turn = el("div", { cls: "turn", "data-turn": String(t.turn) }, el("h4", { text: `Turn ${t.turn}${t.status && t.status !== "ok" ? ` (${t.status})` : ""}` }),
        el("div", { cls: "muted", text: "user" }), el("pre", { cls: "plain turn-prompt", text: t.prompt }),
        el("div", { cls: "muted", text: "agent" }), el("pre", { cls: "plain turn-answer", text: t.answer }));
      if (t.error) turn.append(el("div", { cls: "note", text: `error: ${t.error}` }));
      for (const e of exps.filter((x) => x.turn === t.turn)) turn.append(gradeLine(e));
      box.append(turn);
    }
    const whole = exps.filter((x) => x.turn === null);
    if (whole.length) box.append(el("h4", { text: "Whole conversation" }), ...whole.map(gradeLine));
    return box;
  }

  function renderGrades(g) {
    const box = el("section", { cls: "block grades" }, el("h3", { text: "Grades" }));
    const s = g.summary || {};
    const ungraded = (g.expectations || []).filter((e) => e.passed !== true && e.passed !== false).length;
    if (s.total !== undefined) box.append(el("div", { cls: "muted", text: `${s.passed} of ${s.total} expectations passed` + (ungraded ? `, ${ungraded} ungraded` : "") }));
    if (ungraded) box.append(el("div", { cls: "note ungraded", text: "Ungraded trial: an expectation has no verdict, so this run is in no pass rate (it is not a failure)." }));
    for (const e of g.expectations || []) box.append(gradeLine(e));
    return box;
  }

  function renderPrevious(p) {
    const det = el("details", { cls: "block previous" }, el("summary", { text: `Previous iteration (${p.run_id})` }));
    for (const f of p.files) det.append(renderFile(f));
    const s = (p.grading || {}).summary || {};
    if (s.total !== undefined) det.append(el("div", { cls: "muted", text: `previous grades: ${s.passed} of ${s.total} passed` }));
    det.append(el("h3", { text: "Previous feedback" }),
      el("pre", { cls: "plain previous-feedback", text: p.feedback || "(none)" }));
    return det;
  }

  function renderRun(d) {
    const passed = d.total ? d.passed === d.total : null;
    const ungraded = ((d.grading || {}).expectations || []).some((e) => e.passed !== true && e.passed !== false);
    const title = el("h2", { text: `eval ${d.eval_id} · ${d.eval_name} · ${d.configuration} · run ${d.run_number}` });
    if (ungraded) title.append(el("span", { cls: "badge unknown", text: `UNGRADED ${d.passed}/${d.total}` }));
    else if (passed !== null) title.append(el("span", { cls: `badge ${passed ? "pass" : "fail"}`, text: `${d.passed}/${d.total}` }));
    const m = d.metrics || {};
    const frag = el("div", { cls: "run-detail" }, title,
      el("div", { cls: "muted", text: `status ${m.status ?? "n/a"} · tokens ${m.tokens ?? "n/a"} · seconds ${secs(m.seconds)} · tool calls ${m.tool_calls ?? "n/a"}` }));
    if (m.error) frag.append(el("div", { cls: "note", text: `error: ${m.error}` }));
    const prompt = el("section", { cls: "block prompt" }, el("h3", { text: "Prompt" }), el("pre", { cls: "plain", text: d.prompt }));
    if (d.expected_output) prompt.append(el("h3", { text: "Expected" }), el("pre", { cls: "plain", text: d.expected_output }));
    frag.append(prompt, renderGrades(d.grading));
    if (d.turns && d.turns.length) frag.append(renderConversation(d.turns, d.grading));
    const files = el("section", { cls: "block outputs" }, el("h3", { text: `Output files (${d.files.length})` }));
    for (const f of d.files) files.append(renderFile(f));
    frag.append(files);
    if (d.transcript_html) {
      frag.append(el("details", { cls: "block transcript" }, el("summary", { text: "Transcript" }), escapedHtml("md", d.transcript_html)));
    }
    if (d.transcript_note) frag.append(el("div", { cls: "note transcript-note", text: `transcript ${d.transcript_note}` }));
    if (d.previous) frag.append(renderPrevious(d.previous));
    return frag;
  }

  async function show(i) {
    if (!state.runs.length) { $("run").replaceChildren(el("p", { text: "No runs in this iteration." })); return; }
    flushAll();
    state.pos = Math.max(0, Math.min(state.runs.length - 1, i));
    const ref = state.runs[state.pos];
    $("counter").textContent = `${state.pos + 1} / ${state.runs.length}`;
    $("run-select").value = ref.id;
    $("feedback").value = state.feedback[ref.id] || "";
    $("prev").disabled = state.pos === 0;
    $("next").disabled = state.pos === state.runs.length - 1;
    history.replaceState(null, "", `#${encodeURIComponent(ref.id)}`);
    const token = ++state.showToken;
    let detail = state.cache.get(ref.id);
    if (!detail) {
      try {
        detail = served ? await getJSON(`api/run?id=${encodeURIComponent(ref.id)}`) : boot.details[ref.id];
      } catch (err) {
        if (token === state.showToken) $("run").replaceChildren(el("p", { cls: "note", text: String(err) }));
        return;
      }
      state.cache.set(ref.id, detail);
    }
    if (token !== state.showToken) return;
    $("run").replaceChildren(renderRun(detail));
    document.body.dataset.runId = ref.id;
  }

  // --- feedback ---------------------------------------------------------------------------

  function setSaveState(text) { $("save-state").textContent = text; }

  async function postJSON(body) {
    const r = await fetch("api/feedback", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body), keepalive: true });
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
  }

  async function save(id) {
    state.timers.delete(id);
    try {
      await postJSON({ run_id: id, feedback: state.feedback[id] });
      if (!state.timers.size) setSaveState("saved");
      document.body.dataset.saved = String(Number(document.body.dataset.saved || 0) + 1);
    } catch (err) {
      setSaveState(`not saved: ${err.message}`);
    }
  }

  function flushAll() {
    for (const [id, t] of state.timers) { clearTimeout(t); save(id); }
  }

  function onFeedbackInput() {
    const id = state.runs[state.pos].id;
    state.feedback[id] = $("feedback").value;
    state.stamps[id] = new Date().toISOString();
    if (!served) { setSaveState("kept in this page: download feedback.json to keep it"); return; }
    clearTimeout(state.timers.get(id));
    setSaveState("saving…");
    state.timers.set(id, setTimeout(() => save(id), 400));
  }

  function feedbackDoc() {
    const reviews = Object.entries(state.feedback).map(([run_id, feedback]) =>
      ({ run_id, feedback, timestamp: state.stamps[run_id] || new Date().toISOString() }));
    return { reviews, status: state.status };
  }

  function exportFeedback() {
    const blob = new Blob([`${JSON.stringify(feedbackDoc(), null, 2)}\n`], { type: "application/json" });
    const a = el("a", { download: "feedback.json" });
    a.href = URL.createObjectURL(blob);
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 5000);
  }

  async function markComplete() {
    state.status = "complete";
    if (!served) { setSaveState("marked complete: download feedback.json to keep it"); return; }
    try { await postJSON({ status: "complete" }); setSaveState("review marked complete"); }
    catch (err) { setSaveState(`not saved: ${err.message}`); }
  }

  // --- benchmark tab -------------------------------------------------------------------

  function table(headers, rows) {
    const t = el("table", { cls: "grid" }, el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", { text: h })))));
    const body = el("tbody");
    for (const r of rows) body.append(el("tr", {}, ...r.map((c) => el("td", { cls: typeof c === "number" ? "num" : null, text: c }))));
    t.append(body);
    return t;
  }
  const section = (title, ...kids) => el("section", { cls: "block" }, el("h3", { text: title }), ...kids);
  const chart = (src, alt) => (src && /^data:image\/svg\+xml;base64,/.test(src) ? el("img", { cls: "chart", src, alt }) : null);
  const trialsText = (t) => (!t || t.rate === null || t.rate === undefined ? "n/a" : `${pct(t.rate)} (${t.passed}/${t.graded})`);
  const spread = (s, kind) => (s.mean === null ? "n/a" : `${fmt(kind, s.mean)} ± ${s.sd === null ? "n/a" : fmt(kind, s.sd)} (${fmt(kind, s.min)}–${fmt(kind, s.max)})`);

  // A matrix iteration (issue 37): the skill on each agent, from matrix.json.
  const pts = (x) => (x === null || x === undefined ? "n/a" : `${x >= 0 ? "+" : ""}${Number((x * 100).toFixed(0))} pts`);
  function renderMatrix(m) {
    if (m.note) return section("Matrix", el("p", { cls: "note", text: m.note }));
    const rows = m.agents.map((a) => [`${a.name}: ${a.executor}${a.model ? ` (${a.model})` : ""}${a.required ? "" : " (not required)"}`,
      pct(a.with_skill), pct(a.baseline), pts(a.effect) + (a.interval && a.interval[0] !== null && a.interval[1] !== null ? ` [${pts(a.interval[0])}, ${pts(a.interval[1])}]` : ""),
      usd(a.cost), num(a.tokens, 0), secs(a.seconds), a.verdict]);
    const pooled = m.pooled.effect === null || m.pooled.effect === undefined ? `No pooled effect: ${m.pooled.reason}` :
      `Pooled effect: ${pts(m.pooled.effect)}${m.pooled.interval ? ` [${pts(m.pooled.interval[0])}, ${pts(m.pooled.interval[1])}]` : ""} (${m.pooled.reason})`;
    const reasons = m.agents.flatMap((a) => (a.verdict === "PASS" ? [] : a.reasons.map((r) => `${a.name}: ${r}`)));
    return section("Matrix: the skill on each agent",
      el("div", { id: "matrix-verdict" }, el("span", { cls: `badge ${m.verdict}`, text: m.verdict }), " ", el("span", { text: m.message })),
      table(["agent", "with skill", "without", "effect [95% CI]", "cost/trial", "tokens/trial", "seconds/trial", "verdict"], rows),
      ...(reasons.length ? [el("ul", {}, ...reasons.map((r) => el("li", { text: r })))] : []),
      el("p", { text: `Does the effect differ between agents? ${m.heterogeneity}` }),
      ...(m.pairs.length ? [el("div", { text: `pairs that differ: ${m.pairs.join("; ")}` })] : []),
      el("p", { text: pooled }),
      el("p", { cls: "muted", text: "Each agent's own figures: its benchmark.md and report.md under agents/<name>/; its runs: the Outputs tab's agent filter." }));
  }

  function renderBenchmark(b) {
    const out = [];
    if (b.matrix) {
      out.push(renderMatrix(b.matrix));
      if (!b.summary.length) return out;  // a matrix iteration has no benchmark.json of its own
    }
    if (b.gate) {
      out.push(section("Gate", el("div", {}, "status ", el("span", { cls: `badge ${b.gate.status}`, text: b.gate.status })),
        ...(b.gate.headline && b.gate.headline !== b.gate.status ? [el("div", { text: b.gate.headline })] : []),
        el("ul", {}, ...b.gate.thresholds.map((t) => el("li", {}, el("span", { cls: `badge ${t.status}`, text: t.status }), " ",
          el("span", { text: t.line.replace(/^[A-Z]+: /, "") }))))));
    }
    const ug = b.ungraded || {};
    if (ug.with_skill || ug.baseline) {
      out.push(section("Ungraded trials", el("p", { cls: "note ungraded", text: `${ug.with_skill + ug.baseline} trials ungraded (${ug.with_skill} with skill, ${ug.baseline} baseline): an expectation has no verdict. They are excluded from the pass rates below, not counted as failures; the measurement is not valid until they are graded.` })));
    }
    const summary = table(["metric", "with skill", "baseline"], b.summary.map((r) =>
      [r.label, fmt(r.kind, r.skill.value) + ival(r.kind, r.skill.interval), fmt(r.kind, r.base.value) + ival(r.kind, r.base.interval)]));
    const heads = b.headline.map((h) => el("div", { text: h.text ? `${h.label}: ${h.text}` : `${h.label}: ${num(h.value, 2)}${h.interval ? ` [${num(h.interval[0], 2)}, ${num(h.interval[1], 2)}]` : ""}${h.note ? ` (${h.note})` : ""}` }));
    out.push(section(`Summary (95% intervals in brackets when computed; with skill and baseline: about ${b.reading || "evals like these"})`, summary, ...heads));
    out.push(section("Per eval: with skill vs baseline", chart(b.per_eval_chart, "pass rate per eval with error bars"),
      table(["eval", "with skill", "baseline", "trials"], b.per_eval.map((r) =>
        [`${r.eval_id} ${r.eval_name}`, pct(r.skill) + ival("pass_rate", r.skill_ci), pct(r.base) + ival("pass_rate", r.base_ci), String(r.trials ?? "")]))));
    if (b.turns && b.turns.length) {
      const pts = (x) => { if (x === null || x === undefined) return "n/a"; const v = Number((x * 100).toFixed(0)) || 0; return `${v >= 0 ? "+" : ""}${v} pts`; };  // as wording.signed_points: never "-0"
      const arm = (a) => `${pct(a.rate)} (${a.passes}/${a.trials})${ival("pass_rate", a.interval)}`;
      out.push(section("Per turn: where in the conversation the skill helps",
        el("p", { cls: "muted", text: "A trial passes turn k when every expectation of turn k passes on that turn's answer." }),
        table(["turn", "evals", "with skill", "baseline", "difference", "p"], b.turns.map((t) =>
          [String(t.turn), String(t.n_evals), arm(t.with_skill), arm(t.baseline),
            pts(t.difference) + (t.difference_interval ? ` [${pts(t.difference_interval[0])}, ${pts(t.difference_interval[1])}]` : ""), num(t.p_value, 3)]))));
    }
    out.push(section("Variance across runs", el("p", { cls: "muted", text: "Pass rate: the share of trials in which every expectation passed (as everywhere in this viewer). Expectation pass rate: the share of a trial's expectations that passed, averaged over its runs (skill-creator's run_summary pass_rate)." }),
      table(["eval", "configuration", "runs", "pass rate (trials passed)", "expectation pass rate mean ± sd (min–max)", "tokens", "seconds"],
        b.variance.map((r) => [`${r.eval_id} ${r.eval_name}`, r.configuration, r.runs, trialsText(r.trials), spread(r.pass, "pass_rate"), spread(r.tokens, "avg_tokens"), spread(r.seconds, "s")]))));
    if (b.comparison) {
      const c = b.comparison;
      out.push(section("Regressions and improvements vs the previous iteration",
        el("div", { text: `regressed: ${c.regressed.join(", ") || "none"} · possible regressions: ${c.possible_regressions.join(", ") || "none"}` }),
        el("div", { text: `improved: ${c.improved.join(", ") || "none"} · possible improvements: ${c.possible_improvements.join(", ") || "none"}` }),
        table(["eval", "before → after", "label"], c.rows.map((r) => [`${r.eval_id} ${r.eval_name}`, r.counts, r.label]))));
    } else {
      out.push(section("Regressions and improvements", el("p", { cls: "muted", text: "No comparison with a previous iteration in benchmark.json." })));
    }
    out.push(section("Analyst notes", b.notes.length ? el("ul", {}, ...b.notes.map((n) => el("li", { text: n }))) : el("p", { cls: "muted", text: "No notes." })));
    out.push(section("Trend across iterations", chart(b.trend_chart, "pass rate, tokens and time per iteration"),
      table(["iteration", "pass rate with skill", "baseline", "avg tokens", "avg seconds"],
        b.trend.map((p) => [String(p.iteration), pct(p.skill_pass_rate), pct(p.base_pass_rate), num(p.tokens, 0), secs(p.seconds)]))));
    return out;
  }

  async function showBenchmark() {
    const panel = $("benchmark-panel");
    if (!state.bench) {
      try { state.bench = served ? await getJSON("api/benchmark") : boot.benchmark; }
      catch (err) { panel.replaceChildren(el("p", { cls: "note", text: String(err) })); return; }
      panel.replaceChildren(...renderBenchmark(state.bench));
      document.body.dataset.benchmarkReady = "1";
    }
  }

  // --- triggers tab (WORKSPACE/triggers/triggers.json, carried in the benchmark payload) ------

  const rateText = (r) => (r.value === null || r.value === undefined ? "n/a" :
    `${pct(r.value)}${r.interval ? ` [${pct(r.interval[0])}, ${pct(r.interval[1])}]` : ""} · ${r.numerator}/${r.denominator} runs`);
  const othersText = (o) => Object.entries(o || {}).map(([n, c]) => `${n} ×${c}`).join(", ") || "-";

  function renderTriggers(t) {
    if (!t) return [el("p", { cls: "muted", text: "No trigger evals in this workspace: run `skillassay triggers SKILL_DIR`." })];
    const out = [section("Trigger evals",
      el("div", { text: `${t.skill_name}: executor ${t.executor}${t.model ? ` (${t.model})` : ""}, ${t.runs_per_query} run(s) per query` }),
      el("div", { cls: "muted", text: `description: ${t.description}` }),
      ...(t.other_skills.length ? [el("div", { text: `installed beside it: ${t.other_skills.join(", ")}` })] : []),
      ...(t.gate ? [el("div", {}, "gate ", el("span", { cls: `badge ${t.gate.status}`, text: t.gate.status }), " ", el("span", { text: t.gate.headline }))] : []),
      table(["figure", "value [95% interval]"], t.figures.map((f) => [f.label, rateText(f)])))];
    const listed = (kind) => t.queries.filter((q) => q.outcome === kind);
    for (const [title, kind] of [["Misses (should have triggered)", "miss"], ["False triggers (should not have)", "false_trigger"]]) {
      const qs = listed(kind);
      out.push(section(`${title}: ${qs.length}`, qs.length ? el("ul", {}, ...qs.map((q) =>
        el("li", { text: `[${q.index}] ${q.query} — fired ${q.numerator}/${q.denominator}${Object.keys(q.others).length ? `; instead: ${othersText(q.others)}` : ""}` })))
        : el("p", { cls: "muted", text: "none" })));
    }
    if (t.other_skills.length) {
      out.push(section("Shadowing", el("p", { text: `other skills loaded where this one should have been: ${othersText(t.shadowed_by)}` })));
    }
    out.push(section("Per query", table(["#", "query", "should trigger", "fired [95% Wilson]", "outcome", "other skills"],
      t.queries.map((q) => [String(q.index), q.query, q.should_trigger ? "yes" : "no", rateText(q), q.outcome.replace("_", " "), othersText(q.others)]))));
    return out;
  }

  async function showTriggers() {
    const panel = $("triggers-panel");
    if (document.body.dataset.triggersReady) return;
    try { if (!state.bench) state.bench = served ? await getJSON("api/benchmark") : boot.benchmark; }
    catch (err) { panel.replaceChildren(el("p", { cls: "note", text: String(err) })); return; }
    panel.replaceChildren(...renderTriggers(state.bench.triggers));
    document.body.dataset.triggersReady = "1";
  }

  function selectTab(name) {
    for (const tab of ["outputs", "benchmark", "triggers"]) {
      $(`${tab}-panel`).hidden = tab !== name;
      $(`tab-${tab}`).setAttribute("aria-selected", String(tab === name));
    }
    if (name === "benchmark") showBenchmark();
    if (name === "triggers") showTriggers();
  }

  // --- start ---------------------------------------------------------------------------

  function onKey(e) {
    if (e.altKey || e.ctrlKey || e.metaKey || $("outputs-panel").hidden) return;
    const tag = (e.target && e.target.tagName) || "";
    if (tag === "TEXTAREA" || tag === "INPUT" || tag === "SELECT") return;
    if (e.key === "ArrowRight") { e.preventDefault(); show(state.pos + 1); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); show(state.pos - 1); }
  }

  function fillRunSelect() {
    const frag = document.createDocumentFragment();
    for (const r of state.runs) {
      const who = r.agent ? `${r.agent} · ` : "";
      frag.append(el("option", { value: r.id, text: `${who}eval ${r.eval_id} ${r.eval_name} · ${r.configuration} · run ${r.run_number}` }));
    }
    $("run-select").replaceChildren(frag);
  }

  // A matrix iteration (issue 37): show one agent's runs, or all of them.
  function agentFilter(allRuns, agents) {
    const pick = el("select", { id: "agent-select", "aria-label": "Show the runs of one agent" },
      el("option", { value: "", text: `all ${agents.length} agents` }),
      ...agents.map((a) => el("option", { value: a, text: a })));
    pick.addEventListener("change", () => {
      const current = state.runs[state.pos];
      state.runs = pick.value ? allRuns.filter((r) => r.agent === pick.value) : allRuns;
      fillRunSelect();
      const at = current ? state.runs.findIndex((r) => r.id === current.id) : -1;
      show(at >= 0 ? at : 0);
    });
    return pick;
  }

  async function start() {
    let index;
    try { index = served ? await getJSON("api/index") : boot.index; }
    catch (err) { $("run").replaceChildren(el("p", { cls: "note", text: String(err) })); return; }
    state.runs = index.runs;
    Object.assign(state.feedback, index.feedback);
    state.status = index.status;
    if (index.contents_note) $("outputs-panel").prepend(el("div", { cls: "note contents-note", id: "contents-note", text: index.contents_note }));
    if (index.budget_note) $("outputs-panel").prepend(el("div", { cls: "note budget-note", id: "budget-note", text: index.budget_note }));
    $("title").textContent = `${index.skill_name || "skill"} · iteration ${index.iteration ?? "?"} · ${index.runs.length} runs`;
    const select = $("run-select");
    fillRunSelect();
    const agents = Array.isArray(index.agents) ? index.agents : [];
    if (agents.length > 1) select.before(agentFilter(index.runs, agents));
    $("prev").addEventListener("click", () => show(state.pos - 1));
    $("next").addEventListener("click", () => show(state.pos + 1));
    select.addEventListener("change", () => show(state.runs.findIndex((r) => r.id === select.value)));
    $("feedback").addEventListener("input", onFeedbackInput);
    $("export").addEventListener("click", exportFeedback);
    $("complete").addEventListener("click", markComplete);
    $("tab-outputs").addEventListener("click", () => selectTab("outputs"));
    $("tab-benchmark").addEventListener("click", () => selectTab("benchmark"));
    $("tab-triggers").addEventListener("click", () => selectTab("triggers"));
    document.addEventListener("keydown", onKey);
    window.addEventListener("pagehide", flushAll);
    const wanted = decodeURIComponent(location.hash.slice(1));
    const at = state.runs.findIndex((r) => r.id === wanted);
    await show(at >= 0 ? at : 0);
    document.body.dataset.ready = "1";
  }

  start();
})();
