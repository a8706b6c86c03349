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

// The theme picker of Settings applies its choice at once (the server
// renders it on <html> from then on).
document.addEventListener("change", (e) => {
  if (e.target.matches?.("select[data-theme-select]")) document.documentElement.dataset.theme = e.target.value;
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
// they have scrolled up to read: the message at the top of the view keeps
// its place when a page of older messages lands above it. A chat opened on
// a search hit starts on that message.
(() => {
  let pinned = true;
  let anchor = null; // {el, at}: the first message in view and its offset in the content
  const scroller = () => document.getElementById("scroller");
  const atBottom = (el) => el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  // Offsets in the content, not the viewport: scrolling does not move
  // them, only what is inserted above does.
  const offset = (el, m) => m.getBoundingClientRect().top - el.getBoundingClientRect().top + el.scrollTop;
  // The first message not above the view; a binary search, since a long
  // read loads many pages.
  const firstInView = (el) => {
    const list = document.getElementById("messages")?.children;
    if (!list?.length) return null;
    let lo = 0, hi = list.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (offset(el, list[mid]) + list[mid].offsetHeight <= el.scrollTop) lo = mid + 1;
      else hi = mid;
    }
    let m = list[lo];
    while (m && !m.classList.contains("msg")) m = m.nextElementSibling;
    return m;
  };
  const remember = (el) => {
    const m = firstInView(el);
    anchor = m ? { el: m, at: offset(el, m) } : null;
  };
  document.addEventListener("scroll", (e) => {
    if (e.target.id !== "scroller") return;
    pinned = atBottom(e.target);
    remember(e.target);
  }, true);
  const follow = () => {
    const el = scroller();
    if (!el) return;
    if (pinned) {
      el.scrollTop = el.scrollHeight;
      return;
    }
    if (!anchor?.el.isConnected) return;
    const at = offset(el, anchor.el);
    if (Math.abs(at - anchor.at) >= 1) {
      el.scrollTop += at - anchor.at;
      anchor.at = at;
    }
  };
  new MutationObserver(follow).observe(document.documentElement, { childList: true, subtree: true, characterData: true });
  addEventListener("DOMContentLoaded", () => {
    const hit = document.querySelector("#messages .msg-hit");
    const el = scroller();
    if (!hit || !el) return follow();
    pinned = false;
    hit.scrollIntoView({ block: "center" });
    remember(el);
  });
})();

// The search box: Ctrl/Cmd+K or the Search button opens it; ↑↓ choose a
// match, Enter opens it, Esc closes the box. The matches come from the
// server as the user types (components/search.templ). Keys pressed in the
// box are the box's: they do not reach the page's other shortcuts.
(() => {
  const dialog = () => document.getElementById("search");
  const hits = () => [...document.querySelectorAll("#search-results .search-hit")];
  const open = () => {
    const d = dialog();
    if (!d) return;
    if (!d.open) d.showModal();
    const q = document.getElementById("search-q");
    q?.focus();
    q?.select();
  };
  const choose = (i) => {
    const list = hits();
    if (!list.length) return;
    const n = (i + list.length) % list.length;
    list.forEach((h, j) => h.setAttribute("aria-selected", j === n ? "true" : "false"));
    list[n].scrollIntoView({ block: "nearest" });
  };
  addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.key.toLowerCase() === "k") {
      e.preventDefault();
      open();
      return;
    }
    const d = dialog();
    if (!d?.open || !d.contains(e.target)) return;
    const list = hits();
    const i = list.findIndex((h) => h.getAttribute("aria-selected") === "true");
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      choose(i + (e.key === "ArrowDown" ? 1 : -1));
    } else if (e.key === "Enter" && !e.isComposing) {
      e.preventDefault();
      (list[i] || list[0])?.click();
    }
    if (["Escape", "Enter", "ArrowDown", "ArrowUp"].includes(e.key)) e.stopPropagation();
  }, true);
  document.addEventListener("click", (e) => {
    if (e.target.closest?.("#search-open")) open();
    else if (e.target === dialog()) dialog().close(); // the backdrop
  });
})();
