// Parley's page behaviour that is not state: keyboard, copy buttons,
// confirmations and keeping the newest message in view. State lives on the
// server; Datastar patches it in.
"use strict";

// Flow control of the chat stream (ui/flow.go): a frame that carries much
// ends by asking the page to acknowledge it, and the stream sends the next
// one only then. The page answers once the frame is drawn (after the next
// rendering, which a frame in requestAnimationFrame precedes), at once
// when hidden, where nothing is drawn and animation frames wait.
window.parleyAck = (url) => {
  const send = () => fetch(url, { method: "POST" }).catch(() => {}); // a lost answer only delays the stream a little
  if (document.hidden) send();
  else requestAnimationFrame(() => setTimeout(send, 0));
};

// Keyboard: one keydown handler for the page. First the keys that belong to
// where the focus is (Enter in a composer, arrows in a question), then the
// shortcuts. The shortcuts are the rows of the ? overlay (#shortcuts, from
// components/keyboard.templ): a row's data-keys runs the function named by
// its data-action in shortcutActions. To add a shortcut, add a row there and
// its action here; an action that returns false leaves the key to the
// browser.
const shortcutActions = {
  "new-chat": () => clickOrFalse(document.getElementById("new-chat")),
  // The search box binds Ctrl/Cmd+K itself (below); this runs only if it did not.
  "search": () => clickOrFalse(document.getElementById("search-open")),
  "focus-composer": () => {
    const box = document.querySelector("#draft, .welcome textarea");
    if (!box) return false;
    box.focus();
  },
  // Esc answers "skip" to an open question, else denies the approval that
  // waits (with the reason typed, if any), else stops the reply (or the
  // run that waits on a plan).
  "stop": (e) => {
    const q = e.target.closest?.("[data-question]") || document.querySelector("[data-question]");
    if (q) return clickOrFalse(q.querySelector(".q-skip"));
    const deny = (e.target.closest?.("[data-approval]") || document.querySelector("[data-approval]"))?.querySelector(".approval-deny");
    if (deny) return deny.requestSubmit();
    return clickOrFalse(document.getElementById("stop"));
  },
  "toggle-mode": () => clickOrFalse(document.querySelector("#mode-switch .mode:not(.active)")),
  // The sidebar folds to a rail (or, on a phone, the drawer opens): drawer.js.
  "toggle-sidebar": () => window.parleySidebar ? window.parleySidebar.toggle() : false,
  "inbox": () => clickOrFalse(document.getElementById("inbox-bell")),
  "queue": () => clickOrFalse(document.getElementById("queue")),
  "approve-once": () => clickOrFalse(focusedApproval()?.querySelector(".approve-once")),
  "approve-always": () => clickOrFalse(focusedApproval()?.querySelector(".approve-always")),
  "deny": () => {
    const form = focusedApproval()?.querySelector(".approval-deny");
    if (!form) return false;
    form.requestSubmit();
  },
  "shortcuts": () => {
    const d = document.getElementById("shortcuts");
    if (!d) return false;
    d.showModal();
  },
};

function clickOrFalse(el) {
  if (!el) return false;
  el.click();
}

// The approval the keys act on: the one holding the focus, or, when nothing
// has the focus, the first one waiting.
function focusedApproval() {
  const a = document.activeElement;
  if (a && a !== document.body) return a.closest?.("[data-approval]") || null;
  return document.querySelector("[data-approval]");
}

// Fields where a plain key is text, not a shortcut.
function isEditable(el) {
  return !!el?.matches?.("textarea, select, [contenteditable=''], [contenteditable=true], " +
    "input:not([type=checkbox]):not([type=radio]):not([type=button]):not([type=submit]):not([type=file])");
}

// keysMatch reads "mod+shift+o": mod is Ctrl, or Cmd on a Mac. A key that
// is a symbol ("?", ".") is matched by the character, whatever Shift did.
function keysMatch(spec, e) {
  const parts = spec.split("+");
  const key = parts.pop();
  if (parts.includes("mod") !== (e.ctrlKey || e.metaKey) || parts.includes("alt") !== e.altKey) return false;
  if (key.length === 1 && !/[a-z0-9]/.test(key)) return e.key === key;
  return parts.includes("shift") === e.shiftKey && e.key.toLowerCase() === key;
}

document.addEventListener("keydown", (e) => {
  const t = e.target;
  if (e.defaultPrevented || e.isComposing) return;
  if (e.key === "Enter" && !e.shiftKey && !e.altKey && t.matches?.("textarea[data-enter-submits]")) {
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
  if (document.querySelector("dialog[open]")) return; // the overlay has the keys (Esc closes it)
  if (e.key === "Escape" && inboxOpen()) {
    document.querySelector("#inbox-panel .inbox-close")?.click();
    return;
  }
  const menu = document.querySelector("details.chat-menu[open]");
  if (menu && e.key === "Escape") {
    menu.open = false;
    menu.querySelector("summary")?.focus();
    return;
  }
  const typing = isEditable(t);
  for (const row of document.querySelectorAll("#shortcuts [data-action]")) {
    const spec = row.dataset.keys, action = shortcutActions[row.dataset.action];
    if (!action || !keysMatch(spec, e)) continue;
    if (typing && !/^(mod|alt)\+|escape$/.test(spec)) continue; // a plain key is text here
    if (action(e) !== false) e.preventDefault();
    return;
  }
});

// On a Mac the shortcuts say ⌘ where others press Ctrl (see ModKey).
if (/Mac|iPhone|iPad/.test(navigator.platform)) document.documentElement.classList.add("mac");

function inboxOpen() {
  const panel = document.getElementById("inbox-panel");
  return !!panel && panel.style.display !== "none";
}

// The chat menu closes on a click outside it or on one of its items; the
// inbox on a click outside it (the bell toggles it itself).
document.addEventListener("click", (e) => {
  if (inboxOpen() && !e.target.closest?.("#inbox-panel, #inbox-bell")) {
    document.querySelector("#inbox-panel .inbox-close")?.click();
  }
  for (const menu of document.querySelectorAll("details.chat-menu[open]")) {
    if (!menu.contains(e.target) || e.target.closest?.(".menu-item")) menu.open = false;
  }
});

// A file input marked data-autosubmit sends its form once a file is chosen;
// clicking it again forgets the last choice, so the same file can be sent
// again.
document.addEventListener("change", (e) => {
  if (e.target.matches?.("input[type=file][data-autosubmit]") && e.target.files.length) e.target.form?.requestSubmit();
});
document.addEventListener("click", (e) => {
  if (e.target.matches?.("input[type=file][data-autosubmit]")) e.target.value = "";
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

// Copy buttons: on code blocks (the code as shown) and on replies (their
// Markdown, read from the server).
async function copyText(text) {
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
}

async function replyText(src) {
  const res = await fetch(src);
  if (!res.ok) throw new Error((await res.text()).trim() || res.statusText);
  return res.text();
}

// Fork posts the page's one form to the message's fork URL: the browser
// goes to the new chat, as a form of its own would take it (components'
// MessageTree says why there is none).
document.addEventListener("click", (e) => {
  const btn = e.target.closest?.("button.msg-fork[data-fork]");
  const form = document.getElementById("fork-form");
  if (!btn || !form) return;
  form.action = btn.dataset.fork;
  form.requestSubmit();
});

document.addEventListener("click", async (e) => {
  const btn = e.target.closest?.("button.copy, button.msg-copy");
  if (!btn) return;
  if (btn.classList.contains("msg-copy")) {
    const text = replyText(btn.dataset.src); // asked for within the click
    try {
      try {
        // WebKit lets a click put on the clipboard what arrives later
        // only this way; Chromium takes it too.
        await navigator.clipboard.write([new ClipboardItem({
          "text/plain": text.then((t) => new Blob([t], { type: "text/plain" })),
        })]);
      } catch {
        await copyText(await text);
      }
    } catch (err) {
      btn.textContent = "Not copied";
      btn.title = err.message;
      return;
    }
  } else {
    // The code's text, not its rendering: a long block's lines are in
    // blocks of lines (ui/markdown's chunkLines), which innerText would
    // part with blank lines.
    const text = btn.closest(".code")?.querySelector("pre code")?.textContent;
    if (text === undefined) return;
    await copyText(text);
  }
  btn.textContent = "Copied";
  setTimeout(() => (btn.textContent = "Copy"), 1200);
});

// A question or approval that appears takes the focus, like a dialog would
// (an approval's Y, A, N answer it), unless the user is typing: focus
// never moves from a field that holds text or took a key in the last
// moments, for a keystroke meant for the text must never answer what
// appeared (a Space on a question's option picks it). Sending a message
// ends the typing: the approval it leads to takes the focus.
const typingPause = 1500; // ms after the last key in a field that still count as typing
let lastKeyInField = -Infinity;
document.addEventListener("keydown", (e) => {
  if (isEditable(e.target)) lastKeyInField = performance.now();
}, true);
// Runs after the keydown above when Enter sends the message.
document.addEventListener("submit", () => (lastKeyInField = -Infinity), true);

function userTyping() {
  const el = document.activeElement;
  if (!isEditable(el)) return false;
  if (performance.now() - lastKeyInField < typingPause) return true;
  const text = el.isContentEditable ? el.textContent : el.value;
  return !!text?.trim();
}

// addedMatching returns the elements matching selector among the nodes
// that records added (and inside them), and, for attribute records, their
// targets, in document order. Observers use it instead of searching the
// whole document: its cost is that of what changed.
function addedMatching(records, selector) {
  const found = new Set();
  for (const r of records) {
    if (r.type === "attributes") {
      if (r.target.matches?.(selector)) found.add(r.target);
      continue;
    }
    for (const n of r.addedNodes) {
      if (n.nodeType !== 1) continue;
      if (n.matches(selector)) found.add(n);
      for (const el of n.querySelectorAll(selector)) found.add(el);
    }
  }
  return [...found].filter((el) => el.isConnected).sort(inDocumentOrder);
}

function inDocumentOrder(a, b) {
  return a === b ? 0 : a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1;
}

// The element that takes the focus in a waiting question, approval or plan.
function waitingFocusTarget(item) {
  if (item.matches("[data-question]")) return item.querySelector(".q-option input, .q-option, textarea");
  if (item.matches("[data-approval]")) return item.querySelector(".approve-once");
  return item.querySelector("button, textarea, input");
}

(() => {
  let seen = new Set();
  const take = (item) => {
    if (seen.has(item.id)) return;
    seen.add(item.id);
    if (userTyping()) return; // the waiting pill leads back to it
    waitingFocusTarget(item)?.focus({ preventScroll: true });
    item.scrollIntoView({ block: "nearest" });
  };
  // Only what was added is looked at: a long reply's stream adds to a
  // document of 100,000s of elements every frame, and a search of all of
  // it each time was a tenth of the page's work (issue 12).
  new MutationObserver((records) => {
    for (const item of addedMatching(records, "[data-question], [data-approval]")) take(item);
  }).observe(document.documentElement, { childList: true, subtree: true });
  addEventListener("DOMContentLoaded", () => document.querySelectorAll("[data-question], [data-approval]").forEach(take));
})();

// A waiting item stays reachable: while a question, approval or plan waits
// and none is in view, the "waiting for you" pill (ChatView) points to the
// first one, ↓ below the view or ↑ above it; a click brings it into view
// and gives it the focus. Checked once per frame, and only reads the
// layout while something waits.
(() => {
  const waiting = "#messages [data-question], #messages [data-approval], #messages .plan-pending[data-plan]";
  const minVisible = 40; // px of an item in view for it to count as seen
  let target = null;
  // The items that may wait, kept from what the observer saw added or
  // changed (see addedMatching), so a frame does not search the page.
  let candidates = new Set();
  const update = () => {
    const pill = document.getElementById("waiting-pill");
    const el = document.getElementById("scroller");
    if (!pill || !el) return;
    for (const c of candidates) if (!c.isConnected || !c.matches(waiting)) candidates.delete(c);
    const items = [...candidates].sort(inDocumentOrder);
    target = null;
    let below = true;
    if (items.length) {
      const view = el.getBoundingClientRect();
      for (const item of items) {
        const r = item.getBoundingClientRect();
        const shown = Math.min(r.bottom, view.bottom) - Math.max(r.top, view.top);
        if (shown >= Math.min(r.height, minVisible)) {
          target = null;
          break;
        }
        if (!target) {
          target = item;
          below = r.top >= view.bottom;
        }
      }
    }
    if (pill.hidden !== !target) pill.hidden = !target;
    const text = (below ? "↓" : "↑") + " waiting for you";
    if (target && pill.textContent !== text) pill.textContent = text;
  };
  let queued = false;
  const updateSoon = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      update();
    });
  };
  new MutationObserver((records) => {
    for (const c of addedMatching(records, waiting)) candidates.add(c);
    updateSoon();
  }).observe(document.documentElement, {
    childList: true, subtree: true, attributes: true,
    attributeFilter: ["class", "data-state", "hidden", "data-question", "data-approval", "data-plan"],
  });
  addEventListener("DOMContentLoaded", () => {
    candidates = new Set(document.querySelectorAll(waiting));
    updateSoon();
  });
  document.addEventListener("scroll", (e) => e.target.id === "scroller" && updateSoon(), true);
  addEventListener("resize", updateSoon);
  document.addEventListener("click", (e) => {
    if (!e.target.closest?.("#waiting-pill") || !target?.isConnected) return;
    target.scrollIntoView({ block: "center" });
    waitingFocusTarget(target)?.focus({ preventScroll: true });
  });
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
  // Only the reader unpins the view: by moving it up with the wheel, a
  // touch, a key, the scrollbar or the waiting pill, or by a jump of more
  // than a screen up (Home, a script). The content changing under the view
  // does not: a fast reply grows past the bottom between the page's scroll
  // and its event (at 8 KiB a frame the view stopped following half a
  // second into a long reply), and content above getting shorter, or the
  // view taller, makes the browser clamp the scroll.
  let top = 0; // the scroller's scrollTop as the page last saw or set it
  let moved = -Infinity; // when the reader last did something that scrolls
  const reader = (e) => (moved = e.timeStamp);
  addEventListener("wheel", reader, { capture: true, passive: true });
  addEventListener("touchmove", reader, { capture: true, passive: true });
  addEventListener("keydown", (e) => {
    if (["PageUp", "PageDown", "ArrowUp", "ArrowDown", "Home", "End", " "].includes(e.key) && !e.target.closest?.("input, textarea, select, [contenteditable]")) reader(e);
  }, true);
  let dragging = false; // the scrollbar is held
  addEventListener("pointerdown", (e) => {
    dragging = e.target.id === "scroller";
    if (dragging || e.target.closest?.("#waiting-pill")) reader(e);
  }, true);
  for (const end of ["pointerup", "pointercancel"]) addEventListener(end, () => (dragging = false), true);
  document.addEventListener("scroll", (e) => {
    const el = e.target;
    if (el.id !== "scroller") return;
    if (atBottom(el)) pinned = true;
    else if (el.scrollTop < top && (dragging || e.timeStamp - moved < 1000 || top - el.scrollTop > el.clientHeight)) pinned = false;
    top = el.scrollTop;
    remember(el);
  }, true);
  // A reply of many blocks (a long answer, a generated file) has its code
  // blocks and tables laid out only near the screen (.md-many, app.css):
  // 1 MiB of Markdown is some 700,000 elements. Other replies are laid out
  // whole, so that a jump to a message or a page of older ones lands on
  // real heights, not estimates. A reply being written is not marked: its
  // finished blocks are in chunks laid out only near the screen already
  // (ui/markdown's Stream), and thousands of blocks each watched for the
  // screen cost every frame more than the chunks save.
  const MANY = 150;
  // The bodies are found through the messages' children, not a search of
  // #messages, which would visit every element of every reply each frame.
  const markMany = () => {
    for (const m of document.getElementById("messages")?.children || []) {
      for (const body of m.children) {
        if (!body.classList.contains("msg-body") || body.classList.contains("md-many")) continue;
        if (body.childElementCount > MANY && ![...body.children].some((c) => c.classList.contains("md-live"))) body.classList.add("md-many");
      }
    }
  };
  // The messages' height changes without a mutation too: a block laid out
  // only near the screen (content-visibility: auto) takes its real height
  // once the view reaches it, and the bottom moves. The observer runs after
  // layout, so the scroll it sees is where the browser put the view for
  // the new heights (a clamp, or scroll anchoring keeping what is in view
  // in place): a view that followed still does, however far that moved it.
  let watched = null;
  const heights = new ResizeObserver(() => {
    const el = scroller();
    if (el && pinned) top = el.scrollTop;
    followSoon();
  });
  const watch = () => {
    const list = document.getElementById("messages");
    if (list === watched) return;
    if (watched) heights.unobserve(watched);
    if (list) heights.observe(list);
    watched = list;
  };
  const follow = () => {
    watch();
    markMany();
    const el = scroller();
    if (!el) return;
    if (pinned) {
      el.scrollTop = el.scrollHeight;
      top = el.scrollTop;
      return;
    }
    if (!anchor?.el.isConnected) return;
    const at = offset(el, anchor.el);
    if (Math.abs(at - anchor.at) >= 1) {
      el.scrollTop += at - anchor.at;
      anchor.at = at;
      top = el.scrollTop;
    }
  };
  // Once per frame: reading scrollHeight lays the page out, and a long
  // reply's stream changes it many times between two frames.
  let queued = false;
  const followSoon = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      follow();
    });
  };
  new MutationObserver(followSoon).observe(document.documentElement, { childList: true, subtree: true, characterData: true });
  addEventListener("DOMContentLoaded", () => {
    markMany();
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

// Inbox: tell the server whether this page has the focus (a desktop shell
// shows OS notifications only when no Parley page does), and in a browser
// show a notification for what needs the user at once — an urgent or high
// notification, a question — while the page is in the background.
(() => {
  const page = Math.random().toString(36).slice(2) + Date.now().toString(36);
  const report = (focused) => {
    const body = JSON.stringify({ page, focused });
    if (!focused && navigator.sendBeacon) {
      navigator.sendBeacon("/inbox/focus", new Blob([body], { type: "application/json" }));
      return;
    }
    fetch("/inbox/focus", { method: "POST", headers: { "Content-Type": "application/json" }, body }).catch(() => {});
  };
  const now = () => document.visibilityState === "visible" && document.hasFocus();
  let last = null;
  const update = () => {
    const f = now();
    if (f !== last) {
      last = f;
      report(f);
    }
  };
  window.addEventListener("focus", update);
  window.addEventListener("blur", update);
  document.addEventListener("visibilitychange", update);
  window.addEventListener("pagehide", () => report(false));
  update();

  // Items already seen on this page never alert again.
  const seen = new Set();
  let primed = false;
  const scan = () => {
    const list = document.getElementById("inbox-list");
    if (!list?.hasAttribute("data-live")) return; // not yet filled by the stream
    for (const li of list.querySelectorAll(".inbox-item[data-key]")) {
      const key = li.dataset.key;
      if (seen.has(key)) continue;
      seen.add(key);
      if (!primed || !li.hasAttribute("data-alert") || now()) continue;
      if (!("Notification" in window) || Notification.permission !== "granted") continue;
      const n = new Notification("Parley: " + (li.querySelector(".inbox-kind")?.innerText || "needs you"), {
        body: li.dataset.title || "", tag: key,
      });
      n.onclick = () => {
        window.focus();
        location.href = li.querySelector(".inbox-open")?.getAttribute("href") || "/";
      };
    }
    primed = true;
  };
  const root = document.getElementById("inbox-root");
  if (root) new MutationObserver(scan).observe(root, { childList: true, subtree: true });
  // Asking needs a gesture: the first click on the bell asks once.
  document.addEventListener("click", (e) => {
    if (e.target.closest?.("#inbox-bell") && "Notification" in window && Notification.permission === "default") {
      Notification.requestPermission().catch(() => {});
    }
  });
})();

// A reply whose model has not answered yet counts up from the run's start
// (data-waiting-since, Unix ms from the server): "0:42", "12:05", "1:02:07".
(() => {
  const clock = (ms) => {
    const s = Math.max(0, Math.floor(ms / 1000));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), ss = String(s % 60).padStart(2, "0");
    return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
  };
  // A clock is a child of a message (MessageView): looking there, not in
  // the whole page, keeps a tick cheap beside a reply of 100,000s of elements.
  const clocks = () => [...document.getElementById("messages")?.children || []].flatMap((m) => [...m.children].filter((c) => c.dataset.waitingSince));
  const tick = () => {
    for (const el of clocks()) {
      const out = el.querySelector("[data-wait-clock]");
      const text = clock(Date.now() - Number(el.dataset.waitingSince));
      if (out && out.textContent !== text) out.textContent = text;
    }
  };
  tick();
  setInterval(tick, 250); // a new reply shows 0:00 for a quarter second at most
})();

// Attachments: a drop on the chat or a paste of files in a message box
// goes to the composer's file input, as the picker (the clip) does; its change
// uploads them (components.AttachForm). Only files: a dropped or pasted
// text stays text.
function attachFiles(files) {
  const input = document.getElementById("attach-input");
  if (!input || !files?.length) return false;
  const dt = new DataTransfer();
  for (const f of files) dt.items.add(f);
  input.files = dt.files;
  input.dispatchEvent(new Event("change", { bubbles: true }));
  return true;
}
const hasFiles = (e) => [...(e.dataTransfer?.types || [])].includes("Files");
document.addEventListener("dragover", (e) => {
  if (!hasFiles(e) || !document.getElementById("attach-input")) return;
  e.preventDefault();
  document.getElementById("chat")?.classList.add("dropping");
});
document.addEventListener("dragleave", (e) => {
  if (!e.relatedTarget) document.getElementById("chat")?.classList.remove("dropping");
});
document.addEventListener("drop", (e) => {
  document.getElementById("chat")?.classList.remove("dropping");
  if (hasFiles(e) && attachFiles(e.dataTransfer.files)) e.preventDefault();
});
document.addEventListener("paste", (e) => {
  if (!e.target.matches?.("#draft, #welcome-text") || !e.clipboardData?.files.length) return;
  if (attachFiles(e.clipboardData.files)) e.preventDefault();
});
