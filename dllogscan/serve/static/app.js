// dllogscan triage page: no dependencies, no external assets; talks only to this server.
"use strict";
const $ = (id) => document.getElementById(id);
// class letter -> name, as the server's dllogscan names them (GET /api/classes)
let CLASS_NAMES = {};
fetch("/api/classes").then((r) => r.json()).then((names) => { CLASS_NAMES = names; }).catch(() => {});

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {  // no clipboard permission (plain http, headless): the old way
    const t = el("textarea"); t.value = text; document.body.append(t); t.select();
    document.execCommand("copy"); t.remove();
  }
  const old = button.textContent; button.textContent = "Copied"; setTimeout(() => { button.textContent = old; }, 1200);
}

function copyButton(text) {
  const b = el("button", {type: "button", class: "copy"}, "Copy");
  b.addEventListener("click", () => copyText(text, b));
  return b;
}

function status(text, isError = false) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function render(doc) {
  const ds = doc.diagnoses || [];
  const top = ds[0];
  $("verdict").textContent = top
    ? `Class ${top.class}${top.subclass ? " / " + top.subclass : ""}: ${top.title} (${Math.round(top.confidence * 100)}% sure)`
    : (doc.notes || []).length ? "No DataLoader worker failure diagnosed: see the notes"
      : "No DataLoader worker failure found";
  $("verdict").dataset.class = top ? top.class : "";
  const notes = $("notes");
  notes.replaceChildren(...(doc.notes || []).map((n) => el("p", {class: "note"}, el("strong", {}, "Note: "), n)));
  notes.hidden = !(doc.notes || []).length;
  $("document-note").hidden = !doc.document;
  $("document-note").textContent = doc.document
    ? `Read as a ${doc.document}: line numbers refer to its ${doc.document === "notebook"
        ? "cells, each with what it printed" : "title, body and comments"}, in order.` : "";
  const box = $("diagnoses");
  box.replaceChildren();
  ds.forEach((d, i) => {
    const card = el("div", {class: `diagnosis ${d.class}`, "data-class": d.class});
    card.append(el("h3", {}, `${i + 1}. Class ${d.class}${d.subclass ? " / " + d.subclass : ""} — ${CLASS_NAMES[d.class] || "other"}`));
    card.append(el("p", {}, `${d.title} — ${Math.round(d.confidence * 100)}% sure`));
    const ctx = el("div", {class: "context"});
    for (const line of (doc.context || [])[i] || []) {
      ctx.append(el("div", {class: line.evidence ? "evidence" : ""}, el("span", {class: "num"}, String(line.line)), line.text));
    }
    card.append(el("h4", {}, "Evidence in context"), ctx);
    for (const n of d.notes || []) card.append(el("p", {class: "note"}, el("strong", {}, "Note: "), n));
    if (d.fixes.length) card.append(el("h4", {}, "What to do"));
    for (const f of d.fixes) {
      const fix = el("div", {class: "fix"}, el("strong", {}, `${f.rank}. ${f.title}`), ` — ${f.why || ""}`);
      for (const c of f.commands) fix.append(el("div", {class: "command"}, el("code", {}, c), copyButton(c)));
      if (f.code) fix.append(el("div", {class: "command"}, el("pre", {class: "code"}, f.code), copyButton(f.code)));
      card.append(fix);
    }
    box.append(card);
  });
  $("reply").value = doc.markdown || "";
  $("result").hidden = false;
}

async function send(url, body, headers) {
  status("Diagnosing…");
  let resp;
  try {
    resp = await fetch(url, {method: "POST", body, headers});
  } catch (e) {
    status(`Could not reach the server: ${e}`, true); return;
  }
  let doc = {};
  try { doc = await resp.json(); } catch (e) { /* not JSON */ }
  if (!resp.ok) {
    status(resp.status === 413 ? `Too large: ${doc.error || "the server refused it"}` : `Error ${resp.status}: ${doc.error || ""}`, true);
    return;
  }
  if (doc.error) status(`Partly read: ${doc.error}`, true); else status("Done.");
  render(doc);
}

$("diagnose").addEventListener("click", () => {
  send("/api/diagnose", JSON.stringify({text: $("paste").value, redact: $("redact").checked}),
       {"Content-Type": "application/json"});
});

function sendFile(file) {
  $("paste").value = `(file ${file.name}, ${file.size} bytes)`;
  send(`/api/diagnose-file?redact=${$("redact").checked ? 1 : 0}`, file, {"Content-Type": "application/octet-stream"});
}

$("file").addEventListener("change", (e) => { if (e.target.files[0]) sendFile(e.target.files[0]); });
const area = $("paste");
area.addEventListener("dragover", (e) => { e.preventDefault(); area.classList.add("dragover"); });
area.addEventListener("dragleave", () => area.classList.remove("dragover"));
area.addEventListener("drop", (e) => {
  e.preventDefault(); area.classList.remove("dragover");
  if (e.dataTransfer.files[0]) sendFile(e.dataTransfer.files[0]);
});
document.querySelectorAll("button[data-copy-from]").forEach((b) => {
  b.addEventListener("click", () => copyText($(b.dataset.copyFrom).value, b));
});
