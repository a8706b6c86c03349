// Parley — renaming and deleting a chat, and changing its folder, in the
// page, never through the browser's prompt/confirm. ✎ opens #rename-dialog with the title selected
// (Enter saves, Esc cancels). ✕ deletes at once: the row goes, the server
// puts the chat in its trash, and a "Chat deleted · Undo" toast offers it
// back for a few seconds (the server keeps it restorable for 10 s, and
// deletes it for good after, even if this page is closed). The sidebar's
// stream then shows the server's list.
(() => {
  const UNDO_MS = 6000; // how long the toast offers Undo; the server keeps 10 s
  const PENDING = "parley-undo"; // sessionStorage: a toast that outlives a page change

  // --- Rename ---
  let renameURL = "";
  document.addEventListener("click", (e) => {
    const btn = e.target instanceof Element && e.target.closest("#sidebar .thread .rename[data-rename]");
    if (!btn) return;
    e.preventDefault();
    const dlg = document.getElementById("rename-dialog");
    if (!dlg) return;
    renameURL = btn.dataset.rename;
    const input = dlg.querySelector("input[name=title]");
    dlg.querySelector(".rename-error").textContent = "";
    input.value = btn.dataset.title || "";
    dlg.showModal();
    input.focus();
    input.select();
  });
  document.addEventListener("click", (e) => {
    if (e.target instanceof Element && e.target.closest("#rename-dialog .rename-cancel")) {
      document.getElementById("rename-dialog")?.close();
    }
  });
  document.addEventListener("submit", async (e) => {
    const dlg = e.target.closest?.("#rename-dialog");
    if (!dlg) return;
    e.preventDefault();
    const title = dlg.querySelector("input[name=title]").value.trim();
    if (!title) return;
    const err = dlg.querySelector(".rename-error");
    try {
      const res = await fetch(renameURL, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ title }),
      });
      if (!res.ok) throw new Error((await res.text()).trim() || res.statusText);
      dlg.close();
    } catch (ex) {
      err.textContent = "Not renamed: " + ex.message;
    }
  }, true);

  // --- The chat's folder (where no native picker is) ---
  let workspaceURL = "";
  document.addEventListener("click", (e) => {
    const btn = e.target instanceof Element && e.target.closest("#workspace[data-workspace-url]");
    if (!btn) return;
    e.preventDefault();
    const dlg = document.getElementById("workspace-dialog");
    if (!dlg) return;
    workspaceURL = btn.dataset.workspaceUrl;
    const input = dlg.querySelector("input[name=path]");
    dlg.querySelector(".workspace-error").textContent = "";
    input.value = btn.dataset.workspace || "";
    dlg.showModal();
    input.focus();
    input.select();
  });
  document.addEventListener("click", (e) => {
    if (e.target instanceof Element && e.target.closest("#workspace-dialog .workspace-cancel")) {
      document.getElementById("workspace-dialog")?.close();
    }
  });
  document.addEventListener("submit", async (e) => {
    const dlg = e.target.closest?.("#workspace-dialog");
    if (!dlg) return;
    e.preventDefault();
    const path = dlg.querySelector("input[name=path]").value.trim();
    if (!path) return;
    const err = dlg.querySelector(".workspace-error");
    try {
      const res = await fetch(workspaceURL, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ path }),
      });
      if (!res.ok) throw new Error((await res.text()).trim() || res.statusText);
      dlg.close();
    } catch (ex) {
      err.textContent = ex.message;
    }
  }, true);

  // --- Delete with Undo ---
  function toast(text, undo) {
    const box = document.getElementById("toasts");
    if (!box) return;
    box.replaceChildren();
    const t = document.createElement("div");
    t.className = "toast";
    t.setAttribute("role", "status");
    const span = document.createElement("span");
    span.textContent = text;
    t.append(span);
    let timer;
    const close = () => { clearTimeout(timer); t.remove(); };
    if (undo) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "toast-undo";
      b.textContent = "Undo";
      b.addEventListener("click", () => { close(); undo.run(); });
      t.append(" · ", b);
      timer = setTimeout(close, undo.ms);
    } else {
      timer = setTimeout(close, UNDO_MS);
    }
    box.append(t);
  }

  function offerUndo(d) {
    const ms = d.until - Date.now();
    if (ms <= 0) return;
    toast("Chat deleted", { ms, run: () => restore(d) });
  }

  async function restore(d) {
    sessionStorage.removeItem(PENDING);
    try {
      const res = await fetch(d.restore, { method: "POST" });
      if (!res.ok) throw new Error(res.status === 404 ? "it is deleted for good" : (await res.text()).trim());
    } catch (ex) {
      toast("Not restored: " + ex.message);
      return;
    }
    if (d.reopen) {
      location.href = d.chat;
      return;
    }
    const row = document.getElementById(d.row);
    if (row) row.hidden = false; // the stream's sidebar follows
  }

  document.addEventListener("submit", async (e) => {
    const form = e.target.closest?.("form[data-delete-chat]");
    if (!form) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    const row = form.closest(".thread");
    const d = {
      restore: form.dataset.restore,
      chat: form.dataset.chat,
      row: row?.id || "",
      reopen: location.pathname === form.dataset.chat,
      until: Date.now() + UNDO_MS,
    };
    if (row) row.hidden = true;
    try {
      // manual: the server answers a form post with a redirect to the
      // new-chat screen, which is not wanted here.
      const res = await fetch(form.action, { method: "POST", redirect: "manual" });
      if (!res.ok && res.type !== "opaqueredirect") throw new Error((await res.text()).trim() || res.statusText);
    } catch (ex) {
      if (row) row.hidden = false;
      toast("Not deleted: " + ex.message);
      return;
    }
    if (d.reopen) {
      // The open chat is gone: the toast follows to the new-chat screen.
      sessionStorage.setItem(PENDING, JSON.stringify(d));
      location.href = "/";
      return;
    }
    offerUndo(d);
  }, true);

  // A delete made on the page before this one.
  try {
    const d = JSON.parse(sessionStorage.getItem(PENDING) || "null");
    sessionStorage.removeItem(PENDING);
    if (d) offerUndo(d);
  } catch {
    sessionStorage.removeItem(PENDING);
  }
})();
