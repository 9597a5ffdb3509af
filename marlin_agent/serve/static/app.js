// The little the pages need beyond HTML: follow a running job, stop it, seek a player, refresh the alerts.
"use strict";

function followJob(box) {
  const events = new EventSource(`/api/v1/jobs/${box.dataset.job}/events`);
  const bar = box.querySelector("progress");
  const message = box.querySelector(".message");
  events.addEventListener("progress", (event) => {
    const job = JSON.parse(event.data);
    if (job.total) { bar.max = job.total; bar.value = job.done; }
    message.textContent = job.message || "working";
  });
  for (const end of ["done", "failed"]) {
    events.addEventListener(end, () => { events.close(); window.location.reload(); });
  }
  events.onerror = () => { events.close(); setTimeout(() => window.location.reload(), 3000); };
}

function seek(button) {
  const player = document.getElementById(button.dataset.player);
  const go = () => { player.currentTime = parseFloat(button.dataset.start); player.play().catch(() => {}); };
  if (player.readyState >= 1) go(); else player.addEventListener("loadedmetadata", go, { once: true });
}

async function refresh(box) {
  try {
    const response = await fetch(box.dataset.refresh, { headers: { Accept: "text/html" } });
    if (response.ok) box.innerHTML = await response.text();
  } finally {
    setTimeout(() => refresh(box), 5000);
  }
}

for (const box of document.querySelectorAll(".job[data-job]")) followJob(box);
for (const button of document.querySelectorAll("button.seek")) button.addEventListener("click", () => seek(button));
for (const box of document.querySelectorAll("[data-refresh]")) setTimeout(() => refresh(box), 5000);
for (const button of document.querySelectorAll("button.stop")) {
  button.addEventListener("click", async () => {
    await fetch(`/api/v1/jobs/${button.dataset.job}`, { method: "DELETE" });
    window.location.reload();
  });
}
for (const link of document.querySelectorAll("a[data-ask]")) {
  link.addEventListener("click", (event) => {
    event.preventDefault();
    const field = document.querySelector('input[name="question"]');
    field.value = link.dataset.ask;
    field.form.submit();
  });
}
