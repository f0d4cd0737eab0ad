// Cograph's pages work as plain HTML; this only makes uploads nicer where JavaScript runs:
// files and whole folders dropped on the upload form (a folder's files keep their paths, which
// become their source keys), and a progress bar while the upload is sent (htmx posts the form).
"use strict";

function filesOfEntry(entry, prefix) {
  return new Promise((resolve) => {
    if (entry.isFile) {
      entry.file((file) => resolve([new File([file], prefix + file.name, { type: file.type })]), () => resolve([]));
      return;
    }
    const reader = entry.createReader();
    const found = [];
    const readMore = () => reader.readEntries(async (entries) => {
      if (entries.length === 0) {
        resolve(found);
        return;
      }
      for (const child of entries) {
        found.push(...await filesOfEntry(child, prefix + entry.name + "/"));
      }
      readMore();
    }, () => resolve(found));
    readMore();
  });
}

async function droppedFiles(transfer) {
  const entries = Array.from(transfer.items || [])
    .map((item) => (item.webkitGetAsEntry ? item.webkitGetAsEntry() : null))
    .filter(Boolean);
  if (entries.length === 0) {
    return Array.from(transfer.files);
  }
  const files = [];
  for (const entry of entries) {
    files.push(...await filesOfEntry(entry, ""));
  }
  return files;
}

function enhanceUpload(form) {
  const input = form.querySelector("input[type=file]:not([webkitdirectory])");
  const zone = form.querySelector(".drop-zone");
  const status = form.querySelector(".drop-status");
  const progress = form.querySelector("progress.upload-progress");
  if (!input || !zone || form.dataset.enhanced) {
    return;
  }
  form.dataset.enhanced = "yes";
  zone.hidden = false;
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", async (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    const files = (await droppedFiles(event.dataTransfer)).filter((file) => /\.(md|mdx|markdown)$/i.test(file.name));
    const chosen = new DataTransfer();
    files.forEach((file) => chosen.items.add(file));
    input.files = chosen.files;
    status.textContent = files.length === 1 ? "1 markdown file ready to upload" : files.length + " markdown files ready to upload";
  });
  if (progress) {
    form.addEventListener("htmx:xhr:progress", (event) => {
      if (event.detail.lengthComputable) {
        progress.hidden = false;
        progress.value = Math.round((100 * event.detail.loaded) / event.detail.total);
      }
    });
  }
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("form.upload").forEach(enhanceUpload);
});
document.addEventListener("htmx:afterSettle", () => {
  document.querySelectorAll("form.upload").forEach(enhanceUpload);
});
