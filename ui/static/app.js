// Parley's page behaviour that is not state: keyboard, copy buttons,
// confirmations and keeping the newest message in view. State lives on the
// server; Datastar patches it in.
"use strict";

// Enter sends, Shift+Enter makes a new line (composers marked data-enter-submits).
document.addEventListener("keydown", (e) => {
  const t = e.target;
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing && t.matches?.("textarea[data-enter-submits]")) {
    e.preventDefault();
    t.form?.requestSubmit();
    return;
  }
  const q = t.closest?.("[data-question]");
  if (q && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
    const opts = [...q.querySelectorAll(".q-option")];
    const i = opts.indexOf(t.closest(".q-option"));
    const next = opts[(i + (e.key === "ArrowDown" ? 1 : opts.length - 1)) % opts.length];
    if (next) {
      e.preventDefault();
      (next.querySelector("input") || next).focus();
    }
    return;
  }
  if (e.key === "Escape") {
    const open = q || document.querySelector("[data-question]");
    if (open) {
      open.querySelector(".q-skip")?.click();
      return;
    }
    document.getElementById("stop")?.click();
    return;
  }
  if ((e.ctrlKey || e.metaKey) && e.shiftKey && (e.key === "O" || e.key === "o")) {
    e.preventDefault();
    document.getElementById("new-chat")?.click();
  }
});

// Forms with data-confirm ask first.
document.addEventListener("submit", (e) => {
  const msg = e.target.dataset?.confirm;
  if (msg && !confirm(msg)) e.preventDefault();
}, true);

// Copy buttons on code blocks.
document.addEventListener("click", async (e) => {
  const btn = e.target.closest?.("button.copy");
  if (!btn) return;
  const pre = btn.closest(".code")?.querySelector("pre");
  if (!pre) return;
  const text = pre.innerText;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const ta = document.createElement("textarea");
    ta.value = text;
    document.body.append(ta);
    ta.select();
    document.execCommand("copy");
    ta.remove();
  }
  btn.textContent = "Copied";
  setTimeout(() => (btn.textContent = "Copy"), 1200);
});

// A question that appears takes the focus, like a dialog would.
(() => {
  let seen = new Set();
  new MutationObserver(() => {
    for (const q of document.querySelectorAll("[data-question]")) {
      if (seen.has(q.id)) continue;
      seen.add(q.id);
      const first = q.querySelector(".q-option input, .q-option, textarea");
      first?.focus({ preventScroll: true });
      q.scrollIntoView({ block: "nearest" });
    }
  }).observe(document.documentElement, { childList: true, subtree: true });
})();

// Follow the conversation while the reader is at the bottom; stay put when
// they have scrolled up to read.
(() => {
  let pinned = true;
  const scroller = () => document.getElementById("scroller");
  const atBottom = (el) => el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  document.addEventListener("scroll", (e) => {
    if (e.target.id === "scroller") pinned = atBottom(e.target);
  }, true);
  const follow = () => {
    const el = scroller();
    if (el && pinned) el.scrollTop = el.scrollHeight;
  };
  new MutationObserver(follow).observe(document.documentElement, { childList: true, subtree: true, characterData: true });
  addEventListener("DOMContentLoaded", follow);
})();
