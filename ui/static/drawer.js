// Parley — the sidebar as a drawer in phone-sized windows (below 760 px;
// app.css lays it out). The ☰ button in the phone bar opens it; the
// backdrop, Esc, or choosing something in it closes it. The open state
// lives on <html>, which no stream morphs, so a sidebar update from the
// server leaves an open drawer open.
//
// In wider windows the sidebar folds to a rail of icons (Hide the sidebar
// in its head, Show the sidebar on the rail, or Ctrl+Shift+S through
// window.parleySidebar, app.js). The choice is kept in localStorage and, as
// html.side-collapsed, applied before the page is drawn: this script loads
// in the head, without defer, and touches nothing but <html> until events
// come.
(() => {
  const root = document.documentElement;
  const isOpen = () => root.classList.contains("drawer-open");

  function setOpen(open, animate = true) {
    root.classList.toggle("drawer-anim", animate);
    root.classList.toggle("drawer-open", open);
    document.getElementById("drawer-btn")?.setAttribute("aria-expanded", String(open));
    const backdrop = document.getElementById("drawer-backdrop");
    if (backdrop) backdrop.hidden = !open;
  }

  document.addEventListener("click", (e) => {
    const t = e.target;
    if (!(t instanceof Element)) return;
    if (t.closest("#drawer-btn")) {
      setOpen(!isOpen());
      // The drawer takes the focus, as a menu does.
      if (isOpen()) document.querySelector("#sidebar .thread.active .thread-link, #sidebar #new-chat")?.focus();
      return;
    }
    if (t.closest("#drawer-backdrop")) {
      setOpen(false);
      return;
    }
    // A chat, the brand, New chat or Search: the drawer has done its job.
    if (isOpen() && t.closest("#sidebar .thread-link, #sidebar .brand, #sidebar #new-chat, #sidebar .search-open, #sidebar .settings-link")) {
      setOpen(false);
    }
  });

  // Capture, before app.js's keys: Esc closes the drawer first (a dialog
  // opened over it keeps its own Esc).
  addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || !isOpen() || document.querySelector("dialog[open]")) return;
    e.preventDefault();
    e.stopPropagation();
    setOpen(false);
    document.getElementById("drawer-btn")?.focus();
  }, true);

  // The folded sidebar (wide windows).
  const foldKey = "parley.sidebar";
  const folded = () => root.classList.contains("side-collapsed");
  function setFolded(on) {
    root.classList.toggle("side-collapsed", on);
    try {
      if (on) localStorage.setItem(foldKey, "collapsed");
      else localStorage.removeItem(foldKey);
    } catch { /* storage refused: the choice lasts until the page is left */ }
  }
  try {
    if (localStorage.getItem(foldKey) === "collapsed") root.classList.add("side-collapsed");
  } catch { /* storage refused: the sidebar starts open */ }
  // Another tab of Parley folded or unfolded it.
  addEventListener("storage", (e) => {
    if (e.key === foldKey) root.classList.toggle("side-collapsed", e.newValue === "collapsed");
  });
  document.addEventListener("click", (e) => {
    const t = e.target;
    if (!(t instanceof Element)) return;
    const btn = t.closest("#sidebar-hide, #sidebar-show");
    if (!btn) return;
    setFolded(btn.id === "sidebar-hide");
    // The button clicked is hidden now: the focus goes to the other one.
    document.getElementById(btn.id === "sidebar-hide" ? "sidebar-show" : "sidebar-hide")?.focus();
  });
  // The shortcut: folds or unfolds the sidebar, or in a phone-sized window
  // opens or closes the drawer. The focus stays where it is.
  window.parleySidebar = {
    toggle() {
      if (matchMedia("(max-width: 760px)").matches) {
        setOpen(!isOpen());
        return;
      }
      setFolded(!folded());
    },
  };

  // Crossing the breakpoint either way, or coming back to this page
  // from the history, leaves no drawer open behind the layout.
  matchMedia("(min-width: 761px)").addEventListener("change", () => setOpen(false, false));
  addEventListener("pageshow", (e) => e.persisted && setOpen(false, false));
})();
