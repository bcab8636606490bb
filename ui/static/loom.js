// The dashboard's only script. Everything works without it but these two conveniences:
// a form with data-confirm is sent only once confirmed;
document.addEventListener("submit", (event) => {
  const question = event.target.dataset.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
});
// a page holding [data-refresh=N] (a run still pending or running, the health page) fetches
// itself every N seconds and swaps in its new <main>, until the new one holds no such mark.
const marked = document.querySelector("[data-refresh]");
if (marked) {
  const timer = setInterval(async () => {
    const answer = await fetch(location.href, { credentials: "same-origin" });
    if (!answer.ok) return;
    const fresh = new DOMParser().parseFromString(await answer.text(), "text/html").querySelector("main");
    if (fresh) document.querySelector("main").replaceWith(fresh);
    if (!fresh || !fresh.querySelector("[data-refresh]")) clearInterval(timer);
  }, Number(marked.dataset.refresh) * 1000);
}
