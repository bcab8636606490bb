// The dashboard's only script: a form that asks first (data-confirm) is sent only once confirmed.
// Everything works without it, the confirmation aside.
document.addEventListener("submit", (event) => {
  const question = event.target.dataset.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
});
