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

  // --- One-field dialogs: renaming a chat, its folder ---
  // opener: what opens the dialog; url and value: the opener's POST address
  // and the field's first value; name: the field, which is the JSON body's
  // one key; refused: what a refusal's reason is prefixed with.
  function fieldDialog({ opener, dialog, name, url, value, refused }) {
    let postTo = "";
    document.addEventListener("click", (e) => {
      const btn = e.target instanceof Element && e.target.closest(opener);
      if (!btn) return;
      e.preventDefault();
      const dlg = document.getElementById(dialog);
      if (!dlg) return;
      postTo = url(btn);
      const input = dlg.querySelector(`input[name=${name}]`);
      dlg.querySelector(".dialog-error").textContent = "";
      input.value = value(btn) || "";
      dlg.showModal();
      input.focus();
      input.select();
    });
    document.addEventListener("click", (e) => {
      if (e.target instanceof Element && e.target.closest(`#${dialog} .dialog-cancel`)) {
        document.getElementById(dialog)?.close();
      }
    });
    document.addEventListener("submit", async (e) => {
      const dlg = e.target.closest?.(`#${dialog}`);
      if (!dlg) return;
      e.preventDefault();
      const v = dlg.querySelector(`input[name=${name}]`).value.trim();
      if (!v) return;
      try {
        const res = await fetch(postTo, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ [name]: v }),
        });
        if (!res.ok) throw new Error((await res.text()).trim() || res.statusText);
        dlg.close();
      } catch (ex) {
        dlg.querySelector(".dialog-error").textContent = refused + ex.message;
      }
    }, true);
  }
  fieldDialog({
    opener: "#sidebar .thread .rename[data-rename]", dialog: "rename-dialog", name: "title",
    url: (b) => b.dataset.rename, value: (b) => b.dataset.title, refused: "Not renamed: ",
  });
  // The chat's folder, where no native picker is.
  fieldDialog({
    opener: "#workspace[data-workspace-url]", dialog: "workspace-dialog", name: "path",
    url: (b) => b.dataset.workspaceUrl, value: (b) => b.dataset.workspace, refused: "",
  });

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
